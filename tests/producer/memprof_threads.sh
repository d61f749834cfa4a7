#!/bin/sh
# memprof_threads.sh - ocgc's allocation sampling in a threaded program:
# three systhreads allocate 1:2:4 from three functions at once; each
# function's figures (by the innermost frame of the sampling thread's own
# stack) lie within the statistical bound of what it allocated.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
ocgc_init

N=300000 RATE=4096
W=$((RATE / 8))
PACKAGES=unix,threads.posix compile_native thr ocgc_test.ml memprof_funs.ml memprof_threads.ml
run_ok t env OCGC_MEMPROF=$RATE ./thr $N
ring_of t
mp_dump t "$RING"
mp_functions t "$WORK/thr"
for f in a:1 b:2 c:4; do
  mp_within "alloc_${f%:*} (${f#*:} x $N tuples)" "`mp_fn t camlMemprof_funs__alloc_${f%:*}_ 3`" \
    $((${f#*:} * N * 11)) $W
  check_eq "alloc_${f%:*}: every sampled block found dead" \
    "`mp_fn t camlMemprof_funs__alloc_${f%:*}_ 2`" "`mp_fn t camlMemprof_funs__alloc_${f%:*}_ 6`"
done
finish
