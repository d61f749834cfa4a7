#!/bin/sh
# fork_nested.sh - a child forks at once, before any GC event of its own
# (as a daemon's double fork does), and its child - the grandchild -
# collects: the grandchild gets its own ring file, with its pid, whose
# fork_child event names its real parent (the child), and totals equal to
# its own Gc.quick_stat; the child, which made no GC event, leaves no file.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native fork ocgc_test.ml fork.ml

say "== fork, the child forks at once, the grandchild collects"
run_ok nested ./fork nested
ppid=`outkey nested pid`
cpid=`outkey nested child.pid`
gpid=`outkey nested grandchild.pid`
gppid=`outkey nested grandchild.ppid`
is_uint "$gpid" || hard_error "the grandchild printed no grandchild.pid"
check_eq "the grandchild's parent is the child" "$cpid" "$gppid"
check_eq "ring files (parent, grandchild)" \
  "`printf '%s.events\n' $ppid $gpid | sort | tr '\n' ' ' | sed 's/ $//'`" "`ls_dir "$EVDIR"`"
ring_of nested "$gpid"
dump_ring "$RING" grandchild
cp "$WORK/nested.out" "$WORK/grandchild.out"
check_dkey grandchild producer.pid "$gpid"
check_lifecycle grandchild
check_dkey grandchild lifecycle.fork_child 1
"$OCGC" dump --events "$RING" >"$WORK/grandchild.events" 2>&1 ||
  hard_error "ocgc dump --events $RING failed"
check_eq "the grandchild's fork_child event names its parent (the child)" "$cpid" \
  "`awk '$3 == "lifecycle" && $4 == "fork_child" { print $5 }' "$WORK/grandchild.events"`"
check_totals_agree grandchild grandchild.gc
ring_of nested "$ppid"
dump_ring "$RING" nested
check_stat_agrees nested
finish
