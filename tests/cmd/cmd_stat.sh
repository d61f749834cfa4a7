#!/bin/sh
# cmd_stat.sh - `ocgc stat` against a real program on the patched runtime.
# The rows of a run that covers a known workload add up exactly: the sums
# over the --json rows of the per-interval counts (minor collections, major
# cycles, compactions, forced majors, allocated and promoted bytes) equal
# the growth of the program's own Gc.quick_stat between before the attach
# and its exit, and each row's rates are its counts over its interval.
# The example agent (examples/gcwatch.c) beside it adds up to the same
# sums.  Also: INTERVAL COUNT prints COUNT rows then exits 0; -t adds a column;
# --csv has a header and a fixed number of fields; SIGINT and SIGTERM stop
# it cleanly (exit 0); a process killed under it ends the run with a last
# row and exit 0; a wrong pid (3), a process without a ring (6) and bad
# arguments (2) fail with one line on stderr.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
cmd_init

target_start t 3; pid=$BGPID

say "== errors"
nopid=`awk '{ print $1 - 1 }' /proc/sys/kernel/pid_max`
kill -0 "$nopid" 2>/dev/null && hard_error "pid $nopid exists"
ocgc_cmd e_nopid stat "$nopid" 0.2 1
check_error e_nopid 3 "process $nopid: no such process"
sleep 30 & noring=$!
BG_PIDS="$BG_PIDS $noring"
ocgc_cmd e_noring stat "$noring" 0.2 1
check_error e_noring 6 "process $noring has no ring"
kill "$noring"
ocgc_cmd e_pid stat abc
check_error e_pid 2 "'abc' is not a process id"
ocgc_cmd e_int stat "$pid" 0
check_error e_int 2 "INTERVAL"
ocgc_cmd e_int2 stat "$pid" soon
check_error e_int2 2 "INTERVAL"
ocgc_cmd e_count stat "$pid" 0.2 0
check_error e_count 2 "COUNT"
ocgc_cmd e_none stat
check_error e_none 2 "usage"
ocgc_cmd e_many stat "$pid" 1 2 3
check_error e_many 2 "usage"
ocgc_cmd e_dir stat --dir "$WORK/nonexistent" "$pid" 0.2 1
check_eq "e_dir: exit status" 6 "`rc_of e_dir`"
check_eq "e_dir: lines on stderr" 1 "`lines_of e_dir.err`"
ocgc_cmd help stat --help
check_eq "help: exit status" 0 "`rc_of help`"
check_true "help: usage" grep -q "usage: ocgc stat" "$WORK/help.out"

say "== INTERVAL COUNT (the program waits)"
ocgc_cmd tab stat "$pid" 0.2s 5
check_eq "tab: exit status" 0 "`rc_of tab`"
check_eq "tab: stderr lines" 0 "`lines_of tab.err`"
check_eq "tab: lines (header + 5 rows)" 6 "`lines_of tab.out`"
check_true "tab: header" grep -q "^ *MINOR/s *SLICE/s" "$WORK/tab.out"
check_eq "tab: columns per line" 12 "`awk '{ print NF }' "$WORK/tab.out" | sort -u | tr '\n' ' ' | sed 's/ $//'`"
check_eq "tab: an idle program: minor/s" "0.0 0.0 0.0 0.0 0.0" \
  "`awk 'NR > 1 { print $1 }' "$WORK/tab.out" | tr '\n' ' ' | sed 's/ $//'`"
ocgc_cmd tabt stat -t "$pid" 200ms 3
check_eq "tabt: exit status" 0 "`rc_of tabt`"
check_eq "tabt: lines" 4 "`lines_of tabt.out`"
check_eq "tabt: -t adds a column" 13 "`awk '{ print NF }' "$WORK/tabt.out" | sort -u | tr '\n' ' ' | sed 's/ $//'`"
check_true "tabt: header TIME_s" grep -q "^ *TIME_s *MINOR/s" "$WORK/tabt.out"
check_eq "tabt: times increase" yes "`awk 'NR > 1 { if ($1 <= last) bad = 1; last = $1 }
  END { print bad ? "no" : "yes" }' "$WORK/tabt.out"`"
