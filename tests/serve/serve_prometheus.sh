#!/bin/sh
# serve_prometheus.sh - `ocgc serve --all` scraped by a real Prometheus
# (Debian's prometheus, started here on a free loopback port with its own
# config and data folder, stopped at the end).  Watched: three programs on
# the patched runtime that print their Gc.quick_stat and then stop
# allocating, one that allocates a little all the time (the rates move),
# and a stock OCaml 5 ring (the full-3695 fixture, mapped shared and
# writable as OCaml 5 maps it by a process whose pid names it).
# Through Prometheus's HTTP API: each program's counters equal its own
# Gc.quick_stat exactly, the stock ring's equal the fixture's known facts
# (tests/fixtures/ocaml5.2/README.md), every PromQL expression of
# contrib/grafana/ocgc.json returns data (by program too, but for the
# families served per process only); promtool accepts a scrape; a
# SIGKILLed program's series leave /metrics and go stale in Prometheus.
# Every wait is a bounded poll.  Other OCaml programs may run on the host
# (--all serves them too), a second run of this test among them: every
# check is about our own pids, and the programs are named for this run
# (the series by program, and the rules, aggregate every process of a name).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
. "$OCGC_SRCDIR/tests/lib/prom_lib.sh"
command -v xz >/dev/null 2>&1 || { echo "SKIP: xz is missing (apt-get install xz-utils)"; exit 77; }
T0=`date +%s.%N`
cmd_init
SERVE_DIR="$OCGC_SRCDIR/tests/serve"
DASHBOARD="$OCGC_SRCDIR/contrib/grafana/ocgc.json"
FIXTURE="$OCGC_SRCDIR/tests/fixtures/ocaml5.2/full-3695.events.xz"
# The fixture unpacks (sparse, 257 MiB) while a program compiles.
mkdir -m 0700 "$WORK/stock" || hard_error "cannot make $WORK/stock"
(xz -dc "$FIXTURE" | cp --sparse=always /dev/stdin "$WORK/stock/fixture") 2>"$WORK/xz.err" &
XZ_PID=$!
# The names of this run's programs (argv[0] for the patched runtime, comm
# for the stock stand-in: at most 15 bytes).
PROG=srvprom$$
TICK=srvtick$$
STOCK=o5fix$$
compile_native ticker ocgc_test.ml serve_prom_ticker.ml
cp "$WORK/cmd_target" "$WORK/$PROG" && cp "$WORK/ticker" "$WORK/$TICK" || hard_error "cannot copy the programs under this run's names"
wait "$XZ_PID" || { cat "$WORK/xz.err"; hard_error "cannot unpack $FIXTURE"; }

for t in a b c; do
  TARGET_BIN=$PROG target_start $t 0.2
  eval "pid_$t=\$BGPID"
  target_go $t
done
start_bg tick "./$TICK" "$WORK/tick.stop"
pid_tick=$BGPID
# The stock ring is <its holder's pid>.events: sh copies it under its own
# pid ($$), then execs the holder, which keeps that pid.
start_bg stock sh -c 'cp --sparse=always "$1/fixture" "$1/$$.events" && exec python3 "$2" "$1/$$.events" "$4" "$3"' \
  sh "$WORK/stock" "$SERVE_DIR/serve_prom_holder.py" "$WORK/stock.stop" "$STOCK"
pid_stock=$BGPID
wait_key tick pid "$pid_tick"
wait_key stock ready "$pid_stock"
for t in a b c; do eval "wait_key $t gc.heap_chunks \$pid_$t"; done

# A second exporter, by program: the dashboard and the rules must read
# its series as they read the first's.
serve srv2 --listen 127.0.0.1:0 --all --by program
srv2=$srv
SRV2_HOSTPORT=`echo "$url" | sed 's|^http://\([^/]*\)/$|\1|'`
serve srv --listen 127.0.0.1:0 --all
SRV_HOSTPORT=`echo "$url" | sed 's|^http://\([^/]*\)/$|\1|'`
say "ocgc serve listens on $url (by pid), and on $SRV2_HOSTPORT (by program)"

PROM_RULE_FILES="\"$OCGC_SRCDIR/contrib/prometheus/ocgc-rules.yml\""
prom_start "$SRV_HOSTPORT" "  - job_name: ocgc_byprog
    static_configs:
      - targets: ['$SRV2_HOSTPORT']"

