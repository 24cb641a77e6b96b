#!/usr/bin/env bash
# Brings up a real, minimal Slurm cluster on this machine for integration tests, and tears
# it down: one munged, one slurmctld and one slurmd, all as root, all on 127.0.0.1, every
# file of theirs (config, key, sockets, state, spool, pid files, logs) inside DIR.
#
# Usage:
#   scripts/slurm-local.sh check       exit 0 if a local cluster can start here; else one
#                                      line on stderr saying why, exit 2 (tests skip on it)
#   scripts/slurm-local.sh start DIR   start a cluster in DIR (created if missing); on success
#                                      prints only `export SLURM_CONF=DIR/slurm.conf` on stdout:
#                                        eval "$(scripts/slurm-local.sh start "$dir")"
#   scripts/slurm-local.sh stop DIR    cancel its jobs, stop its daemons, leave no process
#                                      behind; idempotent (exit 0 when nothing runs)
# SLURM_LOCAL_DEBUG=debug2 (any SlurmctldDebug level) makes the daemons' logs verbose.
#
# The cluster: one node, NODE_NAME below (NodeAddr 127.0.0.1), whose `nproc` CPUs are
# described as that many single-thread cores (select/cons_tres, CR_Core: that many 1-CPU
# tasks of an array run at once, whatever the machine's SMT), with ~90% of MemTotal; one
# partition, PARTITION below, the default. With SLURM_CONF set, sbatch, squeue, scontrol, scancel and sinfo
# work from a plain shell (the munge socket is named by AuthInfo in slurm.conf).
#
# What it is not:
# - No accounting (accounting_storage/none, jobacct_gather/none): `sacct` does not work.
#   A finished job stays in slurmctld's memory for MinJobAge (300 s): within that time
#   `squeue -j ID -t all` and `scontrol show job ID` give its final state and ExitCode.
# - No cgroups and no systemd: proctrack/linuxproc (processes tracked by parentage),
#   task/none, no memory or CPU confinement. Jobs run as root.
# - Each start picks two free TCP ports, so clusters in different DIRs can run at once
#   (each believes it has all the CPUs); starts are serialized by a machine-wide lock
#   (LOCK_FILE), held until the daemons listen, so two cannot pick the same ports.
set -euo pipefail

readonly NODE_NAME=localnode
readonly PARTITION=debug
readonly PORT_MIN=17000 PORT_MAX=27999  # below the ephemeral range (32768-60999)
readonly LOCK_FILE=/tmp/slurm-local.lock
readonly START_TIMEOUT=30

log() { echo "slurm-local: $*" >&2; }

usage() {
  sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
}

# check: prints why a local cluster cannot start, or nothing. Exit status 0 when it can.
why_not() {
  if [ "$EUID" -ne 0 ]; then
    echo "not root: a local Slurm cluster runs its daemons as root"
    return 1
  fi
  local b
  for b in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
      echo "$b not installed: run scripts/install-deps.sh"
      return 1
    fi
  done
  if ! "$(sbin slurmctld)" -V >/dev/null 2>&1; then
    echo "slurmctld does not run here: $("$(sbin slurmctld)" -V 2>&1 | head -n 1)"
    return 1
  fi
  if [ ! -r /proc/net/tcp ]; then
    echo "/proc/net/tcp not readable: cannot pick free ports"
    return 1
  fi
}

sbin() { if command -v "$1" >/dev/null 2>&1; then command -v "$1"; else echo "/usr/sbin/$1"; fi; }

