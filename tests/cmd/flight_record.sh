#!/bin/sh
# flight_record.sh - a recording (ocgc/flight.h) of a real running OCaml
# program, made with libocgc's calls as a watch makes one (flight_record.c:
# ocgc_source_open_pid, a history fed by an aggregator's on_pause,
# ocgc_flight_ident, ocgc_flight_write), read by every reader of ring files:
# `ocgc report --file REC --json` shows the recording (why, the process,
# its executable and build id, its history) and totals equal to the
# Gc.quick_stat the program printed; the text report has its "Recording"
# section; `ocgc dump --file REC` prints the block; `ocgc trace --file REC`
# and `ocgc report --file REC --html` still work; a plain ring file's
# report says "recording": null.  Then a death: a program killed (SIGKILL,
# said to be the OOM killer's), its dead ring recorded: the report's
# "exit" says so (signal, SIGKILL, oom_killed, status 137), its state
# "killed", and its totals are still its Gc.quick_stat.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_report_lib.sh"
cmd_report_init
RECORD="$OCGC_BUILDDIR/tests/cmd/flight_record"
test -x "$RECORD" || hard_error "$RECORD is missing (make check builds it)"

compile_native target ocgc_test.ml attach_target.ml

say "== a recording of a running program"
# a ring of 2^20 words: the whole run is in it, nothing overwritten
start_bg live env OCAMLRUNPARAM=e=20 ./target 1 "$WORK/live.stop"
pid=$BGPID
wait_key live gc.heap_chunks "$pid"   # it printed its Gc.quick_stat and waits
REC="$WORK/rec.events"
"$RECORD" "$pid" "$REC" 1 >"$WORK/rec.out" 2>"$WORK/rec.err"
check_eq "flight_record: exit status" 0 "$?"
cat "$WORK/rec.err"
check_gt "flight_record: seconds in the history" 0 "`outkey rec seconds`"
check_gt "flight_record: pauses given to it" 0 "`outkey rec pauses`"
exe=`readlink "/proc/$pid/exe"`
say "  the recording: `stat -c '%s bytes, %b blocks of %B' "$REC"` (the ring's holes stay holes)"

say "== report --file REC --json"
report_cmd rep report --file "$REC" --json
check_eq "rep: exit status" 0 "`cat "$WORK/rep.rc"`"
check_eq "rep: stderr lines" 0 "`stderr_lines rep`"
report_json rep
check_report_sane rep
check_report_quickstat rep live
check_jkey rep mode file
check_jkey rep source.state running
check_jkey rep exit null
check_jkey rep recording.reason demand
check_jkey rep recording.detail "asked for by flight_record"
check_jkey rep recording.pid "$pid"
check_jkey rep recording.program target
check_jkey rep recording.exe "$exe"
check_jkey rep recording.how unknown
check_jkey rep recording.exit_known false
check_jkey rep recording.window_s 60
bid=`jkey rep recording.build_id`
check_true "rep: recording.build_id is 40 hex digits ($bid)" \
  sh -c "printf '%s' '$bid' | grep -E -q '^[0-9a-f]{40}$'"
hist=`python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["recording"]["history"]
print(len(d), sum(s["collections"]["minor"] for s in d), sum(s["pauses"] for s in d),
      all(d[i]["t_ns"] < d[i + 1]["t_ns"] for i in range(len(d) - 1)))
' "$WORK/rep.json"`
set -- $hist
check_eq "rep: history seconds (flight_record's)" "`outkey rec seconds`" "$1"
# the history's minor collections are the run's: its counts grow from the
# first pause read, the oldest event of a ring that lost nothing
check_eq "rep: history's minor collections (quick_stat's)" "`outkey live gc.minor_collections`" "$2"
check_eq "rep: history's pauses (flight_record's)" "`outkey rec pauses`" "$3"
check_eq "rep: history oldest first" True "$4"

