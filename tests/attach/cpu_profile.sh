#!/bin/sh
# cpu_profile.sh - `ocgc profile PID --cpu`: a CPU profile of a running
# OCaml program, labelled with the GC phase and cause, read by Debian's
# `go tool pprof`.  cpu_gc_burn spends its CPU in burn_one, burn_two and
# burn_four in a 1:2:4 ratio while it churns the minor heap (a share of
# each minor heap survives, so its collections copy and the major heap
# marks and sweeps).  Over a window of 5 s at 400 Hz (1000 samples or
# more on an idle machine; on a loaded one, windows again until 1000):
# - `go tool pprof -top -cum` names the three by their OCaml names, their
#   cumulative samples within 25% of 1/7, 2/7 and 4/7 of their sum (the
#   collections they cause count in their stacks);
# - `-tags` shows gc_phase, with "minor" among its values, and gc_cause;
#   `-tagfocus=gc_phase=minor` keeps only samples with a minor cause;
# - the samples' GC share (those not "mutator") is within 0.6x..1.6x of
#   the GC time share `ocgc report PID --duration 5s` measures over the
#   same window (both printed);
# - folded output (--by-phase) has minor lines through burn_* down to
#   caml_empty_minor_heap; JSON stacks with gc_phase minor and a cause.
# SIGINT ends a 120 s window at once, and the profile of what was gathered
# is written.
# A program that exits mid-window: the window ends with it, and the
# profile of its samples is written.
# `ocgc run --cpu FILE -- PROGRAM`: the whole run's profile names the three
# functions and has gc_phase minor; its figures are said on stderr.
# A threaded program: every thread sampled (main, the tick thread and two
# workers), each worker's function in the profile.
# Refused: uid 65534 profiling root's program: exit 8 and libocgc's one
# line naming the setting and the capability.
# Skips (77) only where perf_event_open is refused (or has no cpu-clock
# event), saying why, or where go is missing.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
. "$OCGC_SRCDIR/tests/lib/pprof_lib.sh"
pprof_init

compile_native burn ocgc_test.ml cpu_gc_burn.ml
start_bg burn ./burn "$WORK/burn.stop"
pid=$BGPID
wait_key burn pid "$pid"

# The report's window and the profile's, started together; again (at
# most 4 windows) until 1000 samples, which a loaded machine gives less
# CPU to: go tool pprof adds the profiles up, the report's shares are
# averaged (windows of one length).
profiles= ; shares= ; total=0; w=0
while test "$w" -lt 4 && test "$total" -lt 1000; do
  w=$((w + 1))
  ( "$OCGC" report "$pid" --duration 5s --json >"$WORK/rep$w.json" 2>"$WORK/rep$w.err"
    echo $? >"$WORK/rep$w.rc" ) &
  rpid=$!
  "$OCGC" profile "$pid" --cpu --duration 5s --frequency 400 -o "$WORK/cpu$w.pb.gz" \
    2>"$WORK/cpu$w.err"
  rc=$?
  cat "$WORK/cpu$w.err"
  wait $rpid
  if test "$rc" = 8 || grep -q 'not supported' "$WORK/cpu$w.err"; then
    say "skipped: perf_event_open is refused here, or has no cpu-clock event: `cat "$WORK/cpu$w.err"`"
    stop_bg burn "$pid"
    exit 77
  fi
  check_eq "ocgc profile --cpu (window $w): exit status" 0 "$rc"
  check_eq "ocgc report (window $w): exit status" 0 "`cat "$WORK/rep$w.rc"`"
  profiles="$profiles $WORK/cpu$w.pb.gz"
  shares="$shares `sed -n 's/.*"gc_time_share": *\([0-9.]*\).*/\1/p' "$WORK/rep$w.json" | head -n 1`"
  go tool pprof -top -sample_index=samples $profiles >"$WORK/sum" 2>/dev/null
  total=`awk '/Total samples =/ { print $NF; exit }' "$WORK/sum"`
  total=${total:-0}
  say "window $w: $total samples so far"
done

go tool pprof -top -cum -sample_index=samples -nodecount=100000 $profiles \
  >"$WORK/top" 2>"$WORK/top.err" || hard_error "go tool pprof -top: `cat "$WORK/top.err"`"
