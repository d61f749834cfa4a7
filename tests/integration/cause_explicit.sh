#!/bin/sh
# cause_explicit.sh - tests/ocaml/cause_explicit.ml provokes the GC cause
# "explicit".  Its ring must attribute collections of each kind (minor
# major_slice major_finish compaction) to it, the producer's totals by cause
# must equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test explicit minor major_slice major_finish compaction
finish
