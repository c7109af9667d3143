#!/bin/sh
# stage-deps.sh DIR: downloads klineage's Debian packages as .deb files into
# DIR, for a GPU node with no package registry. On the node:
#   scripts/build-offline.sh DIR PREFIX BUILD   (unpacks, builds, prints the
#   LD_LIBRARY_PATH to run with; see README.md "Offline GPU machines").
set -eu
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "usage: scripts/stage-deps.sh DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
pkgs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e '/^cmake$/d' -e '/^g++$/d' -e '/^make$/d' \
  "$here/packages.txt" "$here/runtime-packages.txt")
if ! apt-cache show liblua5.4-dev >/dev/null 2>&1; then
  echo "stage-deps: refreshing the package lists" >&2
  apt-get update -qq
fi
# apt-get download writes into the current directory; running it as root
# makes apt warn about the _apt sandbox, which is harmless here.
# shellcheck disable=SC2086
(cd "$dir" && apt-get download $pkgs 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
n=$(ls "$dir"/*.deb 2>/dev/null | wc -l)
want=$(echo $pkgs | wc -w)
if [ "$n" -lt "$want" ]; then
  echo "stage-deps: expected $want packages in $dir, found $n" >&2
  exit 1
fi
echo "stage-deps: $n packages in $dir"
