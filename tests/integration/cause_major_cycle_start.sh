#!/bin/sh
# cause_major_cycle_start.sh - tests/ocaml/cause_major_cycle_start.ml
# provokes the GC cause "major_cycle_start".  Its ring must attribute
# collections of each kind (minor major_slice) to it, the producer's totals
# by cause must equal the events, and the ring must agree with
# Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test major_cycle_start minor major_slice
finish
