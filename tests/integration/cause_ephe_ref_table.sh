#!/bin/sh
# cause_ephe_ref_table.sh - tests/ocaml/cause_ephe_ref_table.ml provokes the GC cause
# "ephe_ref_table".  Its ring must attribute collections of each kind
# (minor) to it, the producer's totals by cause must
# equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test ephe_ref_table minor
finish
