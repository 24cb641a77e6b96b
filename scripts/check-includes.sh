#!/usr/bin/env bash
# Enforces the module dependency direction of docs/architecture.md on #include "..." lines:
# a file in src/<module>/ may include only its own module and the modules below it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each module and the modules it may include (besides itself).
declare -A allowed=(
  [core]=""
  [format]="core"
  [model]="core"
  [mig]="core model"
  [catalog]="core model mig"
  [policy]="core model"
  [gpu]="core model mig"
  [telemetry]="core model gpu"
  [sim]="core model mig catalog policy gpu telemetry"
  [report]="core format model mig policy gpu telemetry sim"
  [cluster]="core"
  [service]="core format model mig catalog policy gpu telemetry"
  [app]="core format model mig catalog policy gpu telemetry sim report cluster service"
  [console]="core format"
  [cli]="core format app report cluster console"
)
# Tests (and their *_test_support.h fixtures) may also use the catalog (calibration against the
# shipped data) and testing doubles.
test_extra="catalog"

status=0
while IFS= read -r file; do
  module=$(echo "$file" | cut -d/ -f2)
  [ -n "${allowed[$module]+x}" ] || { echo "check-includes: $file: unknown module '$module'" >&2; status=1; continue; }
  ok=" $module ${allowed[$module]} "
  case "$file" in *_test.cc | *_test_support.h) ok="$ok $test_extra " ;; esac
  while IFS= read -r inc; do
    dep=$(echo "$inc" | sed -E 's/#include "([^/"]+)\/.*/\1/')
    if [[ "$ok" != *" $dep "* ]]; then
      echo "check-includes: $file includes \"$dep/...\" but $module may use only:${allowed[$module]:- (nothing)}" >&2
      status=1
    fi
  done < <(grep -E '^#include "[^"]+/' "$file" || true)
done < <(git ls-files 'src/*.h' 'src/*.cc')
[ $status -eq 0 ] && echo "check-includes: ok"
exit $status