prom_eq "Prometheus scrapes ocgc serve: up" 1 'up{job="ocgc"}'
for t in a b c; do
  eval "p=\$pid_$t"
  prom_eq "$t: minor collections" "`outkey $t gc.minor_collections`" \
    "sum by (pid) (ocaml_gc_collections_total{pid=\"$p\",kind=\"minor\"})"
  prom_eq "$t: major cycles" "`outkey $t gc.major_collections`" \
    "ocaml_gc_major_cycles_total{pid=\"$p\"}"
  prom_eq "$t: minor allocated bytes" "$((`outkey $t gc.minor_words` * 8))" \
    "ocaml_gc_allocated_bytes_total{pid=\"$p\",heap=\"minor\"}"
  prom_eq "$t: promoted bytes" "$((`outkey $t gc.promoted_words` * 8))" \
    "ocaml_gc_promoted_bytes_total{pid=\"$p\"}"
  prom_eq "$t: heap size" "$((`outkey $t gc.heap_words` * 8))" "ocaml_gc_heap_size_bytes{pid=\"$p\"}"
  prom_eq "$t: runtime info, program" 1 \
    "ocaml_runtime_info{pid=\"$p\",program=\"$PROG\",variant=\"native\"}"
done
# The fixture's facts (tests/fixtures/ocaml5.2/README.md).
S="pid=\"$pid_stock\""
prom_eq "stock: runtime info, program from comm" 1 \
  "ocaml_runtime_info{$S,program=\"$STOCK\",variant=\"stock\"}"
prom_eq "stock: minor collections" 2963 "sum(ocaml_gc_collections_total{$S,kind=\"minor\"})"
prom_eq "stock: major slices" 2872 "sum(ocaml_gc_collections_total{$S,kind=\"major_slice\"})"
prom_eq "stock: minor allocated bytes" 5624962264 "ocaml_gc_allocated_bytes_total{$S,heap=\"minor\"}"
prom_eq "stock: promoted bytes" 2362668512 "ocaml_gc_promoted_bytes_total{$S}"
prom_eq "stock: ring events" 95443 "ocgc_ring_events_total{$S}"
prom_eq "stock: pauses observed" 1 "ocaml_gc_pause_seconds_count{$S} > bool 0"
# What a stock ring cannot tell is left out, not served as 0.
prom_eq "stock: no heap size series" 1 "absent(ocaml_gc_heap_size_bytes{$S})"
prom_eq "stock: no major cycles series" 1 "absent(ocaml_gc_major_cycles_total{$S})"

# Rates need two scrapes in their window: the dashboard's is 30 s.
prom_eq "three scrapes in the last 30 s" 1 'count_over_time(up{job="ocgc"}[30s]) >= bool 3'
prom_eq "tick: minor collections per second > 0" 1 \
  "sum(rate(ocaml_gc_collections_total{pid=\"$pid_tick\",kind=\"minor\"}[30s])) > bool 0"
prom_eq "tick: pause p99 is a number" 1 \
  "histogram_quantile(0.99, sum by (le) (rate(ocaml_gc_pause_seconds_bucket{pid=\"$pid_tick\"}[30s]))) > bool 0"

# Every expression of the dashboard returns data (one check each), with
# the series by pid and with those by program, and each is of what the
# variables select (a recording rule's has no pid).
check_eq "dashboard: expressions without the job, instance and program selector" 0 \
  "`grep '"expr"' "$DASHBOARD" | grep -c -v -F 'job=~\\"$job\\", instance=~\\"$instance\\", program=~\\"$program\\"'`"
check_eq "dashboard: expressions of a family without the pid selector" 0 \
  "`grep '"expr"' "$DASHBOARD" | grep -v '"expr": "ocgc:' | grep -c -v -F 'pid=~\\"$pid\\"'`"
check_gt "dashboard: panels from the recording rules" 2 "`grep -c '"expr": "ocgc:' "$DASHBOARD"`"
check_eq "dashboard: a heatmap of the pauses" 1 "`grep -c '"type": "heatmap"' "$DASHBOARD"`"
# A family served per process only (ocaml_memprof_*) has no series by
# program: its panels are empty there, and only there, rightly.
_url=$url
url="http://$SRV2_HOSTPORT/"
check_eq "GET /metrics of the exporter by program" 200 "`get byprog.metrics /metrics`"
url=$_url
# by_pid_only FAMILY...: none of them is in the exporter by program's /metrics
by_pid_only() {
  test $# -gt 0 || return 1
  for _f; do grep -q "^# TYPE $_f " "$WORK/byprog.metrics" && return 1; done
  return 0
}
OCGC_DASH_JOB=ocgc_byprog Q dashboard 30 "$DASHBOARD" >"$WORK/dash2.out" ||
  hard_error "serve_prom_query.py dashboard failed"
while IFS='	' read -r _title _res _fams; do
  case $_res in "series "*) _res=data ;; esac
  if by_pid_only $_fams; then
    check_eq "dashboard by program: $_title (per process only: $_fams)" empty "$_res"
  else
    check_eq "dashboard by program: $_title" data "$_res"
  fi
