#!/usr/bin/env bash
# Sensitivity of the POLCA capacity result (docs/reproduction.md) to its thresholds, the
# out-of-band actuation delay, the load level, the rest of the server's power and the LP latency SLO: one `headroom plan` per
# variant of the built-in scenario, POLCA against the uncapped baseline, one Markdown table row
# each, on 3 planning and 3 unseen weeks (the table in docs/reproduction.md; the scenario's
# default is 2 and 2, docs/row-simulator.md).
# Usage: scripts/polca-sensitivity.sh [HEADROOM_BINARY] (default build/bin/headroom).
# Takes one to three minutes per row on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
headroom=${1:-build/bin/headroom}
base=data/scenarios/polca-a100-row.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# variant NAME SED-EXPRESSION [extra plan flags...]: the scenario edited by sed, then planned.
variant() {
  local name=$1 edit=$2
  shift 2
  sed -e "$edit" "$base" > "$work/s.yaml"
  "$headroom" plan --config "$work/s.yaml" --policies polca --weeks 3 --validate 3 --json "$@" \
    > "$work/p.json"
  python3 - "$name" "$work/p.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
p = json.load(open(path))
b = p["baseline"]
pol = p["policies"][0]
unseen = f"{pol['validated_weeks']}/{p['validation_weeks']}"
if pol['searched_servers'] > pol['max_servers']:
    unseen += f", was {pol['searched_servers']}"
print(f"| {name} | {b['row_power']['peak_frac']*100:.1f}% | {pol['max_servers']} | "
      f"{pol['extra_pct']:+.0f}% | {pol['hp_p50_impact_pct']:+.2f}% | {pol['lp_p50_impact_pct']:+.2f}% | "
      f"{pol['brake_events']} | {unseen} | {pol['limit']} |")
PY
}

echo "| variant | baseline peak | POLCA servers | extra | HP P50 | LP P50 | brakes | unseen weeks | next server fails on |"
echo "|---|---|---|---|---|---|---|---|---|"
variant "default (T1 0.80, T2 0.89, 40 s, LP P50 SLO +5%)" "s/^seed: 1/seed: 1/"
variant "T1 = 0.75" "s/^seed: 1/seed: 1/" --set t1=0.75
variant "T1 = 0.85" "s/^seed: 1/seed: 1/" --set t1=0.85
variant "T2 = 0.85" "s/^seed: 1/seed: 1/" --set t2=0.85
variant "T2 = 0.93" "s/^seed: 1/seed: 1/" --set t2=0.93
variant "actuation delay 5 s" "s/^  cap_delay: 40s/  cap_delay: 5s/"
variant "actuation delay 120 s" "s/^  cap_delay: 40s/  cap_delay: 120s/"
variant "in-band caps (10 ms)" "s/^  in_band: false/  in_band: true/"
variant "load x0.8" "s/_rate_per_server: 0.3299/_rate_per_server: 0.26392/"
variant "load x1.2" "s/_rate_per_server: 0.3299/_rate_per_server: 0.39588/"
variant "non-GPU power constant 3.3 kW (the previous model)" \
  "s/^  hp_server_fraction: 0.5/  hp_server_fraction: 0.5\n  non_gpu_idle_w: 3300/"
variant "non-GPU power as MLPerf MaxQ (1,040 W idle, 1,400 W at load)" \
  "s/^  hp_server_fraction: 0.5/  hp_server_fraction: 0.5\n  non_gpu_idle_w: 1040\n  non_gpu_at_load_w: 1400/"
variant "LP judged by throughput only (paper)" "s/^seed: 1/seed: 1/" --slo lp_p50_e2e_pct=1000
