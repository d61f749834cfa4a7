#!/bin/sh
# cmd_trace.sh - `ocgc trace`: the Chrome/Perfetto JSON trace of real
# programs on the patched runtime, checked with python3's json module
# (tests/cmd/trace_check.py prints "key value" facts):
# - --file on the kept ring of a program that printed its Gc.quick_stat:
#   the file loads, X slices nest per (pid, tid) with durations >= 0, one
#   "minor" slice per minor collection, every collection slice has its
#   cause as args.cause, the minor_allocated counter track sums to
#   minor_words, the process is named after the program;
# - --file on a ring that wrapped (e=10): a global "events lost" instant
#   with the exact count of events overwritten before the read, and still
#   proper nesting;
# - following a live PID: ends when the process exits (well before
#   --duration), and a reader stopped (SIGSTOP) while a busy program fills
#   a small ring marks the loss it finds and cuts the slices it broke;
# - errors: -o into a missing folder or a file's "folder", stdout on a full
#   disk (/dev/full): one line, exit 5, no file (and an existing OUT kept);
#   no -o, bad arguments: exit 2.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
command -v python3 >/dev/null 2>&1 || { say "python3 is missing: skip"; exit 77; }
CHECK="$OCGC_SRCDIR/tests/cmd/trace_check.py"

# tkey TAG KEY [DEFAULT]: a fact about trace TAG (from $WORK/TAG.facts)
tkey() { getkey "$WORK/$1.facts" "$2" "${3:-}"; }
facts() { python3 "$CHECK" "$WORK/$1.json" >"$WORK/$1.facts" 2>&1; }
# trace TAG ARGS...: ocgc trace ARGS -o $WORK/TAG.json; rc in TAG.trc
trace() {
  _tag=$1; shift
  "$OCGC" trace "$@" -o "$WORK/$_tag.json" >"$WORK/$_tag.tout" 2>"$WORK/$_tag.terr"
  echo $? >"$WORK/$_tag.trc"
}
check_wellformed() {
  check_eq "$1: exit status" 0 "`cat "$WORK/$1.trc"`"
  if test "`cat "$WORK/$1.trc"`" != 0; then
    say "--- stderr of ocgc trace ($1):"; cat "$WORK/$1.terr"
  fi
  facts "$1"
  check_eq "$1: loads as JSON" 1 "`tkey $1 json.ok`"
  check_eq "$1: displayTimeUnit" ns "`tkey $1 display_time_unit`"
  check_eq "$1: B/E unmatched" 0 "`tkey $1 be.unmatched`"
  check_eq "$1: X with negative dur" 0 "`tkey $1 x.negative_dur`"
  check_eq "$1: X badly nested" 0 "`tkey $1 x.bad_nesting`"
}

say "== --file on a complete ring"
compile_native workload ocgc_test.ml workload.ml
run_ok wl ./workload
ring_of wl
trace full --file "$RING"
check_wellformed full
check_eq "full: stderr is one summary line" 1 "`wc -l <"$WORK/full.terr" | tr -d ' '`"
check_eq "full: minor slices (gc.minor_collections)" "`outkey wl gc.minor_collections`" \
  "`tkey full slice.minor 0`"
check_eq "full: compact slices (gc.compactions)" "`outkey wl gc.compactions`" \
  "`tkey full slice.compact 0`"
check_gt "full: major_slice slices" 0 "`tkey full slice.major_slice 0`"
check_gt "full: minor sub-phase slices" 0 "`tkey full slice.minor_local_roots 0`"
check_gt "full: explicit Gc call slices" 0 "`tkey full slice.explicit_gc_full_major 0`"
for k in minor major_slice compact major_finish_cycle; do
  check_eq "full: $k slices without a cause" 0 "`tkey full uncaused.$k`"
