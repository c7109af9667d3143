#!/bin/sh
# build-offline.sh DEBS PREFIX BUILD [cmake args...]
# On a machine with no package registry (the GPU node): unpacks the .debs
# that stage-deps.sh downloaded into PREFIX, builds klineage into BUILD
# against them, and prints the LD_LIBRARY_PATH to export before running.
#
# A staged runtime library whose own dependencies do not resolve on this
# machine (it is Debian's build, the node may be another distribution) is
# dropped when the machine has a library of the same soname: the loader then
# uses the machine's copy, which has the same ABI.
set -eu
if [ $# -lt 3 ]; then
  echo "usage: scripts/build-offline.sh DEBS PREFIX BUILD [cmake args...]" >&2
  exit 2
fi
debs=$1 prefix=$2 build=$3
shift 3
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$prefix"
for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
libdir="$prefix/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"

export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for lib in "$libdir"/*.so.*; do
  [ -f "$lib" ] && [ ! -L "$lib" ] || continue
  if ldd "$lib" 2>/dev/null | grep -q "not found"; then
    soname=$(objdump -p "$lib" 2>/dev/null | awk '/SONAME/ {print $2}')
    if [ -n "$soname" ] && ldconfig -p | grep -q "^[[:space:]]*$soname "; then
      echo "build-offline: using this machine's $soname (staged copy needs: $(ldd "$lib" | awk '/not found/ {print $1}' | tr '\n' ' '))"
      # keep the unversioned dev link working by pointing it at the system copy
      sys=$(ldconfig -p | awk -v s="$soname" '$1 == s {print $NF; exit}')
      for l in "$libdir"/*; do
        if [ -L "$l" ] && [ "$(readlink -f "$l")" = "$(readlink -f "$lib")" ]; then ln -sf "$sys" "$l"; fi
      done
      rm -f "$lib"
    fi
  fi
done

cmake -S "$src" -B "$build" -DKL_DEPS_PREFIX="$prefix" "$@"
cmake --build "$build" -j"$(nproc)" ${KL_BUILD_TARGET:+--target "$KL_BUILD_TARGET"}
echo "build-offline: done; run with"
echo "  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
