#!/bin/sh
# cause_complete.sh - in every cause program (tests/ocaml/cause_*.ml), each
# collection of every kind must come with a cause event (cause.KIND.none 0)
# that names a known cause (no "unknown", which wire.h calls a bug), and
# every span must be closed.  The cause_*.sh tests check that each program
# provokes its own cause; this one checks the attribution of everything
# else those programs make the GC do.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init

for c in minor_heap_full minor_heap_full_c major_slice_due major_cycle_start \
    alloc_shr custom_major custom_minor ref_table ephe_ref_table custom_table \
    make_vect weak memprof minor_heap_resize policy_change explicit \
    heap_overhead c_call; do
  cause_program $c
  say "== every collection of cause_$c.ml has a known cause"
  check_all_caused $c
  check_spans_paired $c
done
cause_program shutdown OCAMLRUNPARAM=c=1
say "== every collection of cause_shutdown.ml (OCAMLRUNPARAM=c=1) has a known cause"
check_all_caused shutdown
check_spans_paired shutdown
finish
