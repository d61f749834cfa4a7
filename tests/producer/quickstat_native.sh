#!/bin/sh
# quickstat_native.sh - a native program on the _ocgc runtime variant: what
# its ring says (events and the extension block's totals) must equal the
# Gc.quick_stat the program printed at its end, exactly.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native workload ocgc_test.ml workload.ml
run_ok native ./workload
ring_of native
dump_ring "$RING" native

say "== native workload: ring against Gc.quick_stat"
check_dkey native producer.code native
check_dkey native producer.pid "`outkey native pid`"
check_dkey native producer.program workload
check_lifecycle native
check_no_loss native
check_stat_agrees native
check_spans_paired native
check_all_caused native
check_cause_totals native
# the workload must have exercised every counter
for k in gc.minor_collections gc.major_collections gc.compactions \
    gc.forced_major_collections gc.minor_words gc.promoted_words; do
  check_gt "$k (workload coverage)" 0 "`outkey native $k`"
done
finish
