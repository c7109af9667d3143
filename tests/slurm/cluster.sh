#!/bin/sh
# A single-node Slurm cluster in a folder of its own, for tests/slurm:
#   cluster.sh start DIR   munged (its own key, socket, pid and log), then
#                          slurmctld and slurmd from DIR/slurm.conf; prints
#                          the SLURM_CONF to use, once the node answers
#   cluster.sh stop DIR    stops the daemons it started, by the pids in
#                          their pid files under DIR, and waits for them
# No systemd, no cgroups (proctrack/linuxproc, task/none), no accounting,
# loopback only, ports that nothing listens on; run as root, as CI does.
set -eu
cmd=$1
dir=$2

listening() {
  # Local ports in LISTEN state (st 0A), decimal, from /proc/net/tcp and tcp6.
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] && awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print a[2] }' "$f"
  done | while read -r hex; do printf '%d\n' "0x$hex"; done
}

free_port() {
  # $1: a port not to take; seeded from our pid, stepping past busy ones.
  busy=$(listening)
  p=$(( 20000 + ($$ * 7 + ${2:-0} * 101) % 20000 ))
  while echo "$busy" | grep -qx "$p" || [ "$p" = "$1" ]; do p=$((p + 1)); done
  echo "$p"
}

stop_pidfile() {
  f=$1
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

case "$cmd" in
start)
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir" "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
  ctld=$(free_port 0 1)
  slurmd_port=$(free_port "$ctld" 2)
  cat > "$dir/slurm.conf" <<CONF
ClusterName=kltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
KillWait=2
MinJobAge=600
InactiveLimit=0
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  i=0
  while :; do
    state=$(sinfo --noheader --format=%T 2>/dev/null || true)
    case "$state" in idle*|mixed*|allocated*) break ;; esac
    i=$((i + 1))
    if [ $i -gt 300 ]; then
      echo "cluster.sh: the node did not come up (sinfo: ${state:-no answer}); the logs:" >&2
      tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
  echo "$SLURM_CONF"
  ;;
stop)
  stop_pidfile "$dir/slurmd.pid"
  stop_pidfile "$dir/slurmctld.pid"
  stop_pidfile "$dir/munge/munged.pid"
  ;;
*)
  echo "usage: cluster.sh start|stop DIR" >&2
  exit 2
  ;;
esac
