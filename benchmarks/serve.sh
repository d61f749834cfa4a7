#!/bin/sh
# serve.sh - `make bench` (and `make bench-serve` alone): what `ocgc serve`
# costs with 1, 100 and 1,000 watched processes on the patched runtime, each
# count with none and with 10% of them hostile (issue 25).  A hostile one is
# tests/hostile/hostile_producer frozen: a writer stopped in the middle of a
# publication, alive, both its seqlocks odd for good (the process that used
# to blind the exporter); the rest are busy OCaml programs.
# For each count: the programs' load (ring events per second per process,
# from ocgc_ring_events_total, and their own CPU share), then an idle spell
# with no scrape (what the exporter costs on its own: its poll of the
# rings, if it has one), then SCRAPES scrapes of /metrics SPACING seconds
# apart: curl's time_total (median, p90, max), the exporter's own
# ocgc_serve_scrape_duration_seconds, the body's size; the exporter's CPU
# (its threads' /proc/PID/task/*/schedstat) over the idle spell, per
# scrape, and over the whole run; its VmRSS and VmHWM at the end; events
# lost (overwritten before the exporter read them) in the idle spell and in
# all; how many processes the exporter watches and serves as stale.  The
# targets: issue 11's at 50 programs (under 1% of a core, under 10 ms a
# scrape), issue 25's at 1,000 whatever they do (a scrape under 1 s, the
# exporter's memory under 64 MiB); the verdicts are printed, it never
# fails.
#
# The programs (serve_busy.ml): bursts of alloc.ml's steps every 100 ms,
# OCAMLRUNPARAM=s=32k (a 256 KiB minor heap: about 180 minor collections a
# second each at 1,000 steps), about 1% of a core each.  A run of N
# programs gives each min(STEPS, STEPS_TOTAL / N) steps, so that 1,000 of
# them load two cores no more than 50 do.  As root the whole run goes into
# a fresh pid namespace and serve watches --all (only these programs are
# there: other OCaml programs of the host would be measured too); else it
# is given their PIDs (no listing of /proc: a little cheaper).
#
# Set by bench.am: OCGC (or OCGC_BIN and OCGC_LIBDIR: the real program, not
# libtool's wrapper), OCGC_STAGE, OCAMLFIND, BENCH_SRCDIR.  Knobs:
#   SERVE_BENCH_COUNTS="1 100 1000"  watched processes, one run each
#   SERVE_BENCH_HOSTILE="0 10"    percent of them hostile, one run each
#   SERVE_BENCH_SCRAPES=50        scrapes per run
#   SERVE_BENCH_SPACING=1         seconds between scrapes
#   SERVE_BENCH_IDLE=8            seconds of the idle spell
#   SERVE_BENCH_STEPS=1000        alloc steps per burst (the load)
#   SERVE_BENCH_STEPS_TOTAL=50000 steps per burst over all the programs
# and, set by bench.am, HOSTILE_PRODUCER (else no hostile runs).
set -u
if test -z "${SERVE_BENCH_NS:-}"; then
  SERVE_BENCH_NS=0
  if test "`id -u`" = 0 && unshare --pid --fork --mount-proc true 2>/dev/null; then
    SERVE_BENCH_NS=1; export SERVE_BENCH_NS
    exec unshare --pid --fork --mount-proc --kill-child=TERM /bin/sh "$0" "$@"
  fi
fi
COUNTS=${SERVE_BENCH_COUNTS:-1 100 1000}
HOSTILE=${SERVE_BENCH_HOSTILE:-0 10}
STEPS_TOTAL=${SERVE_BENCH_STEPS_TOTAL:-50000}
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
busy_pids= bad_pids= srv=
cleanup() {
  : >"$work/stop"
  test -n "$srv" && kill "$srv" 2>/dev/null
  for p in $busy_pids $bad_pids; do kill -9 "$p" 2>/dev/null; done
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
# scrape FILE: GET /metrics into FILE (gzip, as Prometheus asks); prints
# curl's time_total (s), the bytes it read, and its time_starttransfer (s:
# the first byte of the answer, so the exporter's part of the total)
scrape() { curl -s --compressed --max-time 30 -o "$1" -w '%{time_total} %{size_download} %{time_starttransfer}\n' "${url}metrics"; }
# gauge FILE NAME: an unlabelled sample's value
gauge() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }

