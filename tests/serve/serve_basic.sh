#!/bin/sh
# serve_basic.sh - `ocgc serve --all` against two real programs on the
# patched runtime: it says where it listens (port 0: a free one), /metrics
# is Prometheus text that promtool accepts, and each program's series equal
# its own Gc.quick_stat (minor collections summed over causes, major
# cycles, allocated and promoted bytes, heap size); a program that exits is
# gone from the next scrape; the GC settings equal its Gc.get (one program
# runs with settings of its own); CPU time is split by mode; / lists the programs; /-/healthy is 200, an
# unknown path 404, POST 405 with Allow, HEAD 200; SIGTERM ends it with 0.
# With PIDs given it watches those (a PID given twice, once); SIGINT ends it.
# Without --listen it listens on 127.0.0.1:9464, never beyond the host.
# Other OCaml programs may run on the host (--all shows them too): every
# check is about our own pids.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
cmd_init

# b runs with GC settings of its own, so that each setting's series can
# only equal the program's Gc.get if it is that setting's.
for t in a b; do
  test $t = b && { OCAMLRUNPARAM=s=64k,o=95,O=700,a=0; export OCAMLRUNPARAM; }
  target_start $t 0.2
  eval "pid_$t=\$BGPID"
  unset OCAMLRUNPARAM
  target_go $t
done
wait_key a gc.config.allocation_policy "$pid_a"
wait_key b gc.config.allocation_policy "$pid_b"
check_eq "b: its own minor heap size" 65536 "`outkey b gc.config.minor_heap_size`"
check_eq "b: its own policy" 0 "`outkey b gc.config.allocation_policy`"

serve srv --listen 127.0.0.1:0 --all
check_true "listening line names http://127.0.0.1:PORT/ ($url)" \
  sh -c "echo '$url' | grep -Eq '^http://127\.0\.0\.1:[1-9][0-9]*/$'"

check_eq "GET /metrics" 200 "`get m1 /metrics`"
check_true "content type is text 0.0.4" grep -qi 'content-type: text/plain; version=0.0.4' "$WORK/m1.h"
# One vocabulary: the kinds are libocgc's (ocgc_kind_name), as every other
# subcommand names them (a major cycle finished at once is major_finish,
# not major_cycle, which /metrics called it).
kinds=`grep -o 'kind="[a-z_]*"' "$WORK/m1" | sort -u | tr '\n' ' '`
check_eq "the kinds of /metrics are ocgc's" 'kind="compaction" kind="major_finish" kind="major_slice" kind="minor" ' "$kinds"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$WORK/m1" >"$WORK/promtool.out" 2>&1; _rc=$?
  check_eq "promtool check metrics: status (`head -n 3 "$WORK/promtool.out"`)" 0 "$_rc"
else
  say "promtool is missing (apt-get install prometheus): the exposition is not checked by it"
fi
for t in a b; do
  eval "p=\$pid_$t"
  check_eq "$t: minor collections over causes" "`outkey $t gc.minor_collections`" \
    "`val m1 ocaml_gc_collections_total $p 'kind="minor"'`"
  check_eq "$t: major cycles" "`outkey $t gc.major_collections`" \
    "`val m1 ocaml_gc_major_cycles_total $p`"
  check_eq "$t: minor allocated bytes" "$((`outkey $t gc.minor_words` * 8))" \
    "`val m1 ocaml_gc_allocated_bytes_total $p 'heap="minor"'`"
  check_eq "$t: major allocated bytes (direct)" \
    "$(( (`outkey $t gc.major_words` - `outkey $t gc.promoted_words`) * 8 ))" \
    "`val m1 ocaml_gc_allocated_bytes_total $p 'heap="major"'`"
  check_eq "$t: promoted bytes" "$((`outkey $t gc.promoted_words` * 8))" \
    "`val m1 ocaml_gc_promoted_bytes_total $p`"
  check_eq "$t: heap size" "$((`outkey $t gc.heap_words` * 8))" "`val m1 ocaml_gc_heap_size_bytes $p`"
  check_eq "$t: heap chunks" "`outkey $t gc.heap_chunks`" "`val m1 ocaml_gc_heap_chunks $p`"
  check_eq "$t: minor heap size setting" "$((`outkey $t gc.config.minor_heap_size` * 8))" \
    "`val m1 ocaml_gc_config_minor_heap_size_bytes $p`"
  check_eq "$t: space overhead setting (a ratio: percent / 100)" \
    "`outkey $t gc.config.space_overhead`" "`val m1 ocaml_gc_config_space_overhead_ratio $p '' 100`"
  check_eq "$t: max overhead setting (a ratio)" "`outkey $t gc.config.max_overhead`" \
    "`val m1 ocaml_gc_config_max_overhead_ratio $p '' 100`"
  check_eq "$t: allocation policy setting" "`outkey $t gc.config.allocation_policy`" \
    "`val m1 ocaml_gc_config_allocation_policy $p`"
  check_eq "$t: CPU time has user and system series" 2 "`series m1 $p ocaml_process_cpu_seconds_total`"
  check_eq "$t: runtime info" 1 "`val m1 ocaml_runtime_info $p 'variant="native"'`"
  check_gt "$t: pauses observed" 0 "`val m1 ocaml_gc_pause_seconds_count $p`"
  check_gt "$t: threads" 0 "`val m1 ocaml_process_threads $p`"
  check_gt "$t: resident memory" 0 "`val m1 ocaml_process_resident_memory_bytes $p`"
  check_gt "$t: open fds" 0 "`val m1 ocaml_process_open_fds $p`"
  check_gt "$t: started after the boot" "`awk '$1 == "btime" { print $2 }' /proc/stat`" \
    "`val m1 ocaml_process_start_time_seconds $p`"
  check_gt "$t: voluntary context switches" 0 \
    "`val m1 ocaml_process_context_switches_total $p 'type="voluntary"'`"
