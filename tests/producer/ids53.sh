#!/bin/sh
# ids53.sh - OCGC_IDS=5.3: the producer writes its phases in OCaml 5.3's
# numbering (which 5.3 changed without changing the file version: readers
# built on 5.3, such as Runtime_events or olly, expect it) and says so in
# its extension block; libocgc reads the block and decodes the file right:
# every span paired under its 5.2 name, every collection caused, the totals
# equal Gc.quick_stat, the same counts as the same run with 5.2 ids.  The
# words on the wire really are 5.3's: the same file with the block's word
# set back to 5.2 decodes into other phases (5.3's minor as 5.2's
# minor_local_roots).  OCGC_IDS=5.2 or unset: 5.2;
# anything else: one line on stderr, and 5.2.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native workload ocgc_test.ml workload.ml

for ids in 5.3 5.2; do
  say "== OCGC_IDS=$ids"
  run_ok w$ids env OCGC_IDS=$ids OCAMLRUNPARAM=e=20 ./workload 2
  ring_of w$ids
  cp "$RING" "$WORK/w$ids.events"
  dump_ring "$RING" w$ids
  check_dkey w$ids file.ids $ids
  check_no_loss w$ids
  check_totals_agree w$ids
  check_spans_paired w$ids
  check_all_caused w$ids
  check_eq "w$ids: minor spans = minor collections" "`outkey w$ids gc.minor_collections`" \
    "`dkey w$ids phase.minor.spans`"
  check_eq "w$ids: stderr is empty" 0 "`stderr_lines w$ids`"
done
# The workload is deterministic: the same spans whatever the numbering.
for k in phase.minor.spans phase.major_slice.spans phase.explicit_gc_full_major.spans \
    phase.minor_local_roots.spans phase.major_finish_cycle.spans; do
  check_eq "$k, 5.3 ids = 5.2 ids" "`dkey w5.2 $k 0`" "`dkey w5.3 $k 0`"
done

say "== the 5.3 file read as 5.2 (its ids word set to 1): other phases"
# ext.ids is the word at byte 64 + 248
printf '\001\000\000\000\000\000\000\000' |
  dd of="$WORK/w5.3.events" bs=1 seek=312 conv=notrunc 2>/dev/null
"$OCGC" dump "$WORK/w5.3.events" >"$WORK/as52.dump" 2>/dev/null
check_dkey as52 file.ids 5.2
# 5.3's minor (11) is 5.2's minor_local_roots; 5.3's major_mark (10) is
# 5.2's minor.
check_eq "read as 5.2: the 5.3 minor spans are minor_local_roots" "`dkey w5.3 phase.minor.spans`" \
  "`dkey as52 phase.minor_local_roots.spans 0`"
check_eq "read as 5.2: the 5.3 major_mark spans are minor" "`dkey w5.3 phase.major_mark.spans 0`" \
  "`dkey as52 phase.minor.spans 0`"

say "== OCGC_IDS=6.0: one stderr line, 5.2 ids"
run bad env OCGC_IDS=6.0 ./workload 1
check_eq "exit status" 0 "`cat "$WORK/bad.rc"`"
check_eq "stderr lines" 1 "`stderr_lines bad`"
check_true "it names OCGC_IDS" grep -q '^ocgc: OCGC_IDS must be 5.2 or 5.3' "$WORK/bad.err"
ring_of bad
dump_ring "$RING" bad
check_dkey bad file.ids 5.2
check_totals_agree bad
finish
