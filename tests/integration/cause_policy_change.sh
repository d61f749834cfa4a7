#!/bin/sh
# cause_policy_change.sh - tests/ocaml/cause_policy_change.ml provokes the
# GC cause "policy_change".  Its ring must attribute collections of each
# kind (minor major_finish compaction) to it, the producer's totals by cause
# must equal the events, and the ring must agree with Gc.quick_stat.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
cause_test policy_change minor major_finish compaction
finish
