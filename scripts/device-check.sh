#!/usr/bin/env bash
# Read-only checks on a machine with a real NVIDIA GPU: measures a compute-bound kernel (like
# prefill), a memory-bound one (like decode) and idle through `headroom measure`, and writes a
# JSON summary (power per phase, counter vs integrated energy, the sampling period and counter
# update period observed). It never changes power limits, clocks or MIG mode, and never resets
# the GPU. Without a GPU it says so and exits 0.
# Usage: [HEADROOM_BIN=path] scripts/device-check.sh [OUT.json] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-device-check.json}
seconds=${2:-10}

if ! ldconfig -p 2>/dev/null | grep 'libnvidia-ml.so.1' >/dev/null && [ -z "${HEADROOM_NVML_LIBRARY:-}" ]; then
  echo "device-check: no NVIDIA driver (libnvidia-ml.so.1) on this machine; nothing to check."
  exit 0
fi

# HEADROOM_BIN: a headroom binary built elsewhere (for machines without the build dependencies).
headroom=${HEADROOM_BIN:-}
if [ -z "$headroom" ]; then
  make build >/dev/null
  headroom=build/bin/headroom
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$headroom" gpus --backend nvml --json > "$work/gpus.json"

runs=(idle)
"$headroom" measure --backend nvml --gpus 0 --interval 50ms --json --out "$work/idle.csv" \
  -- sleep "$seconds" > "$work/idle.json"

if command -v nvcc >/dev/null 2>&1; then
  mkdir -p build/device-check
  nvcc -O3 -o build/device-check/kernels scripts/device-check/kernels.cu
  for kind in compute memory; do
    if "$headroom" measure --backend nvml --gpus 0 --interval 50ms --json --out "$work/$kind.csv" \
        -- build/device-check/kernels "$kind" "$seconds" > "$work/$kind.raw"; then
      sed -n '/^{/,$p' "$work/$kind.raw" > "$work/$kind.json"
      runs+=("$kind")
    else
      echo "device-check: the $kind kernel failed (see above); skipping it." >&2
    fi
  done
else
  echo "device-check: nvcc not found; measuring idle only." >&2
fi

python3 - "$work" "$out" "${runs[@]}" <<'PY'
import csv, json, statistics, sys
work, out, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
summary = {"gpus": json.load(open(f"{work}/gpus.json"))["gpus"], "runs": {}}
for run in runs:
    m = json.load(open(f"{work}/{run}.json"))
    g = m["gpus"][0]
    times = [float(r["time_s"]) for r in csv.DictReader(open(f"{work}/{run}.csv"))]
    gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
    summary["runs"][run] = {
        "duration_s": g["duration_s"],
        "energy_j": g["energy_j"], "energy_source": g["energy_source"],
        "counter_energy_j": g["counter_energy_j"], "integrated_energy_j": g["integrated_energy_j"],
        "counter_vs_integration": g["counter_vs_integration"],
        "counter_update_period_s": g["counter_update_period_s"],
        "sampling_period_observed_s": statistics.median(gaps) if gaps else None,
        "avg_power_w": g["avg_power_w"], "peak_power_w": g["peak_power_w"],
        "driver_power_samples": g.get("driver_power_samples"),
        "time_power_capped_s": g["time_power_capped_s"],
        "phases": m["phases"],
    }
json.dump(summary, open(out, "w"), indent=2)
print(f"device-check: wrote {out}")
PY
