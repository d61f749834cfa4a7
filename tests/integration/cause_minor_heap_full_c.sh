#!/bin/sh
# cause_minor_heap_full_c.sh - tests/ocaml/cause_minor_heap_full_c.ml provokes the GC cause
# "minor_heap_full_c".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test minor_heap_full_c minor
finish
