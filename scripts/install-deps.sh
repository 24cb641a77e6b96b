#!/usr/bin/env bash
# Installs the Debian packages that headroom's build and tests need.
# Idempotent: packages already present are skipped, and `apt-get update` runs only when
# something is missing. Usage: scripts/install-deps.sh [--check]
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  ccache mold                   # compiler cache and fast linker (cmake/BuildSpeed.cmake)
  clang clang-format            # format check and the thread-safety build
  libclang-rt-14-dev            # libFuzzer and the sanitizers for clang (make fuzz)
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libyaml-cpp-dev libexpected-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libnlopt-cxx-dev              # derivative-free fitting of the inference model
  libkissfft-dev                # FFT of the training row's power swings (sim/power_spectrum)
  gnuplot-nox                   # plots (SVG) of characterizations and reports
  chromium libpng-dev           # tests: report.html rendered in headless Chromium, screenshot decoded
  python3-yaml yamllint         # deploy/check.sh: the deployment files parse
  universal-ctags               # scripts/check-function-size.sh: no function over 80 lines
  prometheus                    # promtool checks deploy/prometheus (and a real server for tests)
  libcpp-httplib-dev            # HTTP(S) server and client of the agent and controller (service/)
  libssl-dev                    # the HTTP connection front's TLS handshakes (service/http_connections.cc)
  openssl                       # tests: a self-signed certificate for the HTTPS agents
  curl                          # docs/guide/deploy.md talks to the agents and the controller
  lintian                       # tests/package_test.sh: the .deb has no lintian errors
  man-db                        # tests/package_test.sh: man -w headroom-plan after the install
  systemd                       # systemd-analyze verify of the units (deploy/check.sh, package test)
  slurmctld slurmd slurm-client # tests: a local Slurm cluster (scripts/slurm-local.sh)
  munge                         # its authentication daemon (run by slurm-local.sh, not as a service)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "missing packages: ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: these Debian packages are missing: ${missing[*]}" >&2
  echo "install-deps: run as root (sudo $0) or install them with apt-get." >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
