#!/bin/sh
# fetch-corpus.sh [DIR]: the outside CUDA corpus of tests/corpus/manifest.txt,
# fetched once from Debian's archive into DIR (default $KLINEAGE_CORPUS,
# else $XDG_CACHE_HOME/klineage/corpus, else ~/.cache/klineage/corpus).
#
# Each pinned source package is downloaded with apt-get source under a
# private apt configuration (its own source list and lists folder: the
# system's sources are never touched); apt checks the files against the
# archive's signed index, and this script checks the upstream tarball
# against the manifest's sha256 too. Only the manifest's .cu/.cuh files,
# the upstream licence files and debian/copyright are kept:
#   DIR/NAME/PATH, DIR/NAME/debian/copyright, DIR/manifest.txt
# A corpus already complete for this manifest is left as it is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
manifest="$here/../tests/corpus/manifest.txt"
dir=${1:-${KLINEAGE_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/klineage/corpus}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [ -f "$dir/manifest.txt" ] && cmp -s "$manifest" "$dir/manifest.txt"; then
  echo "fetch-corpus: $dir is complete"
  exit 0
fi

work="$dir/.fetch"
rm -rf "$work"
mkdir -p "$work/lists/partial" "$work/dl"
echo 'deb-src http://deb.debian.org/debian bookworm main' > "$work/sources.list"
apt_opts="-o Dir::Etc::SourceList=$work/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$work/lists"
# shellcheck disable=SC2086
apt-get -qq $apt_opts update

# The records of one kind from the manifest, without the kind.
records() { sed -n "s/^$1 //p" "$manifest"; }

records package | while read -r name version orig sha licence; do
  echo "fetch-corpus: $name $version ($licence)"
  # shellcheck disable=SC2086
  (cd "$work/dl" && apt-get -qq $apt_opts source --download-only "$name=$version")
  got=$(sha256sum "$work/dl/$orig" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "fetch-corpus: $orig has sha256 $got, the manifest says $sha" >&2
    exit 1
  fi
  top=$(tar tf "$work/dl/$orig" | head -n 1 | cut -d/ -f1)
  records file | awk -v n="$name" -v t="$top" '$1 == n { print t "/" $2 }' > "$work/members"
  records licence | awk -v n="$name" -v t="$top" '$1 == n { print t "/" $2 }' >> "$work/members"
  rm -rf "${dir:?}/$name"
  mkdir -p "$dir/$name"
  tar xf "$work/dl/$orig" -C "$dir/$name" --strip-components=1 -T "$work/members"
  deb=$(ls "$work/dl/${name}_"*.debian.tar.*)
  tar xf "$deb" -C "$dir/$name" debian/copyright
  rm -f "$work/dl/"*
done

rm -rf "$work"
cp "$manifest" "$dir/manifest.txt"
echo "fetch-corpus: $dir is complete ($(grep -c '^file ' "$manifest") files)"
