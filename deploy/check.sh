#!/usr/bin/env bash
# Checks every deployment file in deploy/: YAML and JSON parse, systemd units, Kubernetes
# manifests, Prometheus config and rules, the Grafana dashboard's queries. Tools that are not
# installed are skipped, and said so; any check that runs and fails makes the exit status 1.
#   bash deploy/check.sh
# Tools used where present: python3 + PyYAML (python3-yaml), ruby (YAML fallback),
# systemd-analyze (systemd), kubectl (kustomize), promtool (prometheus), yamllint.
set -u
cd "$(dirname "$0")"
DEPLOY=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=0
skipped=()
fail() { echo "FAIL: $*"; failed=1; }
have() { command -v "$1" >/dev/null 2>&1; }

# 1. YAML and JSON parse, and the cross-file checks (check.py).
if have python3 && python3 -c 'import yaml' 2>/dev/null; then
  python3 check.py --promql-rules "$TMP/dashboard-queries.yml" || fail "check.py"
elif have ruby; then
  skipped+=("check.py cross-file checks (no PyYAML)")
  while IFS= read -r f; do
    ruby -ryaml -e 'YAML.load_stream(File.read(ARGV[0]))' "$f" && echo "ok: YAML parses: $f" ||
      fail "YAML $f"
  done < <(find . -name '*.yaml' -o -name '*.yml' | sort)
else
  skipped+=("YAML parse (neither PyYAML nor ruby)")
fi
if have python3; then
  while IFS= read -r f; do
    python3 -m json.tool "$f" >/dev/null && echo "ok: json.tool: $f" || fail "JSON $f"
  done < <(find . -name '*.json' | sort)
else
  skipped+=("JSON parse (no python3)")
fi
if have yamllint; then
  # relaxed: errors only (syntax, duplicate keys, bad indentation); long lines are fine here.
  yamllint -d relaxed --no-warnings . && echo "ok: yamllint (relaxed, errors only)" || fail yamllint
else
  skipped+=(yamllint)
fi

# 2. systemd units. /usr/bin/headroom and its man pages need not exist here, so verify copies whose
# ExecStart runs /bin/true (same arguments) and whose Documentation= names no man page (the
# package test verifies the installed units as they are); systemd-analyze verify exits 0 on unknown keys and
# bad values, so any output at all is a failure.
if have systemd-analyze; then
  mkdir -p "$TMP/systemd"
  for u in systemd/*.service; do
    sed -e 's#^ExecStart=/usr/bin/headroom #ExecStart=/bin/true #' \
        -e 's#^Documentation=man:[^ ]* #Documentation=#' "$u" > "$TMP/systemd/$(basename "$u")"
  done
  out=$(cd "$TMP/systemd" && systemd-analyze verify ./*.service 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || [ -n "$out" ]; then
    echo "$out"; fail "systemd-analyze verify"
  else
    echo "ok: systemd-analyze verify $(ls systemd/*.service | tr '\n' ' ')(ExecStart pointed at /bin/true)"
  fi
  for u in systemd/*.service; do
    systemd-analyze security --offline=true "$TMP/systemd/$(basename "$u")" 2>/dev/null |
      sed -n 's/^→ /info: /p'
  done
else
  skipped+=("systemd-analyze verify")
fi
if have systemd-sysusers; then
  mkdir -p "$TMP/root"
  systemd-sysusers --dry-run --root="$TMP/root" "$DEPLOY/systemd/headroom.sysusers.conf" >/dev/null 2>&1 &&
    echo "ok: systemd-sysusers --dry-run systemd/headroom.sysusers.conf" || fail "sysusers"
else
  skipped+=("systemd-sysusers --dry-run")
fi

# 3. Kubernetes: the kustomization renders (offline; no cluster, so no server-side validation).
if have kubectl; then
  for k in kubernetes kubernetes-batch; do
    if kubectl kustomize "$k" > "$TMP/rendered.yaml"; then
      echo "ok: kubectl kustomize $k ($(grep -c '^kind:' "$TMP/rendered.yaml") objects)"
    else
      fail "kubectl kustomize $k"
    fi
  done
else
  skipped+=("kubectl kustomize")
fi

# 4. Prometheus: config, rules, rule unit tests, and the dashboard's queries (as rules).
if have promtool; then
  (cd prometheus && promtool check config prometheus.yml) || fail "promtool check config prometheus.yml"
  out=$(cd prometheus && promtool check config prometheus-kubernetes.yml 2>&1)
  if [ $? -eq 0 ]; then
    echo "ok: promtool check config prometheus-kubernetes.yml"
  elif grep -q 'field kubernetes_sd_configs not found' <<<"$out"; then
    # Debian's prometheus package is built without Kubernetes service discovery.
    skipped+=("promtool check config prometheus-kubernetes.yml (this promtool has no kubernetes_sd)")
  else
    echo "$out"; fail "promtool check config prometheus-kubernetes.yml"
  fi
  (cd prometheus && promtool check rules rules.yml) || fail "promtool check rules"
  (cd prometheus && promtool test rules rules_test.yml) || fail "promtool test rules"
  if [ -f "$TMP/dashboard-queries.yml" ]; then
    if out=$(promtool check rules "$TMP/dashboard-queries.yml" 2>&1); then
      echo "ok: every dashboard query parses as PromQL"
    else
      echo "$out"; fail "dashboard PromQL (queries as rules, Grafana variables replaced)"
    fi
  fi
else
  skipped+=("promtool (config, rules, rule tests, dashboard PromQL)")
fi

for s in "${skipped[@]}"; do echo "SKIPPED: $s"; done
if [ $failed -ne 0 ]; then echo "deploy/check.sh: FAILED"; exit 1; fi
echo "deploy/check.sh: all checks that ran passed"
