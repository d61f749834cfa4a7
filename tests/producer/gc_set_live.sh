#!/bin/sh
# gc_set_live.sh - what Gc.set changes reaches the ring at once: a reader
# attached while the program waits after Gc.set, with
# no collection since, reads the new settings and the collection counts
# Gc.quick_stat gives.  The settings used to be published only at the next
# collection: space_overhead (which runs none) stayed the old one, and a new
# minor heap size (whose collection runs before the resize) the old size.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
compile_native gc_set_live ocgc_test.ml gc_set_live.ml

start_bg gcset ./gc_set_live "$WORK"
p=$BGPID
for n in 1 2; do
  wait_key gcset $n.major_collections "$p"
  "$OCGC" dump --pid "$p" >"$WORK/live$n.dump" 2>"$WORK/live$n.err" ||
    hard_error "ocgc dump --pid $p: `head -n 1 "$WORK/live$n.err"`"
  check_dkey live$n config.space_overhead "`outkey gcset $n.space_overhead`"
  check_dkey live$n config.minor_heap_size "`outkey gcset $n.minor_heap_size`"
  check_dkey live$n totals.minor_collections "`outkey gcset $n.minor_collections`"
  check_dkey live$n totals.major_collections "`outkey gcset $n.major_collections`"
  : >"$WORK/gcset.go$n"
done
wait "$p"
check_eq "exit status" 0 "$?"
finish
