#!/usr/bin/env python3
"""Checks of the deployment files in deploy/ that need only Python 3 and PyYAML.

Run by deploy/check.sh (which adds systemd-analyze, kubectl kustomize and promtool where they are
installed). Exit status 0 when every check passes; each failure is printed as 'FAIL: ...'.

Checks:
  - every *.yaml / *.yml parses (all documents), with no duplicate keys;
  - every *.json parses;
  - the ConfigMap's row.yaml in kubernetes/controller-deployment.yaml is controller/row.yaml;
  - controller/row.yaml has the keys of the issue 6 spec, a known policy and sane agents, each
    with its own token file /etc/headroom/tokens/<name> (one token per node, issue 44);
  - prometheus/prometheus.yml scrapes exactly row.yaml's agents, with row and server labels;
  - Kubernetes objects: agent DaemonSets privileged, on GPU nodes, hostPath state, the node's own
    token from hostPath (no Secret: it would reach every node), scrape annotations; controller
    Deployment one replica, Recreate, off the GPU nodes, scrape annotations, every agent's token
    from Secret headroom-agent-tokens at its row.yaml token_file; flags as in the spec;
  - kubernetes-batch/plan-round-job.yaml: an Indexed Job whose pods run `headroom plan-task UNIT
    --task $(JOB_COMPLETION_INDEX)` on a shared volume mounted at /work, never restarted in place
    (a failed index is retried by the Job, a bounded number of times), unprivileged;
  - the Grafana dashboard uses ${DS_PROMETHEUS}, has the required panels, and every metric name
    in it and in prometheus/rules.yml is one of the spec's (or a recording rule);
  - with --promql-rules FILE: writes the dashboard's queries as a rule file for promtool to parse.
"""

import json
import re
import sys
from pathlib import Path

try:
    import yaml
except ImportError:  # pragma: no cover
    print("SKIP: PyYAML not installed (apt-get install python3-yaml); check.sh falls back to ruby")
    sys.exit(3)

DEPLOY = Path(__file__).resolve().parent
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print(f"FAIL: {msg}")


def ok(msg):
    print(f"ok: {msg}")


class UniqueKeyLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.load_all(f, Loader=UniqueKeyLoader) if d is not None]


