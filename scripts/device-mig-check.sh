#!/usr/bin/env bash
# Read-only MIG checks on a machine with a real NVIDIA GPU, to validate headroom's NVML MIG
# struct layouts and its MIG catalog against the driver. Runs, each into OUT_DIR:
#   gpus.json           headroom gpus --backend nvml --json
#   mig-show.json       headroom mig show --backend nvml --json
#   mig-profiles.json   headroom mig show --profiles --backend nvml --json
#   mig-profiles.txt    the same table as text
#   nvidia-smi-lgip.txt, nvidia-smi-lgipp.txt   nvidia-smi mig -lgip / -lgipp, when installed
# with each command's stderr beside it (FILE.stderr), continuing past failures, and prints one
# summary line per command. Nothing here changes the GPU: no MIG mode change, no instance
# created or destroyed (it never runs `mig apply`), no power limit or clock, no reset.
# Without an NVIDIA driver it says so and exits 0. Exit: 0 once every command has run (their
# outcomes are in the summary lines), 2 on bad usage.
# Usage: [HEADROOM_BIN=build/bin/headroom] scripts/device-mig-check.sh OUT_DIR
set -uo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: [HEADROOM_BIN=path] $0 OUT_DIR" >&2
  exit 2
fi
out=$1

if ! ldconfig -p 2>/dev/null | grep 'libnvidia-ml.so.1' >/dev/null && [ -z "${HEADROOM_NVML_LIBRARY:-}" ]; then
  echo "device-mig-check: no NVIDIA driver (libnvidia-ml.so.1) on this machine; nothing to check."
  exit 0
fi

headroom=${HEADROOM_BIN:-build/bin/headroom}
if [ ! -x "$headroom" ]; then
  echo "device-mig-check: no headroom binary at '$headroom' (build it, or set HEADROOM_BIN)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2

# run NAME FILE COMMAND...: stdout to OUT_DIR/FILE, stderr beside it, one summary line.
run() {
  local name=$1 file=$2
  shift 2
  local rc=0
  timeout 120 "$@" > "$out/$file" 2> "$out/$file.stderr" || rc=$?
  local note=""
  case "$file" in
    mig-profiles.json)
      if grep -q '"match": false' "$out/$file"; then note="; profiles DIFFER from the catalog"
      elif grep -q '"match": true' "$out/$file"; then note="; profiles match the catalog"
      fi ;;
  esac
  local err
  err=$(tail -n 1 "$out/$file.stderr" 2>/dev/null)
  [ -n "$err" ] && note="$note; stderr: $err"
  echo "device-mig-check: $name: exit $rc, $(wc -c < "$out/$file") bytes -> $out/$file$note"
}

run "gpus" gpus.json "$headroom" gpus --backend nvml --json
run "mig show" mig-show.json "$headroom" mig show --backend nvml --json
run "mig show --profiles" mig-profiles.json "$headroom" mig show --profiles --backend nvml --json
run "mig show --profiles (text)" mig-profiles.txt "$headroom" mig show --profiles --backend nvml
if command -v nvidia-smi >/dev/null 2>&1; then
  run "nvidia-smi mig -lgip" nvidia-smi-lgip.txt nvidia-smi mig -lgip
  run "nvidia-smi mig -lgipp" nvidia-smi-lgipp.txt nvidia-smi mig -lgipp
else
  echo "device-mig-check: nvidia-smi not found; no driver listing to compare with"
fi
exit 0
