#!/bin/sh
# kind_times.sh - how the per-kind times of the totals nest in GC time.
# gc_time_ns counts every instant inside an
# outermost collection once; kind_time_ns[K] the time inside outermost
# collections of kind K.  Kinds run one after the other (a minor collection
# then a slice; Gc.compact's cycle ends then its compaction), so they
# partition GC time, with one exception: a slice that ends a major cycle
# may compact from inside itself (caml_compact_heap_maybe: a forced cycle
# end, then a compaction), and that time is in the slice's and in theirs.
# - the program compacts only by itself (max_overhead 1000000: never from a
#   slice): minor + major_slice + major_finish + compaction = gc_time,
#   to the nanosecond;
# - with max_overhead 0, slices compact: gc_time < the sum <= gc_time +
#   major_finish + compaction.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
compile_native kind_times ocgc_test.ml kind_times.ml

# sums TAG: sets GC, MI, SL, FI, CO from TAG's dump
sums() {
  GC=`dkey $1 totals.gc_time_ns`
  MI=`dkey $1 totals.minor_time_ns`
  SL=`dkey $1 totals.major_slice_time_ns`
  FI=`dkey $1 totals.major_finish_time_ns`
  CO=`dkey $1 totals.compaction_time_ns`
  for _v in "$GC" "$MI" "$SL" "$FI" "$CO"; do
    is_uint "$_v" || hard_error "$1: a time is missing from the dump"
  done
  say "  $1: gc $GC = minor $MI + slice $SL + finish $FI + compaction $CO ?"
}

say "== compactions by the program only"
run_ok own env OCAMLRUNPARAM=O=1000000 ./kind_times 40
ring_of own
dump_ring "$RING" own
sums own
check_gt "own: compactions ran" 0 "`dkey own totals.compactions`"
check_eq "own: the kinds partition GC time" "$GC" "$((MI + SL + FI + CO))"

say "== compactions from inside slices too"
run_ok auto ./kind_times 40 auto
ring_of auto
dump_ring "$RING" auto
sums auto
check_gt "auto: compactions ran" "`dkey own totals.compactions`" "`dkey auto totals.compactions`"
check_gt "auto: the sum of kinds exceeds GC time (slices that compact)" "$GC" "$((MI + SL + FI + CO))"
check_ge "auto: by no more than the nested cycle ends and compactions" \
  "$((MI + SL + FI + CO))" "$((GC + FI + CO))"
finish
