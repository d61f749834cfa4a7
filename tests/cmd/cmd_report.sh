#!/bin/sh
# cmd_report.sh - `ocgc report` on real programs.
# --file: the PRESERVEd ring of a program that printed its Gc.quick_stat:
# the JSON validates against docs/report.schema.json, its counts equal
# quick_stat, the ring lost nothing so the cause table adds up to the
# collections, percentiles are in order; the text form has its sections.
# PID --duration 1s: a window of a running program, whose counts are > 0 and
# no more than the program's totals; --dir; a window that ends early when
# the program exits.  Errors: a dead pid (3), a bad --duration (2), a
# missing file (3), bad arguments (2): one clear line each.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_report_lib.sh"
cmd_report_init

compile_native workload ocgc_test.ml workload.ml
compile_native target ocgc_test.ml attach_target.ml

say "== report --file: a whole run against its Gc.quick_stat"
run_ok wl ./workload 4
ring_of wl
report_cmd file report --file "$RING" --json
check_eq "file: exit status" 0 "`cat "$WORK/file.rc"`"
check_eq "file: stderr lines" 0 "`stderr_lines file`"
report_json file
check_report_sane file
check_report_quickstat file wl
check_jkey file mode file
check_jkey file source.path "$RING"
check_jkey file source.pid "`outkey wl pid`"
check_jkey file source.program workload
check_jkey file source.state exited
check_jkey file source.ocgc_ring true
check_jkey file window.from process_start
check_jkey file window.requested_ns null
check_jkey file command null
check_jkey file exit null
check_gt "file: gc_time_ns" 0 "`jkey file gc_time_ns`"
check_gt "file: window.wall_ns" 0 "`jkey file window.wall_ns`"
check_gt "file: pauses.count" 0 "`jkey file pauses.count`"
check_gt "file: kinds.minor.count" 0 "`jkey file kinds.minor.count`"
check_gt "file: phases.minor.count" 0 "`jkey file phases.minor.count`"
check_gt "file: causes.minor.minor_heap_full.count" 0 "`jkey file causes.minor.minor_heap_full.count`"
check_gt "file: causes.major_finish.explicit.count" 0 "`jkey file causes.major_finish.explicit.count`"

say "== report --file: text"
report_cmd text report --file "$RING"
check_eq "text: exit status" 0 "`cat "$WORK/text.rc"`"
for t in "GC report: ring file $RING" "wall time" "GC time" "minor collections" \
    "major cycles" "forced majors" "allocated (minor heap)" "top heap" "p99.99" \
    "Causes" "minor_heap_full" "lost                     0 (exact)" "they cover"; do
  check_true "text: has '$t'" grep -q -F -- "$t" "$WORK/text.json"
done
check_eq "text: minor collections" "`outkey wl gc.minor_collections`" \
  "`awk '$1 == "minor" && $2 == "collections" { print $3 }' "$WORK/text.json"`"

say "== report PID --duration 1s: a window of a running program"
start_bg live env OCAMLRUNPARAM=e=20 ./target 4 "$WORK/live.stop"
pid=$BGPID
wait_key live pid "$pid"
report_cmd win report "$pid" --duration 1s --json
check_eq "win: exit status" 0 "`cat "$WORK/win.rc"`"
check_eq "win: stderr lines" 0 "`stderr_lines win`"
report_json win
check_report_sane win
check_jkey win mode pid
check_jkey win source.pid "$pid"
check_jkey win source.state running
check_jkey win window.from attach
check_jkey win window.requested_ns 1000000000
check_jkey win window.ended_early false
wall=`jkey win window.wall_ns`
check_true "win: window.wall_ns ($wall) about 1 s" test "$wall" -ge 950000000 -a "$wall" -le 5000000000
report_cmd windir report --dir "$EVDIR" --duration 200ms "$pid"
check_eq "report --dir: exit status" 0 "`cat "$WORK/windir.rc"`"
check_true "report --dir: a window" grep -q "window of" "$WORK/windir.json"
wait_key live gc.heap_chunks "$pid"
stop_bg live "$pid"
check_eq "live: exit status" 0 "`cat "$WORK/live.rc"`"
for k in minor:minor_collections compaction:compactions; do
  n=`jkey win counts.collections.${k%%:*}`
  check_true "win: counts.collections.${k%%:*} ($n) <= quick_stat ${k#*:}" \
    test "$n" -le "`outkey live gc.${k#*:}`"
done
check_gt "win: counts.collections.minor" 0 "`jkey win counts.collections.minor`"
check_true "win: counts.major_cycles <= quick_stat" \
  test "`jkey win counts.major_cycles`" -le "`outkey live gc.major_collections`"
a=`jkey win counts.allocated_bytes`
check_gt "win: counts.allocated_bytes" 0 "$a"
check_true "win: allocated_bytes <= quick_stat minor_words*8" \
  test "$a" -le "$((`outkey live gc.minor_words` * 8))"
check_gt "win: pauses.count" 0 "`jkey win pauses.count`"
check_gt "win: events seen" 0 "`jkey win events.seen`"

say "== report PID --duration 60s: the program exits first"
start_bg short ./target 1.5
pid=$BGPID
wait_key short pid "$pid"
t0=`date +%s`
report_cmd early report "$pid" --duration 60s --json
t1=`date +%s`
wait "$pid"
check_eq "early: exit status" 0 "`cat "$WORK/early.rc"`"
check_true "early: returned before 60 s ($((t1 - t0)) s)" test $((t1 - t0)) -lt 30
report_json early
check_report_sane early
check_jkey early window.ended_early true
check_jkey early window.end_reason "the process exited"
check_jkey early source.state exited
check_true "early: minor collections <= quick_stat" \
  test "`jkey early counts.collections.minor`" -le "`outkey short gc.minor_collections`"
check_gt "early: minor collections" 0 "`jkey early counts.collections.minor`"

say "== errors"
sh -c 'exit 0' &
dead=$!
wait "$dead"
report_cmd dead report "$dead" --duration 1s
check_one_line dead 3 "process $dead: no such process"
report_cmd baddur report "$dead" --duration soon
check_one_line baddur 2 "--duration takes a duration"
report_cmd zerodur report "$dead" --duration 0
check_one_line zerodur 2 "--duration takes a duration"
report_cmd nofile report --file "$WORK/none.events"
check_one_line nofile 3 "$WORK/none.events: no such file"
report_cmd notpid report abc
check_one_line notpid 2 "'abc' is not a process id"
report_cmd both report "$dead" --file "$RING"
check_one_line both 2 "not both"
report_cmd nothing report
check_one_line nothing 2 "give a PID or --file FILE"
report_cmd help report --help
check_eq "report --help: exit status" 0 "`cat "$WORK/help.rc"`"
check_true "report --help: usage" grep -q "usage: ocgc report" "$WORK/help.json"
finish
