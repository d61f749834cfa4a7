#!/bin/sh
# memprof_recycle.sh - rows that can be recycled: a program allocates from
# 10,000 call stacks (tests/ocaml/memprof_rows.ml), more than the table's
# 8,191 rows, so the rest count in the overflow row; once every block of
# theirs is dead and the rows have been quiet for OCGC_MEMPROF_RECYCLE (1 s
# here; 300 by default), 1,000 new stacks get rows of their own, recycled
# (a new generation, counted from 0), not the overflow row.  Before, rows
# were never recycled: code that starts allocating late never got one.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
attach_init

compile_native mpw ocgc_test.ml memprof_rows.ml
start_bg w env OCGC_MEMPROF=64 OCGC_MEMPROF_RECYCLE=1 ./mpw "$WORK/w.s1" "$WORK/w.stop"
pid=$BGPID
wait_key w phase.1 "$pid" 300
"$OCGC" dump --stacks --pid "$pid" >"$WORK/p1.dump" 2>"$WORK/p1.err" ||
  hard_error "ocgc dump --pid failed: `cat "$WORK/p1.err"`"
check_dkey p1 memprof.stacks 8191
o1=`dkey p1 memprof.overflow`
check_true "phase 1: the full table counted samples in the overflow row ($o1)" test "$o1" -gt 0
# quiet for longer than the grace time
sleep 2
: >"$WORK/w.s1"
wait_key w phase.2 "$pid" 300
"$OCGC" dump --stacks --pid "$pid" >"$WORK/p2.dump" 2>"$WORK/p2.err" ||
  hard_error "ocgc dump --pid failed: `cat "$WORK/p2.err"`"
stop_bg w "$pid"
o2=`dkey p2 memprof.overflow`
recycled=`awk '$1 == "memprof.stack" { for (f = 3; f <= NF; f++) if ($f ~ /^generation=[1-9]/) n++ } END { print n + 0 }' "$WORK/p2.dump"`
say "phase 1: overflow $o1 of `dkey p1 memprof.samples` samples; phase 2: overflow $o2 of `dkey p2 memprof.samples`, $recycled rows recycled"
check_true "phase 2: the new stacks got recycled rows ($recycled of 1000)" test "$recycled" -ge 950
check_true "phase 2: few of their samples in the overflow row (`expr $o2 - $o1`)" test $((o2 - o1)) -le 100
check_dkey p2 memprof.stacks 8191
check_eq "the program's exit status" 0 "`cat "$WORK/w.rc"`"
finish
