#!/bin/sh
# cycles_live.sh - a major cycle that ends inside an ordinary major slice
# is in the totals as soon as that slice ends: major_collections (and the
# live words measured at the cycle's end) are published by the slice's own
# short publication, not only at the next full one (a heap change, Gc.set,
# the exit).  The program runs a dozen cycles on a heap that stops growing,
# then waits while the reader dumps its ring.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
compile_native cycles ocgc_test.ml cycles_live.ml

start_bg c ./cycles "$WORK/c.stop"
p=$BGPID
wait_key c before.major_collections "$p" 300
"$OCGC" dump --pid "$p" >"$WORK/c.dump" 2>"$WORK/c.dump.err"
rc=$?
stop_bg c "$p"
check_eq "ocgc dump --pid exit status" 0 $rc
check_eq "the program's exit status" 0 "`cat "$WORK/c.rc"`"
before=`outkey c before.major_collections`
after=`outkey c after.major_collections`
check_ge "major cycles before the reader looked" 12 "$before"
# The reader looked between the two prints.
got=`dkey c totals.major_collections`
check_ge "totals.major_collections, at least the count printed before the reader looked" "$before" "$got"
check_ge "totals.major_collections, at most the count printed after" "$got" "$after"
live=`dkey c totals.live_words`
check_gt "totals.live_words, measured at a cycle's end" 0 "$live"
check_ge "totals.heap_words, at least the live words" "$live" "`dkey c totals.heap_words`"
finish