done <"$WORK/dash2.out"
check_eq "dashboard by program: expressions run" "`grep -c '"expr"' "$DASHBOARD"`" "`lines_of dash2.out`"
OCGC_DASH_JOB=ocgc Q dashboard 30 "$DASHBOARD" >"$WORK/dash.out" || hard_error "serve_prom_query.py dashboard failed"
check_eq "dashboard: lint" none "`Q lint "$DASHBOARD"`"
Q variables "$DASHBOARD" >"$WORK/vars.out" || hard_error "serve_prom_query.py variables failed"
say "the variables offer: `tr "\t\n" ": " <"$WORK/vars.out"`"
# has_word NAME WORD: the values of variable NAME hold WORD
has_word() { awk -F '\t' -v n="$1" -v w="$2" '$1 == n && index(" " $2 " ", " " w " ") { f = 1 } END { exit !f }' "$WORK/vars.out"; }
for _v in job:ocgc job:ocgc_byprog "instance:$SRV_HOSTPORT" "instance:$SRV2_HOSTPORT" \
  "program:$PROG" "program:$STOCK" "pid:$pid_a" "pid:$pid_stock"; do
  check_true "dashboard: variable ${_v%%:*} offers ${_v#*:}" has_word "${_v%%:*}" "${_v#*:}"
done
check_eq "dashboard: expressions run" "`grep -c '"expr"' "$DASHBOARD"`" "`lines_of dash.out`"
while IFS='	' read -r _title _res _fams; do
  case $_res in "series "*) _res=data ;; esac
  check_eq "dashboard: $_title" data "$_res"
done <"$WORK/dash.out"
# The leak's panel and the profile's overflow's, among them.
check_true "dashboard: the live heap's panel has data" \
  grep -q '	series [1-9][0-9]*	ocaml_gc_heap_live_bytes$' "$WORK/dash.out"
check_true "dashboard: the allocation table's overflow has data" \
  grep -q '	series [1-9][0-9]*	ocaml_memprof_overflow_samples_total$' "$WORK/dash.out"

# Every recording rule of contrib/prometheus returns data for the real
# programs (their names are those the exporter serves).
for _r in `sed -n 's/^ *- record: *//p' "$OCGC_SRCDIR/contrib/prometheus/ocgc-rules.yml"`; do
  for _i in "$SRV_HOSTPORT" "$SRV2_HOSTPORT"; do
    prom_eq "rules: $_r has data for the ticker from $_i" 1 \
      "count($_r{instance=\"$_i\",program=\"$TICK\"}) > bool 0"
  done
done
prom_eq "rules: the ticker is one process by pid" 1 "ocgc:processes{instance=\"$SRV_HOSTPORT\",program=\"$TICK\"}"
prom_eq "rules: and by program" 1 "ocgc:processes{instance=\"$SRV2_HOSTPORT\",program=\"$TICK\"}"
check_gt "rules: recording rules checked" 8 \
  "`grep -c '^ *- record:' "$OCGC_SRCDIR/contrib/prometheus/ocgc-rules.yml"`"

check_eq "GET /metrics" 200 "`get m1 /metrics`"
promtool check metrics <"$WORK/m1" >"$WORK/promtool.out" 2>&1; _rc=$?
check_eq "promtool check metrics: status (`head -n 3 "$WORK/promtool.out"`)" 0 "$_rc"

# A program SIGKILLed: gone from /metrics (polled, at most 10 s), stale in
# Prometheus after its next scrape (a staleness marker: an instant query finds none).
T="pid=\"$pid_tick\""
check_gt "tick: series in /metrics" 0 "`series m1 $pid_tick`"
check_gt "tick: series in Prometheus" 0 "`Q value "count({$T})"`"
kill -KILL "$pid_tick"
wait "$pid_tick" 2>/dev/null # the shell's "Killed"
_n=0
while _st=`get m2 /metrics` && test "$_st" = 200 && test "`series m2 $pid_tick`" != 0; do
  _n=$((_n + 1)); test $_n -le 200 || break
  sleep 0.05
done
check_eq "GET /metrics after the kill" 200 "$_st"
check_eq "SIGKILLed tick: its series left /metrics" 0 "`series m2 $pid_tick`"
check_eq "SIGKILLed tick: stale in Prometheus" none "`Q poll 30 none "{$T}"`"
check_gt "a is still served" 0 "`series m2 $pid_a`"

kill -TERM "$PROM_PID"
_n=0
while kill -0 "$PROM_PID" 2>/dev/null && test $_n -le 400; do _n=$((_n + 1)); sleep 0.05; done
kill -KILL "$PROM_PID" 2>/dev/null
wait "$PROM_PID"
check_eq "prometheus: exit status after SIGTERM (within 20 s)" 0 $?
kill -TERM "$srv"
ocgc_wait srv
check_eq "ocgc serve: exit status after SIGTERM" 0 "`rc_of srv`"
for t in a b c; do eval "target_stop $t \$pid_$t"; done
stop_bg stock "$pid_stock"
T1=`date +%s.%N`
say "serve_prometheus.sh took `awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }'` s"
finish