ocgc_cmd csv stat --csv "$pid" 0.2 3
ocgc_cmd csvt stat --csv -t "$pid" 0.2 3
for t in csv csvt; do
  check_eq "$t: exit status" 0 "`rc_of $t`"
  check_eq "$t: lines (header + 3 rows)" 4 "`lines_of $t.out`"
done
check_eq "csv: fields per line" 23 "`awk -F, '{ print NF }' "$WORK/csv.out" | sort -u | tr '\n' ' ' | sed 's/ $//'`"
check_eq "csvt: fields per line" 24 "`awk -F, '{ print NF }' "$WORK/csvt.out" | sort -u | tr '\n' ' ' | sed 's/ $//'`"
check_eq "csvt: first field" time_s "`head -n 1 "$WORK/csvt.out" | cut -d, -f1`"
check_eq "csv: header names" "interval_s minor_collections" \
  "`head -n 1 "$WORK/csv.out" | cut -d, -f1-2 | tr ',' ' '`"
check_eq "csv: python's csv module reads it" "3 23" "`python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(len(rows), len(rows[0]))' "$WORK/csv.out"`"
ocgc_cmd js1 stat --json "$pid" 0.2 2
check_eq "js1: exit status" 0 "`rc_of js1`"
check_eq "js1: lines" 2 "`lines_of js1.out`"
check_json_lines js1

say "== SIGINT and SIGTERM"
for s in INT TERM; do
  ocgc_bg sig$s stat "$pid" 0.2
  wait_lines sig$s 2
  kill -$s "$OCGC_BGPID"
  ocgc_wait sig$s
  check_eq "SIG$s: exit status" 0 "`rc_of sig$s`"
  check_eq "SIG$s: stderr lines" 0 "`lines_of sig$s.err`"
done

