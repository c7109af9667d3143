#!/usr/bin/env bash
# Explains siboehm's SGEMM_CUDA kernels 1 to 6 (naive, global-memory
# coalescing, shared-memory blocking, 1D and 2D blocktiling, vectorized
# loads) as schedule deltas, with `klineage deltas`: an expert lineage
# written by someone else. The kernels are not copied into this
# repository: they are read from a snapshot of
# https://github.com/siboehm/SGEMM_CUDA and written, one a file, into a
# scratch folder, each after the lines klineage's reader needs: the
# template parameters src/runner.cu instantiates it with (as constexpr
# constants, which the template's own parameters shadow) and its launch
# geometry from runner.cu as a `// @kl launch` line.
#
#   bench/explain-siboehm.sh SNAPSHOT [OUT] [-- DELTAS-OPTIONS...]
#     SNAPSHOT  a git directory of the repository (bare or not; HEAD is
#               read) or a checkout holding src/kernels/
#     OUT       the scratch folder for v1.cu .. v6.cu (default: a new one
#               under $TMPDIR); it must not be inside this repository
#   KLINEAGE=path/to/klineage overrides build/bin/klineage.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
klineage="${KLINEAGE:-$here/build/bin/klineage}"

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
snapshot="$1"; shift
out=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then out="$1"; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi

read_kernel() { # $1: path inside the repository
  if git -C "$snapshot" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$snapshot" show "HEAD:$1"
  elif [ -f "$snapshot/$1" ]; then
    cat "$snapshot/$1"
  else
    echo "explain-siboehm: no $1 in $snapshot (a git directory or a checkout of siboehm/SGEMM_CUDA)" >&2
    exit 2
  fi
}

if [ -z "$out" ]; then out="$(mktemp -d "${TMPDIR:-/tmp}/siboehm.XXXXXX")"; fi
mkdir -p "$out"
case "$(cd "$out" && pwd)/" in
  "$here"/*) echo "explain-siboehm: $out is inside the repository; give a scratch folder outside it" >&2; exit 2 ;;
esac

# kernel file | the template arguments runner.cu uses | its launch (runner.cu)
kernels=(
  "1_naive.cuh||grid(cdiv(M, 32), cdiv(N, 32)) block(32, 32)"
  "2_kernel_global_mem_coalesce.cuh|BLOCKSIZE=32|grid(cdiv(M, 32), cdiv(N, 32)) block(32 * 32)"
  "3_kernel_shared_mem_blocking.cuh|BLOCKSIZE=32|grid(cdiv(M, 32), cdiv(N, 32)) block(32 * 32)"
  "4_kernel_1D_blocktiling.cuh|BM=64 BN=64 BK=8 TM=8|grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM))"
  "5_kernel_2D_blocktiling.cuh|BM=128 BN=128 BK=8 TM=8 TN=8|grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM * TN))"
  "6_kernel_vectorize.cuh|BM=128 BN=128 BK=8 TM=8 TN=8|grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM * TN))"
)
i=1
for entry in "${kernels[@]}"; do
  IFS='|' read -r file consts launch <<<"$entry"
  {
    echo "// siboehm/SGEMM_CUDA src/kernels/$file, read by klineage (bench/explain-siboehm.sh)"
    for c in $consts; do echo "constexpr int ${c%%=*} = ${c#*=};"; done
    echo "// @kl launch $launch"
    read_kernel "src/kernels/$file"
  } >"$out/v$i.cu"
  i=$((i + 1))
done
echo "explain-siboehm: kernels 1..6 as $out/v1.cu .. v6.cu" >&2
exec "$klineage" deltas "$out" "$@"
