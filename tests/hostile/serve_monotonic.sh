#!/bin/sh
# serve_monotonic.sh - what `ocgc serve` serves as a counter never goes
# backwards while a process lives, even when the process lies: against
# tests/hostile/hostile_producer in scribble mode (which, among its lies,
# publishes totals whose counts go down, and rewinds its ring), scrapes
# 50 ms apart (40, and on until a lie was met) are compared pairwise: no
# sample of a counter (*_total) or of a histogram (_bucket, _count, _sum)
# may be lower than in the scrape before (Prometheus would take it for a
# restart and make a rate out of nothing).  Between the scrapes the
# producer must have told lies (the exporter says "corrupt" or "truncated"
# once on stderr), and it must keep answering.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
: >"$WORK/prod.out"
start_bg prod nice -n 10 "$HBIN/hostile_producer" "$EVDIR" scribble 300
pid=$BGPID
wait_key prod ready "$pid" 30

# A PID given on the command line whose ring is corrupt when serve starts
# is an error (exit 4, saying so): the producer lies from its start, so
# try again until serve starts at a moment of truth (at most 20 times).
_try=0
until serve_try srv --listen 127.0.0.1:0 --dir "$EVDIR" "$pid"; do
  _try=$((_try + 1))
  grep -Eqi 'corrupt|truncat' "$WORK/srv.err" ||
    { cat "$WORK/srv.err"; hard_error "ocgc serve died (status `rc_of srv`)"; }
  test $_try -lt 20 || hard_error "ocgc serve met a lie at each of 20 starts"
done
check_true "a start that met a lie said corrupt and exited 4" \
  test $_try = 0 -o "`rc_of srv`" = 4
# At least 40 scrapes, and on until the exporter has met a lie (which the
# producer tells at moments of its own choosing, so the wait is not a
# fixed time: 400 scrapes, 20 s at least, at most).
bad=0
i=1
while test $i -le 40 || { test $i -le 400 && ! grep -Eqi 'corrupt|truncat' "$WORK/srv.err"; }; do
  test "`get m$i /metrics`" = 200 || bad=$((bad + 1))
  sleep 0.05
  i=$((i + 1))
done
n=$((i - 1))
say "$n scrapes"
check_eq "every scrape answered 200" 0 "$bad"
served=`series m40 $pid ocaml_process_threads`
check_gt "the process is served" 0 "$served"
if test "$served" = 0; then
  say "  serve's stderr: `tr '\n' '|' <"$WORK/srv.err"`"
  say "  watched: `grep '^ocgc_serve_watched_processes' "$WORK/m40"`;" \
    "first scrape serving it: `for f in $(seq 1 40); do series m$f $pid ocaml_process_threads | grep -q '^[1-9]' && { echo m$f; break; }; done`"
fi

# The counter samples of scrape N: "name{labels} value" for *_total, *_bucket,
# *_count and *_sum.
i=2
back=0
: >"$WORK/backwards"
while test $i -le $n; do
  awk -v prev="$WORK/m$((i - 1))" '
    function counter(n) { return n ~ /(_total|_bucket|_count|_sum)$/ }
    BEGIN {
      while ((getline line < prev) > 0) {
        if (line ~ /^#/) continue
        k = line; sub(/ [^ ]*$/, "", k); n = k; sub(/\{.*/, "", n)
        if (counter(n)) { v = line; sub(/.* /, "", v); before[k] = v + 0 }
      }
    }
    /^#/ { next }
    {
      k = $0; sub(/ [^ ]*$/, "", k); n = k; sub(/\{.*/, "", n)
      if (counter(n) && (k in before) && $NF + 0 < before[k])
        print k " went from " before[k] " to " $NF
    }' "$WORK/m$i" >>"$WORK/backwards"
  i=$((i + 1))
done
check_eq "no counter went backwards in $n scrapes (`head -n 1 "$WORK/backwards"`)" 0 \
  "`wc -l <"$WORK/backwards" | tr -d ' '`"
# Which lie it meets first is the producer's draw: a corrupt ring or one
# cut short (said once either way).
check_true "lies were told, and said once" grep -Eqi 'corrupt|truncat' "$WORK/srv.err"
grep -Eqi 'corrupt|truncat' "$WORK/srv.err" ||
  say "  serve's stderr: `tr '\n' '|' <"$WORK/srv.err"`; its errors:" \
    "`grep '^ocgc_serve_errors_total' "$WORK/m40"`"
check_true "the producer still runs" kill -0 "$pid"
kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit status 0" 0 "`rc_of srv`"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
finish
