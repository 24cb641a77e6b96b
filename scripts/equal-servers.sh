#!/usr/bin/env bash
# The latency cost of each policy at equal servers (issue 49): the built-in A100 and H100 rows at
# 48, 50 and 52 servers, planning week 1 (seed 1, the scenario's bursts), each policy against the
# uncapped row (`none`) at the same count. One Markdown table row per (row, servers, policy):
# HP P50 and P99 and LP P50 end-to-end change, brake events, share of server-time capped.
# docs/policies.md and docs/reproduction.md quote it.
# Usage: scripts/equal-servers.sh [HEADROOM_BINARY] (default build/bin/headroom). About 15 s a
# run, 18 runs, two at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
headroom=${1:-build/bin/headroom}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=(polca-a100-row polca-h100-row)
counts=(48 50 52)
policies=(none polca mix-aware)

for row in "${rows[@]}"; do
  for n in "${counts[@]}"; do
    for p in "${policies[@]}"; do echo "$row $n $p"; done
  done
done | xargs -P 2 -L 1 bash -c \
  "\"$headroom\" simulate --config \"\$0\" --servers \"\$1\" --policy \"\$2\" --json > \"$work/\$0-\$1-\$2.json\""

echo "| row | servers | policy | HP P50 | HP P99 | LP P50 | brakes | capped |"
echo "|---|---|---|---|---|---|---|---|"
python3 - "$work" "${rows[*]}" "${counts[*]}" "${policies[*]}" <<'PY'
import json, sys
work, rows, counts, policies = sys.argv[1], *(a.split() for a in sys.argv[2:])
def load(row, n, p):
    return json.load(open(f"{work}/{row}-{n}-{p}.json"))
def change(run, base, cls, key):
    return f"{100 * (run[cls][key] / base[cls][key] - 1):+.2f}%"
for row in rows:
    for n in counts:
        base = load(row, n, "none")
        for p in policies[1:]:
            r = load(row, n, p)
            print(f"| {row} | {n} | {p} | {change(r, base, 'hp', 'e2e_p50_s')} | "
                  f"{change(r, base, 'hp', 'e2e_p99_s')} | {change(r, base, 'lp', 'e2e_p50_s')} | "
                  f"{r['brake_events']} | {100 * r['capped_server_fraction']:.1f}% |")
PY
