#!/bin/sh
# wrap.sh - a ring far too small for a busy program (OCAMLRUNPARAM=e=10:
# 1024 words): overwritten events are counted exactly (seen + lost +
# skipped = events written, lost_exact 1), and the extension block's
# totals still equal Gc.quick_stat.  Also: e=N sizes the ring, and an e=N
# out of range gives one stderr line and the default size.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native workload ocgc_test.ml workload.ml

say "== OCAMLRUNPARAM=e=10, busy workload"
run_ok wrap env OCAMLRUNPARAM=e=10 ./workload 6
ring_of wrap
dump_ring "$RING" wrap
check_dkey wrap file.ring_words 1024
# ring_start was overwritten long ago; the end must be there
check_dkey wrap producer.state exited
check_dkey wrap lifecycle.ring_stop 1
seen=`dkey wrap events.seen`; lost=`dkey wrap events.lost`; skipped=`dkey wrap events.skipped`
written=`dkey wrap ring.0.written`
for x in "$seen" "$lost" "$skipped" "$written"; do
  is_uint "$x" || hard_error "the dump lacks events.seen/lost/skipped or ring.0.written"
done
say "  written $written: seen $seen, lost $lost, skipped $skipped"
# Read after the program ended, the overwritten events are "skipped"
# (overwritten before the cursor existed, consumer.h), not "lost" (which
# counts events overwritten while a cursor reads): what must hold is that
# they are accounted for, exactly.
check_gt "events.lost + events.skipped (the ring wrapped)" 0 "$((lost + skipped))"
check_dkey wrap events.lost_exact 1
check_eq "events.seen + events.lost + events.skipped" "$written" "$((seen + lost + skipped))"
check_gt "events.seen" 0 "$seen"
check_gt "events written (more than the ring holds)" 1024 "$written"
check_totals_agree wrap

say "== the same run with a ring big enough (e=20): nothing lost"
run_ok big env OCAMLRUNPARAM=e=20 ./workload 6
ring_of big
dump_ring "$RING" big
check_no_loss big
check_stat_agrees big
# The workload is deterministic: the same collections, the same events.
grep '^gc\.' "$WORK/wrap.out" >"$WORK/wrap.gc"
grep '^gc\.' "$WORK/big.out" >"$WORK/big.gc"
check_true "the same Gc.quick_stat in both runs" cmp -s "$WORK/wrap.gc" "$WORK/big.gc"
check_eq "events written by both runs" "$written" "`dkey big ring.0.written`"

say "== OCAMLRUNPARAM=v=0,e=12 (e among other letters)"
run_ok e12 env OCAMLRUNPARAM=v=0,e=12 ./workload 1
ring_of e12
dump_ring "$RING" e12
check_dkey e12 file.ring_words 4096
check_totals_agree e12

say "== OCAMLRUNPARAM=e=3 (out of range): one stderr line, default size"
run bad env OCAMLRUNPARAM=e=3 ./workload 1
check_eq "exit status" 0 "`cat "$WORK/bad.rc"`"
check_eq "stderr lines" 1 "`stderr_lines bad`"
check_eq "stderr starts with 'ocgc:'" "ocgc:" "`head -c 5 "$WORK/bad.err"`"
say "  stderr: `cat "$WORK/bad.err"`"
ring_of bad
dump_ring "$RING" bad
check_dkey bad file.ring_words 65536
finish
