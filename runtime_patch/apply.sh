#!/bin/sh
# apply.sh TREE SRCDIR VERSION - puts ocgc into the runtime of the OCaml
# source tree TREE: the patches of SRCDIR/runtime_patch/series (hook sites
# in OCaml's own files), then ocgc's own runtime sources and the wire
# format header beside them, and VERSION (ocgc's) as the producer version.
# runtime.am calls it on a fresh copy of the pristine runtime/;
# scripts/ocgc-compiler.sh on a whole unpacked tree.
#
# Patches apply with --fuzz=0: a hunk whose context moved in another OCaml
# release fails here, loudly, instead of landing a few lines off.
set -eu
[ $# -eq 3 ] || { echo "usage: apply.sh TREE SRCDIR VERSION" >&2; exit 1; }
tree=$1; src=$2; version=$3
rp=$src/runtime_patch

for p in $(grep -v '^#' "$rp/series"); do
  patch -s -p1 --fuzz=0 --no-backup-if-mismatch -d "$tree" <"$rp/patches/$p" || {
    echo "apply.sh: $p does not apply to $tree without fuzz" >&2
    exit 1
  }
done
cp "$rp"/src/ocgc_*.c "$rp"/src/ocgc_*.h "$tree/runtime/"
cp "$rp"/src/caml/ocgc.h "$rp"/src/caml/ocgc_eventlog.h "$tree/runtime/caml/"
mkdir -p "$tree/runtime/ocgc"
cp "$src/include/ocgc/wire.h" "$tree/runtime/ocgc/"
printf '#define OCGC_PRODUCER_VERSION "%s"\n' "$version" >"$tree/runtime/ocgc_version.h"