sed -n 1,24p "$WORK/top"
cum() { awk -v f="$1" '$NF == f { print $4; exit }' "$WORK/top"; }
one=`cum Cpu_gc_burn.burn_one`; two=`cum Cpu_gc_burn.burn_two`; four=`cum Cpu_gc_burn.burn_four`
check_gt "Cpu_gc_burn.burn_one named, its samples" 0 "${one:-0}"
check_gt "Cpu_gc_burn.burn_two named, its samples" 0 "${two:-0}"
check_gt "Cpu_gc_burn.burn_four named, its samples" 0 "${four:-0}"
sum=$((${one:-0} + ${two:-0} + ${four:-0}))
say "burn_one:burn_two:burn_four = $one:$two:$four (expected 1:2:4) of $total samples in $w windows"
for f in "one 100" "two 200" "four 400"; do
  set -- $f
  eval "v=\${$1:-0}"
  got=$((v * 700 / (sum > 0 ? sum : 1)))
  check_true "burn_$1's share $got/700 within 25% of $2/700" \
    test "$got" -ge $(($2 * 3 / 4)) -a "$got" -le $(($2 * 5 / 4))
done

go tool pprof -tags -sample_index=samples $profiles >"$WORK/tags" 2>"$WORK/tags.err" ||
  hard_error "go tool pprof -tags: `cat "$WORK/tags.err"`"
