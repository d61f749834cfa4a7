#!/bin/sh
# memprof_flag.sh - the ring says whether the program's own Gc.Memprof
# runs (what ocgc's own sampling will stand aside for): 0 before it starts
# (a program that never starts one), 1 right after Gc.Memprof.start
# returns, 0 again right after Gc.Memprof.stop, each published at once,
# with no collection in between.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

dump_pid() {
  "$OCGC" dump --pid "$2" >"$WORK/$1.dump" 2>"$WORK/$1.err" ||
    { cat "$WORK/$1.err"; hard_error "ocgc dump --pid $2 failed"; }
}

compile_native never ocgc_test.ml attach_target.ml
start_bg never ./never 0 "$WORK/never.stop"
wait_key never gc.heap_chunks "$BGPID"
dump_pid n "$BGPID"
check_dkey n totals.program_memprof 0
stop_bg never "$BGPID"

compile_native mp ocgc_test.ml memprof_flag.ml
start_bg mp ./mp "$WORK/mp.step" "$WORK/mp.stop"
pid=$BGPID
wait_key mp memprof.on "$pid"
dump_pid on "$pid"
check_dkey on totals.program_memprof 1
: >"$WORK/mp.step"
wait_key mp memprof.off "$pid"
dump_pid off "$pid"
check_dkey off totals.program_memprof 0
check_eq "no collection between the two reads" "`dkey on totals.minor_collections`" \
  "`dkey off totals.minor_collections`"
stop_bg mp "$pid"
check_eq "exit status" 0 "`cat "$WORK/mp.rc"`"
finish
