#!/bin/sh
# quickstat_bytecode.sh - the same workload as quickstat_native.sh in
# bytecode, both ways: (a) built by plain ocamlc and run as
# `ocamlrun_ocgc prog.byte`, (b) built with -runtime-variant _ocgc, whose
# #! line names ocamlrun_ocgc.  The ring must equal Gc.quick_stat exactly.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_byte workload.byte ocgc_test.ml workload.ml
compile_byte_ocgc workload_ocgc.byte ocgc_test.ml workload.ml

check_byte() {
  tag=$1
  ring_of $tag
  dump_ring "$RING" $tag
  check_dkey $tag producer.code bytecode
  check_dkey $tag producer.pid "`outkey $tag pid`"
  check_dkey $tag producer.program "$2"
  check_lifecycle $tag
  check_no_loss $tag
  check_stat_agrees $tag
  check_spans_paired $tag
  check_all_caused $tag
  check_cause_totals $tag
  for k in gc.minor_collections gc.major_collections gc.compactions \
      gc.forced_major_collections gc.minor_words gc.promoted_words; do
    check_gt "$k (workload coverage)" 0 "`outkey $tag $k`"
  done
}

say "== (a) plain bytecode run by ocamlrun_ocgc"
run_ok plain "$OCGC_STAGE/ocamlrun_ocgc" ./workload.byte 2
check_byte plain workload.byte

say "== (b) bytecode linked with -runtime-variant _ocgc (#! ocamlrun_ocgc)"
head -n 1 "$WORK/workload_ocgc.byte" | grep -q 'ocamlrun_ocgc' ||
  fail "the #! line of workload_ocgc.byte does not name ocamlrun_ocgc: `head -n 1 "$WORK/workload_ocgc.byte" | head -c 200`"
run_ok variant ./workload_ocgc.byte 2
check_byte variant workload_ocgc.byte
finish