# start_busy N STEPS: N busy programs of STEPS steps a burst, their pids in
# busy_pids
start_busy() {
  rm -f "$work/stop"
  busy_pids=
  _i=0
  while test $_i -lt "$1"; do
    OCAMLRUNPARAM=s=32k OCAML_RUNTIME_EVENTS_DIR="$work/rings" \
      "$work/serve_busy" "$2" 100 "$work/stop" >/dev/null &
    busy_pids="$busy_pids $!"
    _i=$((_i + 1))
  done
}

# start_bad N: N hostile producers, frozen mid-publication once each has
# its ring (SIGUSR1); their pids in bad_pids.  Returns 1 if one never says
# it froze.
start_bad() {
  bad_pids=
  _i=0
  while test $_i -lt "$1"; do
    "$HOSTILE_PRODUCER" "$work/rings" frozen 3600 >"$work/bad.$_i" 2>/dev/null &
    bad_pids="$bad_pids $!"
    _i=$((_i + 1))
  done
  bad_say ready USR1 && bad_say frozen ''
}

# bad_say WORD SIGNAL: wait until each hostile producer has said WORD (20 s
# at most), then send it SIGNAL (none if empty).  Returns 1 on a timeout.
bad_say() {
  _i=0
  for _p in $bad_pids; do
    _n=0
    while ! grep -q "^$1" "$work/bad.$_i" 2>/dev/null; do
      _n=$((_n + 1)); test $_n -le 400 || return 1; sleep 0.05
    done
    test -z "$2" || kill -"$2" "$_p"
    _i=$((_i + 1))
  done
}

# start_serve N: ocgc serve on a free port watching the N processes (--all
# in the namespace, else their PIDs once each has its ring); srv, url.
# Returns 1 if it does not come up or never watches them all.
start_serve() {
  _want=$1
  for _p in $busy_pids; do
    _n=0
    while ! test -e "$work/rings/$_p.events"; do
      _n=$((_n + 1)); test $_n -le 400 || return 1; sleep 0.05
    done
  done
  if test "$SERVE_BENCH_NS" = 1; then set -- --all; else set -- $busy_pids $bad_pids; fi
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
      test "`gauge "$work/m" ocgc_serve_watched_processes`" -ge "$_want" 2>/dev/null && return 0
    _n=$((_n + 1)); test $_n -le 300 || return 1; sleep 0.1
  done
}

# unwatched: after start_serve failed, what `ocgc ls` says of each program
# the exporter does not watch (its last scrape in $work/m)
unwatched() {
  _a=0; for _p in $busy_pids; do kill -0 "$_p" 2>/dev/null && _a=$((_a + 1)); done
  _b=0; for _p in $bad_pids; do kill -0 "$_p" 2>/dev/null && _b=$((_b + 1)); done
  echo "   alive: $_a programs, $_b hostile; ring files: `ls "$work/rings" | wc -l`"
  sed -n 's/^ocgc_serve_stale{pid="\([0-9]*\)".*/\1/p' "$work/m" | sort -u >"$work/seen"
  "$OCGC" ls --dir "$work/rings" 2>&1 | awk 'NR == FNR { seen[$1] = 1; next }
    FNR == 1 || !($1 in seen) { print "   not watched: " $0 }' "$work/seen" - | head -n 20
}

