#!/bin/sh
# cause_alloc_shr.sh - tests/ocaml/cause_alloc_shr.ml provokes the GC cause
# "alloc_shr".  Its ring must attribute collections of each kind
# (major_slice) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test alloc_shr major_slice
finish
