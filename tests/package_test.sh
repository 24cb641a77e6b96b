#!/bin/bash
# The Debian package end to end, on this machine (issue 21): build it with CPack from BUILD_DIR,
# check its metadata and lintian (no errors), install it with dpkg, check what an SRE would use
# (the binary, the units under systemd-analyze verify, man pages, completion, the controller's
# user and the conffiles' group, nothing enabled or started), remove it (conffiles stay), purge it,
# and check that the machine is as it was before the install.
# Needs root and a machine where no headroom package is installed (exit 77, skipped, otherwise).
#   tests/package_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || skip "installs a package into this machine: needs root"
command -v dpkg >/dev/null || skip "no dpkg here"
if dpkg-query -W -f='${db:Status-Status}' headroom 2>/dev/null | grep -qv '^not-installed$'; then
  skip "a headroom package is installed here; not touching it"
fi

work=$(mktemp -d)
cleanup() {
  # Leave the machine as it was even when a check failed halfway.
  if dpkg-query -W headroom >/dev/null 2>&1; then dpkg --purge headroom >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== build"
(cd "$build" && cpack -G DEB -B "$work/package" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/package/headroom_*.deb)
echo "$deb"

echo "== metadata"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libfmt libspdlog libyaml-cpp libcpp-httplib libnlopt libkissfft libssl libstdc++6; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in ./usr/bin/headroom ./usr/libexec/headroom/headroom-daemon \
  ./lib/systemd/system/headroom-agent.service \
  ./lib/systemd/system/headroom-controller.service ./usr/lib/sysusers.d/headroom.conf \
  ./etc/headroom/agent.env ./etc/headroom/row.yaml \
  ./usr/share/bash-completion/completions/headroom ./usr/share/man/man1/headroom.1.gz \
  ./usr/share/man/man1/headroom-plan.1.gz ./usr/share/doc/headroom/copyright \
  ./usr/share/doc/headroom/changelog.gz ./usr/share/doc/headroom/deploy.md \
  ./usr/share/headroom/deploy/kubernetes/kustomization.yaml \
  ./usr/share/headroom/deploy/container/Containerfile; do
  grep -qx "$path" <<<"$contents" || fail "the package lacks $path"
done
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)
[ "$conffiles" = $'/etc/headroom/agent.env\n/etc/headroom/row.yaml' ] || fail "conffiles: $conffiles"

echo "== lintian"
if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$deb" >"$work/lintian.log" 2>&1 || true
  cat "$work/lintian.log"
  if grep -q '^E: ' "$work/lintian.log"; then fail "lintian reports errors"; fi
else
  fail "lintian is not installed (scripts/install-deps.sh installs it)"
fi

# What exists before, to compare after the purge: the trees a package may touch, without dpkg's
# and man-db's own bookkeeping.
snapshot() {
  find /etc /lib/systemd /usr/bin /usr/libexec/headroom /usr/lib/sysusers.d /usr/share/doc /usr/share/man \
    /usr/share/bash-completion /usr/share/headroom /var/lib/headroom /var/log/headroom \
    -xdev 2>/dev/null | sort || true
}
snapshot >"$work/before"

echo "== install"
# Slim Debian images exclude man pages and docs from every package (dpkg path-exclude); take
# this package's back in, as a real install on a GPU server would have them.
dpkg -i --path-include='/usr/share/man/man1/headroom*' --path-include='/usr/share/doc/headroom/*' \
  "$deb"
[ -x /usr/bin/headroom ] || fail "/usr/bin/headroom missing"
version=$(/usr/bin/headroom --version)
[[ $version == "headroom "* ]] || fail "headroom --version: $version"
# Captured first: under pipefail, `grep -q` quitting at its match would SIGPIPE a help longer
# than one write and fail the pipeline.
help=$(/usr/bin/headroom plan --help) || fail "headroom plan --help exited $?"
[[ $help == *--scenario* ]] || fail "headroom plan --help does not list --scenario"
# The daemons run in headroom-daemon, which `headroom agent` becomes: it reads the token file.
out=$(/usr/bin/headroom agent --token-file "$work/no-token" 2>&1) && fail "agent without a token ran"
[[ $out == *"$work/no-token: cannot open"* ]] || fail "headroom agent did not reach the daemon: $out"
getent passwd headroom >/dev/null || fail "no user headroom"
[ "$(stat -c %G /etc/headroom/row.yaml)" = headroom ] || fail "row.yaml is not group headroom"
[ "$(stat -c %a /etc/headroom/row.yaml)" = 640 ] || fail "row.yaml is not 0640"
grep -q '^ExecStart=/usr/bin/headroom agent ' /lib/systemd/system/headroom-agent.service ||
  fail "the agent unit does not run /usr/bin/headroom"
command -v systemd-analyze >/dev/null ||
  fail "systemd-analyze is not installed (scripts/install-deps.sh installs systemd)"
out=$(systemd-analyze verify /lib/systemd/system/headroom-agent.service \
  /lib/systemd/system/headroom-controller.service 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
echo "ok: systemd-analyze verify"

for unit in headroom-agent headroom-controller; do
  if find /etc/systemd/system -name "$unit.service" 2>/dev/null | grep . >/dev/null; then
    fail "$unit was enabled by the package"
  fi
done
if [ -d /run/systemd/system ] && systemctl is-active --quiet headroom-agent.service; then
  fail "the agent was started by the package"
fi
command -v man >/dev/null || fail "man is not installed (scripts/install-deps.sh installs man-db)"
man -w headroom >/dev/null || fail "man -w headroom"
man -w headroom-plan >/dev/null || fail "man -w headroom-plan"
man_warnings=$(man --warnings -E UTF-8 -l -Tutf8 -Z "$(man -w headroom-plan)" 2>&1 >/dev/null)
[ -z "$man_warnings" ] || fail "headroom-plan(1) has roff warnings: $man_warnings"
[ -s /usr/share/bash-completion/completions/headroom ] || fail "no bash completion"

echo "== remove"
echo "# an operator's edit" >>/etc/headroom/agent.env
dpkg -r headroom
[ ! -e /usr/bin/headroom ] || fail "/usr/bin/headroom left after dpkg -r"
grep -q "an operator's edit" /etc/headroom/agent.env || fail "dpkg -r removed an edited conffile"

echo "== purge"
dpkg --purge headroom
# The system user stays (Debian leaves system users in place); everything else goes.
snapshot >"$work/after"
if ! diff "$work/before" "$work/after"; then fail "the purge left the files above"; fi
echo "ok: the package installs, works, and leaves nothing behind but the user headroom"