say "== report --file REC: text"
report_cmd text report --file "$REC"
check_eq "text: exit status" 0 "`cat "$WORK/text.rc"`"
for t in "Recording" "why                      demand (asked for by flight_record)" \
    "process                  pid $pid, target" "executable               $exe" \
    "build id                 $bid" "History: the last" "allocated"; do
  check_true "text: has '$t'" grep -q -F -- "$t" "$WORK/text.json"
done

sed -n '/^Recording/,/^Time/p' "$WORK/text.json"

say "== dump --file REC, trace --file REC, report --html"
report_cmd dump dump --file "$REC"
check_eq "dump: exit status" 0 "`cat "$WORK/dump.rc"`"
check_eq "dump: flight.reason" demand "`getkey "$WORK/dump.json" flight.reason`"
check_eq "dump: flight.pid" "$pid" "`getkey "$WORK/dump.json" flight.pid`"
check_eq "dump: flight.seconds" "`outkey rec seconds`" "`getkey "$WORK/dump.json" flight.seconds`"
check_eq "dump: totals.minor_collections" "`outkey live gc.minor_collections`" \
  "`getkey "$WORK/dump.json" totals.minor_collections`"
report_cmd trace trace --file "$REC" -o "$WORK/trace.out"
check_eq "trace: exit status" 0 "`cat "$WORK/trace.rc"`"
check_true "trace: its output is JSON with events" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
assert len(ev) > 0' "$WORK/trace.out"
report_cmd html report --file "$REC" --html "$WORK/rec.html"
check_eq "html: exit status" 0 "`cat "$WORK/html.rc"`"
check_true "html: written" test -s "$WORK/rec.html"
check_true "html: its Recording section" grep -q -F "<h2>Recording</h2>" "$WORK/rec.html"
check_true "html: says why" grep -q -F "demand (asked for by flight_record)" "$WORK/rec.html"

stop_bg live "$pid"
check_eq "live: exit status" 0 "`cat "$WORK/live.rc"`"

say "== a death: killed, its dead ring recorded"
start_bg dead env OCAMLRUNPARAM=e=20 ./target 1 "$WORK/dead.stop"
dpid=$BGPID
wait_key dead gc.heap_chunks "$dpid"
"$RECORD" "$dpid" "$WORK/dead.events" 1 9 oom >"$WORK/drec.out" 2>"$WORK/drec.err"
check_eq "flight_record (death): exit status" 0 "$?"
cat "$WORK/drec.err"
wait "$dpid"
check_eq "dead: exit status (SIGKILL)" 137 "$?"
say "  ocgc_flight_write took `outkey drec write_us` us for a ring of 2^20 words (`stat -c %s "$WORK/dead.events"` bytes)"
report_cmd drep report --file "$WORK/dead.events" --json
check_eq "drep: exit status" 0 "`cat "$WORK/drep.rc"`"
report_json drep
check_report_sane drep
check_report_quickstat drep dead
check_jkey drep source.state killed
check_jkey drep exit.code null
check_jkey drep exit.signal 9
check_jkey drep exit.signal_name SIGKILL
check_jkey drep exit.oom_killed true
check_jkey drep exit.core_dumped false
check_jkey drep exit.status 137
check_jkey drep recording.reason death
check_jkey drep recording.how oom
check_jkey drep recording.exit_known true
check_jkey drep recording.exit_mark false
check_jkey drep recording.pid "$dpid"
check_gt "drep: recording.gone_ns" 0 "`jkey drep recording.gone_ns`"
report_cmd dtext report --file "$WORK/dead.events"
check_true "dtext: says how it ended" grep -q -F \
  "how it ended             killed by signal 9 (SIGKILL), by the OOM killer (no exit mark in its ring)" \
  "$WORK/dtext.json"

say "== a plain ring file is no recording"
ring_of live
report_cmd plain report --file "$RING" --json
check_eq "plain: exit status" 0 "`cat "$WORK/plain.rc"`"
report_json plain
check_jkey plain schema_valid 1
check_jkey plain recording null
report_cmd pdump dump --file "$RING"
check_eq "plain dump: no flight keys" 0 "`grep -c '^flight\.' "$WORK/pdump.json"`"
finish
