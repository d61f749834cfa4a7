#!/bin/sh
# fork.sh - Unix.fork.  A child that allocates and collects gets its own
# ring file (its pid, lifecycle.fork_child 1 naming the parent, totals equal
# to its own Gc.quick_stat), and never writes into the parent's ring, whose
# events and totals equal the parent's quick_stat.  A child that execs at
# once leaves no file.  (Nested forks: fork_nested.sh.)
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native fork ocgc_test.ml fork.ml

say "== fork, the child collects"
run_ok fork ./fork collect
ppid=`outkey fork pid`
cpid=`outkey fork child.pid`
is_uint "$cpid" || hard_error "the child printed no child.pid"
check_eq "ring files" "`printf '%s.events\n' $ppid $cpid | sort | tr '\n' ' ' | sed 's/ $//'`" \
  "`ls_dir "$EVDIR"`"

say "-- the parent's ring ($ppid)"
ring_of fork "$ppid"
dump_ring "$RING" parent
cp "$WORK/fork.out" "$WORK/parent.out"
check_dkey parent producer.pid "$ppid"
check_lifecycle parent
check_dkey parent lifecycle.fork_child 0 0
check_no_loss parent
check_stat_agrees parent
check_all_caused parent

say "-- the child's ring ($cpid)"
ring_of fork "$cpid"
dump_ring "$RING" child
cp "$WORK/fork.out" "$WORK/child.out"
check_dkey child producer.pid "$cpid"
check_dkey child producer.program fork
check_lifecycle child
check_dkey child lifecycle.fork_child 1
"$OCGC" dump --events "$RING" >"$WORK/child.events" 2>&1 ||
  hard_error "ocgc dump --events $RING failed"
check_eq "the child's fork_child event names the parent" "$ppid" \
  "`awk '$3 == "lifecycle" && $4 == "fork_child" { print $5 }' "$WORK/child.events"`"
check_eq "the child's ring_start event names the child" "$cpid" \
  "`awk '$3 == "lifecycle" && $4 == "ring_start" { print $5 }' "$WORK/child.events"`"
check_no_loss child
check_totals_agree child child.gc
# The child's Gc counters carry on from the parent's at the fork, and so do
# its totals; its ring holds only its own collections.
own=`dkey child phase.minor.begin 0`
check_gt "the child's own minor collections in its ring" 0 "$own"
check_eq "the child's minor collections not in its ring (before the fork)" \
  "`outkey child before_fork.minor_collections`" \
  "$((`outkey child child.gc.minor_collections` - own))"
# Like the Gc counters, the totals by cause carry on from the parent's.
check_cause_sums child
check_spans_paired child

say "== fork: the child's file is made inside the span of its first event"
# A forked child makes its file at its first GC event, 100-200 us of work
# while its mutator waits.  The file's first events and that event are
# timed when the event happened, so the first span begins before the file
# was made (producer.created_ns, read in the middle of making it) and ends
# after: the work lies inside the span it lengthens.  (It used to begin
# after the file was made: the time was in no span.)  CLOCK_MONOTONIC
# timestamps, to compare with created_ns to the nanosecond.
rm -f "${EVDIR:?}"/*
run_ok firstspan env OCGC_TSC=0 ./fork collect
ring_of firstspan "`outkey firstspan child.pid`"
dump_ring "$RING" firstspan
check_dkey firstspan producer.clock monotonic
"$OCGC" dump --events "$RING" >"$WORK/firstspan.events" 2>&1 ||
  hard_error "ocgc dump --events $RING failed"
created=`dkey firstspan producer.created_ns`
is_uint "$created" || hard_error "the dump gives no producer.created_ns"
# the first span to begin, and its end (the first end of that name)
first=`awk '$3 == "begin" && b == "" { b = $1; n = $4; next }
            b != "" && $3 == "end" && $4 == n { print b, $1, n; exit }' "$WORK/firstspan.events"`
set -- $first
test $# -eq 3 || hard_error "the child's ring has no span"
say "  first span $3: $1 .. $2, file made at $created"
check_eq "the child's first span ($3) begins before its file was made" yes \
  "`test "$1" -le "$created" && echo yes || echo "no: $1 > $created"`"
check_eq "the child's first span ($3) ends after its file was made" yes \
  "`test "$2" -ge "$created" && echo yes || echo "no: $2 < $created"`"

say "== fork, then exec in the child"
rm -f "${EVDIR:?}"/*
run_ok exec ./fork exec
ppid=`outkey exec pid`
cpid=`outkey exec child.pid`
is_uint "$cpid" || hard_error "the parent printed no child.pid"
check_eq "ring files (the parent's only)" "$ppid.events" "`ls_dir "$EVDIR"`"
check_false "no ring file of the child $cpid" test -e "$EVDIR/$cpid.events"
ring_of exec "$ppid"
dump_ring "$RING" exec
check_lifecycle exec
check_stat_agrees exec

finish
