#!/bin/sh
# fork_threads.sh - children forked while other threads are inside Gc.*
# calls (waiting in finalisers) never call Gc.* themselves: none of their
# collections is "explicit".
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

PACKAGES=threads.posix,unix
compile_native forkt ocgc_test.ml fork_threads.ml
# The parent's threads run full majors for as long as the forks take, so
# its ring may wrap on a slow machine: its totals are exact regardless.
OCAMLRUNPARAM=e=22 run_ok ft ./forkt 5
ring_of ft
dump_ring "$RING" ft
check_totals_agree ft
check_gt "parent: explicit collections" 0 "`dkey ft cause.minor.explicit 0`"
n=0
for c in `awk '$1 == "child.pid" { print $2 }' "$WORK/ft.out"`; do
  n=$((n + 1))
  ring_of child$n "$c"
  dump_ring "$RING" child$n
  check_lifecycle child$n
  check_dkey child$n lifecycle.fork_child 1
  check_gt "child $c: minor collections" 10 "`dkey child$n phase.minor.begin 0`"
  _x=`grep -E '^cause\.[a-z_]+\.explicit ' "$WORK/child$n.dump" | tr '\n' ' '`
  check_eq "child $c: cause.*.explicit lines" none "${_x:-none}"
done
check_eq "children that printed their pid" 5 "$n"
finish
