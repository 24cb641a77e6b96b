#!/usr/bin/env bash
# Enforces the house rule "no function over 80 lines" (docs/architecture.md) on src/: each
# function's first to last line as Universal Ctags finds them (a lambda counts in the function
# that holds it; a gtest TEST body is not a function to ctags and is not counted).
set -euo pipefail
cd "$(dirname "$0")/.."
readonly max_lines=80

# ctags prints one function per line: name, file, the pattern, and fields line:N and end:M.
git ls-files 'src/*.h' 'src/*.cc' |
  ctags --languages=C++ --kinds-C++=f --fields=+ne -o - -L - |
  awk -F'\t' -v max="${MAX_LINES:-$max_lines}" '
    { start = end = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) start = substr($i, 6)
        if ($i ~ /^end:/) end = substr($i, 5)
      }
      if (start != "" && end != "" && end - start + 1 > max) {
        printf "check-function-size: %s:%s: %s is %d lines (at most %d)\n", $2, start, $1, end - start + 1, max > "/dev/stderr"
        bad = 1
      } }
    END { if (bad) exit 1; print "check-function-size: ok" }'
