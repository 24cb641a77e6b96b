#!/usr/bin/env python3
"""Where the model's energy per token misses a data set's: its time per output token or its
power. For each run of a data set that `headroom model validate` scores on both J per token and
TPOT (ML.ENERGY: `mlenergy-v2`), the errors of the two and the power error they imply
((1 + J error) / (1 + TPOT error) - 1: J per token is power times TPOT over the batch, and the
batch is the run's own), sorted by GPU, model, tensor parallelism and batch. A model that gets
J per token right by two errors that cancel shows it here.

Usage: scripts/energy-time-power.py [HEADROOM_BINARY] [ENGINE] [DATA_SET]
(defaults: build/bin/headroom, vllm, mlenergy-v2). docs/policies.md quotes its table.
"""
import json
import subprocess
import sys

HEADROOM = sys.argv[1] if len(sys.argv) > 1 else "build/bin/headroom"
ENGINE = sys.argv[2] if len(sys.argv) > 2 else "vllm"
DATA_SET = sys.argv[3] if len(sys.argv) > 3 else "mlenergy-v2"


def main():
    out = subprocess.run([HEADROOM, "model", "validate", "--json", "--worst", "1000"],
                         check=True, capture_output=True, text=True).stdout
    cells = {(c["engine"], c["dataset"], c["metric"]): c for c in json.loads(out)["cells"]}
    try:
        energy = cells[(ENGINE, DATA_SET, "j_per_token")]["worst"]
        tpot = {r["source"]: r for r in cells[(ENGINE, DATA_SET, "tpot_ms")]["worst"]}
    except KeyError:
        sys.exit(f"no j_per_token and tpot_ms cells for engine {ENGINE} on {DATA_SET}")
    print("| model | GPU | TP | batch | J/token error | TPOT error | implied power error |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(energy, key=lambda r: (r["gpu"], r["model"], r["tp"], r["batch"])):
        t = tpot.get(r["source"])
        if t is None:
            continue
        power = (1 + r["error"]) / (1 + t["error"]) - 1
        print(f"| {r['model']} | {r['gpu']} | {r['tp']} | {r['batch']} | {100 * r['error']:+.1f}% "
              f"| {100 * t['error']:+.1f}% | {100 * power:+.1f}% |")


if __name__ == "__main__":
    main()
