#!/bin/sh
# disable.sh - OCGC_DISABLE=1 turns the ring off: no file (not even the
# default folder), the same stdout and exit status as with the ring on,
# nothing on stderr.  OCGC_DISABLE=0 or empty keeps it on.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native hello ocgc_test.ml hello.ml
compile_byte hello.byte ocgc_test.ml hello.ml

say "== reference run, ring on"
run_ok on ./hello
check_eq "ring files with the ring on" 1 "`count_dir "$EVDIR"`"
rm -f "${EVDIR:?}"/*

for what in native bytecode; do
  if test $what = native; then prog=./hello; else prog="$OCGC_STAGE/ocamlrun_ocgc ./hello.byte"; fi
  say "== OCGC_DISABLE=1, $what"
  run off_$what env OCGC_DISABLE=1 $prog
  check_eq "exit status" 0 "`cat "$WORK/off_$what.rc"`"
  check_true "stdout unchanged" cmp -s "$WORK/on.out" "$WORK/off_$what.out"
  check_eq "stderr lines" 0 "`stderr_lines off_$what`"
  check_eq "files in OCAML_RUNTIME_EVENTS_DIR" none "`ls_dir "$EVDIR"`"
  say "== OCGC_DISABLE=1 without OCAML_RUNTIME_EVENTS_DIR, $what"
  run off_default_$what env -u OCAML_RUNTIME_EVENTS_DIR OCGC_DISABLE=1 $prog
  check_eq "exit status" 0 "`cat "$WORK/off_default_$what.rc"`"
  check_true "stdout unchanged" cmp -s "$WORK/on.out" "$WORK/off_default_$what.out"
  check_eq "stderr lines" 0 "`stderr_lines off_default_$what`"
  check_false "no default folder \$XDG_RUNTIME_DIR/ocgc" test -e "$XDG_RUNTIME_DIR/ocgc"
done

for v in 0 ''; do
  say "== OCGC_DISABLE='$v' keeps the ring on"
  run on_$v env OCGC_DISABLE="$v" ./hello
  check_eq "exit status" 0 "`cat "$WORK/on_$v.rc"`"
  check_eq "stderr lines" 0 "`stderr_lines on_$v`"
  check_eq "ring files" 1 "`count_dir "$EVDIR"`"
  rm -f "${EVDIR:?}"/*
done
finish
