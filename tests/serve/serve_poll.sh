#!/bin/sh
# serve_poll.sh - `ocgc serve` drains each watched ring on the ring's own
# schedule, not only when scraped: a program with a small ring (e=14,
# 16,384 words, about 5,500 events) runs a 3-second GC workload that writes
# tens of times as many events, and nobody scrapes until it is over.  Read only
# at the scrape, nearly all would be lost; drained by the poll thread,
# which polls a busy ring as often as every 10 ms, at most a quarter may be
# (a generous bound for a loaded machine: without the thread the figure is
# above 90%).  The program's pauses are then in the histograms, and the
# collections counted from the ring equal its Gc.quick_stat when nothing
# was lost.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
cmd_init

OCAMLRUNPARAM=e=14; export OCAMLRUNPARAM
# 3 s, and at least 3,000 minor collections (about 13 events each: 40,000
# events), so that even a loaded machine writes the ring over many times.
target_start a 3/3000
pid=$BGPID
unset OCAMLRUNPARAM
serve srv --listen 127.0.0.1:0 "$pid"
target_go a
wait_key a gc.heap_chunks "$pid"

check_eq "GET /metrics once the workload is over" 200 "`get m /metrics`"
written=`val m ocgc_ring_events_total $pid`
lost=`val m ocgc_ring_events_lost_total $pid`
minors=`outkey a gc.minor_collections`
# The workload runs for a time and at least 3,000 minor collections: a
# loaded machine writes fewer events (16,266 in 3 s at load 12, with no
# minimum; about 200,000 idle), but never fewer than four times what the
# ring holds, enough for the loss bound below to fail without the poll
# thread (three quarters would be lost).
check_gt "the ring was written over several times (events written vs 5,500 it holds)" 22000 "$written"
check_true "at most a quarter lost ($lost of $written)" test "$((lost * 4))" -le "$written"
check_gt "drains on the ring's schedule (polls)" 10 \
  "`awk '$1 == "ocgc_serve_polls_total" { print $2 }' "$WORK/m"`"
check_gt "minor pauses observed" "$((minors / 2))" \
  "`val m ocaml_gc_duration_seconds_count $pid 'kind="minor"'`"
if test "$lost" -eq 0; then
  check_eq "nothing lost: every minor collection is in its histogram" "$minors" \
    "`val m ocaml_gc_duration_seconds_count $pid 'kind="minor"'`"
fi
check_eq "collections counted (exact totals)" "$minors" \
  "`val m ocaml_gc_collections_total $pid 'kind="minor"'`"

kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit status 0" 0 "`rc_of srv`"
target_stop a "$pid"
finish
