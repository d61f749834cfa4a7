#!/bin/sh
# memprof_own.sh - a program that runs its own Gc.Memprof keeps exactly a
# stock runtime's behaviour with ocgc sampling on: its callbacks see the
# same samples, the same sizes, as the same program on Debian's stock
# runtime (statmemprof's generator is seeded alike in both, and ocgc never
# draws from it); ocgc takes no sample while the program's profiler runs
# and samples again once it stops.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
ocgc_init

N=300000 RATE=4096
W=$((RATE / 8))
compile_native own ocgc_test.ml memprof_funs.ml memprof_own.ml
_compile_stock() {
  mkdir -p "$WORK/src-stock"
  cp "$OCGC_SRCDIR/tests/ocaml/ocgc_test.ml" "$OCGC_SRCDIR/tests/ocaml/memprof_funs.ml" \
    "$OCGC_SRCDIR/tests/ocaml/memprof_own.ml" "$WORK/src-stock/"
  (cd "$WORK/src-stock" && "$OCAMLFIND" ocamlopt -package unix -linkpkg ocgc_test.ml \
     memprof_funs.ml memprof_own.ml -o "$WORK/stock") >"$WORK/stock.compile.log" 2>&1 ||
    { cat "$WORK/stock.compile.log"; hard_error "compiling the stock program failed"; }
}
_compile_stock
run_ok stock ./stock $N
run_ok on env OCGC_MEMPROF=$RATE ./own $N
for k in own.calls own.samples own.words; do
  check_eq "$k as on the stock runtime" "`outkey stock $k`" "`outkey on $k`"
done
check_gt "the program's callbacks ran" 0 "`outkey on own.calls`"
ring_of on
mp_dump on "$RING"
mp_functions on "$WORK/own"
check_dkey on memprof.state on
check_dkey on totals.program_memprof 0
mp_within "alloc_a, before Gc.Memprof.start" "`mp_fn on camlMemprof_funs__alloc_a_ 3`" $((N * 11)) $W
check_eq "alloc_b, while the program's profiler ran: no ocgc sample" 0 \
  "`mp_fn on camlMemprof_funs__alloc_b_ 2`"
mp_within "alloc_c, after Gc.Memprof.stop" "`mp_fn on camlMemprof_funs__alloc_c_ 3`" $((4 * N * 11)) $W
finish
