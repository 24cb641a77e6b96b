#!/usr/bin/env bash
# Fails, listing the files, when any tracked C++ file differs from .clang-format's layout.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(git ls-files '*.h' '*.cc')
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: these files need 'make format':" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ok"
