#!/bin/sh
# cause_weak.sh - tests/ocaml/cause_weak.ml provokes the GC cause
# "weak".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.  (How the
# program gets there: see tests/ocaml/cause_weak.ml and ocgc_stubs.c.)
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test weak minor
# the hook in ocgc_stubs.c changed the key 8 times, then the copy succeeded
check_eq "key changes during Weak.get_copy" 8 "`outkey weak swaps`"
check_eq "length of the copy" 40000 "`outkey weak copy`"
finish