# A pid is ours and running if its pid file names a live process (not a zombie, which an
# init that does not reap would leave) whose command is the expected one.
pid_of() {  # FILE COMM -> prints the pid when alive
  local file=$1 comm=$2 pid
  [ -s "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [ -n "$pid" ] && alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  echo "$pid"
}

alive() {
  local state
  state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# Waits up to $2 seconds for every pid in $1 (space-separated) to exit.
wait_gone() {
  local pids=$1 deadline=$((SECONDS + $2)) p left
  while :; do
    left=
    for p in $pids; do alive "$p" && left+=" $p"; done
    [ -z "$left" ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

# TERM, then KILL after $2 seconds, the pids in $1.
terminate() {
  local pids=$1 grace=$2 p
  [ -n "${pids// /}" ] || return 0
  for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
  wait_gone "$pids" "$grace" && return 0
  for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
  wait_gone "$pids" 5
}

# The daemons of the cluster in DIR and the slurmstepds that its slurmd forked for jobs:
# Slurm and munge processes with their working directory or an open file under DIR (their
# logs). A slurmstepd rewrites its environment for its process title, so no variable
# could mark it; nor could its parent, which is init once it runs.
# With a second argument, only the processes whose command name is that.
cluster_pids() {
  local dir=$1 only=${2:-} p exe
  # One find over all processes' cwd and fds (a readlink per process would take a second).
  find /proc/[0-9]*/cwd /proc/[0-9]*/fd -maxdepth 1 -lname "$dir/*" 2>/dev/null | cut -d/ -f3 | sort -un |
    while read -r p; do
      exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
      case "${exe##*/}" in slurm* | munged*) ;; *) continue ;; esac
      [ -z "$only" ] || [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$only" ] || continue
      if alive "$p"; then echo "$p"; fi
    done || true  # find fails on processes that end while it looks
}

# The pids in $@ and all their descendants (job tasks under a slurmstepd).
with_descendants() {
  local -A keep=()
  local p changed=1 stat ppid
  for p in "$@"; do keep[$p]=1; done
  while [ "$changed" -eq 1 ]; do
    changed=0
    for stat in /proc/[0-9]*/stat; do
      p=${stat#/proc/}
      p=${p%/stat}
      [ -n "${keep[$p]:-}" ] && continue
      # Field 4 is the ppid; the command (field 2) may hold spaces, so cut after its ')'.
      ppid=$(sed 's/.*) [A-Za-z] \([0-9]*\).*/\1/' "$stat" 2>/dev/null) || continue
      if [ -n "$ppid" ] && [ -n "${keep[$ppid]:-}" ]; then
        keep[$p]=1
        changed=1
      fi
    done
  done
  echo "${!keep[@]}"
}

# Ports listening on any address, from /proc (no dependency on ss or netstat).
listening_ports() {
  local hex
  # Field 2 is ADDR:PORT in hex, field 4 the state, 0A for LISTEN (awk filters the
  # thousands of lines a busy machine may have; bash converts the few that remain).
  awk 'FNR > 1 && $4 == "0A" { sub(/.*:/, "", $2); print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
    while read -r hex; do echo $((16#$hex)); done
}

# Two free ports: consecutive from a random point, skipping those that listen.
pick_ports() {
  local used port span=$((PORT_MAX - PORT_MIN)) tries=0 found=()
  used=" $(listening_ports | sort -u | tr '\n' ' ') "
  port=$((PORT_MIN + (RANDOM * 32768 + RANDOM) % span))
  while [ "${#found[@]}" -lt 2 ]; do
    tries=$((tries + 1))
    if [ "$tries" -gt "$span" ]; then
      log "no free port in $PORT_MIN-$PORT_MAX"
      return 1
    fi
    port=$((port + 1))
    [ "$port" -gt "$PORT_MAX" ] && port=$PORT_MIN
    case "$used" in *" $port "*) continue ;; esac
    found+=("$port")
  done
  echo "${found[@]}"
}

write_conf() {
  local dir=$1 ctld_port=$2 slurmd_port=$3 cpus mem_kb mem_mb host
  cpus=$(nproc)
  mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
  mem_mb=$((mem_kb * 9 / 10 / 1024))
  host=$(hostname -s 2>/dev/null || cut -d. -f1 /proc/sys/kernel/hostname)
  : >"$dir/plugstack.conf"  # so that /etc/slurm/plugstack.conf is not read
  cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh: a one-node test cluster, everything on 127.0.0.1.
ClusterName=local
# slurmctld checks that it runs on the host named here.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
# slurmctld and slurmd listen on their configured address (127.0.0.1), not on all.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=${SLURM_LOCAL_DEBUG:-info}
SlurmdDebug=${SLURM_LOCAL_DEBUG:-info}
PlugStackConfig=$dir/plugstack.conf
MailProg=/bin/true
# No cgroups, no accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# The node is what this file says, whatever hwloc finds (no INVAL on an SMT machine).
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
# Test pace: pending jobs (array tasks) are looked at every second, not every minute,
# and at once when a job's epilog completes (slurmd reports that only when there is an
# Epilog): a 16-task array of 'true' on 2 CPUs takes ~1 s instead of 4 to 8.
SchedulerParameters=sched_interval=1,bf_interval=1,sched_min_interval=0
Epilog=/bin/true
ReturnToService=2
MessageTimeout=10
SlurmdTimeout=30
SlurmctldTimeout=30
InactiveLimit=0
KillWait=2
Waittime=0
# Finished jobs stay visible to squeue -t all and scontrol show job for 5 minutes.
MinJobAge=300
NodeName=$NODE_NAME NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem_mb State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE_NAME Default=YES MaxTime=INFINITE State=UP
EOF
}

show_logs() {
  local dir=$1 f
  for f in "$dir"/log/*; do
    [ -s "$f" ] || continue
    echo "----- tail of $f" >&2
    tail -n 20 "$f" >&2
  done
}

do_start() {
  local dir=$1 reason ports ctld_port slurmd_port state deadline
  if ! reason=$(why_not); then
    log "cannot start: $reason"
    return 2
  fi
  case "$dir" in
    *[[:space:]]*)  # slurm.conf values cannot hold spaces
      log "DIR must not contain whitespace: '$dir'"
      return 64
      ;;
  esac
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd -P)
  # slurmd makes a Unix socket per job step at DIR/spool/localnode_JOBID.STEP (the batch step is
  # 4294967291), and a socket path holds at most 108 bytes: a longer DIR starts, then fails to
  # launch jobs once their ids grow ("launch failed requeued held").
  if [ $((${#dir} + 40)) -gt 108 ]; then
    log "DIR is too long for Slurm's step sockets (${#dir} bytes; at most 68): '$dir'"
    return 64
  fi
  if pid_of "$dir/run/slurmctld.pid" slurmctld >/dev/null || pid_of "$dir/run/slurmd.pid" slurmd >/dev/null ||
    pid_of "$dir/munge/munged.pid" munged >/dev/null; then
    log "a cluster already runs in $dir: stop it first (scripts/slurm-local.sh stop $dir)"
    return 1
  fi
  # A fresh state each start: no jobs or ports left from a previous run in the same DIR,
  # nor a job's slurmstepd orphaned by one whose daemons died.
  do_stop "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir/state" "$dir/spool" "$dir/run" "$dir/munge" "$dir/log"
  mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
  # munged refuses a key or socket directory that others can write to.
  mkdir -m 0711 "$dir/munge"
  if command -v mungekey >/dev/null 2>&1 || [ -x /usr/sbin/mungekey ]; then
    "$(sbin mungekey)" -c -k "$dir/munge/munge.key"
  else
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  fi
  chown root:root "$dir/munge/munge.key"
  chmod 0400 "$dir/munge/munge.key"

  exec 9>"$LOCK_FILE"
  if ! flock -w 60 9; then
    log "another start holds $LOCK_FILE for over 60 s"
    return 1
  fi
  ports=$(pick_ports)
  ctld_port=${ports% *}
  slurmd_port=${ports#* }
  write_conf "$dir" "$ctld_port" "$slurmd_port"
  export SLURM_CONF=$dir/slurm.conf

  # Each daemon forks into the background and writes its pid file; their stdout and
  # stderr go to DIR/log so that ours carries only the export line.
  if ! "$(sbin munged)" --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" >>"$dir/log/munged.out" 2>&1 9>&-; then
    fail_start "$dir" "munged did not start"
    return 1
  fi
  # -c: clean start, no state carried over; -i: ignore errors in (absent) state files.
  if ! "$(sbin slurmctld)" -c -i >>"$dir/log/slurmctld.out" 2>&1 9>&-; then
    fail_start "$dir" "slurmctld did not start"
    return 1
  fi
  # slurmctld returns before it listens; a slurmd that cannot register retries after a
  # while, so wait for the port first.
  deadline=$((SECONDS + START_TIMEOUT))
  # (No grep -q: its early exit would fail the pipeline under pipefail.)
  until listening_ports | grep -x "$ctld_port" >/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ] ||
      { [ -s "$dir/run/slurmctld.pid" ] && ! pid_of "$dir/run/slurmctld.pid" slurmctld >/dev/null; }; then
      fail_start "$dir" "slurmctld not listening on 127.0.0.1:$ctld_port"
      return 1
    fi
    sleep 0.05
  done
  if ! "$(sbin slurmd)" -N "$NODE_NAME" >>"$dir/log/slurmd.out" 2>&1 9>&-; then
    fail_start "$dir" "slurmd did not start"
    return 1
  fi

  while :; do
    state=$(timeout 10 sinfo -h -n "$NODE_NAME" -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail_start "$dir" "node $NODE_NAME not idle after ${START_TIMEOUT}s (sinfo: '${state:-no answer}')"
      return 1
    fi
    sleep 0.2
  done
  flock -u 9
  printf 'export SLURM_CONF=%q\n' "$dir/slurm.conf"
}

fail_start() {
  local dir=$1 msg=$2
  show_logs "$dir"
  log "start failed: $msg (logs in $dir/log)"
  do_stop "$dir" >/dev/null 2>&1 || true
}

do_stop() {
  local dir=$1 ctld slurmd munged pids left
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd -P)
  export SLURM_CONF=$dir/slurm.conf
  ctld=$(pid_of "$dir/run/slurmctld.pid" slurmctld || true)
  slurmd=$(pid_of "$dir/run/slurmd.pid" slurmd || true)
  munged=$(pid_of "$dir/munge/munged.pid" munged || true)

  if [ -n "$ctld" ] && [ -n "$munged" ]; then
    # Cancel every job, so that each slurmstepd kills its tasks and exits; then
    # `scontrol shutdown` stops slurmctld and the slurmd. Neither kills running jobs.
    timeout 10 scancel --quiet --partition="$PARTITION" >/dev/null 2>&1 || true
    pids=$(cluster_pids "$dir" slurmstepd)
    [ -z "$pids" ] || wait_gone "$pids" 10 || true
    timeout 10 scontrol shutdown >/dev/null 2>&1 || true
    wait_gone "$ctld $slurmd" 10 || true
  fi
  terminate "$ctld $slurmd" 5 || true
  # What is left of the jobs (slurmctld was gone, or a step did not end): the slurmsteps
  # and their tasks. A slurmstepd ignores SIGTERM; terminate KILLs it after the grace.
  pids=$(cluster_pids "$dir" | grep -vx "${munged:-0}" || true)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086  # a list of pids
    terminate "$(with_descendants $pids)" 2 || true
  fi
  if [ -n "$munged" ]; then
    terminate "$munged" 5 || true
  fi
  left=$(cluster_pids "$dir" | tr '\n' ' ')
  if [ -n "${left// /}" ]; then
    log "stop: processes of $dir still alive: $left"
    return 1
  fi
  rm -f "$dir/run/slurmctld.pid" "$dir/run/slurmd.pid" "$dir/munge/munged.pid"
}

main() {
  case "${1:-}" in
    check)
      [ $# -eq 1 ] || usage
      local reason
      if ! reason=$(why_not); then
        echo "$reason" >&2
        exit 2
      fi
      ;;
    start)
      [ $# -eq 2 ] || usage
      do_start "$2"
      ;;
    stop)
      [ $# -eq 2 ] || usage
      do_stop "$2"
      ;;
    *) usage ;;
  esac
}

main "$@"
