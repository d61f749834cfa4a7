#!/bin/sh
# threads_gc_storm.sh - 16 and 64 systhreads calling every Gc.* primitive at
# once for 3 s, with finalisers that yield inside those calls (native; 16
# threads in bytecode too).  The program must exit 0 with every thread's
# results right, the ring must agree with Gc.quick_stat, and every
# collection must have a real cause.  (A process-wide cause stack that
# threads left pushed across lock releases crashed this with 13 threads.)
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

PACKAGES=threads.posix,unix
compile_native storm ocgc_test.ml gc_storm.ml
compile_byte storm.byte ocgc_test.ml gc_storm.ml

# A ring large enough for every event of the run (see check_no_loss).
for run in native:16 native:64 bytecode:16; do
  what=${run%%:*}; n=${run#*:}; tag=$what-$n
  say "== $n threads, $what"
  if test $what = native; then
    OCAMLRUNPARAM=e=21 run_ok $tag ./storm $n 3
  else
    OCAMLRUNPARAM=e=21 run_ok $tag "$OCGC_STAGE/ocamlrun_ocgc" ./storm.byte $n 3
  fi
  check_eq "$tag: threads with right results" "$n" "`outkey $tag threads.ok`"
  ring_of $tag
  dump_ring "$RING" $tag
  check_lifecycle $tag
  check_no_loss $tag
  check_stat_agrees $tag
  check_spans_paired $tag
  check_cause_totals $tag
  check_gt "$tag: explicit minor collections" 0 "`dkey $tag cause.minor.explicit 0`"
done
finish