SPEC_METRICS = {
    # agent
    "headroom_gpu_power_watts", "headroom_gpu_sm_clock_hertz", "headroom_gpu_power_limit_watts",
    "headroom_gpu_energy_joules_total", "headroom_gpu_temperature_celsius",
    "headroom_agent_sm_clock_cap_hertz", "headroom_agent_brake", "headroom_agent_lease_expired",
    "headroom_agent_failsafe_active", "headroom_agent_server_power_watts",
    "headroom_agent_commands_total", "headroom_agent_info",
    "headroom_gpu_power_smoothing_supported", "headroom_gpu_power_smoothing_enabled",
    "headroom_gpu_power_smoothing_profile", "headroom_gpu_power_smoothing_floor_watts",
    "headroom_gpu_power_smoothing_floor_ratio",
    "headroom_gpu_power_smoothing_ramp_up_watts_per_second",
    "headroom_gpu_power_smoothing_ramp_down_watts_per_second",
    "headroom_engine_prefill_share", "headroom_engine_requests_waiting",
    "headroom_engine_requests_running", "headroom_engine_window_age_seconds",
    "headroom_engine_scrape_failures_total",
    # agent: energy per token and the energy saver (issue 51)
    "headroom_agent_joules_per_prompt_token", "headroom_agent_joules_per_prompt_token_stderr",
    "headroom_agent_joules_per_generated_token",
    "headroom_agent_joules_per_generated_token_stderr", "headroom_agent_idle_watts",
    "headroom_agent_idle_watts_stderr", "headroom_agent_token_energy_windows",
    "headroom_agent_token_energy_split", "headroom_agent_joules_per_generated_token_all_in",
    "headroom_engine_itl_p50_seconds", "headroom_engine_ttft_p99_seconds",
    "headroom_agent_energy_saver_clock_hertz", "headroom_agent_energy_saver_applied_clock_hertz",
    "headroom_agent_energy_saver_row_cap_wins", "headroom_agent_energy_saver_reason",
    # agent: the prefill boost and its engine proxy (issue 51)
    "headroom_agent_prompts_waiting", "headroom_agent_energy_saver_boosts_total",
    "headroom_agent_energy_saver_boosted_seconds_total", "headroom_engine_proxy_requests_total",
    "headroom_engine_proxy_generation_requests_total",
    "headroom_engine_proxy_upstream_failures_total", "headroom_engine_proxy_requests_in_flight",
    "headroom_engine_proxy_refused_draining_total",
    # controller
    "headroom_row_power_watts", "headroom_row_budget_watts", "headroom_row_power_ratio",
    "headroom_row_threshold_ratio", "headroom_row_state", "headroom_row_brake_events_total",
    "headroom_row_server_sm_clock_cap_hertz", "headroom_row_server_brake", "headroom_row_agent_up",
    "headroom_row_decisions_total",
    # controller: the grid's budget (issue 50)
    "headroom_row_provisioned_budget_watts", "headroom_row_brake_budget_watts",
    "headroom_row_budget_lowered", "headroom_row_budget_complying",
    "headroom_row_budget_over_after_deadline_seconds", "headroom_row_budget_requests_total",
    "headroom_row_ramp_held_servers", "headroom_row_load_ramps_total",
}
POLICIES = {"none", "brake-only", "polca", "uniform", "power-cap", "polca-ladder", "mix-aware"}
POLICY_KEYS = {
    "t1", "t2", "hysteresis", "brake_threshold", "brake_release", "brake_hold_s", "brake_settle_s",
    "stale_after_s", "lp_t1_clock_mhz", "lp_t2_clock_mhz", "hp_t2_clock_mhz",
    "hp_escalation_delay_s", "power_cap_t1_w", "power_cap_t2_w", "ladder_hp_threshold",
    "ladder_predict_horizon_s", "ladder_trend_window_s",
    *(f"ladder_t{i}" for i in range(1, 5)), *(f"ladder_lp{i}_clock_mhz" for i in range(1, 5)),
    "mix_target", "mix_hysteresis", "mix_lp_clock_mhz", "mix_cap_saving", "mix_lift_return",
    "mix_signal_stale_s", "mix_predict_horizon_s",
}
SERVERS = {p.stem for p in (DEPLOY.parent / "data" / "hardware").glob("dgx-*.yaml")} or {"dgx-a100"}


def check_parse():
    docs = {}
    for path in sorted(DEPLOY.rglob("*")):
        rel = path.relative_to(DEPLOY)
        if path.suffix in (".yaml", ".yml"):
            try:
                docs[str(rel)] = load_all(path)
                ok(f"YAML parses: {rel} ({len(docs[str(rel)])} document(s))")
            except yaml.YAMLError as e:
                fail(f"YAML {rel}: {e}")
        elif path.suffix == ".json":
            try:
                with open(path, encoding="utf-8") as f:
                    docs[str(rel)] = [json.load(f)]
                ok(f"JSON parses: {rel}")
            except json.JSONDecodeError as e:
                fail(f"JSON {rel}: {e}")
    return docs


