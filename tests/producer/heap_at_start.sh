#!/bin/sh
# heap_at_start.sh - the heap figures of the extension block are right from
# the start, before the first collection (the ring is made before the heap).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native heap0 ocgc_test.ml heap_at_start.ml
(cd "$WORK" && OCAML_RUNTIME_EVENTS_DIR="$EVDIR" ./heap0 "$WORK/go" >"$WORK/h.out" 2>"$WORK/h.err") &
prog=$!
i=0
while ! grep -q '^start.minor_collections' "$WORK/h.out" 2>/dev/null && test $i -lt 2000; do
  sleep 0.01; i=$((i + 1))
done
pid=`outkey h pid`
is_uint "$pid" || { touch "$WORK/go"; hard_error "the program printed no pid"; }
"$OCGC" dump --pid "$pid" >"$WORK/h.dump" 2>"$WORK/h.dump.err"
rc=$?
touch "$WORK/go"
wait $prog
check_eq "ocgc dump --pid exit status" 0 $rc
check_eq "minor collections before the reader looked" 0 "`outkey h start.minor_collections`"
check_dkey h totals.minor_collections 0
for k in heap_words top_heap_words heap_chunks; do
  check_gt "start.$k" 0 "`outkey h start.$k`"
  check_dkey h totals.$k "`outkey h start.$k`"
done
finish
