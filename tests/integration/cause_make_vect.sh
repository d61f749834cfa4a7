#!/bin/sh
# cause_make_vect.sh - tests/ocaml/cause_make_vect.ml provokes the GC cause
# "make_vect".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test make_vect minor
finish
