#!/bin/sh
# gpu-suite.sh BUILD OUTDIR [tests|quick|benches|quick+benches|all] [WORKLOAD...]
# On a GPU machine, after a build: the gpu-labelled tests, the gate bench
# and `klineage bench` of every workload (or the ones named), each log
# written to OUTDIR as it goes so that a run cut short keeps what it did.
#   tests.txt     ctest -L gpu -V (quick: without gpu/lineage_* and gpu/monotone_*,
#                 whose checks `klineage bench` repeats or which take long)
#   gate.txt      klineage run bench/gate.lua
#   benches.txt   klineage bench WORKLOAD, one after another
set -u
if [ $# -lt 2 ]; then
  echo "usage: scripts/gpu-suite.sh BUILD OUTDIR [tests|quick|benches|quick+benches|all] [WORKLOAD...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) out=$2 what=${3:-all}
[ $# -ge 3 ] && shift 3 || shift $#
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
kl="$build/bin/klineage"
status=0
# cuDNN (the conv2d bar) from a pip wheel where the system has none, and
# the toolkit's libraries cuDNN itself loads.
if [ -z "${KL_CUDNN_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcudnn\.so\.9 '; then
  d=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(nvidia.cudnn.__path__[0], "lib"))' 2>/dev/null || true)
  if [ -n "$d" ] && [ -f "$d/libcudnn.so.9" ]; then
    export KL_CUDNN_LIB="$d/libcudnn.so.9" LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
stamp() { echo "== $(date -u +%FT%TZ) $*"; }

case $what in
  tests|all) skip='^$' ;;
  quick|quick+benches) skip='gpu/(lineage|monotone)_' ;;
  *) skip= ;;
esac
if [ -n "$skip" ]; then
  { stamp "ctest -L gpu -E '$skip'"; (cd "$build" && ctest -L gpu -E "$skip" -V --timeout 900) || status=1; } >"$out/tests.txt" 2>&1
  { stamp "bench/gate"; "$kl" run "$src/bench/gate.lua" || status=1; } >"$out/gate.txt" 2>&1
fi
if [ "$what" = benches ] || [ "$what" = quick+benches ] || [ "$what" = all ]; then
  [ $# -gt 0 ] || set -- $(ls "$src/gpu/workloads")
  for w in "$@"; do
    [ -f "$src/gpu/workloads/$w/workload.lua" ] || continue
    { stamp "klineage bench $w"; "$kl" bench "$w" --journal "$build/runs" ${KL_BENCH_ARGS:-} || status=1; } >>"$out/benches.txt" 2>&1
  done
fi
exit $status
