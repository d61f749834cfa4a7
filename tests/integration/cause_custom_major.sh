#!/bin/sh
# cause_custom_major.sh - tests/ocaml/cause_custom_major.ml provokes the GC cause
# "custom_major".  Its ring must attribute collections of each kind
# (major_slice) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test custom_major major_slice
finish
