#!/bin/sh
# configure_options.sh - the two switches for packagers, on fresh build
# folders of this source tree (configure only, and `make -n`):
# - --disable-runtime: configure succeeds and runs no OCaml tool (here
#   ocamlc, ocamlopt and ocamlfind are traps that fail and say they were
#   run), and neither `make all` nor `make install` would build or install
#   the runtime variant; without it, the same configure does run them (so
#   the traps work);
# - --disable-werror: no -Werror in the compiler's command lines, which
#   have it by default.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

traps=$WORK/traps
mkdir "$traps" || hard_error "mkdir $traps"
for t in ocamlc ocamlopt ocamlfind; do
  printf '#!/bin/sh\necho %s >>"%s/called"\nexit 1\n' "$t" "$traps" >"$traps/$t"
  chmod +x "$traps/$t"
done

# conf TAG ARGS...: configure in $WORK/TAG with the traps first in PATH
# (and no OCAMLC, OCAMLOPT, OCAMLFIND from `make check`, which configure
# would take instead of searching); its exit status in TAG.rc, its output
# in TAG.out.
conf() {
  _t=$1; shift
  mkdir "$WORK/$_t" || hard_error "mkdir $WORK/$_t"
  (cd "$WORK/$_t" && unset OCAMLC OCAMLOPT OCAMLFIND &&
   PATH="$traps:$PATH" "$OCGC_SRCDIR/configure" "$@") >"$WORK/$_t.out" 2>&1
  echo $? >"$WORK/$_t.rc"
}

# dry TAG TARGET: what `make -n TARGET` would run in $WORK/TAG
dry() { make -s -n -C "$WORK/$1" "$2" 2>&1; }

say "== --disable-runtime"
conf nort --disable-runtime
check_eq "configure --disable-runtime: exit status" 0 "`cat "$WORK/nort.rc"`"
called=`cat "$traps/called" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'`
check_eq "OCaml tools run by configure --disable-runtime" none "${called:-none}"
check_eq "make all would build the runtime" 0 "`dry nort all | grep -c 'ocaml-source\|UNPACK\|STAGE'`"
check_eq "make install would install the runtime" 0 \
  "`dry nort install | grep -c 'ocamlrun_ocgc\|FINDLIB\|libasmrun'`"
check_ge "make install would install libocgc" 1 "`dry nort install | grep -c 'libocgc'`"

say "== the default looks for OCaml"
conf rt
check_true "configure with failing OCaml tools fails" test "`cat "$WORK/rt.rc"`" != 0
check_true "configure ran ocamlfind" grep -q ocamlfind "$traps/called"

say "== --disable-werror"
conf nowerror --disable-runtime --disable-werror
check_eq "configure --disable-werror: exit status" 0 "`cat "$WORK/nowerror.rc"`"
check_eq "-Werror in the command lines of libocgc (--disable-werror)" 0 \
  "`dry nowerror libocgc.la | grep -c -e '-Werror'`"
check_ge "-Werror in the command lines of libocgc (default)" 1 \
  "`dry nort libocgc.la | grep -c -e '-Werror'`"
finish
