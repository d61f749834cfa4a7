#!/bin/sh
# cause_heap_overhead.sh - tests/ocaml/cause_heap_overhead.ml provokes the
# GC cause "heap_overhead".  Its ring must attribute collections of each
# kind (major_finish compaction) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test heap_overhead major_finish compaction
finish
