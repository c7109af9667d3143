#!/bin/sh
# install-deps.sh [LIST...]: installs the Debian packages named in the
# lists (default: scripts/packages.txt, what klineage needs to build and
# run; scripts/fuzz-packages.txt adds the fuzzers' compiler,
# scripts/browser-packages.txt the headless Chromium of the report
# check). Does nothing when they are all present. Needs root (or sudo) to
# install.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 0 ] && set -- "$here/packages.txt"
pkgs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$@")

missing=""
for p in $pkgs; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
else
  echo "install-deps: all packages present"
fi

# The CUDA toolkit is not a Debian package here: it must already be installed.
cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda/include/nvrtc.h" ] || [ ! -f "$cuda/include/cupti.h" ]; then
  echo "install-deps: the CUDA toolkit (NVRTC, CUPTI, cuda.h) was not found under $cuda;" >&2
  echo "  install it at its standard location or set CUDA_HOME" >&2
  exit 1
fi
echo "install-deps: CUDA toolkit at $cuda"
