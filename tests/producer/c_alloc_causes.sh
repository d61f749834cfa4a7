#!/bin/sh
# c_alloc_causes.sh - C stubs calling caml_alloc_shr and
# caml_alloc_custom_mem, mixed with Gc.major_slice (which runs a slice
# while the runtime's own request is still pending): no collection without
# a cause, ever.  A small minor heap (s=32k) makes each large caml_alloc_shr
# go over its budget and request a slice.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native calloc ocgc_stubs.c ocgc_test.ml c_alloc.ml
OCAMLRUNPARAM=e=20,s=32k run_ok ca ./calloc
ring_of ca
dump_ring "$RING" ca
check_no_loss ca
check_stat_agrees ca
check_cause_totals ca
check_gt "major slices caused by alloc_shr" 100 "`dkey ca cause.major_slice.alloc_shr 0`"
finish
