#!/bin/sh
# symlink_slash.sh - OCAML_RUNTIME_EVENTS_DIR names a symbolic link to a
# folder, spelt with a trailing slash ("link/"): it is still the link, and
# must be refused as "link" is (symlink.sh): one stderr line, nothing
# written at the target.  open(2) with O_NOFOLLOW does not stop it, since
# the kernel resolves the link to honour the trailing slash.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native hello ocgc_test.ml hello.ml
run_ok ref ./hello

mkdir -m 0700 "$WORK/real"
ln -s "$WORK/real" "$WORK/linkdir"
for spelling in "linkdir/" "linkdir//"; do
  say "== OCAML_RUNTIME_EVENTS_DIR=\$WORK/$spelling (a link)"
  run slash env OCAML_RUNTIME_EVENTS_DIR="$WORK/$spelling" ./hello
  check_eq "exit status" 0 "`cat "$WORK/slash.rc"`"
  check_true "stdout unchanged" cmp -s "$WORK/ref.out" "$WORK/slash.out"
  check_eq "stderr lines" 1 "`stderr_lines slash`"
  check_eq "stderr starts with 'ocgc:'" "ocgc:" "`head -c 5 "$WORK/slash.err"`"
  check_eq "files written at the link's target" none "`ls_dir "$WORK/real"`"
  rm -f "$WORK/real"/*
done
finish
