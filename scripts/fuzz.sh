#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (built by `make clang-tsa` into build-clang/fuzz/):
# first every kept regression input once (fuzz/regressions/TARGET: each crash ever found), then
# each target for a bounded time from its seed corpus (fuzz/corpus/TARGET). New inputs and crash
# artifacts go under build-clang/fuzz-work/, never into the tree. Prints one line per target
# (executions, rate, corpus) and exits 1 if any target crashed, with the command to reproduce.
# Usage: scripts/fuzz.sh [--seconds N] [--jobs J] [TARGET...]   (docs/fuzzing.md)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
jobs=$(nproc 2>/dev/null || echo 2)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case "$seconds" in '' | *[!0-9]*) echo "fuzz.sh: --seconds '$seconds' is not a whole number" >&2; exit 2 ;; esac

bin=build-clang/fuzz
work=build-clang/fuzz-work
if [ ! -d "$bin" ]; then
  echo "fuzz.sh: no fuzz targets in $bin: build them with 'make clang-tsa'" >&2
  exit 2
fi
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$bin"/*_fuzzer; do targets+=("$(basename "$f" _fuzzer)"); done
fi
for t in "${targets[@]}"; do
  [ -x "$bin/${t}_fuzzer" ] || { echo "fuzz.sh: no target '$t' in $bin" >&2; exit 2; }
  [ -d "fuzz/corpus/$t" ] || { echo "fuzz.sh: target '$t' has no seed corpus fuzz/corpus/$t" >&2; exit 2; }
done
mkdir -p "$work/logs" "$work/artifacts"

# One target: replay its regressions, then fuzz. Output goes to its log; the last line of stdout
# is its summary.
run_one() {
  local t=$1 seconds=$2 bin=$3 work=$4
  local exe="$bin/${t}_fuzzer" log="$work/logs/$t.log"
  mkdir -p "$work/corpus/$t"
  : >"$log"
  local regressions=()
  if [ -d "fuzz/regressions/$t" ]; then
    mapfile -t regressions < <(find "fuzz/regressions/$t" -type f | sort)
  fi
  if [ ${#regressions[@]} -gt 0 ] &&
    ! "$exe" -timeout=10 -rss_limit_mb=2048 "${regressions[@]}" >>"$log" 2>&1; then
    printf '%-18s FAILED on a kept regression input (log: %s)\n' "$t" "$log"
    return 1
  fi
  local status=0
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=1 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" \
    "$work/corpus/$t" "fuzz/corpus/$t" >>"$log" 2>&1 || status=$?
  local execs rate corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$work/corpus/$t" "fuzz/corpus/$t" -type f | wc -l)
  if [ $status -ne 0 ]; then
    local artifact
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    printf '%-18s CRASHED after %s executions: reproduce with %s %s (log: %s)\n' \
      "$t" "${execs:-?}" "$exe" "${artifact:-?}" "$log"
    return 1
  fi
  printf '%-18s %5d s %10d executions %8d/s %6d inputs %2d regressions, 0 crashes\n' \
    "$t" "$seconds" "${execs:-0}" "${rate:-0}" "$corpus" "${#regressions[@]}"
}
export -f run_one

echo "fuzz.sh: ${#targets[@]} targets, ${seconds} s each, ${jobs} at a time"
status=0
printf '%s\n' "${targets[@]}" |
  xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {} "$seconds" "$bin" "$work" || status=1
if [ $status -ne 0 ]; then
  echo "fuzz.sh: a target failed; keep each new crash as fuzz/regressions/TARGET/NAME once fixed" >&2
fi
exit $status
