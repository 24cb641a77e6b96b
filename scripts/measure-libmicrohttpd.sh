#!/usr/bin/env bash
# Measures what a hostile client sees when Debian's libmicrohttpd (0.9.75) enforces the limits
# that the HTTP connection front (src/service/http_connections.h) enforces today: the
# measurement behind docs/architecture.md "The HTTP front" (issue 46). Prints one line per case.
#
# Not part of `make test` or CI: it needs libmicrohttpd-dev (`apt-get install libmicrohttpd-dev`),
# which scripts/install-deps.sh and CI do not install. Takes about 15 s (it trickles a header
# past the library's timeout in real time).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! pkg-config --exists libmicrohttpd; then
  echo "measure-libmicrohttpd: needs libmicrohttpd-dev (apt-get install libmicrohttpd-dev)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046  # pkg-config's flags are meant to split
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -o "$work/mhd-probe" scripts/mhd-probe.c \
  $(pkg-config --cflags --libs libmicrohttpd)
# libmicrohttpd's own log (MHD_USE_ERROR_LOG) goes to stderr, prefixed so it reads apart.
"$work/mhd-probe" 2> >(sed -u 's/^/  libmicrohttpd log: /' >&2)
