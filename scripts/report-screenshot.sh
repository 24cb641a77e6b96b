#!/usr/bin/env bash
# A picture of a report: headless Chromium renders DIR/report.html and saves the top of the page
# as a PNG (the README's picture is `make run`'s report, taken with this script).
# Usage: scripts/report-screenshot.sh DIR OUT.png [WIDTHxHEIGHT]   (default 1200x1500)
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 DIR OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
report=$(realpath "$1")/report.html
[ -f "$report" ] || { echo "report-screenshot: no $report (make one with --report)" >&2; exit 2; }
command -v chromium >/dev/null || { echo "report-screenshot: chromium is not installed" >&2; exit 1; }
size=${3:-1200x1500}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size="${size/x/,}" \
  --screenshot="$(realpath -m "$2")" "file://$report" 2>/dev/null
echo "wrote $2"
