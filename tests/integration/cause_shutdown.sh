#!/bin/sh
# cause_shutdown.sh - with OCAMLRUNPARAM=c=1 the runtime finalises the heap
# at exit (caml_shutdown): the last minor collection and the major cycle it
# finishes must be attributed to "shutdown".  Gc.quick_stat is printed
# before those collections, so it is not compared.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init
CAUSE_NO_STAT=1
cause_test shutdown minor major_finish -- OCAMLRUNPARAM=c=1
# they come after everything the program printed: the totals are ahead
check_gt "totals.major_collections (after the report)" \
  "`outkey shutdown gc.major_collections`" "`dkey shutdown totals.major_collections`"
finish
