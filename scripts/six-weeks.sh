#!/usr/bin/env bash
# POLCA's production claim (brief §3): over six weeks at +30% servers, zero power-brake events
# for POLCA against 10 to 10,000 for the baselines. Each policy simulated on six synthesized weeks
# of the built-in scenario (seeds 1 to 6) at 52 servers (+30%), every run to its end (no early
# stop, unlike a plan), one Markdown table row per policy: brake events and over-budget episodes
# summed over the weeks, and the weeks with any. docs/reproduction.md quotes it.
# Usage: scripts/six-weeks.sh [HEADROOM_BINARY] (default build/bin/headroom). About 10 s a run,
# 42 runs, two at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
headroom=${1:-build/bin/headroom}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
policies=(none brake-only polca uniform power-cap polca-ladder mix-aware)

for p in "${policies[@]}"; do
  for seed in 1 2 3 4 5 6; do echo "$p $seed"; done
done | xargs -P 2 -L 1 bash -c \
  "\"$headroom\" simulate --oversubscription 30% --policy \"\$0\" --seed \"\$1\" --json > \"$work/\$0-\$1.json\""

echo "| policy (52 servers, +30%) | brake events | weeks with a brake | over-budget episodes | weeks over budget |"
echo "|---|---|---|---|---|"
for p in "${policies[@]}"; do
  python3 - "$p" "$work" <<'PY'
import json, sys
policy, work = sys.argv[1], sys.argv[2]
runs = [json.load(open(f"{work}/{policy}-{seed}.json")) for seed in range(1, 7)]
brakes = [r["brake_events"] for r in runs]
over = [r["over_budget_episodes"] for r in runs]
print(f"| {policy} | {sum(brakes)} | {sum(b > 0 for b in brakes)} of 6 | {sum(over)} | "
      f"{sum(o > 0 for o in over)} of 6 |")
PY
done