def check_row(row):
    for key in ("row", "policy", "control", "telemetry", "agents"):
        if key not in row:
            fail(f"row.yaml: no {key}")
            return
    if not isinstance(row["row"].get("name"), str) or not row["row"].get("budget_w", 0) > 0:
        fail("row.yaml: row needs name and budget_w > 0")
    pol = dict(row["policy"])
    if pol.pop("name", None) not in POLICIES:
        fail(f"row.yaml: policy.name not one of {sorted(POLICIES)}")
    for k in pol:
        if k not in POLICY_KEYS:
            fail(f"row.yaml: policy key {k} is not in docs/policies.md")
    if not 0 < pol.get("t1", 0.8) < pol.get("t2", 0.89) <= 1:
        fail("row.yaml: need 0 < t1 < t2 <= 1")
    ctl = row["control"]
    # The controller parses the file itself (ControllerConfigTest.ReadsTheShippedRowFile); here
    # only what the deployment relies on: every control key spelled out, a long lease.
    if set(ctl) != {"period", "lease_ttl", "agent_timeout", "restart_hold", "escalate_after",
                    "converge_within"}:
        fail(f"row.yaml: control keys {sorted(ctl)}")
    dur = lambda s: float(re.fullmatch(r"(\d+(?:\.\d+)?)s", s).group(1))  # noqa: E731
    if not dur(ctl["lease_ttl"]) >= 5 * dur(ctl["period"]):
        fail("row.yaml: lease_ttl should be several control periods")
    tel = row["telemetry"]
    if tel.get("source") not in ("agents", "prometheus", "command"):
        fail("row.yaml: telemetry.source must be agents, prometheus or command")
    names, urls, token_files = set(), set(), set()
    for a in row["agents"]:
        if set(a) != {"name", "url", "token_file", "priority", "server"}:
            fail(f"row.yaml: agent keys {sorted(a)}")
        if a["priority"] not in ("hp", "lp"):
            fail(f"row.yaml: agent {a['name']} priority {a['priority']}")
        if a["server"] not in SERVERS:
            fail(f"row.yaml: agent {a['name']} server {a['server']} not in data/hardware")
        if not re.fullmatch(r"http://[^/\s]+:9400", a["url"]):
            fail(f"row.yaml: agent {a['name']} url {a['url']}")
        # One token per node: a token shared by several agents lets one node command the others.
        if a["token_file"] != f"/etc/headroom/tokens/{a['name']}":
            fail(f"row.yaml: agent {a['name']} token_file {a['token_file']}, "
                 f"want its own /etc/headroom/tokens/{a['name']}")
        names.add(a["name"])
        urls.add(a["url"])
        token_files.add(a["token_file"])
    if len(names) != len(row["agents"]) or len(urls) != len(row["agents"]):
        fail("row.yaml: duplicate agent name or url")
    if len(token_files) != len(row["agents"]):
        fail("row.yaml: agents share a token_file (one token per node)")
    ok(f"row.yaml: {row['row']['name']}, {row['policy']['name']}, {len(row['agents'])} agents")


def check_prometheus(prom, row):
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    for job in ("headroom-controller", "headroom-agent"):
        if job not in jobs:
            fail(f"prometheus.yml: no job {job}")
            return
    ctl = jobs["headroom-controller"]
    if not ctl.get("scrape_interval") in ("1s", "2s", "3s", "4s", "5s"):
        fail("prometheus.yml: the controller (row power) should be scraped every 1-5 s")
    if "rules.yml" not in prom.get("rule_files", []):
        fail("prometheus.yml: rules.yml not loaded")
    targets = {}
    for sc in jobs["headroom-agent"]["static_configs"]:
        labels = sc.get("labels", {})
        for t in sc["targets"]:
            targets[t] = labels
    want = {a["url"].split("://", 1)[1]: a["name"] for a in row["agents"]}
    if set(targets) != set(want):
        fail(f"prometheus.yml: agent targets differ from row.yaml: {sorted(set(targets) ^ set(want))}")
    for t, labels in targets.items():
        if labels.get("row") != row["row"]["name"] or labels.get("server") != want.get(t):
            fail(f"prometheus.yml: target {t} labels {labels}")
    for sc in ctl["static_configs"]:
        if sc.get("labels", {}).get("row") != row["row"]["name"]:
            fail("prometheus.yml: controller target without the row label")
    ok(f"prometheus.yml: controller every {ctl['scrape_interval']}, {len(targets)} agents = row.yaml")


