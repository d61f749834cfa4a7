#!/bin/sh
# cause_custom_minor.sh - tests/ocaml/cause_custom_minor.ml provokes the GC cause
# "custom_minor".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test custom_minor minor
finish
