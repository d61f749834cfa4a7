#!/bin/sh
# opam_file.sh - opam/ocaml-variants.opam, the opam compiler package of a
# whole patched compiler: opam lints it (when opam is installed; Debian's
# `opam` is in scripts/debian-packages.txt), its source is the very tarball
# `make check-4.14` builds and tests (the same sha256), and the commands it
# runs are ones scripts/ocgc-compiler.sh accepts (the build stops before
# installing, the install is OCaml's own `make install` in the build folder
# the script names).  Building it through opam needs the opam repository,
# which this test does not reach.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
f=$OCGC_SRCDIR/opam/ocaml-variants.opam
test -r "$f" || hard_error "$f is missing"

if command -v opam >/dev/null 2>&1; then
  (cd "$WORK" && HOME=$WORK OPAMROOT=$WORK/opamroot opam lint "$f") >"$WORK/lint.out" 2>&1
  check_eq "opam lint: exit status" 0 "$?"
  check_eq "opam lint: errors" 0 "`grep -c 'error [0-9]' "$WORK/lint.out"`"
else
  say "note: opam is not installed, so the file is not linted (apt-get install opam)"
fi

sum_opam=`sed -n 's/.*checksum: "sha256=\([0-9a-f]*\)".*/\1/p' "$f"`
sum_check=`sed -n 's/^TGZ_SHA256=//p' "$OCGC_SRCDIR/tests/check_414.sh"`
check_eq "the opam file's source is check-4.14's tarball (sha256)" "$sum_check" "$sum_opam"

# The build command, run for real up to the argument checks: --no-install
# without --build is refused, and with both the script gets as far as the
# (missing) source.
sh "$OCGC_SRCDIR/scripts/ocgc-compiler.sh" --prefix "$WORK/p" --no-install x.tgz \
  >"$WORK/noinst.out" 2>&1
check_eq "ocgc-compiler.sh --no-install without --build: exit status" 2 "$?"
sh "$OCGC_SRCDIR/scripts/ocgc-compiler.sh" --prefix "$WORK/p" --jobs 2 \
  --build "$WORK/b" --no-install "$WORK/missing.tgz" >"$WORK/args.out" 2>&1
check_true "the opam file's arguments are accepted (it stops at the missing source)" \
  grep -q "missing.tgz: no such file or folder" "$WORK/args.out"
check_true "its build command names --no-install and --build _opam-build" \
  grep -q '"--build" "_opam-build" "--no-install"' "$f"
check_true "its install runs make install in that folder" \
  grep -q 'install: \[make "-C" "_opam-build/ocaml-4.14.1" "install"\]' "$f"
finish
