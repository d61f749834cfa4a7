#!/bin/sh
# cause_c_call.sh - tests/ocaml/cause_c_call.ml provokes the GC cause
# "c_call".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test c_call minor
finish
