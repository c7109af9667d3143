#!/bin/sh
# bench/make-test.sh BUILD [CPUS] [JOBS]
# How long `make test`'s test run takes: ctest over every test but the
# labels gpu, slurm and long, as the Makefile runs it, with an empty cache
# (as a clean clone has: every emu kernel and cubin compiled anew), no
# timing history (ctest orders the tests by their COST properties alone, as
# in a clean clone; the build's own history is put back afterwards) and,
# when CPUS is given (e.g. 0,1), pinned to those processors with taskset,
# so that a larger machine measures a 2-core one. The build itself is not
# timed. Prints the ten longest tests, the time per label, and the
# headline figures:
#   make-test-wall: S s     ctest's wall-clock time
#   make-test-cpu: S s      user + system CPU time of ctest and its children
#   make-test-passed: N/M tests
set -u
if [ $# -lt 1 ] || [ ! -x "$1/bin/klineage" ]; then
  echo "usage: bench/make-test.sh BUILD [CPUS] [JOBS]   (BUILD: a build folder with bin/klineage)" >&2
  exit 2
fi
build=$(cd "$1" && pwd) cpus=${2:-} jobs=${3:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/kl-make-test.XXXXXX")
history="$build/Testing/Temporary/CTestCostData.txt"
[ -f "$history" ] && mv "$history" "$work/history"
trap '[ -f "$work/history" ] && mv "$work/history" "$history"; rm -rf "$work"' EXIT INT TERM
pin=
if [ -n "$cpus" ]; then
  command -v taskset >/dev/null || { echo "bench/make-test.sh: taskset is needed to pin to $cpus" >&2; exit 2; }
  pin="taskset -c $cpus"
fi
# A cold cache of its own: XDG_CACHE_HOME is where klineage keeps compiled kernels.
cd "$build" && XDG_CACHE_HOME="$work/cache" /usr/bin/time -f "%e %U %S" -o "$work/time" \
  $pin ctest -LE 'gpu|slurm|long' -j"$jobs" >"$work/log" 2>&1
status=$?
echo "| test | seconds |"
echo "|---|---|"
grep -E 'Test +#' "$work/log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' |
  sort -rn | head -10 | awk '{ printf "| %s | %.1f |\n", $2, $1 }'
echo
echo "| label | test seconds (summed) |"
echo "|---|---|"
sed -n 's/^\([a-z]*\) *= *\([0-9.]*\) sec\*proc.*/| \1 | \2 |/p' "$work/log"
echo
grep -E 'tests passed|tests failed' "$work/log" | tail -1
read -r wall user sys <"$work/time"
passed=$(grep -cE 'Test +#.* Passed ' "$work/log")
total=$(grep -cE 'Test +#' "$work/log")
echo "machine: $(nproc) processors visible${cpus:+, pinned to $cpus}, ctest -j$jobs"
echo "make-test-wall: $wall s"
echo "make-test-cpu: $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }') s"
echo "make-test-passed: $passed/$total tests"
exit $status
