#!/bin/sh
# quickstat_threads.sh - a program with systhreads (threads.posix), native
# and bytecode: the ring, written from whichever thread holds the runtime
# lock, must still equal Gc.quick_stat exactly.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

PACKAGES=threads.posix,unix
compile_native threads ocgc_test.ml threads.ml
compile_byte threads.byte ocgc_test.ml threads.ml

for what in native bytecode; do
  say "== threads, $what"
  if test $what = native; then
    run_ok $what ./threads
  else
    run_ok $what "$OCGC_STAGE/ocamlrun_ocgc" ./threads.byte
  fi
  ring_of $what
  dump_ring "$RING" $what
  check_lifecycle $what
  check_no_loss $what
  check_stat_agrees $what
  check_spans_paired $what
  check_all_caused $what
  check_cause_totals $what
done
finish
