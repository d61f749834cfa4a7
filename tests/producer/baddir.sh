#!/bin/sh
# baddir.sh - a ring folder that cannot be used: the program runs as usual
# (same stdout, exit 0) with exactly one line on stderr, starting "ocgc:",
# and writes nothing.  Folders: missing; a regular file; owned by another
# user (as root: chown nobody; otherwise a folder of root's); read-only
# (not as root, whom permission bits do not stop).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native hello ocgc_test.ml hello.ml
run_ok ref ./hello
rm -f "${EVDIR:?}"/*

# bad_dir TAG DIR: run hello with the ring in DIR, check what it did
bad_dir() {
  say "== $1: OCAML_RUNTIME_EVENTS_DIR=$2"
  run $1 env OCAML_RUNTIME_EVENTS_DIR="$2" ./hello
  check_eq "exit status" 0 "`cat "$WORK/$1.rc"`"
  check_true "stdout unchanged" cmp -s "$WORK/ref.out" "$WORK/$1.out"
  check_eq "stderr lines" 1 "`stderr_lines $1`"
  check_eq "stderr starts with 'ocgc:'" "ocgc:" "`head -c 5 "$WORK/$1.err"`"
  say "  stderr: `cat "$WORK/$1.err"`"
}

bad_dir missing "$WORK/no/such/folder"
check_false "the missing folder was not made" test -e "$WORK/no"

printf 'not a folder\n' >"$WORK/plainfile"
bad_dir file "$WORK/plainfile"
check_eq "the file is untouched" "not a folder" "`cat "$WORK/plainfile"`"

if test "`id -u`" = 0; then
  if id nobody >/dev/null 2>&1; then
    mkdir -m 0777 "$WORK/others"
    chown nobody "$WORK/others" || hard_error "chown nobody failed"
    bad_dir others "$WORK/others"
    check_eq "nothing written in the other user's folder" none "`ls_dir "$WORK/others"`"
  else
    say "(no user 'nobody': the other-owner case is not run)"
  fi
else
  bad_dir others /
  mkdir -m 0500 "$WORK/readonly"
  bad_dir readonly "$WORK/readonly"
  check_eq "nothing written in the read-only folder" none "`ls_dir "$WORK/readonly"`"
fi
check_eq "nothing written in the usual folder" none "`ls_dir "$EVDIR"`"
finish