# busy_ns: the programs' CPU time in ns, summed
busy_ns() { for _p in $busy_pids; do cpu_ns "$_p"; done | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# scrapes: SCRAPES scrapes SPACING apart; curl's times (ms) in lat, the
# exporter's own in own, the last body in $work/last
scrapes() {
  : >"$work/lat"; : >"$work/own"; : >"$work/first"
  _i=0
  while test $_i -lt "$SCRAPES"; do
    scrape "$work/last" >"$work/cw"
    awk '{ printf "%.3f\n", $1 * 1000 }' "$work/cw" >>"$work/lat"
    awk '{ printf "%.3f\n", $3 * 1000 }' "$work/cw" >>"$work/first"
    awk '$1 == "ocgc_serve_scrape_duration_seconds" { printf "%.3f\n", $2 * 1000 }' \
      "$work/last" >>"$work/own"
    _i=$((_i + 1))
    test $_i -lt "$SCRAPES" && sleep "$SPACING"
  done
}

# stats FILE: "median p99 max" of the numbers in FILE (p99: the value
# below which 99% lie, nearest rank)
stats() {
  sort -n "$1" | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "n/a n/a n/a"; exit }
    m = int((NR + 1) / 2); p = int((NR * 99 + 99) / 100); if (p > NR) p = NR
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

# run_one N PCT: one measured run of N processes, PCT% of them hostile;
# its figures as one line in $work/rows
run_one() {
  N=$1
  H=$(($1 * $2 / 100))
  if test "$2" -gt 0 && test "$H" = 0; then return; fi # too few to have one
  S=$((STEPS_TOTAL / N)); test "$S" -le "$STEPS" || S=$STEPS; test "$S" -ge 1 || S=1
  start_busy $((N - H)) "$S"
  if ! start_bad "$H"; then
    echo "serve: $N processes, $H hostile: a hostile producer did not freeze: n/a"
    stop_all; return
  fi
  if ! start_serve "$N"; then
    echo "serve: $N processes: ocgc serve did not come up or watch them all: n/a (`head -n 2 "$work/serve.err"`; watched `gauge "$work/m" ocgc_serve_watched_processes`, refused `gauge "$work/m" ocgc_serve_refused_processes`, unreadable `gauge "$work/m" ocgc_serve_unreadable_processes`)"
    unwatched
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
  anon=`status_kib "$srv" RssAnon`; shm=`status_kib "$srv" RssShmem`; rfile=`status_kib "$srv" RssFile`
  set -- `rates "$work/s0" "$work/last" "$(echo "$t2 $t0" | awk '{ print $1 - $2 }')"`
  ev="$1 $2 $3"
  echo "$N $ev $(stats "$work/lat") $(stats "$work/own") $(wc -c <"$work/last") \
$t0 $t1 $t2 $c0 $c1 $c2 $b0 $b2 $rss $hwm \
$(( `sum "$work/s1" ocgc_ring_events_lost_total` - `sum "$work/s0" ocgc_ring_events_lost_total` )) \
$(sum "$work/last" ocgc_ring_events_lost_total) $H $S \
$(gauge "$work/last" ocgc_serve_watched_processes) $(gauge "$work/last" ocgc_serve_stale_processes) \
$(awk '{ print $2 }' "$work/cw") $anon $rfile $shm $(stats "$work/first")" >>"$work/rows"
  stop_all
}

stop_all() {
  : >"$work/stop"
  kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=
  for _p in $bad_pids; do kill "$_p" 2>/dev/null; done
  for _p in $busy_pids $bad_pids; do wait "$_p" 2>/dev/null; done
  busy_pids= bad_pids=
  rm -f "$work/rings/"*
}

# report: the figures and the verdict, from $work/rows, whose fields are:
# N, events/s (median min max), curl ms (median p99 max), own ms (median
# p99 max), body bytes, t0 t1 t2, exporter CPU ns c0 c1 c2, programs' CPU
# ns b0 b2, VmRSS, VmHWM (KiB), lost in the idle spell, lost in all,
# hostile processes, steps a burst, watched, stale, gzip bytes, RssAnon,
# RssFile, RssShmem (KiB), curl's first byte ms (median p99 max).  The
# scrape phase (t1..t2) holds SCRAPES + 1 scrapes; the idle spell's rate
# of CPU is taken off it for the CPU of one scrape.
report() {
  awk -v scrapes="$SCRAPES" -v spacing="$SPACING" '
  { n = $1; idle = $13 - $12; all = $14 - $12; phase = $14 - $13
    idle_cpu = ($16 - $15) / 1e9; phase_cpu = ($17 - $16) / 1e9
    share = 100 * (($17 - $15) / 1e9) / all
    per = 1000 * (phase_cpu - idle_cpu / idle * phase) / (scrapes + 1)
    if (per < 0) per = 0
    printf "%4d processes, %d of them hostile (frozen mid-publication); the %d programs (%d steps a burst): %s events/s each (min %s, max %s), %.1f%% of a core in all\n",
      n, $24, n - $24, $25, $2, $3, $4, 100 * (($19 - $18) / 1e9) / all
    printf "   watched %s, served stale %s\n", $26, $27
    printf "   scrape, curl time_total: median %.2f ms, p99 %.2f, max %.2f (its first byte: median %.2f ms, p99 %.2f, max %.2f); ocgc_serve_scrape_duration_seconds: median %.2f ms, p99 %.2f, max %.2f; body %.0f KiB (%.0f KiB gzipped)\n",
      $5, $6, $7, $32, $33, $34, $8, $9, $10, $11 / 1024, $28 / 1024
    printf "   exporter CPU: %.2f%% of a core idle (%.0f s, no scrape), %.2f ms per scrape (%.3f ms per program), %.2f%% over the run (%.0f s, a scrape every %s s)\n",
      100 * idle_cpu / idle, idle, per, per / n, share, all, spacing
    printf "   exporter memory: VmRSS %.1f MiB (its own: RssAnon %.1f MiB, RssFile %.1f MiB; the rings it maps, shared with their programs: RssShmem %.1f MiB), VmHWM %.1f MiB; events lost: %s in the idle spell, %s in all\n",
      $20 / 1024, $29 / 1024, $30 / 1024, $31 / 1024, $21 / 1024, $22, $23
    if (n == 50 && $24 == 0) {
      printf "target at 50, under 1%% of a core (scraped every %s s): %.2f%%: %s\n", spacing, share,
        share < 1 ? "met" : "NOT met"
      printf "target at 50, under 10 ms per scrape: median %.2f ms %s, p99 %.2f ms %s, max %.2f ms %s\n",
        $5, $5 < 10 ? "met" : "NOT met", $6, $6 < 10 ? "met" : "NOT met", $7, $7 < 10 ? "met" : "NOT met"
    }
    if (n == 1000) {
      printf "target at 1000 (%d hostile), every scrape under 1 s: the answer begins (first byte) in at most %.0f ms: %s; the whole answer read and inflated by curl in at most %.0f ms: %s; its own memory under 64 MiB: RssAnon + RssFile %.1f MiB: %s\n",
        $24, $34, $34 < 1000 ? "met" : "NOT met", $7, $7 < 1000 ? "met" : "NOT met",
        ($29 + $30) / 1024, $29 + $30 < 65536 ? "met" : "NOT met"
    } }' "$work/rows"
}

mode="PIDs given (not root: no private pid namespace)"
test "$SERVE_BENCH_NS" = 1 && mode="--all in a private pid namespace"
echo "watched: serve_busy (up to $STEPS alloc steps every 100 ms, $STEPS_TOTAL over all, OCAMLRUNPARAM=s=32k); ocgc serve $mode"
if test ! -x "${HOSTILE_PRODUCER:-}"; then
  echo "no hostile_producer (HOSTILE_PRODUCER): the runs with hostile processes are left out"
  HOSTILE=0
fi
cpu_from="/proc/PID/task/*/schedstat (ns)"
test -r /proc/self/schedstat || cpu_from="/proc/PID/stat (1/$TCK s ticks)"
echo "CPU from $cpu_from; $SCRAPES scrapes, $SPACING s apart, after $IDLE s without any"
: >"$work/rows"
# Other work on the machine shows in the latencies (not in the CPU):
# say how loaded it was.
echo "load average before: `cut -d ' ' -f 1-3 /proc/loadavg` (`getconf _NPROCESSORS_ONLN` CPUs)"
for n in $COUNTS; do
  for h in $HOSTILE; do run_one "$n" "$h"; done
done
report
echo "load average after: `cut -d ' ' -f 1-3 /proc/loadavg`"
