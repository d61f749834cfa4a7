#!/bin/sh
# follow.sh - `make bench`: libocgc following live programs on the patched
# runtime (default ring, 2^16 words): the stress run (OCAMLRUNPARAM=s=4k)
# polled every 2 ms, and the ordinary-rate run polled every 100 ms, as a
# monitor would.  Prints figures; never fails.
set -u
work=$(mktemp -d) || exit 0
trap 'rm -rf "$work"' EXIT
cp "$BENCH_SRCDIR/alloc.ml" "$work/" || exit 0
if ! (cd "$work" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
        -runtime-variant _ocgc alloc.ml -o alloc) >"$work/log" 2>&1; then
  echo "follow: cannot compile alloc.ml: n/a"; exit 0
fi
mkdir -m 700 "$work/rings"
for spec in "stress s=4k 4000000 2" "ordinary - 4000000 100"; do
  set -- $spec
  name=$1 param=$2 steps=$3 interval=$4
  [ "$param" = - ] && param=
  echo "### $name (OCAMLRUNPARAM=${param:-default}), polling every $interval ms"
  OCAMLRUNPARAM=$param OCAML_RUNTIME_EVENTS_DIR="$work/rings" "$work/alloc" "$steps" >/dev/null &
  pid=$!
  sleep 0.05
  "$FOLLOW" "$pid" "$interval"
  wait "$pid"
done
echo "targets: nothing lost; reader under 2% of a core at ordinary GC rates"
