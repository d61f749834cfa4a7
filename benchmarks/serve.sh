#!/bin/sh
# serve.sh - `make bench` (and `make bench-serve` alone): what `ocgc serve`
# costs with 1, 10 and 50 watched busy programs on the patched runtime.
# For each count: the programs' load (ring events per second per process,
# from ocgc_ring_events_total, and their own CPU share), then an idle spell
# with no scrape (what the exporter costs on its own: its poll of the
# rings, if it has one), then SCRAPES scrapes of /metrics SPACING seconds
# apart: curl's time_total (median, p90, max), the exporter's own
# ocgc_serve_scrape_duration_seconds, the body's size; the exporter's CPU
# (its threads' /proc/PID/task/*/schedstat) over the idle spell, per
# scrape, and over the whole run; its VmRSS and VmHWM at the end; events
# lost (overwritten before the exporter read them) in the idle spell and in
# all.  The targets of issue 11 at 50 programs: under 1% of a core and
# under 10 ms per scrape; the verdict is printed, it never fails.
#
# The programs (serve_busy.ml): bursts of alloc.ml's steps every 100 ms,
# OCAMLRUNPARAM=s=32k (a 256 KiB minor heap: about 180 minor collections a
# second each), about 1% of a core each.  As root the whole run goes into
# a fresh pid namespace and serve watches --all (only these programs are
# there: other OCaml programs of the host would be measured too); else it
# is given their PIDs (no listing of /proc: a little cheaper).
#
# Set by bench.am: OCGC (or OCGC_BIN and OCGC_LIBDIR: the real program, not
# libtool's wrapper), OCGC_STAGE, OCAMLFIND, BENCH_SRCDIR.  Knobs:
#   SERVE_BENCH_COUNTS="1 10 50"  watched programs, one run each
#   SERVE_BENCH_SCRAPES=50        scrapes per run
#   SERVE_BENCH_SPACING=1         seconds between scrapes
#   SERVE_BENCH_IDLE=8            seconds of the idle spell
#   SERVE_BENCH_STEPS=1000        alloc steps per burst (the load)
set -u
if test -z "${SERVE_BENCH_NS:-}"; then
  SERVE_BENCH_NS=0
  if test "`id -u`" = 0 && unshare --pid --fork --mount-proc true 2>/dev/null; then
    SERVE_BENCH_NS=1; export SERVE_BENCH_NS
    exec unshare --pid --fork --mount-proc --kill-child=TERM /bin/sh "$0" "$@"
  fi
fi
COUNTS=${SERVE_BENCH_COUNTS:-1 10 50}
SCRAPES=${SERVE_BENCH_SCRAPES:-50}
SPACING=${SERVE_BENCH_SPACING:-1}
IDLE=${SERVE_BENCH_IDLE:-8}
STEPS=${SERVE_BENCH_STEPS:-1000}
TCK=`getconf CLK_TCK 2>/dev/null || echo 100`
if test -x "${OCGC_BIN:-}"; then
  LD_LIBRARY_PATH=$OCGC_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
  OCGC=$OCGC_BIN
fi
command -v curl >/dev/null 2>&1 || { echo "serve: curl is missing (apt-get install curl): n/a"; exit 0; }
work=`mktemp -d "${TMPDIR:-/tmp}/ocgc-bench-serve.XXXXXX"` || exit 0
busy_pids= srv=
cleanup() {
  : >"$work/stop"
  test -n "$srv" && kill "$srv" 2>/dev/null
  for p in $busy_pids; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
cp "$BENCH_SRCDIR/serve_busy.ml" "$work/" || exit 0
if ! (cd "$work" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
        -runtime-variant _ocgc serve_busy.ml -o serve_busy) >"$work/log" 2>&1; then
  echo "serve: cannot compile serve_busy.ml: n/a"; exit 0
fi
mkdir -m 700 "$work/rings"

now() { date +%s.%N; }
# cpu_ns PID: the CPU time of PID's threads in ns: the sum of their
# /proc/PID/task/*/schedstat (ns, where the kernel keeps it), else utime +
# stime of /proc/PID/stat (clock ticks: too coarse for one program's
# exporter over a few seconds).  The exporter's threads live as long as it.
cpu_ns() {
  if test -r "/proc/$1/schedstat"; then
    cat "/proc/$1/task/"*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
  else
    sed 's/.*) //' "/proc/$1/stat" 2>/dev/null |
      awk -v t="$TCK" '{ printf "%.0f\n", ($12 + $13) * 1e9 / t }'
  fi
}
# status_kib PID FIELD: VmRSS or VmHWM of PID in KiB
status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }
# fam FILE NAME: NAME's samples of our programs: "pid value" lines
fam() { sed -n "s/^$2{pid=\"\([0-9]*\)\",program=\"serve_busy\"[^ ]*} /\1 /p" "$1"; }
# sum FILE NAME: the sum of NAME over our programs
sum() { fam "$1" "$2" | awk '{ s += $2 } END { printf "%.0f\n", s }'; }
# scrape FILE: GET /metrics into FILE; prints curl's time_total (s)
scrape() { curl -s --max-time 30 -o "$1" -w '%{time_total}\n' "${url}metrics"; }

