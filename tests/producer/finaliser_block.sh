#!/bin/sh
# finaliser_block.sh - one thread's Gc.full_major waits about a second in a
# finaliser (giving the runtime lock away) while another thread allocates.
# The other thread's collections keep their real causes: only the few that
# Gc.full_major itself runs are "explicit".
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

PACKAGES=threads.posix,unix
compile_native fblock ocgc_test.ml finaliser_block.ml
OCAMLRUNPARAM=e=20 run_ok fb ./fblock
ring_of fb
dump_ring "$RING" fb
check_no_loss fb
check_stat_agrees fb
check_gt "allocation rounds" 1000 "`outkey fb alloc.rounds`"
# Gc.full_major empties the minor heap and finishes the cycle twice, and
# runs at most one dispatch in each of its two pending-action calls.
check_true "minor collections caused by explicit (<= 4): `dkey fb cause.minor.explicit 0`" \
  test "`dkey fb cause.minor.explicit 0`" -le 4
check_true "major slices caused by explicit (<= 4): `dkey fb cause.major_slice.explicit 0`" \
  test "`dkey fb cause.major_slice.explicit 0`" -le 4
check_gt "minor collections with cause minor_heap_full" 100 \
  "`dkey fb cause.minor.minor_heap_full 0`"
check_gt "major slices with cause major_slice_due" 50 \
  "`dkey fb cause.major_slice.major_slice_due 0`"
finish