done
check_gt "full: cause minor_heap_full on minor slices" 0 "`tkey full cause.minor.minor_heap_full 0`"
check_gt "full: cause explicit on minor slices" 0 "`tkey full cause.minor.explicit 0`"
check_gt "full: cause explicit on compact slices" 0 "`tkey full cause.compact.explicit 0`"
check_eq "full: no loss marker" 0 "`tkey full lost.markers`"
check_eq "full: no cut slice" 0 "`tkey full cut`"
_a=`tkey full counter.minor_allocated.sum 0`
check_eq "full: minor_allocated counter sum / 8 (gc.minor_words)" "`outkey wl gc.minor_words`" \
  "$((_a / 8))"
_p=`tkey full counter.minor_promoted.sum 0`
check_eq "full: minor_promoted counter sum / 8 (gc.promoted_words)" \
  "`outkey wl gc.promoted_words`" "$((_p / 8))"
check_gt "full: heap_words counter track" 0 "`tkey full counter.heap_words.count 0`"
check_gt "full: major_slice_work counter track" 0 "`tkey full counter.major_slice_work.count 0`"
check_eq "full: ring_start instant" 1 "`tkey full instant.ring_start 0`"
check_eq "full: ring_stop instant" 1 "`tkey full instant.ring_stop 0`"
check_eq "full: major_cycle_end instants (gc.major_collections)" \
  "`outkey wl gc.major_collections`" "`tkey full instant.major_cycle_end 0`"
check_eq "full: process_name" workload "`tkey full process_name`"
check_eq "full: every event's pid is the program's" "`outkey wl pid`" "`tkey full pids`"

say "== the same to stdout"
"$OCGC" trace --file "$RING" -o - >"$WORK/stdout.json" 2>"$WORK/stdout.terr"
echo $? >"$WORK/stdout.trc"
check_wellformed stdout
check_eq "stdout: the same trace as the file" "`cat "$WORK/full.json" | cksum`" \
  "`cat "$WORK/stdout.json" | cksum`"

say "== --file on a ring that wrapped (e=10)"
run_ok small env OCAMLRUNPARAM=e=10 ./workload
ring_of small
dump_ring "$RING" small
trace wrapped --file "$RING"
check_wellformed wrapped
check_ge "wrapped: the dump skipped events" 1 "`dkey small events.skipped`"
check_eq "wrapped: one global loss marker" 1 "`tkey wrapped lost.global`"
check_eq "wrapped: its count (events overwritten before the read)" \
  "`dkey small events.skipped`" "`tkey wrapped lost.count`"
check_eq "wrapped: exact" 1 "`tkey wrapped lost.exact`"
check_gt "wrapped: minor slices" 0 "`tkey wrapped slice.minor 0`"
check_true "wrapped: summary says events lost" grep -q "events lost" "$WORK/wrapped.terr"

say "== following a live process until it exits"
compile_native target ocgc_test.ml attach_target.ml
start_bg live ./target 2
pid=$BGPID
wait_key live pid "$pid"
_t0=`date +%s`
trace follow "$pid" --duration 60
_t1=`date +%s`
wait "$pid"
check_wellformed follow
check_true "follow: ended with the process, long before --duration" test $((_t1 - _t0)) -lt 30
check_gt "follow: minor slices" 0 "`tkey follow slice.minor 0`"
check_eq "follow: ring_stop instant" 1 "`tkey follow instant.ring_stop 0`"
check_eq "follow: no loss" 0 "`tkey follow lost.markers`"
check_eq "follow: pid" "$pid" "`tkey follow pids`"
check_eq "follow: process_name" target "`tkey follow process_name`"

say "== following for --duration"
start_bg dur ./target 30 "$WORK/dur.stop"
pid=$BGPID
wait_key dur pid "$pid"
trace dur "$pid" --duration 1
check_wellformed dur
check_true "dur: the process still runs" kill -0 "$pid"
check_gt "dur: minor slices" 0 "`tkey dur slice.minor 0`"
check_eq "dur: no ring_stop" 0 "`tkey dur instant.ring_stop 0`"

say "== a reader stopped while a busy program fills a small ring"
start_bg busy env OCAMLRUNPARAM=e=10 ./target 30 "$WORK/busy.stop"
bpid=$BGPID
wait_key busy pid "$bpid"
"$OCGC" trace "$bpid" --duration 3 -o "$WORK/stopped.json" >"$WORK/stopped.tout" \
  2>"$WORK/stopped.terr" &
