#!/bin/sh
# whole_compiler.sh - a whole OCaml compiler built from patched sources by
# scripts/ocgc-compiler.sh: programs it builds, with no
# runtime variant and no findlib, write the ring by default, native and
# bytecode (run by that compiler's own ocamlrun), and the ring equals their
# Gc.quick_stat exactly; and the compiler's own tools, OCaml programs linked
# with that runtime, write one too.
# Needs OCGC_WHOLE_COMPILER, the compiler's prefix: `make check-4.14` builds
# one (cached) and sets it; without it the test is skipped, saying so.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime
P=${OCGC_WHOLE_COMPILER:-}
if [ -z "$P" ]; then
  say "skipped: no whole patched compiler to test (make check-4.14 builds one and sets OCGC_WHOLE_COMPILER)"
  exit 77
fi
[ -x "$P/bin/ocamlopt.opt" ] || hard_error "OCGC_WHOLE_COMPILER=$P holds no bin/ocamlopt.opt"

files=`_copy_sources whole ocgc_test.ml workload.ml` || exit 99
# compile FLAVOUR OUT COMPILER...: in $WORK/src-whole, unix from the stdlib
compile() {
  _f=$1; _o=$2; shift 2
  say "compile ($_f) $_o with $1"
  (cd "$WORK/src-whole" && "$@" unix.$_f $files -o "$WORK/$_o") \
    >"$WORK/$_o.compile.log" 2>&1 || { cat "$WORK/$_o.compile.log"; hard_error "compiling $_o"; }
}
compile cmxa wnative "$P/bin/ocamlopt.opt" -I +unix
compile cma wbyte "$P/bin/ocamlc.opt" -I +unix

for t in wnative wbyte; do
  say "== $t: the default runtime writes the ring"
  run_ok "$t" ./"$t"
  ring_of "$t"
  dump_ring "$RING" "$t"
  check_lifecycle "$t"
  check_no_loss "$t"
  check_stat_agrees "$t"
  check_spans_paired "$t"
  check_all_caused "$t"
done
check_dkey wnative producer.code native
check_dkey wbyte producer.code bytecode

say "== the compiler's own tools carry it"
run tool "$P/bin/ocamlopt.opt" -version
check_eq "ocamlopt.opt -version: exit status" 0 "`cat "$WORK/tool.rc"`"
n=`ls "$EVDIR" | grep -c '\.events$'`
check_eq "rings in the folder after ocamlopt.opt ran (two programs, one tool)" 3 "$n"
finish
