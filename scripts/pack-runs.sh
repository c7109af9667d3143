#!/bin/sh
# pack-runs.sh DIR OUT.tar.gz: packs run folders (an eval's units, walks)
# for committing, each kernel's text stored once. Every run keeps its
# kernels as src/<sha256>.cu, so equal names are equal texts: all copies
# after the first become hard links to it, which tar stores as links, not
# as content. Unpacking gives the same tree (the copies as hard links).
set -eu
if [ $# -ne 2 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/pack-runs.sh DIR OUT.tar.gz" >&2
  exit 2
fi
dir=$(cd "$1" && pwd) out=$2
case $out in /*) ;; *) out="$(pwd)/$out" ;; esac
seen=$(mktemp -d)
trap 'rm -rf "$seen"' EXIT
linked=0 total=0
for f in $(find "$dir" -path '*/src/*.cu' -type f | LC_ALL=C sort); do
  total=$((total + 1))
  name=$(basename "$f")
  if [ -e "$seen/$name" ]; then
    first=$(cat "$seen/$name")
    if ! cmp -s "$first" "$f"; then
      echo "pack-runs: $f and $first share a name but differ" >&2
      exit 1
    fi
    ln -f "$first" "$f"
    linked=$((linked + 1))
  else
    printf '%s' "$f" > "$seen/$name"
  fi
done
tar czf "$out" -C "$(dirname "$dir")" "$(basename "$dir")"
echo "pack-runs: $total kernels, $((total - linked)) stored, $(du -k "$out" | cut -f1) KiB in $out"
