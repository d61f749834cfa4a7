#!/bin/sh
# lifecycle.sh - the ring file's life: present with mode 0600 while the
# program runs, removed at exit without OCAML_RUNTIME_EVENTS_PRESERVE,
# kept (state exited) with it; the exit status passes through, also of a
# death by uncaught exception (exit 2, which runs the exit handlers); a
# process killed by a signal leaves its file, state running, for readers
# to find stale; the default folder is $XDG_RUNTIME_DIR/ocgc, made 0700;
# bytecode likewise.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
ocgc_init

compile_native lifecycle ocgc_test.ml lifecycle.ml
compile_byte lifecycle.byte ocgc_test.ml lifecycle.ml

# seen_running TAG: what the program saw of its own ring while running
seen_running() {
  check_eq "$1: ring file present while running" true "`outkey $1 ring_exists`"
  check_eq "$1: it is a regular file" file "`outkey $1 ring_kind`"
  check_eq "$1: its mode" 600 "`outkey $1 ring_perm`"
  check_eq "$1: its owner" "`outkey $1 euid`" "`outkey $1 ring_uid`"
}

for what in native bytecode; do
  if test $what = native; then prog=./lifecycle; else prog="$OCGC_STAGE/ocamlrun_ocgc ./lifecycle.byte"; fi

  say "== $what, without OCAML_RUNTIME_EVENTS_PRESERVE: removed at exit"
  run_ok gone_$what env -u OCAML_RUNTIME_EVENTS_PRESERVE $prog
  seen_running gone_$what
  check_eq "files left in the folder" none "`ls_dir "$EVDIR"`"

  say "== $what, with OCAML_RUNTIME_EVENTS_PRESERVE: kept"
  run_ok kept_$what $prog
  seen_running kept_$what
  ring_of kept_$what
  check_eq "mode of the kept file" 600 "`stat -c %a "$RING"`"
  check_eq "files left in the folder" "`outkey kept_$what pid`.events" "`ls_dir "$EVDIR"`"
  dump_ring "$RING" kept_$what
  check_lifecycle kept_$what
  check_totals_agree kept_$what
  rm -f "${EVDIR:?}"/*

  say "== $what, exit status 3 passes through"
  run code_$what $prog "" 3
  check_eq "exit status" 3 "`cat "$WORK/code_$what.rc"`"
  check_eq "stderr lines" 0 "`stderr_lines code_$what`"
  ring_of code_$what
  dump_ring "$RING" code_$what
  check_lifecycle code_$what
  rm -f "${EVDIR:?}"/*

  say "== $what, death by an uncaught exception"
  run raise_$what $prog "" 0 raise
  check_eq "exit status" 2 "`cat "$WORK/raise_$what.rc"`"
  check_eq "stderr" "Fatal error: exception Stdlib.Exit" "`cat "$WORK/raise_$what.err"`"
  ring_of raise_$what
  dump_ring "$RING" raise_$what
  check_lifecycle raise_$what
  check_totals_agree raise_$what
  rm -f "${EVDIR:?}"/*
done

say "== killed by SIGKILL: the file stays, state running"
(cd "$WORK" && OCAML_RUNTIME_EVENTS_DIR="$EVDIR" exec ./lifecycle "" 0 sleep \
   >"$WORK/killed.out" 2>"$WORK/killed.err") &
bg=$!
i=0
while test -z "`outkey killed pid_again`" && test $i -lt 200; do
  sleep 0.1; i=$((i + 1))
done
kill -KILL $bg 2>/dev/null
wait $bg
check_eq "the program had reported" "`outkey killed pid`" "`outkey killed pid_again`"
ring_of killed
check_true "the file is still there (no PRESERVE)" test -f "$RING"
dump_ring "$RING" killed
check_dkey killed producer.state running
check_dkey killed lifecycle.ring_start 1
check_dkey killed lifecycle.ring_stop 0 0
check_totals_agree killed
rm -f "${EVDIR:?}"/*

say "== the default folder: \$XDG_RUNTIME_DIR/ocgc"
run_ok default env -u OCAML_RUNTIME_EVENTS_DIR ./lifecycle "$XDG_RUNTIME_DIR/ocgc"
seen_running default
check_eq "mode of the folder made" 700 "`stat -c %a "$XDG_RUNTIME_DIR/ocgc"`"
check_eq "files left in it" "`outkey default pid`.events" "`ls_dir "$XDG_RUNTIME_DIR/ocgc"`"
check_eq "files in OCAML_RUNTIME_EVENTS_DIR" none "`ls_dir "$EVDIR"`"
finish
