#!/bin/sh
# html.sh - `make bench` (and `make bench-html` alone): what the HTML report
# costs (issue 13): generation time and file size for a one-minute and a
# ten-minute busy run, and the one-hour size (the contract: under 2 MB).
#
# The busy program is benchmarks/alloc.ml allocating flat out with the
# default minor heap on the patched runtime: its pauses per second (RATE)
# are measured here first, with `ocgc run --json` over a short run.  A
# ten-minute run is too long for every `make bench`, so the runs are
# time-compressed: the same program with OCAMLRUNPARAM=s=4k (a minor
# collection every few microseconds) for as many steps as make M * 60 *
# RATE pauses (its pauses per step are measured too), which it produces
# in a few seconds per busy minute.  Its ring is recorded in full (a
# ring large enough, e=N, and OCAML_RUNTIME_EVENTS_PRESERVE: the file
# stays after the exit; the lost count of its report must be 0), then:
#   - `ocgc report --json --file RING` with and without `--html F`,
#     ROUNDS times each: wall and CPU time (benchmarks/cputime), peak RSS,
#     and the file's size (with its timeline's drawn marks);
#   - `ocgc run --json [--html F] -- PROGRAM` of the same compressed run,
#     RUN_ROUNDS times each: the tail (from the program's last line on
#     stdout, written as it exits, to ocgc's exit: what ocgc still had to
#     read, as a live reader lags behind the compressed program, then the
#     report and the file), and the whole run's wall time.
# Times are printed as the median with the minimum and maximum of the
# rounds.  The one-hour size is extrapolated from the two runs' sizes
# (bytes per extra pause), and measured with HTML_BENCH_HOUR=1 (a live
# `ocgc run --html` of the compressed hour: no ring can hold a busy hour).
# Prints figures; never fails (a figure it cannot get is "n/a").
#
# Set by bench.am: OCGC (or OCGC_BIN and OCGC_LIBDIR), OCGC_STAGE,
# OCAMLFIND, CPUTIME, BENCH_SRCDIR.  Knobs (environment):
#   HTML_BENCH_MINUTES="1 10"  busy minutes of each run
#   HTML_BENCH_ROUNDS=3        rounds of `ocgc report --file`
#   HTML_BENCH_RUN_ROUNDS=3    rounds of `ocgc run` (0: none)
#   HTML_BENCH_RATE=           pauses per second of the busy program
#                              (default: measured)
#   HTML_BENCH_HOUR=0          1: also a live `ocgc run --html` of an hour
set -u
MINUTES=${HTML_BENCH_MINUTES:-1 10}
ROUNDS=${HTML_BENCH_ROUNDS:-3}
RUN_ROUNDS=${HTML_BENCH_RUN_ROUNDS:-3}
RATE=${HTML_BENCH_RATE:-}
HOUR=${HTML_BENCH_HOUR:-0}
if test -x "${OCGC_BIN:-}"; then
  LD_LIBRARY_PATH=$OCGC_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
  OCGC=$OCGC_BIN
fi
"$OCGC" report --help 2>&1 | grep -q -- --html ||
  { echo "html: this ocgc has no --html: n/a"; exit 0; }
test -x "${CPUTIME:-}" || { echo "html: benchmarks/cputime is missing: n/a"; exit 0; }
work=`mktemp -d "${TMPDIR:-/tmp}/ocgc-bench-html.XXXXXX"` || exit 0
# The rings go on tmpfs when it has room (a busy ten minutes: about 1 GiB).
rings=$work/rings
if test -d /dev/shm && test -w /dev/shm &&
    test "`df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }'`" -gt 3000000 2>/dev/null; then
  rings=`mktemp -d /dev/shm/ocgc-bench-html.XXXXXX` || rings=$work/rings
fi
mkdir -p -m 700 "$rings"
trap 'rm -rf "$work" "$rings"' EXIT
trap 'exit 1' HUP INT TERM

now_ns() { date +%s%N; }
# jfield FILE KEY FIELD: the integer FIELD of the report's line for KEY
jfield() {
  sed -n "s/^ *\"$2\": {.*\"$3\": \\([0-9][0-9]*\\).*/\\1/p" "$1" | head -n 1
}
# spread FILE: "median M (min A, max B)" of the numbers in FILE
spread() {
  sort -n "$1" | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    printf "median %s (min %s, max %s, %d rounds)", v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}
# size_of FILE: its size in bytes
size_of() { wc -c <"$1" | tr -d ' '; }
# drawn FILE: the timeline's data-drawn of an HTML report
drawn() { sed -n 's/.*id="ocgc-timeline"[^>]*data-drawn="\([0-9]*\)".*/\1/p' "$1" | head -n 1; }