# start_busy N: N busy programs, their pids in busy_pids
start_busy() {
  rm -f "$work/stop"
  busy_pids=
  _i=0
  while test $_i -lt "$1"; do
    OCAMLRUNPARAM=s=32k OCAML_RUNTIME_EVENTS_DIR="$work/rings" \
      "$work/serve_busy" "$STEPS" 100 "$work/stop" >/dev/null &
    busy_pids="$busy_pids $!"
    _i=$((_i + 1))
  done
}

# start_serve N: ocgc serve on a free port watching the N programs (--all
# in the namespace, else their PIDs once each has its ring); srv, url.
# Returns 1 if it does not come up or never sees them all.
start_serve() {
  _want=$1
  for _p in $busy_pids; do
    _n=0
    while ! test -e "$work/rings/$_p.events"; do
      _n=$((_n + 1)); test $_n -le 400 || return 1; sleep 0.05
    done
  done
  if test "$SERVE_BENCH_NS" = 1; then set -- --all; else set -- $busy_pids; fi
  "$OCGC" serve --listen 127.0.0.1:0 "$@" 2>"$work/serve.err" &
  srv=$!
  _n=0
  while ! grep -q 'listening on' "$work/serve.err" 2>/dev/null; do
    _n=$((_n + 1)); test $_n -le 400 && kill -0 "$srv" 2>/dev/null || return 1; sleep 0.05
  done
  url=`sed -n 's/^ocgc serve: listening on \(http:[^ ]*\)$/\1/p' "$work/serve.err"`
  _n=0
  while :; do
    scrape "$work/m" >/dev/null &&
      test "`fam "$work/m" ocgc_ring_events_total | wc -l`" -ge "$_want" && return 0
    _n=$((_n + 1)); test $_n -le 100 || return 1; sleep 0.1
  done
}

# busy_ns: the programs' CPU time in ns, summed
busy_ns() { for _p in $busy_pids; do cpu_ns "$_p"; done | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# scrapes: SCRAPES scrapes SPACING apart; curl's times (ms) in lat, the
# exporter's own in own, the last body in $work/last
scrapes() {
  : >"$work/lat"; : >"$work/own"
  _i=0
  while test $_i -lt "$SCRAPES"; do
    scrape "$work/last" | awk '{ printf "%.3f\n", $1 * 1000 }' >>"$work/lat"
    awk '$1 == "ocgc_serve_scrape_duration_seconds" { printf "%.3f\n", $2 * 1000 }' \
      "$work/last" >>"$work/own"
    _i=$((_i + 1))
    test $_i -lt "$SCRAPES" && sleep "$SPACING"
  done
}

# stats FILE: "median p90 max" of the numbers in FILE
stats() {
  sort -n "$1" | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "n/a n/a n/a"; exit }
    m = int((NR + 1) / 2); p = int((NR * 9 + 9) / 10); if (p > NR) p = NR
    printf "%s %s %s\n", a[m], a[p], a[NR] }'
}

# rates FIRST LAST SECONDS: events/s per program, "median min max"
rates() {
  fam "$1" ocgc_ring_events_total >"$work/ev0"
  fam "$2" ocgc_ring_events_total |
    awk -v t="$3" 'NR == FNR { e0[$1] = $2; next } ($1 in e0) { printf "%.0f\n", ($2 - e0[$1]) / t }' \
      "$work/ev0" - >"$work/rates"
  sort -n "$work/rates" | awk '{ a[NR] = $1 } END {
    if (NR == 0) print "n/a n/a n/a"; else printf "%s %s %s\n", a[int((NR + 1) / 2)], a[1], a[NR] }'
}

