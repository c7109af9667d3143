#!/bin/sh
# ctest's entry for the real-cluster test (label slurm):
#   tests/slurm/run.sh KLINEAGE
# Starts a single-node Slurm in a temporary folder (cluster.sh), runs
# cluster_spec.lua against it with SLURM_CONF set, and stops the daemons it
# started, by their pids, however the spec ends. Without Slurm (or without
# root, which slurmd needs here): exit 77 (ctest SKIP_RETURN_CODE) with a
# message when $CI is unset, a failure when it is set, since CI installs
# it (scripts/slurm-packages.txt).
set -u
klineage=$1
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/sbin:/sbin

missing=""
for t in sbatch squeue scancel sinfo slurmctld slurmd munged; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
why=""
fix="scripts/install-deps.sh scripts/slurm-packages.txt installs it"
[ -n "$missing" ] && why="not on PATH:$missing"
if [ -z "$why" ] && [ "$(id -u)" -ne 0 ]; then
  why="slurmd must run as root here, and this is uid $(id -u)"
  fix="run the test as root (CI does)"
fi
if [ -n "$why" ]; then
  if [ -n "${CI:-}" ]; then
    echo "slurm: FAIL: CI is set but Slurm cannot run ($why); $fix" >&2
    exit 1
  fi
  echo "slurm: SKIP: $why; $fix" >&2
  exit 77
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/klineage-slurm.XXXXXX")
rc=1
stop() {
  # Our own cluster's jobs first (their steps would outlive slurmd), then
  # the daemons we started, by pid; the folder goes when all passed.
  if [ -n "${SLURM_CONF:-}" ]; then
    scancel --quiet --user="$(id -un)" 2>/dev/null
    i=0
    while [ -n "$(squeue --noheader 2>/dev/null)" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
  fi
  "$here/cluster.sh" stop "$dir"
  [ "$rc" -eq 0 ] && rm -rf "$dir"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

if ! conf=$("$here/cluster.sh" start "$dir"); then
  echo "slurm: FAIL: the test cluster did not start (its files: $dir)" >&2
  exit 1
fi
export SLURM_CONF="$conf"
KL_SLURM_DIR=$dir "$klineage" test --verbose "$here/cluster_spec.lua"
rc=$?
[ $rc -eq 0 ] && keep="" || keep=" (the cluster's logs: $dir/log)"
echo "slurm: cluster_spec exited $rc$keep" >&2
exit $rc
