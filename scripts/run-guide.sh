#!/usr/bin/env bash
# Runs a guide page (docs/guide/*.md) top to bottom, as a reader would from a clean clone: every
# ```sh block in order, in one bash session (variables and `cd` carry over), under
# `set -euo pipefail`, so a command that fails fails the page. ```console and ```text blocks are
# output shown to the reader and are not run. A block right after the line
#   <!-- guide-test: skip: REASON -->
# is not run; the reason is printed, and an empty reason is an error.
#
# It runs in a fresh temporary directory holding links to the checkout's data/ and deploy/, with
# the built `headroom` first on PATH, so that the pages can say `headroom ...` and `data/...` and
# never write into the checkout. Every process the page starts (a daemon in the background) is
# killed when the page ends.
#
# Usage: scripts/run-guide.sh PAGE.md BUILD_DIR [--print]
#   --print: print the script that would run, and run nothing.
#        scripts/run-guide.sh --check-index REPO
#   checks that every page is listed in docs/guide/README.md and linked from README.md.
set -euo pipefail

if [ "${1:-}" = "--check-index" ]; then
  root=${2:?usage: $0 --check-index REPO}
  status=0
  for page in "$root"/docs/guide/*.md; do
    name=$(basename "$page")
    [ "$name" = README.md ] && continue
    grep -q "(${name})" "$root/docs/guide/README.md" ||
      { echo "run-guide: docs/guide/README.md does not link $name" >&2; status=1; }
    grep -q "(docs/guide/${name})" "$root/README.md" ||
      { echo "run-guide: README.md does not link docs/guide/$name" >&2; status=1; }
  done
  [ $status -eq 0 ] && echo "run-guide: every guide page is linked"
  exit $status
fi

if [ $# -lt 2 ]; then
  echo "usage: $0 PAGE.md BUILD_DIR [--print]" >&2
  exit 2
fi
page=$(realpath "$1")
build=$(realpath "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$page" ] || { echo "run-guide: no such page: $1" >&2; exit 2; }
[ -x "$build/bin/headroom" ] || { echo "run-guide: $build/bin/headroom is not built" >&2; exit 2; }

# The page's runnable blocks as one script; each block echoes where it comes from first.
extract() {
  awk -v page="$(basename "$page")" '
    /^<!-- guide-test: skip:/ {
      reason = $0
      sub(/^<!-- guide-test: skip:[ ]*/, "", reason)
      sub(/[ ]*-->[ ]*$/, "", reason)
      if (reason == "") { printf "run-guide: %s:%d: a skip needs a reason\n", page, NR > "/dev/stderr"; exit 3 }
      skip = 1
      next
    }
    !inblock && /^```/ {
      inblock = 1
      lang = substr($0, 4)
      run = (lang == "sh" && !skip)
      if (lang == "sh" && skip) printf "echo %c== %s:%d: skipped (%s)%c\n", 39, page, NR, reason, 39
      if (run) printf "echo %c== %s:%d%c\n", 39, page, NR, 39
      skip = 0
      next
    }
    inblock && /^```[ ]*$/ { inblock = 0; run = 0; next }
    inblock && run { print }
    !inblock && NF > 0 { skip = 0 }
  ' "$page"
}

script=$(extract)
if [ "${3:-}" = "--print" ]; then
  printf '%s\n' "$script"
  exit 0
fi
[ -n "$script" ] || { echo "run-guide: $page has no \`\`\`sh block" >&2; exit 2; }

work=$(mktemp -d)
cleanup() {
  # The page's background daemons share its session; end them before the directory goes.
  if [ -s "$work/.sid" ]; then
    local sid
    sid=$(cat "$work/.sid")
    pkill -TERM -s "$sid" 2>/dev/null || true
    sleep 0.2
    pkill -KILL -s "$sid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
ln -s "$repo/data" "$work/data"
ln -s "$repo/deploy" "$work/deploy"
cd "$work"

export PATH="$build/bin:$PATH"
export HOME="$work"  # nothing the page writes lands in the real home
# Runs the page in its own session, so cleanup can find everything it started.
printf 'echo $$ > .sid\nset -euo pipefail\n%s\n' "$script" >"$work/.guide.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM
set +e
setsid --wait bash "$work/.guide.sh" &
wait $!  # in the background, so that a signal to this script runs the cleanup at once
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  echo "run-guide: $(basename "$page") failed (exit $rc)" >&2
fi
exit "$rc"