cat "$WORK/tags"
# " gc_phase: Total 1234.0" then "  980.0 (79.4%): mutator" lines
tag() { awk -v k="$1:" -v v="$2" '$1 == k { on = 1; next } /^ *[a-z_]+: Total/ { on = 0 }
  on && $NF == v { sub(/\.0$/, "", $1); print $1; exit }' "$WORK/tags"; }
phase_total=`awk '$1 == "gc_phase:" { v = $3; sub(/\.0$/, "", v); print v; exit }' "$WORK/tags"`
mutator=`tag gc_phase mutator`
minor=`tag gc_phase minor`
check_gt "gc_phase=minor among the values" 0 "${minor:-0}"
check_eq "every sample has gc_phase" "$total" "$phase_total"
check_true "gc_cause among the labels" grep -q '^ *gc_cause: Total' "$WORK/tags"
go tool pprof -tags -sample_index=samples -tagfocus=gc_phase=minor $profiles \
  >"$WORK/tags.minor" 2>/dev/null
check_true "-tagfocus=gc_phase=minor: minor samples only, each with a cause" \
  awk -v m="$minor" '$1 == "gc_phase:" { p = $3 } $1 == "gc_cause:" { c = $3 }
    END { sub(/\.0$/, "", p); sub(/\.0$/, "", c); exit !(p == m && c == m) }' "$WORK/tags.minor"

gc=$((phase_total - ${mutator:-0}))
share=`awk -v g="$gc" -v t="$phase_total" 'BEGIN { printf "%.4f", t ? g / t : 0 }'`
ring=`echo $shares | awk '{ for (i = 1; i <= NF; i++) t += $i; if (NF) printf "%.4f", t / NF }'`
say "GC share: $share from the samples ($gc of $phase_total), ${ring:-?} from ocgc report's ring"
check_true "the samples' GC share within 0.6x..1.6x of the report's" \
  awk -v s="$share" -v r="${ring:-0}" 'BEGIN { exit !(r > 0 && s >= 0.6 * r && s <= 1.6 * r) }'

say "== folded and JSON forms"
"$OCGC" profile "$pid" --cpu --duration 1s --format folded --by-phase >"$WORK/f.txt" 2>/dev/null
check_eq "folded: exit status" 0 "$?"
check_true "folded: a minor line through burn_* (by phase)" \
  grep -q '^\[minor\];.*Cpu_gc_burn\.burn_[a-z]*;.*caml_empty_minor_heap' "$WORK/f.txt"
"$OCGC" profile "$pid" --cpu --duration 1s --format json -o "$WORK/p.json" 2>/dev/null
check_eq "json: exit status" 0 "$?"
check_true "json: a stack with gc_phase minor and its cause" \
  grep -q '"gc_phase": "minor", "gc_cause": "[a-z_]*"' "$WORK/p.json"

say "== SIGINT ends the window: what was gathered is written"
t0=`date +%s`
"$OCGC" profile "$pid" --cpu --duration 120s -o "$WORK/int.pb.gz" 2>"$WORK/int.err" &
ppid=$!
# once it samples (its perf_event descriptors open), a second more
n=0
while ! ls -l /proc/$ppid/fd 2>/dev/null | grep -q 'perf_event' && test "$n" -lt 600; do
  sleep 0.1; n=$((n + 1))
done
sleep 1
kill -INT "$ppid"
wait "$ppid"
check_eq "stopped by SIGINT: exit status" 0 "$?"
took=$((`date +%s` - t0))
cat "$WORK/int.err"
say "the 120 s window ended after $took s"
check_true "it ended long before 120 s (took $took s)" test "$took" -lt 60
check_true "it says the window was cut short" grep -q 'stopped: the window is' "$WORK/int.err"
go tool pprof -top -sample_index=samples "$WORK/int.pb.gz" >"$WORK/int.top" 2>&1
check_true "the profile written names the program's functions" \
  grep -q 'Cpu_gc_burn.churn' "$WORK/int.top"

stop_bg burn "$pid"
check_eq "the program exits normally" 0 "`cat "$WORK/burn.rc"`"

say "== a program that exits mid-window: the samples before are written"
start_bg burnx ./burn "$WORK/burnx.stop"
pid=$BGPID
wait_key burnx pid "$pid"
t0=`date +%s`
"$OCGC" profile "$pid" --cpu --duration 120s -o "$WORK/x.pb.gz" 2>"$WORK/x.err" &
ppid=$!
n=0
while ! ls -l /proc/$ppid/fd 2>/dev/null | grep -q 'perf_event' && test "$n" -lt 600; do
  sleep 0.1; n=$((n + 1))
done
sleep 1
stop_bg burnx "$pid"
wait "$ppid"
check_eq "the profile of a program that exited: exit status" 0 "$?"
took=$((`date +%s` - t0))
cat "$WORK/x.err"
check_true "it ended with the program, long before 120 s (took $took s)" test "$took" -lt 60
check_true "it says the program exited" grep -q "exec'd or exited after" "$WORK/x.err"
go tool pprof -top -sample_index=samples "$WORK/x.pb.gz" >"$WORK/x.top" 2>&1
check_true "the profile written names the program's functions" grep -q 'Cpu_gc_burn.churn' "$WORK/x.top"

say "== ocgc run --cpu: a whole run's CPU profile"
( sleep 3; : >"$WORK/runb.stop" ) &
spid=$!
(cd "$WORK" && "$OCGC" run --cpu "$WORK/run.pb.gz" --frequency 400 -o "$WORK/run.rep" -- \
  ./burn "$WORK/runb.stop" >"$WORK/run.out" 2>"$WORK/run.err")
check_eq "ocgc run --cpu: the program's exit status" 0 "$?"
wait $spid
cat "$WORK/run.err"
check_true "its figures on stderr" grep -q 'samples in .* in the collector by their stacks' "$WORK/run.err"
go tool pprof -top -cum -sample_index=samples -nodecount=100000 "$WORK/run.pb.gz" \
  >"$WORK/run.top" 2>"$WORK/run.top.err" || hard_error "go tool pprof -top: `cat "$WORK/run.top.err"`"
for f in burn_one burn_two burn_four; do
  check_true "the run's profile names Cpu_gc_burn.$f" \
    awk -v f="Cpu_gc_burn.$f" '$NF == f && $4 > 0 { ok = 1 } END { exit !ok }' "$WORK/run.top"
done
go tool pprof -tags -sample_index=samples "$WORK/run.pb.gz" >"$WORK/run.tags" 2>/dev/null
check_true "the run's profile has gc_phase minor" grep -q ': minor$' "$WORK/run.tags"

say "== a program of two threads: every thread sampled"
PACKAGES=threads.posix,unix compile_native thr ocgc_test.ml cpu_threads.ml
start_bg thr ./thr "$WORK/thr.stop"
pid=$BGPID
wait_key thr pid "$pid"
: >"$WORK/thr.stop.go"
"$OCGC" profile "$pid" --cpu --duration 2s --format json -o "$WORK/t.json" 2>"$WORK/t.err"
check_eq "the threads' profile: exit status" 0 "$?"
cat "$WORK/t.err"
stop_bg thr "$pid"
threads=`sed -n 's/.*"threads_seen": *\([0-9]*\).*/\1/p' "$WORK/t.json" | head -n 1`
check_ge "threads sampled (main, tick, two workers)" 3 "${threads:-0}"
check_true "worker_a's stacks in the profile" grep -q '"function": "Cpu_threads.worker_a"' "$WORK/t.json"
check_true "worker_b's stacks in the profile" grep -q '"function": "Cpu_threads.worker_b"' "$WORK/t.json"

say "== refused: uid 65534 profiles root's program"
why=`nobody_why`
if test -n "$why"; then
  say "SKIP part: the refusal as uid 65534: $why"
else
  start_bg burnr ./burn "$WORK/burnr.stop"
  pid=$BGPID
  wait_key burnr pid "$pid"
  nobody_ocgc "$WORK/pub"
  setpriv --reuid=65534 --regid=65534 --clear-groups env LD_LIBRARY_PATH="$WORK/pub" \
    "$WORK/pub/ocgc" profile "$pid" --cpu --duration 1s -o /dev/null >"$WORK/r.out" 2>"$WORK/r.err"
  check_eq "refused: exit status 8" 8 "$?"
  cat "$WORK/r.err"
  check_true "the hint names the setting" grep -q 'perf_event_paranoid' "$WORK/r.err"
  check_true "the hint names the capability" grep -q 'CAP_PERFMON' "$WORK/r.err"
  check_eq "one line: libocgc's" 1 "`wc -l <"$WORK/r.err"`"
  stop_bg burnr "$pid"
fi
finish
