#!/bin/sh
# list_live.sh - libocgc's listing (ocgc_list) and default folders
# (ocgc_default_dir) against a real program on the patched runtime, through
# list_procs (the public API only).  The program is started without a ring
# folder, so the producer picks its default one: it must be folder 0 of
# ocgc_default_dir() (the same rule, same environment).  While it runs it
# is listed as a running ocgc producer named by its extension block; once
# it has exited it is not listed.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
LIST_PROCS="$OCGC_BUILDDIR/tests/attach/list_procs"
test -x "$LIST_PROCS" || hard_error "$LIST_PROCS is missing (run 'make check')"

compile_native target ocgc_test.ml attach_target.ml
# No OCAML_RUNTIME_EVENTS_DIR: the default folder, under XDG_RUNTIME_DIR
# (ocgc_init made it private to this test).
(cd "$WORK" && exec ./target 0 "$WORK/live.stop" >"$WORK/live.out" 2>"$WORK/live.err") &
pid=$!
BG_PIDS="$BG_PIDS $pid"
wait_key live gc.heap_chunks "$pid"

"$LIST_PROCS" dirs >"$WORK/dirs.out" || hard_error "list_procs dirs failed"
dir0=`awk '$1 == "dir" && $2 == 0 { print $3 }' "$WORK/dirs.out"`
check_eq "default folder 0" "$XDG_RUNTIME_DIR/ocgc" "$dir0"
check_true "the producer published its ring in folder 0" test -L "$dir0/$pid.events"

"$LIST_PROCS" pid "$pid" >"$WORK/l1.out" || hard_error "list_procs pid failed"
check_eq "listed while it runs" 1 "`awk '$1 == "listed" { print $2 }' "$WORK/l1.out"`"
check_eq "state" running "`awk '$1 == "state" { print $2 }' "$WORK/l1.out"`"
check_eq "an ocgc file" 1 "`awk '$1 == "has_ext" { print $2 }' "$WORK/l1.out"`"
check_eq "alive" 0 "`awk '$1 == "alive" { print $2 }' "$WORK/l1.out"`"
check_eq "program (extension block)" target \
  "`awk '$1 == "program" { print $2 }' "$WORK/l1.out"`"
check_true "its path opens the ring the folder's link leads to" \
  test "`awk '$1 == "path" { print $2 }' "$WORK/l1.out"`" -ef "$dir0/$pid.events"

stop_bg live "$pid"
check_eq "the program exited normally" 0 "`cat "$WORK/live.rc"`"
"$LIST_PROCS" pid "$pid" >"$WORK/l2.out" || hard_error "list_procs pid failed"
check_eq "not listed once it exited" 0 "`awk '$1 == "listed" { print $2 }' "$WORK/l2.out"`"
finish