tpid=$!
sleep 1
kill -STOP "$tpid"
sleep 1
kill -CONT "$tpid"
wait "$tpid"
echo $? >"$WORK/stopped.trc"
check_wellformed stopped
check_ge "stopped: global loss markers" 1 "`tkey stopped lost.global`"
check_gt "stopped: events lost" 0 "`tkey stopped lost.count`"
check_eq "stopped: exact" 1 "`tkey stopped lost.exact`"
check_eq "stopped: none is of before the start" 0 "`tkey stopped lost.before_start`"
check_eq "stopped: counted as otherData.events_lost" "`tkey stopped lost.count`" \
  "`tkey stopped other.events_lost`"
check_gt "stopped: minor slices" 0 "`tkey stopped slice.minor 0`"
: >"$WORK/dur.stop"; : >"$WORK/busy.stop"
wait "$pid"; wait "$bpid"

say "== write errors"
ring_of wl
"$OCGC" trace --file "$RING" -o "$WORK/nodir/out.json" >/dev/null 2>"$WORK/e1.err"
check_eq "missing folder: exit status" 5 $?
check_eq "missing folder: one line" 1 "`wc -l <"$WORK/e1.err" | tr -d ' '`"
check_true "missing folder: names the file" grep -q "cannot write $WORK/nodir/out.json" \
  "$WORK/e1.err"
check_false "missing folder: no file" test -e "$WORK/nodir/out.json"
: >"$WORK/afile"
"$OCGC" trace --file "$RING" -o "$WORK/afile/out.json" >/dev/null 2>"$WORK/e2.err"
check_eq "a file as folder: exit status" 5 $?
check_eq "a file as folder: one line" 1 "`wc -l <"$WORK/e2.err" | tr -d ' '`"
if test "`id -u`" != 0; then
  mkdir "$WORK/ro" && chmod 0555 "$WORK/ro"
  "$OCGC" trace --file "$RING" -o "$WORK/ro/out.json" >/dev/null 2>"$WORK/e3.err"
  check_eq "read-only folder: exit status" 5 $?
  check_eq "read-only folder: one line" 1 "`wc -l <"$WORK/e3.err" | tr -d ' '`"
  check_eq "read-only folder: empty" none "`ls_dir "$WORK/ro"`"
fi
if test -w /dev/full; then
  "$OCGC" trace --file "$RING" -o - >/dev/full 2>"$WORK/e4.err"
  check_eq "full disk (stdout): exit status" 5 $?
  check_eq "full disk (stdout): one line" 1 "`wc -l <"$WORK/e4.err" | tr -d ' '`"
  check_true "full disk (stdout): says so" grep -q "No space left" "$WORK/e4.err"
fi
mkdir "$WORK/keep"
echo old >"$WORK/keep/out.json"
"$OCGC" trace --file "$WORK/no-such.events" -o "$WORK/keep/out.json" >/dev/null 2>"$WORK/e5.err"
check_eq "missing ring: exit status" 3 $?
check_eq "missing ring: the old OUT is kept" old "`cat "$WORK/keep/out.json"`"
check_eq "missing ring: no temporary file left" out.json "`ls_dir "$WORK/keep"`"
"$OCGC" trace --file "$RING" >/dev/null 2>"$WORK/e6.err"
check_eq "no -o: exit status" 2 $?
"$OCGC" trace notapid -o "$WORK/x.json" >/dev/null 2>"$WORK/e7.err"
check_eq "bad pid: exit status" 2 $?
"$OCGC" trace 1 --duration xyz -o "$WORK/x.json" >/dev/null 2>"$WORK/e8.err"
check_eq "bad duration: exit status" 2 $?
"$OCGC" trace --help >"$WORK/help.out" 2>&1
check_eq "--help: exit status" 0 $?
check_true "--help: usage" grep -q "usage: ocgc trace" "$WORK/help.out"
check_false "no stray files in the work folder" test -e "$WORK/x.json"
finish