say "== a run over the whole workload, until the program exits"
# Beside it, the example agent (examples/gcwatch.c, public headers only),
# one row a second: its rows must add up to the same counts.
agent=$OCGC_BUILDDIR/tests/hostile/gcwatch
test -x "$agent" || hard_error "$agent is missing (make check builds it)"
"$agent" "$pid" 0 >"$WORK/agent.out" 2>"$WORK/agent.err" &
agent_pid=$!
BG_PIDS="$BG_PIDS $agent_pid"
ocgc_bg run stat --json "$pid" 0.2
wait_lines run 1
wait_lines agent 1
target_go t
wait_key t gc.heap_chunks "$pid" 60
sleep 0.5
: >"$WORK/t.stop"
wait "$pid"; echo $? >"$WORK/t.rc"
ocgc_wait run
check_eq "t: exit status" 0 "`rc_of t`"
check_eq "run: exit status (the program exited)" 0 "`rc_of run`"
check_eq "run: stderr lines" 0 "`lines_of run.err`"
check_json_lines run
check_ge "run: rows (3 s of workload at 0.2 s)" 15 "`lines_of run.out`"
for k in minor_collections:minor_collections major_collections:major_cycles \
    compactions:compactions forced_major_collections:forced_majors; do
  q=${k%%:*}; f=${k#*:}
  check_eq "run: sum of $f = Gc.quick_stat $q growth" \
    "$((`outkey t gc.$q` - `outkey t before.$q`))" "`jq_py run "sum(r['$f'] for r in rows)"`"
done
check_eq "run: sum of promoted_bytes = 8 * Gc.quick_stat promoted_words growth" \
  "$((8 * (`outkey t gc.promoted_words` - `outkey t before.promoted_words`)))" \
  "`jq_py run "sum(r['promoted_bytes'] for r in rows)"`"
# The last row ends at the exit, whose minor words count the minor heap then.
check_exit_minor "run: sum of allocated_bytes" \
  "$((`outkey t gc.minor_words` - `outkey t before.minor_words`))" \
  "`jq_py run "sum(r['allocated_bytes'] for r in rows)"`" 8
check_eq "run: last heap_bytes = 8 * gc.heap_words" "$((8 * `outkey t gc.heap_words`))" \
  "`jq_py run "rows[-1]['heap_bytes']"`"
check_gt "run: pauses" 0 "`jq_py run "sum(r['pauses'] for r in rows)"`"
check_eq "run: every row exact" True "`jq_py run "all(r['exact'] for r in rows)"`"
# Each row's rates are its counts over its interval, within the rounding
# of the printed rate (h: half its last digit, in the count's unit) and
# of the printed interval_s (half a microsecond).
check_eq "run: rates = counts / interval_s" "" "`jq_py run "' '.join('%d:%s' % (i, f)
  for i, r in enumerate(rows) if r['interval_s'] > 0
  for f, c, s, h in (('minor_per_s', 'minor_collections', 1, 5e-4),
                     ('major_slices_per_s', 'major_slices', 1, 5e-4),
                     ('major_cycles_per_s', 'major_cycles', 1, 5e-4),
                     ('allocated_mib_per_s', 'allocated_bytes', 1048576, 0.5),
                     ('promoted_mib_per_s', 'promoted_bytes', 1048576, 0.5),
                     ('gc_time_pct', 'gc_time_ns', 1e7, 5e3))
  if abs(r[f] * s * r['interval_s'] - r[c]) >
     1.01 * (h * r['interval_s'] + r[f] * s * 5e-7) + 1e-9 * r[c])"`"
check_eq "run: promotion_pct = promoted / allocated" "" "`jq_py run "' '.join(str(i)
  for i, r in enumerate(rows) if r['allocated_bytes'] > 0 and
  abs(r['promotion_pct'] - 100.0 * r['promoted_bytes'] / r['allocated_bytes']) > 0.01)"`"
check_eq "run: percentiles: null without pauses, else p50 <= p99 <= max" "" \
  "`jq_py run "' '.join(str(i) for i, r in enumerate(rows) if not
  ((r['pauses'] == 0 and r['pause_p50_us'] is None and r['pause_max_us'] is None) or
   (r['pauses'] > 0 and 0 < r['pause_p50_us'] <= r['pause_p99_us'] <= r['pause_max_us'])))"`"
check_eq "run: intervals of 0.2 s (but the last)" "" "`jq_py run "' '.join(str(i)
  for i, r in enumerate(rows[:-1]) if not 0.1 < r['interval_s'] < 1.0)"`"
check_eq "run: time_s increases" True \
  "`jq_py run "all(a['time_s'] < b['time_s'] for a, b in zip(rows, rows[1:]))"`"
check_eq "run: GC time within the time" True \
  "`jq_py run "sum(r['gc_time_ns'] for r in rows) <= 1e9 * sum(r['interval_s'] for r in rows)"`"
check_gt "run: GC time" 0 "`jq_py run "sum(r['gc_time_ns'] for r in rows)"`"
wait "$agent_pid"; echo $? >"$WORK/agent.rc"
check_eq "agent: exit status (the program exited)" 0 "`rc_of agent`"
check_eq "agent: stderr lines" 0 "`lines_of agent.err`"
check_json_lines agent
check_ge "agent: rows (3 s of workload at 1 s)" 3 "`lines_of agent.out`"
for f in minor_collections major_slices major_cycles compactions forced_majors pauses \
    allocated_bytes promoted_bytes gc_time_ns events_lost; do
  check_eq "agent: sum of $f = ocgc stat's" "`jq_py run "sum(r['$f'] for r in rows)"`" \
    "`jq_py agent "sum(r['$f'] for r in rows)"`"
done
check_eq "agent: last heap_bytes = ocgc stat's" "`jq_py run "rows[-1]['heap_bytes']"`" \
  "`jq_py agent "rows[-1]['heap_bytes']"`"
check_eq "agent: its rows' fields are ocgc stat's" "" "`python3 -c '
import json, sys
a = json.loads(open(sys.argv[1]).readline()); s = json.loads(open(sys.argv[2]).readline())
print(" ".join(k for k in a if k not in s))' "$WORK/agent.out" "$WORK/run.out"`"

say "== a process killed under ocgc stat"
target_start k 30; kpid=$BGPID
ocgc_bg kill stat "$kpid" 0.2
wait_lines kill 2
target_go k
sleep 0.5
kill -9 "$kpid"
ocgc_wait kill
check_eq "kill: exit status" 0 "`rc_of kill`"
check_eq "kill: stderr lines" 0 "`lines_of kill.err`"
check_ge "kill: rows" 3 "`lines_of kill.out`"
check_gt "kill: minor collections seen (sum of MINOR/s)" 0 \
  "`awk 'NR > 1 { s += $1 } END { printf "%d\\n", s }' "$WORK/kill.out"`"
cat "$WORK/kill.out"
finish
