#!/bin/sh
# agg_quickstat.sh - libocgc's aggregator (the agg.* lines of `ocgc dump`)
# on a real native and bytecode program: its counters equal the program's
# own Gc.quick_stat, its event counts cross-check the producer's totals,
# every collection is in the cause table, and pauses are consistent.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native workload ocgc_test.ml workload.ml
compile_byte_ocgc workload_byte ocgc_test.ml workload.ml
run_ok native ./workload
run_ok byte ./workload_byte

for tag in native byte; do
  ring_of $tag
  dump_ring "$RING" $tag
  say "== $tag: aggregator against Gc.quick_stat"
  check_dkey $tag agg.exact 1
  check_dkey $tag agg.collections.minor "`outkey $tag gc.minor_collections`"
  check_dkey $tag agg.collections.compaction "`outkey $tag gc.compactions`"
  check_dkey $tag agg.major_cycles "`outkey $tag gc.major_collections`"
  check_dkey $tag agg.forced_majors "`outkey $tag gc.forced_major_collections`"
  check_exit_minor "$tag: agg.allocated_bytes" "`outkey $tag gc.minor_words`" \
    "`dkey $tag agg.allocated_bytes`" 8
  check_dkey $tag agg.promoted_bytes "$((`outkey $tag gc.promoted_words` * 8))"
  for kind in minor major_slice major_finish compaction; do
    total=`dkey $tag agg.collections.$kind`
    # nothing lost: the events tell the same story as the totals
    check_dkey $tag agg.event_collections.$kind "$total"
    check_dkey $tag agg.kind.$kind.count "$total"
    # every collection has a row in the cause table, none "unknown"
    sum=`awk -v p="agg.cause.$kind." 'index($1, p) == 1 && $1 ~ /\.count$/ { s += $2 } END { print s + 0 }' "$WORK/$tag.dump"`
    check_eq "$tag: cause table rows for $kind" "$total" "$sum"
    check_dkey $tag agg.cause.$kind.unknown.count "" 
  done
  pauses=`dkey $tag agg.pauses`
  check_gt "$tag: pauses" 0 "$pauses"
  # a pause is one or more collections back to back: never more pauses
  # than outermost collections
  all=0
  for kind in minor major_slice major_finish compaction; do
    all=$((all + `dkey $tag agg.collections.$kind`))
  done
  check_true "$tag: pauses ($pauses) <= collections ($all)" test "$pauses" -le "$all"
  p50=`dkey $tag agg.pause.p50_ns`; p99=`dkey $tag agg.pause.p99_ns`; max=`dkey $tag agg.pause.max_ns`
  check_true "$tag: p50 <= p99 <= max" test "$p50" -le "$p99" -a "$p99" -le "$max"
  check_gt "$tag: gc time" 0 "`dkey $tag agg.gc_time_ns`"
done
finish
