#!/bin/sh
# symlink.sh - hostile ring folders.  OCAML_RUNTIME_EVENTS_DIR itself a
# symbolic link (to a folder of ours): refused with one stderr line,
# nothing written at the target.  A link planted where <pid>.events goes
# (to an existing file, or dangling): refused with one stderr line, the
# target untouched or not created, nothing left in the folder but the link.
# A folder planted there: refused likewise.  A link planted at the
# temporary name (.<pid>.events.tmp): removed, not followed, and the ring
# made.  A stale regular <pid>.events (an earlier process with the same
# pid): replaced by the new ring, silently.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native hello ocgc_test.ml hello.ml
run_ok ref ./hello
rm -f "${EVDIR:?}"/*

# one_line TAG: exit 0, same stdout, exactly one "ocgc:" line on stderr
one_line() {
  check_eq "exit status" 0 "`cat "$WORK/$1.rc"`"
  check_true "stdout unchanged" cmp -s "$WORK/ref.out" "$WORK/$1.out"
  check_eq "stderr lines" 1 "`stderr_lines $1`"
  check_eq "stderr starts with 'ocgc:'" "ocgc:" "`head -c 5 "$WORK/$1.err"`"
  say "  stderr: `cat "$WORK/$1.err"`"
}

say "== the folder is a symbolic link"
mkdir -m 0700 "$WORK/real"
ln -s "$WORK/real" "$WORK/linkdir"
run dirlink env OCAML_RUNTIME_EVENTS_DIR="$WORK/linkdir" ./hello
one_line dirlink
check_eq "files written at the link's target" none "`ls_dir "$WORK/real"`"

mkdir -m 0700 "$WORK/outside"
printf 'precious\n' >"$WORK/outside/victim"
chmod 0644 "$WORK/outside/victim"

# $$ of `sh -c` is the program's pid after exec
say "== <pid>.events is a link to an existing file"
run planted sh -c 'ln -s "$1" "$OCAML_RUNTIME_EVENTS_DIR/$$.events" && exec ./hello' \
  sh "$WORK/outside/victim"
one_line planted
check_eq "the target's content" precious "`cat "$WORK/outside/victim"`"
check_eq "the target's mode" 644 "`stat -c %a "$WORK/outside/victim"`"
check_eq "the target's size" 9 "`stat -c %s "$WORK/outside/victim"`"
check_eq "the folder holds only the link" 1 "`count_dir "$EVDIR"`"
check_true "the link is still a link" test -L "`ls -d "$EVDIR"/*.events`"
rm -f "${EVDIR:?}"/* "${EVDIR:?}"/.[!.]*

say "== <pid>.events is a dangling link"
run dangling sh -c 'ln -s "$1" "$OCAML_RUNTIME_EVENTS_DIR/$$.events" && exec ./hello' \
  sh "$WORK/outside/created"
one_line dangling
check_false "the link's target was not created" test -e "$WORK/outside/created"
check_eq "the folder holds only the link" 1 "`count_dir "$EVDIR"`"
check_eq "files outside" victim "`ls_dir "$WORK/outside"`"
rm -f "${EVDIR:?}"/* "${EVDIR:?}"/.[!.]*

say "== <pid>.events is a folder"
run planted_dir sh -c 'mkdir "$OCAML_RUNTIME_EVENTS_DIR/$$.events" && exec ./hello'
one_line planted_dir
check_eq "the folder holds only the planted folder" 1 "`count_dir "$EVDIR"`"
rm -rf "${EVDIR:?}"/* "${EVDIR:?}"/.[!.]*

for kind in tmp ring; do
say "== .ocgc-$kind.<ns>.<pid> (the temporary name; a ring's identity link) is a link to an existing file"
run tmplink sh -c 'ns=`readlink /proc/$$/ns/pid | tr -dc 0-9` &&
  ln -s "$1" "$OCAML_RUNTIME_EVENTS_DIR/.ocgc-$3.$ns.$$" && echo $$ >"$2" && exec ./hello' \
  sh "$WORK/outside/victim" "$WORK/tmplink.pid" $kind
check_eq "exit status" 0 "`cat "$WORK/tmplink.rc"`"
check_true "stdout unchanged" cmp -s "$WORK/ref.out" "$WORK/tmplink.out"
check_eq "stderr lines" 0 "`stderr_lines tmplink`"
check_eq "the target's content" precious "`cat "$WORK/outside/victim"`"
check_eq "the target's size" 9 "`stat -c %s "$WORK/outside/victim"`"
pid=`cat "$WORK/tmplink.pid"`
check_eq "the folder holds the ring only" "$pid.events" "`ls_dir "$EVDIR"`"
ring_of tmplink "$pid"
dump_ring "$RING" tmplink
check_dkey tmplink producer.pid "$pid"
check_lifecycle tmplink
rm -f "${EVDIR:?}"/* "${EVDIR:?}"/.[!.]*
done

say "== a stale regular <pid>.events is replaced"
run stale sh -c 'printf "stale\n" >"$OCAML_RUNTIME_EVENTS_DIR/$$.events" && echo $$ >"$1" && exec ./hello' \
  sh "$WORK/stale.pid"
check_eq "exit status" 0 "`cat "$WORK/stale.rc"`"
check_true "stdout unchanged" cmp -s "$WORK/ref.out" "$WORK/stale.out"
check_eq "stderr lines" 0 "`stderr_lines stale`"
pid=`cat "$WORK/stale.pid"`
check_eq "the folder holds the ring only" "$pid.events" "`ls_dir "$EVDIR"`"
ring_of stale "$pid"
dump_ring "$RING" stale
check_dkey stale producer.pid "$pid"
check_lifecycle stale
finish
