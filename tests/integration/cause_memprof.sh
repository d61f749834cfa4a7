#!/bin/sh
# cause_memprof.sh - tests/ocaml/cause_memprof.ml provokes the GC cause
# "memprof".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test memprof minor
finish
