#!/bin/sh
# lifecycle.sh - the ring's life: while the program runs, its folder holds
# a link <pid>.events -> .ocgc-ring.<ns>.<pid> -> /proc/<pid>/map_files/<range>,
# the mapping of the program's own memfd (which a reader as root follows;
# others get EPERM), mode
# 0600, which commits only the pages written (st_blocks: a few KiB here);
# the link is removed at exit without OCAML_RUNTIME_EVENTS_PRESERVE, and
# with it a regular file (state exited, mode 0600) is left; the exit status
# passes through, also of a death by uncaught exception (exit 2, which runs
# the exit handlers); a process killed by a signal leaves a dangling link,
# and the next program to start in the folder removes it, and a regular
# ring in state running of a dead process, never a live process's ring nor
# a kept one; the default folder is $XDG_RUNTIME_DIR/ocgc, made 0700;
# bytecode likewise.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native lifecycle ocgc_test.ml lifecycle.ml
compile_byte lifecycle.byte ocgc_test.ml lifecycle.ml

# seen_running TAG: what the program saw of its own ring while running
seen_running() {
  check_eq "$1: ring present while running" true "`outkey $1 ring_exists`"
  check_eq "$1: it is a link" link "`outkey $1 ring_kind`"
  check_eq "$1: its owner" "`outkey $1 euid`" "`outkey $1 ring_uid`"
  check_true "$1: an alias of its identity link (`outkey $1 ring_link`)" \
    sh -c "printf '%s\n' '`outkey $1 ring_link`' | grep -q '^\.ocgc-ring\.[0-9]*\.`outkey $1 pid`\$'"
  check_eq "$1: which is a regular file" file "`outkey $1 ring_target_kind`"
  check_eq "$1: of mode" 600 "`outkey $1 ring_target_perm`"
  check_eq "$1: and owner" "`outkey $1 euid`" "`outkey $1 ring_target_uid`"
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

say "== killed by SIGKILL: the link stays; the next start removes what dead processes left"
# start_sleeper TAG: ./lifecycle "" 0 sleep in the background, until it has
# reported (it then sleeps a minute); BG is its pid
start_sleeper() {
  (cd "$WORK" && OCAML_RUNTIME_EVENTS_DIR="$EVDIR" exec ./lifecycle "" 0 sleep \
     >"$WORK/$1.out" 2>"$WORK/$1.err") &
  BG=$!
  _i=0
  while test -z "`outkey $1 pid_again`" && test $_i -lt 300; do
    sleep 0.1; _i=$((_i + 1))
  done
  test -n "`outkey $1 pid_again`" || hard_error "$1: the program did not report"
  check_eq "$1: the program had reported its pid" "`outkey $1 pid`" "$BG"
}
run_ok kept3 ./lifecycle
kept3=`outkey kept3 pid`
start_sleeper killed; k=$BG
start_sleeper copied; c=$BG
start_sleeper alive; a=$BG
seen_running killed
ring_of killed
# Committed memory of the ring: st_blocks (512-byte units) of the memfd.
# Its pages come as they are written: this program wrote a few hundred
# events (a few KiB), so far less than the 512 KiB ring (the whole ring,
# 520 KiB, was committed at creation once; no more).
kib=`stat -L -c '%b %B' "$RING" | awk '{ printf "%d", $1 * $2 / 1024 }'`
say "  committed by the running program's ring: $kib KiB (file size `stat -L -c %s "$RING"` bytes)"
check_true "committed size $kib KiB < 128 KiB: only what was written" test "$kib" -lt 128
check_true "and not nothing" test "$kib" -gt 0
cp -L "$EVDIR/$c.events" "$WORK/copied.ring" || hard_error "cannot copy the ring of $c"
kill -KILL $k $c 2>/dev/null
wait $k; wait $c
check_true "killed: its link stays" test -L "$EVDIR/$k.events"
check_true "killed: and leads nowhere (the ring went with the process)" \
  test ! -e "$EVDIR/$k.events"
# A regular ring in state running whose process is dead (as a producer
# without memfd leaves it).
rm -f "$EVDIR/$c.events"
cp "$WORK/copied.ring" "$EVDIR/$c.events" || hard_error "cp"
dump_ring "$EVDIR/$c.events" copied
check_dkey copied producer.state running
check_dkey copied producer.pid "$c"
# names NAME...: the sorted list, as `names_in` gives it
names() { printf '%s\n' "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }
# names_in: the folder's entries, sorted, with the namespace of identity
# links written as NS
names_in() { ls -A "$EVDIR" | sed 's/^\.ocgc-ring\.[0-9]*\./.ocgc-ring.NS./' | sort | tr '\n' ' ' | sed 's/ $//'; }
check_eq "before the next start" "`names $a.events $c.events $k.events $kept3.events \
  .ocgc-ring.NS.$a .ocgc-ring.NS.$c .ocgc-ring.NS.$k`" "`names_in`"
run_ok next env -u OCAML_RUNTIME_EVENTS_PRESERVE ./lifecycle
seen_running next
check_eq "after it: the live program's links and the kept file, no more" \
  "`names $a.events .ocgc-ring.NS.$a $kept3.events`" "`names_in`"
check_true "the live program's ring still leads to it" test -e "$EVDIR/$a.events"
kill -KILL $a 2>/dev/null
wait $a
rm -f "${EVDIR:?}"/* "${EVDIR:?}"/.[!.]*

say "== the default folder: \$XDG_RUNTIME_DIR/ocgc"
run_ok default env -u OCAML_RUNTIME_EVENTS_DIR ./lifecycle "$XDG_RUNTIME_DIR/ocgc"
seen_running default
check_eq "mode of the folder made" 700 "`stat -c %a "$XDG_RUNTIME_DIR/ocgc"`"
check_eq "files left in it" "`outkey default pid`.events" "`ls_dir "$XDG_RUNTIME_DIR/ocgc"`"
check_eq "files in OCAML_RUNTIME_EVENTS_DIR" none "`ls_dir "$EVDIR"`"
finish