done

target_stop a "$pid_a"
check_eq "GET /metrics after a exited" 200 "`get m2 /metrics`"
check_eq "a exited: its series are gone" 0 "`series m2 $pid_a`"
check_gt "b is still served" 0 "`series m2 $pid_b`"

check_eq "GET /" 200 "`get index /`"
check_true "/ lists b" grep -q "^$pid_b	cmd_target\$" "$WORK/index"
check_false "/ no longer lists a" grep -q "^$pid_a	" "$WORK/index"
check_eq "GET /-/healthy" 200 "`get h /-/healthy`"
check_eq "GET /nope" 404 "`get n /nope`"
check_eq "POST /metrics" 405 "`get p /metrics -X POST -d x=1`"
check_true "405 says Allow: GET, HEAD" grep -qi '^allow: GET, HEAD' "$WORK/p.h"
check_eq "HEAD /metrics" 200 "`get hd /metrics -I`"

# OpenMetrics, when the scraper asks for it as Prometheus does.
PROM_ACCEPT='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
check_eq "GET /metrics, Accept as Prometheus's" 200 "`get om /metrics -H "Accept: $PROM_ACCEPT"`"
check_true "content type is OpenMetrics 1.0.0" \
  grep -qi 'content-type: application/openmetrics-text; version=1.0.0' "$WORK/om.h"
check_eq "OpenMetrics ends with # EOF" "# EOF" "`tail -n 1 "$WORK/om"`"
check_true "a counter's family is named without _total" \
  grep -qx '# TYPE ocaml_gc_collections counter' "$WORK/om"
check_true "runtime info is an info family" grep -qx '# TYPE ocaml_runtime info' "$WORK/om"
check_eq "b's collections are the same in both formats" "`val m1 ocaml_gc_collections_total $pid_b`" \
  "`val om ocaml_gc_collections_total $pid_b`"
check_eq "Accept text only: text" 200 "`get tx /metrics -H 'Accept: text/plain;version=0.0.4'`"
check_true "  content type is text 0.0.4" grep -qi 'content-type: text/plain; version=0.0.4' "$WORK/tx.h"
# The strict OpenMetrics parser of the Python client library, if installed
# (python3-prometheus-client): it refuses what the format does not allow.
_py=
for _p in python3 /usr/bin/python3; do
  "$_p" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null && { _py=$_p; break; }
done
if test -n "$_py"; then
  "$_py" -c 'import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse
print(len(list(parse(open(sys.argv[1]).read()))))' "$WORK/om" >"$WORK/om.py" 2>&1
  check_gt "OpenMetrics parser (prometheus_client) reads every family (`tail -n 1 "$WORK/om.py"`)" \
    20 "`tail -n 1 "$WORK/om.py"`"
else
  say "python3-prometheus-client is missing: the OpenMetrics text is not parsed by it"
fi

kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit status 0" 0 "`rc_of srv`"

# PIDs given: those only, a PID given twice watched once.
serve srv2 --listen 127.0.0.1:0 "$pid_b" "$pid_b"
check_eq "PIDs: GET /metrics" 200 "`get m3 /metrics`"
check_eq "PIDs: watched processes" 1 "`awk '$1 == "ocgc_serve_watched_processes" { print $2 }' "$WORK/m3"`"
check_eq "PIDs: b's threads series, once" 1 "`series m3 $pid_b ocaml_process_threads`"
kill -INT "$srv"
ocgc_wait srv2
check_eq "SIGINT: exit status 0" 0 "`rc_of srv2`"
target_stop b "$pid_b"

# Without --listen: loopback only (docs/threat-model.md C1), port 9464.
# Another program (or another test run) may hold that port: then it says
# it cannot listen there, which names the address as well.
ocgc_bg dflt serve --all
_n=0
while ! grep -q 'listen' "$WORK/dflt.err" 2>/dev/null; do
  _n=$((_n + 1)); test $_n -le 600 || break; sleep 0.05
done
kill -TERM "$OCGC_BGPID" 2>/dev/null
ocgc_wait dflt
check_true "default: listens on 127.0.0.1:9464 only (`head -n 1 "$WORK/dflt.err"`)" \
  grep -Eq 'listening on http://127\.0\.0\.1:9464/|cannot listen on 127\.0\.0\.1:9464' "$WORK/dflt.err"
finish
