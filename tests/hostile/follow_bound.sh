#!/bin/sh
# follow_bound.sh - a target cannot stretch a follow past its duration.
# hostile_producer stall keeps one ring's seqlock
# odd (a writer stopped mid-publication, alive) and writes a collection
# every 2 ms on the other: every poll waits out its budget on the first
# ring, and the second gives it a little progress each time, so a reader
# is always behind.  A drain that ended only once caught up, or after four
# rings' worth of events, held `trace --duration 2s` for 59 s and `report
# --duration 2s` for 53 s.  Now a follow's drains end at the follow's end
# (report's last one at most TOOL_DRAIN_GRACE_NS, 1 s, after it), `stat`'s
# and `top`'s at the next row or refresh.
#
# The bound checked is the duration plus 6 s: the grace, and room for a
# sanitizer build on a loaded machine (the loop itself adds 10 ms a poll);
# a run killed at 40 s counts as over it.  Each command must also report
# the collections of the moving ring: bounded, not blind.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
command -v timeout >/dev/null 2>&1 || { echo "SKIP: timeout (coreutils) is missing"; exit 77; }

: >"$WORK/prod.out"
start_bg prod "$HBIN/hostile_producer" "$EVDIR" stall 300
pid=$BGPID
wait_key prod ready "$pid" 30

ms_now() { date +%s%N | sed 's/......$//'; }
# timed TAG BOUND_MS ARGS...: ocgc ARGS (killed at 40 s) into TAG.out,
# TAG.err and TAG.rc; checks it ended within BOUND_MS.
timed() {
  _tag=$1 _bound=$2; shift 2
  _t0=`ms_now`
  timeout 40 "$OCGC" "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err"
  echo $? >"$WORK/$_tag.rc"
  _ms=$((`ms_now` - _t0))
  say "$_tag: $_ms ms (bound $_bound ms), exit `rc_of $_tag`"
  check_true "$_tag: ended within $_bound ms ($_ms ms)" test "$_ms" -le "$_bound"
}

timed tr 8000 trace --duration 2s -o "$WORK/tr.json" "$pid"
check_eq "trace: exit status" 0 "`rc_of tr`"
check_eq "trace: slices of the moving ring" ok "`python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
n = sum(1 for e in t.get("traceEvents", []) if e.get("ph") == "X")
print("ok" if n > 0 else "no slices")' "$WORK/tr.json" 2>&1`"

timed rep 8000 report --json --duration 2s "$pid"
check_eq "report: exit status" 0 "`rc_of rep`"
check_eq "report: collections counted" ok "`python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
n = r.get("counts", {}).get("collections", {}).get("minor")
print("ok" if isinstance(n, int) and n > 0 else "counts: %r" % (r.get("counts"),))' \
  "$WORK/rep.out" 2>&1`"

timed st 8000 stat "$pid" 1 2
check_eq "stat: exit status" 0 "`rc_of st`"
check_eq "stat: two rows" 2 "`grep -c '^ *[0-9]' "$WORK/st.out"`"

kill "$pid" 2>/dev/null
finish
