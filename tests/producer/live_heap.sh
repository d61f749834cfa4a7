#!/bin/sh
# live_heap.sh - the heap after GC: when a major cycle ends, the producer
# records the words of the major heap not on its free list (live blocks
# and fragments).  A program that keeps a known 200,200 words, makes
# garbage and ends its cycles (Gc.full_major) prints Gc.stat right after;
# its ring's totals.live_words must equal Gc.stat's heap_words -
# free_words exactly, hold what it keeps; `ocgc report` says it (JSON
# heap.live_bytes, and a line of the text), and `ocgc serve` exports it as
# ocaml_gc_heap_live_bytes.  No compaction (O=1000000): one would move
# the heap after the recorded cycle end.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init

compile_native live ocgc_test.ml live_heap.ml
start_bg live env OCAMLRUNPARAM=O=1000000 ./live "$WORK/live.stop"
pid=$BGPID
wait_key live stat.fragments "$pid"
heap=`outkey live stat.heap_words`
free=`outkey live stat.free_words`
is_uint "$heap" && is_uint "$free" || hard_error "the program printed no Gc.stat"

"$OCGC" dump --pid "$pid" >"$WORK/d.dump" 2>"$WORK/d.err" ||
  { cat "$WORK/d.err"; hard_error "ocgc dump --pid $pid failed"; }
check_dkey d totals.live_words $((heap - free))
check_ge "the heap after GC holds what the program keeps (200,200 words)" 200200 \
  "`dkey d totals.live_words`"
check_eq "totals.live_words = Gc.stat's live_words + fragments" \
  $((`outkey live stat.live_words` + `outkey live stat.fragments`)) "`dkey d totals.live_words`"

"$OCGC" report "$pid" --duration 0.2s --json >"$WORK/r.json" 2>"$WORK/r.err"
check_eq "ocgc report --json: exit status" 0 $?
check_eq "ocgc report --json: heap.live_bytes" $(((heap - free) * 8)) \
  "`python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["heap"].get("live_bytes", ""))' "$WORK/r.json"`"
"$OCGC" report "$pid" --duration 0.2s >"$WORK/r.txt" 2>"$WORK/r2.err"
check_eq "ocgc report: a line says the heap after GC" 1 "`grep -c '^  heap after GC  ' "$WORK/r.txt"`"

serve srv --listen 127.0.0.1:0 "$pid"
check_eq "GET /metrics" 200 "`get m1 /metrics`"
check_eq "ocaml_gc_heap_live_bytes" $(((heap - free) * 8)) "`val m1 ocaml_gc_heap_live_bytes "$pid"`"
kill -TERM "$srv"
ocgc_wait srv

stop_bg live "$pid"
check_eq "exit status" 0 "`cat "$WORK/live.rc"`"
finish
