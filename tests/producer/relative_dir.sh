#!/bin/sh
# relative_dir.sh - OCAML_RUNTIME_EVENTS_DIR given as a relative path, and
# a program that changes its working directory before it exits: at exit
# the ring must be removed from the folder it was made in (or kept there
# with PRESERVE), and a file at the same relative path from the new
# working directory - a bystander, outside the ring folder - must be left
# alone.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native chdir ocgc_test.ml chdir.ml
mkdir -m 0700 "$WORK/rel" "$WORK/elsewhere" "$WORK/elsewhere/rel"

# $$ of `sh -c` is the program's pid after exec: plant the bystander
# elsewhere/rel/<pid>.events, then run with OCAML_RUNTIME_EVENTS_DIR=rel.
plant='printf "bystander\n" >"elsewhere/rel/$$.events" && exec ./chdir elsewhere'

say "== relative folder, no PRESERVE, chdir before exit"
run_ok gone env -u OCAML_RUNTIME_EVENTS_PRESERVE OCAML_RUNTIME_EVENTS_DIR=rel sh -c "$plant"
pid=`outkey gone pid`
check_eq "the ring is removed from rel/" none "`ls_dir "$WORK/rel"`"
check_eq "the bystander elsewhere/rel/$pid.events is left alone" bystander \
  "`cat "$WORK/elsewhere/rel/$pid.events" 2>/dev/null || echo '(deleted)'`"
rm -f "$WORK/rel"/* "$WORK/elsewhere/rel"/*

say "== relative folder, PRESERVE, chdir before exit"
run_ok kept env OCAML_RUNTIME_EVENTS_DIR=rel sh -c "$plant"
pid=`outkey kept pid`
check_eq "the ring is kept in rel/" "$pid.events" "`ls_dir "$WORK/rel"`"
check_eq "the bystander elsewhere/rel/$pid.events is left alone" bystander \
  "`cat "$WORK/elsewhere/rel/$pid.events" 2>/dev/null || echo '(deleted)'`"
if test -f "$WORK/rel/$pid.events"; then
  dump_ring "$WORK/rel/$pid.events" kept
  check_lifecycle kept
  check_totals_agree kept
fi
finish
