#!/bin/sh
# cause_major_slice_due.sh - tests/ocaml/cause_major_slice_due.ml provokes the GC cause
# "major_slice_due".  Its ring must attribute collections of each kind
# (major_slice) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test major_slice_due major_slice
finish
