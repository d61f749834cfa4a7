#!/bin/sh
# serve_frozen.sh - no watched process can blind `ocgc serve`.  40
# producers stopped in the middle of a publication, alive
# (tests/hostile/hostile_producer frozen: both seqlocks odd for good) and
# one well-behaved OCaml program, all watched by pid.  After the freeze,
# every scrape of /metrics answers 200 within the stated bound (0.5 s;
# checked at 5 s, which leaves a loaded machine its scheduling) with the
# program's figures equal to its own Gc.quick_stat, and /-/healthy answers
# 200 as fast.  The exporter used to read every ring for each scrape with
# its one lock held, retrying the frozen ones: scrapes took seconds, and
# /-/healthy waited behind them.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
compile_native target ocgc_test.ml attach_target.ml
N=40

start_bg target ./target 0.3 "$WORK/target.stop"
tpid=$BGPID
wait_key target gc.heap_chunks "$tpid"

pids=
i=1
while test $i -le $N; do
  : >"$WORK/frozen$i.out"
  start_bg frozen$i "$HBIN/hostile_producer" "$EVDIR" frozen 300 10
  pids="$pids $BGPID"
  eval "fpid$i=$BGPID"
  i=$((i + 1))
done
i=1
for p in $pids; do wait_key frozen$i ready "$p" 30; i=$((i + 1)); done

serve srv --listen 127.0.0.1:0 "$tpid" $pids
check_eq "a scrape before the freeze" 200 "`get m0 /metrics`"

# Freeze them all, mid-publication.
for p in $pids; do kill -USR1 "$p"; done
i=1
for p in $pids; do wait_key frozen$i frozen "$p" 30; i=$((i + 1)); done

# Scrapes and health checks: status, time (curl's, in ms), figures.
slow=0 bad=0 wrong=0 i=1
want_minor=`outkey target gc.minor_collections`
while test $i -le 8; do
  code=`get m$i /metrics -w '%{http_code} %{time_total}'`
  set -- $code
  ms=`awk -v t="$2" 'BEGIN { printf "%d", t * 1000 }'`
  say "  scrape $i: $1 in $ms ms"
  test "$1" = 200 || bad=$((bad + 1))
  test "$ms" -le 5000 || slow=$((slow + 1))
  got=`val m$i ocaml_gc_collections_total "$tpid" 'kind="minor"'`
  test "$got" = "$want_minor" || { wrong=$((wrong + 1)); say "  minor collections served $got, quick_stat $want_minor"; }
  hc=`get h$i /-/healthy -w '%{http_code} %{time_total}'`
  set -- $hc
  ms=`awk -v t="$2" 'BEGIN { printf "%d", t * 1000 }'`
  test "$1" = 200 || bad=$((bad + 1))
  test "$ms" -le 5000 || slow=$((slow + 1))
  i=$((i + 1))
done
check_eq "scrapes and health checks that did not answer 200" 0 "$bad"
check_eq "scrapes and health checks slower than 5 s" 0 "$slow"
check_eq "scrapes whose figures of the well-behaved program differ from its quick_stat" 0 "$wrong"
check_true "the exporter says which figures are stale" grep -q '^ocgc_serve_stale_processes ' "$WORK/m8"

: >"$WORK/target.stop"
for p in $pids; do kill "$p" 2>/dev/null; done
kill "$srv" 2>/dev/null
finish
