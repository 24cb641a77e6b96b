#!/usr/bin/env python3
"""The energy saver measured on the built-in rows' week (issue 51): decode energy saved and the
latency cost per class against the uncapped row, against every fixed SM clock lock (the best one
under the same SLO found by the sweep), for the saver as an agent runs it (phase-blind), as an
engine switching clocks per iteration could (phase-aware), as an agent in the request path can
(the prefill boost, at several clock switch latencies), and with POLCA at the plan's answer.

The SLO is the issue's: ITL (TBT) P50 within +3% and TTFT P99 within +5% of the uncapped row, per
class, over the week. Each class's servers are given the uncapped row's figures for that class
times those factors as their absolute SLOs (what an operator would configure per server).

Usage: scripts/energy-saver.py [HEADROOM_BINARY] (default build/bin/headroom). About 5 s a run,
some 40 runs, two at a time. docs/policies.md quotes its tables.
"""
import concurrent.futures
import json
import subprocess
import sys

HEADROOM = sys.argv[1] if len(sys.argv) > 1 else "build/bin/headroom"
ROWS = {"polca-a100-row": 50, "polca-h100-row": 48}  # the plan's POLCA answers (docs/policies.md)
ITL_SLACK, TTFT_SLACK = 1.03, 1.05
# The agent's prefill boost at these clock switch latencies (NVML's and the agent's own; not
# measured here: setting clocks is not ours to do on the lent GPUs).
BOOST_SWITCHES = ["0ms", "20ms", "50ms", "100ms"]


def simulate(args):
    out = subprocess.run([HEADROOM, "simulate", "--json", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def ok(run, base):
    return all(run[c]["tbt_p50_s"] <= base[c]["tbt_p50_s"] * ITL_SLACK + 1e-12
               and run[c]["ttft_p99_s"] <= base[c]["ttft_p99_s"] * TTFT_SLACK + 1e-12
               for c in ("hp", "lp"))


def row_line(name, run, base):
    def pct(a, b):
        return f"{(a / b - 1) * 100:+.1f}%" if b else "-"
    e, b = run["gpu_energy"]["decode_j"], base["gpu_energy"]["decode_j"]
    cells = [name, pct(e, b)]
    for c in ("hp", "lp"):
        cells += [pct(run[c]["tbt_p50_s"], base[c]["tbt_p50_s"]),
                  pct(run[c]["ttft_p99_s"], base[c]["ttft_p99_s"])]
    cells.append(pct(run["energy_j"], base["energy_j"]))
    cells.append("yes" if ok(run, base) else "no")
    return "| " + " | ".join(cells) + " |"


def measure(row, answer, pool):
    base = simulate(["--config", row, "--policy", "none"])
    hp, lp = base["hp"], base["lp"]
    slo = [f"itl_p50_slo={hp['tbt_p50_s'] * ITL_SLACK * 1000:.2f}ms",
           f"ttft_p99_slo={hp['ttft_p99_s'] * TTFT_SLACK * 1000:.0f}ms",
           f"lp_itl_p50_slo={lp['tbt_p50_s'] * ITL_SLACK * 1000:.2f}ms",
           f"lp_ttft_p99_slo={lp['ttft_p99_s'] * TTFT_SLACK * 1000:.0f}ms"]
    saver = [a for kv in slo for a in ("--energy-saver", kv)]
    clocks = range(1410 if "a100" in row else 1980, 600, -105)
    jobs = {f"lock {f} MHz": ["--serving", f"sm_clock_lock={f}"] for f in clocks}
    jobs["saver (agent, phase-blind)"] = saver
    jobs["saver, floor 30%"] = saver + ["--energy-saver", "floor=0.3"]
    jobs["saver, phase-aware"] = saver + ["--energy-saver", "phase_aware=true"]
    jobs["saver, phase-aware, floor 30%"] = saver + ["--energy-saver", "phase_aware=true",
                                                     "--energy-saver", "floor=0.3"]
    for switch in BOOST_SWITCHES:
        jobs[f"saver, prefill boost, switch {switch}"] = saver + [
            "--energy-saver", f"prefill_boost={switch}"]
    futures = {name: pool.submit(simulate, ["--config", row, "--policy", "none", *args])
               for name, args in jobs.items()}
    at = str(answer)
    polca_base = pool.submit(simulate, ["--config", row, "--policy", "none", "--servers", at])
    polca = {name: pool.submit(simulate, ["--config", row, "--policy", "polca", "--servers", at,
                                          *args])
             for name, args in [("POLCA", []),
                                ("POLCA + saver, phase-aware",
                                 saver + ["--energy-saver", "phase_aware=true"]),
                                ("POLCA + saver, prefill boost, switch 50ms",
                                 saver + ["--energy-saver", "prefill_boost=50ms"])]}
    print(f"\n### {row}: {base['servers']} servers, uncapped; saver SLO {', '.join(slo)}\n")
    print("| run | decode energy | HP ITL P50 | HP TTFT P99 | LP ITL P50 | LP TTFT P99 "
          "| row energy | within SLO |")
    print("|---|---|---|---|---|---|---|---|")
    best = None
    for name, f in futures.items():
        run = f.result()
        print(row_line(name, run, base))
        if name.startswith("lock") and ok(run, base):
            if best is None or run["gpu_energy"]["decode_j"] < best[1]["gpu_energy"]["decode_j"]:
                best = (name, run)
    print(f"\nbest fixed lock within the SLO: {best[0] if best else 'none'}")
    pb = polca_base.result()
    print(f"\nat {answer} servers (the plan's POLCA answer), against the uncapped row there:\n")
    print("| run | decode energy | HP ITL P50 | HP TTFT P99 | LP ITL P50 | LP TTFT P99 "
          "| row energy | within SLO |")
    print("|---|---|---|---|---|---|---|---|")
    for name, f in polca.items():
        run = f.result()
        line = row_line(name, run, pb)
        if "energy_saver" in run:
            line += f" row cap won {run['energy_saver']['row_cap_won_server_windows']} windows"
        print(line + f" brakes {run['brake_events']}")


def main():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for row, answer in ROWS.items():
            measure(row, answer, pool)


if __name__ == "__main__":
    main()