# run_one N: one measured run; its figures as one line in $work/rows
run_one() {
  N=$1
  start_busy "$N"
  if ! start_serve "$N"; then
    echo "serve: $N programs: ocgc serve did not come up or see them all: n/a (`head -n 2 "$work/serve.err"`)"
    stop_all; return
  fi
  scrape "$work/s0" >/dev/null
  t0=`now`; c0=`cpu_ns "$srv"`; b0=`busy_ns`
  sleep "$IDLE"
  c1=`cpu_ns "$srv"`; t1=`now`
  scrape "$work/s1" >/dev/null
  scrapes
  t2=`now`; c2=`cpu_ns "$srv"`; b2=`busy_ns`
  rss=`status_kib "$srv" VmRSS`; hwm=`status_kib "$srv" VmHWM`
  set -- `rates "$work/s0" "$work/last" "$(echo "$t2 $t0" | awk '{ print $1 - $2 }')"`
  ev="$1 $2 $3"
  echo "$N $ev $(stats "$work/lat") $(stats "$work/own") $(wc -c <"$work/last") \
$t0 $t1 $t2 $c0 $c1 $c2 $b0 $b2 $rss $hwm \
$(( `sum "$work/s1" ocgc_ring_events_lost_total` - `sum "$work/s0" ocgc_ring_events_lost_total` )) \
$(sum "$work/last" ocgc_ring_events_lost_total)" >>"$work/rows"
  stop_all
}

stop_all() {
  : >"$work/stop"
  kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=
  for _p in $busy_pids; do wait "$_p" 2>/dev/null; done
  busy_pids=
  rm -f "$work/rings/"*
}

# report: the figures and the verdict, from $work/rows, whose fields are:
# N, events/s (median min max), curl ms (median p90 max), own ms (median
# p90 max), body bytes, t0 t1 t2, exporter CPU ns c0 c1 c2, programs' CPU
# ns b0 b2, VmRSS, VmHWM (KiB), lost in the idle spell, lost in all.  The
# scrape phase (t1..t2) holds SCRAPES + 1 scrapes; the idle spell's rate
# of CPU is taken off it for the CPU of one scrape.
report() {
  awk -v scrapes="$SCRAPES" -v spacing="$SPACING" '
  { n = $1; idle = $13 - $12; all = $14 - $12; phase = $14 - $13
    idle_cpu = ($16 - $15) / 1e9; phase_cpu = ($17 - $16) / 1e9
    share = 100 * (($17 - $15) / 1e9) / all
    per = 1000 * (phase_cpu - idle_cpu / idle * phase) / (scrapes + 1)
    if (per < 0) per = 0
    printf "%2d programs: %s events/s each (min %s, max %s); the programs take %.1f%% of a core\n",
      n, $2, $3, $4, 100 * (($19 - $18) / 1e9) / all
    printf "   scrape, curl time_total: median %.2f ms, p90 %.2f, max %.2f; ocgc_serve_scrape_duration_seconds: median %.2f ms, p90 %.2f, max %.2f; body %.0f KiB\n",
      $5, $6, $7, $8, $9, $10, $11 / 1024
    printf "   exporter CPU: %.2f%% of a core idle (%.0f s, no scrape), %.2f ms per scrape (%.3f ms per program), %.2f%% over the run (%.0f s, a scrape every %s s)\n",
      100 * idle_cpu / idle, idle, per, per / n, share, all, spacing
    printf "   exporter memory: VmRSS %.1f MiB, VmHWM %.1f MiB; events lost: %s in the idle spell, %s in all\n",
      $20 / 1024, $21 / 1024, $22, $23
    if (n == 50) {
      printf "target at 50, under 1%% of a core (scraped every %s s): %.2f%%: %s\n", spacing, share,
        share < 1 ? "met" : "NOT met"
      printf "target at 50, under 10 ms per scrape: median %.2f ms %s, p90 %.2f ms %s, max %.2f ms %s\n",
        $5, $5 < 10 ? "met" : "NOT met", $6, $6 < 10 ? "met" : "NOT met", $7, $7 < 10 ? "met" : "NOT met"
    } }' "$work/rows"
}

mode="PIDs given (not root: no private pid namespace)"
test "$SERVE_BENCH_NS" = 1 && mode="--all in a private pid namespace"
echo "watched: serve_busy ($STEPS alloc steps every 100 ms, OCAMLRUNPARAM=s=32k); ocgc serve $mode"
cpu_from="/proc/PID/task/*/schedstat (ns)"
test -r /proc/self/schedstat || cpu_from="/proc/PID/stat (1/$TCK s ticks)"
echo "CPU from $cpu_from; $SCRAPES scrapes, $SPACING s apart, after $IDLE s without any"
: >"$work/rows"
# Other work on the machine shows in the latencies (not in the CPU):
# say how loaded it was.
echo "load average before: `cut -d ' ' -f 1-3 /proc/loadavg` (`getconf _NPROCESSORS_ONLN` CPUs)"
for n in $COUNTS; do run_one "$n"; done
report
echo "load average after: `cut -d ' ' -f 1-3 /proc/loadavg`"