def container(obj):
    return obj["spec"]["template"]["spec"]["containers"][0]


def check_kubernetes(docs, row_text, row):
    ds = [d for d in docs["kubernetes/agent-daemonset.yaml"] if d["kind"] == "DaemonSet"]
    if {d["metadata"]["name"] for d in ds} != {"headroom-agent-hp", "headroom-agent-lp"}:
        fail("agent-daemonset.yaml: want DaemonSets headroom-agent-hp and headroom-agent-lp")
    for d in ds:
        name = d["metadata"]["name"]
        tmpl = d["spec"]["template"]
        spec = tmpl["spec"]
        c = container(d)
        ann = tmpl["metadata"].get("annotations", {})
        if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != "9400":
            fail(f"{name}: scrape annotations")
        if spec.get("nodeSelector", {}).get("nvidia.com/gpu.present") != "true":
            fail(f"{name}: not restricted to GPU nodes")
        if not spec.get("hostNetwork"):
            fail(f"{name}: hostNetwork (row.yaml names node IPs)")
        if not c.get("securityContext", {}).get("privileged"):
            fail(f"{name}: not privileged (NVML setters)")
        if "resources" in c and "nvidia.com/gpu" in str(c["resources"]):
            fail(f"{name}: must not request GPUs")
        vols = {v["name"]: v for v in spec["volumes"]}
        if vols.get("state", {}).get("hostPath", {}).get("path") != "/var/lib/headroom":
            fail(f"{name}: state file not on hostPath /var/lib/headroom")
        # The node's own token from the node: a Secret in a DaemonSet reaches every node.
        token = vols.get("token", {}).get("hostPath", {})
        if token.get("path") != "/etc/headroom/token" or token.get("type") != "File":
            fail(f"{name}: token not from hostPath /etc/headroom/token (type File)")
        if any("secret" in v or "secret" in str(v.get("projected", "")) for v in vols.values()):
            fail(f"{name}: mounts a Secret (it would reach every node; tokens are per node)")
        mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
        if mounts.get("token", {}).get("mountPath") != "/etc/headroom/token":
            fail(f"{name}: token not mounted at /etc/headroom/token")
        pr = name.rsplit("-", 1)[1]
        want = ["/usr/bin/headroom", "agent", "--backend", "nvml", "--listen", "0.0.0.0:9400",
                "--token-file", "/etc/headroom/token", "--state-file",
                "/var/lib/headroom/agent-state.json", "--priority", pr]
        if c["command"] != want:
            fail(f"{name}: command {c['command']}")
        if spec.get("terminationGracePeriodSeconds", 30) < 30:
            fail(f"{name}: grace period under 30 s (GPU restore on SIGTERM)")
    ok("agent-daemonset.yaml: hp and lp DaemonSets, GPU nodes, privileged, hostPath state and "
       "node's own token")

    cdocs = docs["kubernetes/controller-deployment.yaml"]
    cms = [d for d in cdocs if d["kind"] == "ConfigMap"]
    deps = [d for d in cdocs if d["kind"] == "Deployment"]
    if len(cms) != 1 or len(deps) != 1:
        fail("controller-deployment.yaml: want one ConfigMap and one Deployment")
        return
    if cms[0]["data"]["row.yaml"] != row_text:
        fail("controller-deployment.yaml: ConfigMap row.yaml differs from controller/row.yaml")
    else:
        ok("controller-deployment.yaml: ConfigMap row.yaml = controller/row.yaml")
    dep = deps[0]
    if dep["spec"].get("replicas") != 1 or dep["spec"].get("strategy", {}).get("type") != "Recreate":
        fail("controller Deployment: need replicas 1 and strategy Recreate")
    ann = dep["spec"]["template"]["metadata"].get("annotations", {})
    if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != "9500":
        fail("controller Deployment: scrape annotations")
    want = ["/usr/bin/headroom", "controller", "--config", "/etc/headroom/row.yaml", "--listen",
            "0.0.0.0:9500", "--audit-log", "/var/log/headroom/audit.jsonl"]
    if container(dep)["command"] != want:
        fail(f"controller Deployment: command {container(dep)['command']}")
    srcs = dep["spec"]["template"]["spec"]["volumes"][0]["projected"]["sources"]
    secrets = [s["secret"] for s in srcs if "secret" in s]
    if [s.get("name") for s in secrets] != ["headroom-agent-tokens"]:
        fail("controller Deployment: tokens not from the one Secret headroom-agent-tokens")
    else:
        # Every agent's token_file is its own key of the Secret, and nothing else is mounted.
        got = {i["key"]: "/etc/headroom/" + i["path"] for i in secrets[0].get("items", [])}
        want = {a["name"]: a["token_file"] for a in row["agents"]}
        if got != want:
            diff = sorted(set(got.items()) ^ set(want.items()))
            fail(f"controller Deployment: Secret items differ from row.yaml's token_files: {diff}")
    terms = (dep["spec"]["template"]["spec"].get("affinity", {}).get("nodeAffinity", {})
             .get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", []))
    off_gpu = {"key": "nvidia.com/gpu.present", "operator": "NotIn", "values": ["true"]}
    if not terms or not all(off_gpu in t.get("matchExpressions", []) for t in terms):
        fail("controller Deployment: not kept off GPU nodes (it holds every agent's token)")
    ok("controller-deployment.yaml: one replica, Recreate, annotations, off GPU nodes, "
       f"{len(row['agents'])} agents' tokens from Secret headroom-agent-tokens")

    kust = docs["kubernetes/kustomization.yaml"][0]
    files = {p.name for p in (DEPLOY / "kubernetes").glob("*.yaml")} - {"kustomization.yaml"}
    if set(kust["resources"]) != files:
        fail(f"kustomization.yaml: resources {kust['resources']} vs files {sorted(files)}")


def check_plan_round_job(docs):
    """The Kubernetes recipe for one round of a plan's work units (docs/cluster.md)."""
    jobs = [d for d in docs["kubernetes-batch/plan-round-job.yaml"] if d["kind"] == "Job"]
    if len(jobs) != 1:
        fail("plan-round-job.yaml: expected one Job")
        return
    spec = jobs[0]["spec"]
    pod = spec["template"]["spec"]
    c = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    checks = [
        (spec.get("completionMode") == "Indexed", "completionMode Indexed"),
        (isinstance(spec.get("completions"), int) and spec["completions"] > 0, "completions > 0"),
        (isinstance(spec.get("parallelism"), int) and spec["parallelism"] > 0, "parallelism > 0"),
        (isinstance(spec.get("backoffLimitPerIndex"), int), "backoffLimitPerIndex (retries)"),
        (spec.get("maxFailedIndexes") == 0, "maxFailedIndexes 0 (a task that fails every try fails the round)"),
        (pod.get("restartPolicy") == "Never", "restartPolicy Never"),
        (c.get("command") == ["headroom", "plan-task", "$(UNIT)", "--task", "$(JOB_COMPLETION_INDEX)"],
         "command headroom plan-task $(UNIT) --task $(JOB_COMPLETION_INDEX)"),
        (str(env.get("UNIT", "")).startswith("/work/") and env["UNIT"].endswith("/unit.json"),
         "UNIT a unit.json under /work"),
        (mounts.get("work") == "/work", "the work volume at /work"),
        ("persistentVolumeClaim" in volumes.get("work", {}), "the work volume a PersistentVolumeClaim"),
        (c.get("securityContext", {}).get("allowPrivilegeEscalation") is False and
         c.get("securityContext", {}).get("runAsNonRoot") is True, "unprivileged"),
    ]
    bad = [what for good, what in checks if not good]
    if bad:
        fail("plan-round-job.yaml: " + "; ".join(bad))
    else:
        ok("plan-round-job.yaml: an Indexed Job of headroom plan-task on the shared /work volume, "
           f"{spec['completions']} tasks, {spec['backoffLimitPerIndex']} retries each, unprivileged")


def containerfile_instructions(text):
    """(INSTRUCTION, arguments) of a Containerfile, continuation lines joined, comments dropped."""
    out, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        current += " " + stripped.rstrip("\\").strip() if current else stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            word, _, rest = current.partition(" ")
            out.append((word.upper(), rest.strip()))
            current = ""
    return out


def check_container(docs):
    """The image recipe, statically (no base image can be pulled here): the rules hadolint would
    apply that matter for it, and that its names agree with the manifests and the project."""
    path = DEPLOY / "container" / "Containerfile"
    text = path.read_text(encoding="utf-8")
    version = re.search(r"project\(headroom VERSION ([0-9.]+)",
                        (DEPLOY.parent / "CMakeLists.txt").read_text(encoding="utf-8")).group(1)
    steps = containerfile_instructions(text)
    kinds = [k for k, _ in steps]
    args = {k: a for k, a in steps}
    if kinds[0] != "FROM" or args["FROM"] not in ("debian:12-slim", "debian:bookworm-slim"):
        fail(f"Containerfile: FROM {args.get('FROM')} (want debian:12-slim, pinned)")
    if "ADD" in kinds:
        fail("Containerfile: ADD (use COPY)")
    if f"HEADROOM_VERSION={version}" not in [a for k, a in steps if k == "ARG"]:
        fail(f"Containerfile: ARG HEADROOM_VERSION is not the project's {version}")
    runs = [a for k, a in steps if k == "RUN"]
    install = [r for r in runs if "headroom_${HEADROOM_VERSION}_amd64.deb" in r and "install" in r]
    if len(install) != 1:
        fail("Containerfile: no RUN installing /tmp/headroom_${HEADROOM_VERSION}_amd64.deb")
    else:
        r = install[0]
        for needed in ("apt-get update", "apt-get install -y --no-install-recommends",
                       "rm -rf /var/lib/apt/lists/*"):
            if needed not in r:
                fail(f"Containerfile: the install step lacks '{needed}'")
    if any("upgrade" in r for r in runs):
        fail("Containerfile: apt-get upgrade in an image recipe")
    try:
        entry, cmd = json.loads(args.get("ENTRYPOINT", "")), json.loads(args.get("CMD", ""))
    except ValueError:
        fail("Containerfile: ENTRYPOINT and CMD must be JSON (exec form)")
        return
    if entry != ["/usr/bin/headroom"] or cmd[:1] != ["agent"]:
        fail(f"Containerfile: ENTRYPOINT {entry} CMD {cmd}")
    uid = re.search(r"useradd [^&]*--uid (\d+)", text)
    dep = [d for d in docs["kubernetes/controller-deployment.yaml"] if d["kind"] == "Deployment"][0]
    run_as = dep["spec"]["template"]["spec"]["securityContext"].get("runAsUser")
    if not uid or int(uid.group(1)) != run_as:
        fail(f"Containerfile: user headroom's uid is not the controller's runAsUser {run_as}")
    tag = re.search(r"-t (\S+) ", text)
    if not tag or tag.group(1) != f"headroom:{version}":
        fail(f"Containerfile: the build command's tag is not headroom:{version}")
    images = set()
    for name in ("kubernetes/agent-daemonset.yaml", "kubernetes/controller-deployment.yaml"):
        for d in docs[name]:
            if d.get("kind") in ("DaemonSet", "Deployment"):
                images.add(container(d)["image"])
    if images != {f"headroom:{version}"}:
        fail(f"manifests: images {sorted(images)}, not the Containerfile's headroom:{version}")
    kust = docs["kubernetes/kustomization.yaml"][0]
    mapped = {i["name"]: i for i in kust.get("images", [])}
    if mapped.get("headroom", {}).get("newTag") != version:
        fail(f"kustomization.yaml: images: headroom newTag is not {version}")
    ok(f"Containerfile: debian:12-slim, the package installed, exec-form entrypoint; image "
       f"headroom:{version} in the manifests and the kustomization; uid {run_as}")


def metric_names(expr):
    return set(re.findall(r"\b(row:headroom_[a-z_:]+|headroom_[a-z_]+)\b", expr))


def check_metrics(dashboard, rules):
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    known = SPEC_METRICS | recorded
    exprs = []
    for g in rules["groups"]:
        for r in g["rules"]:
            exprs.append(("rules.yml " + r.get("record", r.get("alert", "?")), r["expr"]))
    panels = dashboard["panels"]
    for a in dashboard.get("annotations", {}).get("list", []):
        if "expr" in a:
            exprs.append((f"dashboard annotation '{a['name']}'", a["expr"]))
    for p in panels:
        for t in p.get("targets", []):
            exprs.append((f"dashboard panel '{p['title']}'", t["expr"]))
            if t.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
                fail(f"dashboard panel '{p['title']}': datasource not ${{DS_PROMETHEUS}}")
        if p["type"] != "row" and p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            fail(f"dashboard panel '{p['title']}': panel datasource not ${{DS_PROMETHEUS}}")
    for where, expr in exprs:
        for m in metric_names(expr):
            if m not in known:
                fail(f"{where}: unknown metric {m}")
    if dashboard.get("schemaVersion", 0) < 36:
        fail("dashboard: schemaVersion")
    var_names = {v["name"] for v in dashboard["templating"]["list"]}
    if "DS_PROMETHEUS" not in var_names:
        fail("dashboard: no DS_PROMETHEUS variable")
    all_exprs = " ".join(e for _, e in exprs)
    for needed in ("headroom_row_power_watts", "headroom_row_budget_watts",
                   'threshold="t1"', 'threshold="t2"', "headroom_row_power_ratio",
                   "headroom_row_state", "headroom_row_server_sm_clock_cap_hertz",
                   "headroom_row_brake_events_total", "headroom_gpu_power_watts",
                   "headroom_row_agent_up"):
        if needed not in all_exprs:
            fail(f"dashboard/rules: nothing shows {needed}")
    ids = [p["id"] for p in panels]
    if len(ids) != len(set(ids)):
        fail("dashboard: duplicate panel ids")
    ok(f"dashboard: {len(panels)} panels; {len(exprs)} queries use only spec metrics and recording rules")
    return [e for w, e in exprs if w.startswith("dashboard")]


def write_promql_rules(exprs, out):
    """The dashboard's queries as recording rules, Grafana's variables replaced, for promtool."""
    rules = []
    for i, e in enumerate(exprs):
        e = (e.replace("$__rate_interval", "1m").replace("$__range", "1h")
             .replace("$__interval", "15s").replace("$row", "row-a"))
        rules.append({"record": f"dashboard_query_{i}", "expr": e})
    with open(out, "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f, sort_keys=False)


def main():
    docs = check_parse()
    if FAILS:
        return 1
    row_text = (DEPLOY / "controller" / "row.yaml").read_text(encoding="utf-8")
    row = docs["controller/row.yaml"][0]
    check_row(row)
    check_prometheus(docs["prometheus/prometheus.yml"][0], row)
    check_kubernetes(docs, row_text, row)
    check_plan_round_job(docs)
    check_container(docs)
    dash_exprs = check_metrics(docs["grafana/headroom-row.json"][0], docs["prometheus/rules.yml"][0])
    if len(sys.argv) == 3 and sys.argv[1] == "--promql-rules":
        write_promql_rules(dash_exprs, sys.argv[2])
    print(f"check.py: {len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
