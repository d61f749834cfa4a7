#!/bin/sh
# memprof_fork.sh - ocgc's allocation profile across fork: the child's
# table (in its own ring) starts empty and holds only what the child
# allocated; the parent's holds only the parent's, before and after.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
ocgc_init

N=300000 RATE=4096
W=$((RATE / 8))
compile_native fork ocgc_test.ml memprof_funs.ml memprof_fork.ml
run_ok p env OCGC_MEMPROF=$RATE ./fork $N
ring_of p
mp_dump p "$RING"
mp_functions p "$WORK/fork"
child=`outkey p child.pid`
ring_of p "$child"
mp_dump c "$RING"
mp_functions c "$WORK/fork" "`outkey p exe_base`"
check_dkey c memprof.state on
check_dkey c memprof.rate_bytes $RATE
check_eq "child: nothing of the parent's alloc_a" 0 "`mp_fn c camlMemprof_funs__alloc_a_ 2`"
mp_within "child: its alloc_b" "`mp_fn c camlMemprof_funs__alloc_b_ 3`" $((2 * N * 11)) $W
check_eq "child: every sampled block found dead" "`mp_fn c camlMemprof_funs__alloc_b_ 2`" \
  "`mp_fn c camlMemprof_funs__alloc_b_ 6`"
mp_within "parent: alloc_a" "`mp_fn p camlMemprof_funs__alloc_a_ 3`" $((N * 11)) $W
check_eq "parent: nothing of the child's alloc_b" 0 "`mp_fn p camlMemprof_funs__alloc_b_ 2`"
mp_within "parent: alloc_c" "`mp_fn p camlMemprof_funs__alloc_c_ 3`" $((4 * N * 11)) $W
finish