cp "$BENCH_SRCDIR/alloc.ml" "$work/" || exit 0
if ! (cd "$work" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
        -runtime-variant _ocgc alloc.ml -o alloc) >"$work/log" 2>&1; then
  echo "html: cannot compile alloc.ml: n/a"; exit 0
fi

# record STEPS LOG2 OUT: the compressed program's ring, kept, as OUT
record() {
  rm -f "$rings"/*.events
  OCAMLRUNPARAM=s=4k,e=$2 OCAML_RUNTIME_EVENTS_DIR=$rings OCAML_RUNTIME_EVENTS_PRESERVE=1 \
    "$work/alloc" "$1" >/dev/null 2>"$work/record.err"
  set -- "$rings"/*.events "$3"
  test -f "$1" && mv "$1" "$2"
}

# ---- calibration --------------------------------------------------------------
if test -z "$RATE"; then
  "$OCGC" run --json -o "$work/cal.json" -- "$work/alloc" 2000000 >/dev/null 2>&1
  RATE=`awk -v p="$(jfield "$work/cal.json" pauses count)" \
    -v w="$(jfield "$work/cal.json" window wall_ns)" 'BEGIN { if (p > 0 && w > 0) printf "%d", p / (w / 1e9) }'`
fi
test -n "$RATE" && test "$RATE" -gt 0 2>/dev/null ||
  { echo "html: cannot measure the busy program's pause rate: n/a"; exit 0; }
record 400000 24 "$work/cal.events"
"$OCGC" report --json --file "$work/cal.events" >"$work/cal2.json" 2>/dev/null
cal_p=`jfield "$work/cal2.json" pauses count`
cal_e=`jfield "$work/cal2.json" events seen`
test -n "$cal_p" && test "$cal_p" -gt 0 && test -n "$cal_e" ||
  { echo "html: cannot record the compressed program's ring: n/a"; exit 0; }
echo "busy program: alloc.ml flat out, default minor heap: $RATE pauses/s on this machine"
echo "compressed: OCAMLRUNPARAM=s=4k, $cal_p pauses and $cal_e events per 400000 steps"

# timed_report RING OUT [HTML]: one `ocgc report --json --file RING` under
# cputime; appends "WALL_MS CPU_MS RSS_KIB" to OUT
timed_report() {
  _r=$1 _o=$2; shift 2
  "$CPUTIME" -q "$OCGC" report --json --file "$_r" ${1:+--html "$1"} |
    awk '{ printf "%.0f %.0f %d\n", $3 / 1000, ($1 + $2) / 1000, $5 }' >>"$_o"
}

# report_rounds RING: ROUNDS of report --file without and with --html
report_rounds() {
  : >"$work/plain" ; : >"$work/html"
  _i=0
  while test $_i -lt "$ROUNDS"; do
    timed_report "$1" "$work/plain"
    timed_report "$1" "$work/html" "$work/out.html"
    _i=$((_i + 1))
  done
  for _k in plain html; do
    for _c in 1 2 3; do awk -v c=$_c '{ print $c }' "$work/$_k" >"$work/$_k.$_c"; done
  done
  echo "report --file, JSON only:  wall ms `spread "$work/plain.1"`; CPU ms `spread "$work/plain.2"`; peak RSS KiB `spread "$work/plain.3"`"
  echo "report --file --html:      wall ms `spread "$work/html.1"`; CPU ms `spread "$work/html.2"`; peak RSS KiB `spread "$work/html.3"`"
  if test -s "$work/out.html"; then
    SIZE=`size_of "$work/out.html"`
    echo "HTML file: $SIZE bytes (`awk -v s="$SIZE" 'BEGIN { printf "%.2f", s / 1048576 }'` MiB), timeline marks drawn `drawn "$work/out.html"`"
  else
    SIZE=
    echo "HTML file: none written: n/a"
  fi
}

# run_once STEPS LOG2 TIMES [HTML]: a compressed `ocgc run --json` (with
# --html HTML); appends "TOTAL_MS TAIL_MS" to TIMES; its report in run.json
run_once() {
  _s=$1 _e=$2 _t=$3; shift 3
  rm -f "$work/t_print" "$work/t_end"
  _t0=`now_ns`
  { OCAMLRUNPARAM=s=4k,e=$_e "$OCGC" run --json -o "$work/run.json" ${1:+--html "$1"} -- \
      "$work/alloc" "$_s" 2>/dev/null
    now_ns >"$work/t_end"; } | { read _x; now_ns >"$work/t_print"; cat >/dev/null; }
  test -s "$work/t_print" && test -s "$work/t_end" || return 0
  awk -v a="$_t0" -v p="`cat "$work/t_print"`" -v e="`cat "$work/t_end"`" \
    'BEGIN { printf "%.0f %.1f\n", (e - a) / 1e6, (e - p) / 1e6 }' >>"$_t"
}

# run_rounds STEPS LOG2: RUN_ROUNDS of ocgc run without and with --html
run_rounds() {
  test "$RUN_ROUNDS" -gt 0 2>/dev/null || return 0
  : >"$work/rplain" ; : >"$work/rhtml"
  _i=0
  while test $_i -lt "$RUN_ROUNDS"; do
    run_once "$1" "$2" "$work/rplain"
    run_once "$1" "$2" "$work/rhtml" "$work/run.html"
    _i=$((_i + 1))
  done
  for _k in rplain rhtml; do
    for _c in 1 2; do awk -v c=$_c '{ print $c }' "$work/$_k" >"$work/$_k.$_c"; done
  done
  echo "run, JSON only:   tail ms `spread "$work/rplain.2"`; whole run ms `spread "$work/rplain.1"`"
  echo "run --html:       tail ms `spread "$work/rhtml.2"`; whole run ms `spread "$work/rhtml.1"`"
  test -s "$work/run.html" &&
    echo "run --html file: `size_of "$work/run.html"` bytes, events lost `jfield "$work/run.json" events lost`"
}

# one_run M: a compressed run of M busy minutes: its ring, then the rounds
one_run() {
  _want=$(($1 * 60 * RATE))
  _steps=`awk -v t="$_want" -v p="$cal_p" 'BEGIN { printf "%d", t / p * 400000 }'`
  # Ring: at most 3.5 words an event here (38 M events fitted 2^27 words)
  _e=`awk -v n="$_want" -v p="$cal_p" -v ev="$cal_e" \
    'BEGIN { n = n / p * ev * 4; e = 16; while (2 ^ e < n && e < 28) e++; print e }'`
  _t0=`now_ns`
  record "$_steps" "$_e" "$work/m.events"
  _t1=`now_ns`
  test -f "$work/m.events" || { echo "### $1 busy minute(s): no ring recorded: n/a"; return 0; }
  "$OCGC" report --json --file "$work/m.events" >"$work/m.json" 2>/dev/null
  PAUSES=`jfield "$work/m.json" pauses count`
  echo
  echo "### $1 busy minute(s): $_want pauses at $RATE/s, compressed into $_steps steps"
  echo "ring e=$_e (`size_of "$work/m.events"` bytes), recorded in `awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'` s:" \
    "$PAUSES pauses, `jfield "$work/m.json" events seen` events, `jfield "$work/m.json" events lost` lost"
  report_rounds "$work/m.events"
  rm -f "$work/m.events"
  run_rounds "$_steps" "$_e"
}

echo "(times: median, min and max over the rounds; tail: from the program's exit to ocgc's)"
P1= S1= P2= S2=
for m in $MINUTES; do
  case $m in ''|*[!0-9]*|0) echo "html: busy minutes '$m' ignored"; continue ;; esac
  PAUSES= SIZE=
  one_run "$m"
  test -n "$PAUSES" && test -n "$SIZE" || continue
  if test -z "$P1"; then P1=$PAUSES S1=$SIZE; else P2=$PAUSES S2=$SIZE; fi
done

# ---- the hour -----------------------------------------------------------------
echo
echo "### one busy hour: $((3600 * RATE)) pauses"
if test -n "$P2" && test "$P2" != "$P1"; then
  # Downsampling caps the timeline's marks and the series' points, so the
  # size need not grow with the run: a slope at or below 0 says so, and the
  # larger of the two sizes is then the estimate.
  awk -v p1="$P1" -v s1="$S1" -v p2="$P2" -v s2="$S2" -v p="$((3600 * RATE))" 'BEGIN {
    b = (s2 - s1) / (p2 - p1); s = b > 0 ? s2 + b * (p - p2) : (s1 > s2 ? s1 : s2)
    how = b > 0 ? ", linear" : ": no growth, the larger size"
    verdict = s < 2000000 ? "under" : "OVER"
    printf "extrapolated from the two runs (%.4f bytes per extra pause%s): %.0f bytes (%.2f MiB): %s the 2 MB bound\n",
      b, how, s, s / 1048576, verdict }'
else
  echo "extrapolation: needs two runs of different lengths: n/a"
fi
if test "$HOUR" = 1; then
  _steps=`awk -v t="$((3600 * RATE))" -v p="$cal_p" 'BEGIN { printf "%d", t / p * 400000 }'`
  : >"$work/hour"
  run_once "$_steps" 27 "$work/hour" "$work/hour.html"
  if test -s "$work/hour.html"; then
    echo "measured (live ocgc run --html, e=27): `size_of "$work/hour.html"` bytes," \
      "`jfield "$work/run.json" pauses count` pauses, `jfield "$work/run.json" events lost` events lost;" \
      "whole run, tail ms: `cat "$work/hour"`"
  else
    echo "measured: no file written: n/a"
  fi
else
  echo "measured: not run (HTML_BENCH_HOUR=1 runs it: a few minutes)"
fi
exit 0
