#!/bin/sh
# cpu_sample.sh - CPU samples of a running OCaml program, taken from
# outside (libocgc's ocgc/cpu.h) and unwound without frame pointers from
# each sample's registers and stack copy (ocgc/unwind.h), by cpu_sample (a
# program on the public API only).  cpu_burn spends its CPU in burn_one,
# burn_two and burn_four in a 1:2:4 ratio, all three through the same leaf
# (spin): only stacks unwound through the OCaml frames find which.  Over
# 3 s at 400 Hz, and on until 1000 samples (a loaded machine gives the
# program less CPU; 1000 puts the 25% bound some 3 standard deviations
# away for burn_one):
# - 1000 samples come, none corrupt;
# - at least 90% of the stacks unwind to the outermost frame, through
#   OCaml frames;
# - the three functions are named, with shares within 25% of 1/7, 2/7,
#   4/7 of the samples that hold one of them (and such samples are at
#   least 90% of all);
# - the figures (samples/s, unwinding and naming time per sample) are
#   printed, not asserted.
# And a program that execs while it is sampled: the sampler stops there
# (execed 1), having given the samples before it, and none after (the
# shell's addresses are another program's: no OCaml frame is named
# from the exec on; the run ends long before the shell would).
# And a program of two threads that burn CPU, started once the sampler
# runs: both are found at a read (one thread at the open) and sampled, and
# each one's function is named in its stacks.
# And a refusal: uid 65534 sampling root's program is refused
# (perf_event_open's ptrace check), exit 3: OCGC_E_PERF_DENIED, and one
# line naming the setting and the capability.
# Skips (77) only where perf_event_open is refused (or has no cpu-clock
# event), saying why.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
SAMPLER="$OCGC_BUILDDIR/tests/attach/cpu_sample"
test -x "$SAMPLER" || hard_error "$SAMPLER is missing (run 'make check')"

compile_native burn ocgc_test.ml cpu_burn.ml
start_bg burn ./burn "$WORK/burn.stop"
pid=$BGPID
wait_key burn pid "$pid"

"$SAMPLER" "$pid" 3 400 1000 burn_one burn_two burn_four >"$WORK/s.out" 2>"$WORK/s.err"
rc=$?
cat "$WORK/s.out"
if test "$rc" = 3 || test "$rc" = 4; then
  say "skipped: perf_event_open is refused here, or has no cpu-clock event: `cat "$WORK/s.err"`"
  stop_bg burn "$pid"
  exit 77
fi
test "$rc" = 0 || { cat "$WORK/s.err"; hard_error "cpu_sample failed (exit $rc)"; }
stop_bg burn "$pid"
check_eq "the program exits normally" 0 "`cat "$WORK/burn.rc"`"

k() { getkey "$WORK/s.out" "$1"; }
n=`k samples`
check_ge "samples" 1000 "$n"
check_eq "no corrupt record" 0 "`k corrupt`"
check_eq "one thread" 1 "`k threads_seen`"
# The C library's CFI (main's callers) is read through
# /proc/PID/map_files, which only root may open.
if test "`id -u`" = 0; then
  check_ge "stacks unwound to the outermost frame (90%)" $((n * 9 / 10)) "`k end.outermost`"
else
  say "SKIP part: stacks to the outermost frame: the C library's file is read through /proc/PID/map_files, root only"
fi
check_eq "no stack loops" 0 "`k end.loop`"
check_gt "OCaml frames named" "$n" "`k ocaml_frames`"
one=`k fn.burn_one`; two=`k fn.burn_two`; four=`k fn.burn_four`
sum=$((one + two + four))
check_ge "samples in one of the three functions (90%)" $((n * 9 / 10)) "$sum"
say "burn_one:burn_two:burn_four = $one:$two:$four (expected 1:2:4)"
# share x 7 x 100 / sum within 25% of 100, 200, 400
for f in "one 100" "two 200" "four 400"; do
  set -- $f
  eval "v=\$$1"
  got=$((v * 700 / sum))
  check_true "burn_$1's share $got/700 within 25% of $2/700" \
    test "$got" -ge $(($2 * 3 / 4)) -a "$got" -le $(($2 * 5 / 4))
done
say "figures: `k samples_per_s` samples/s, `k read_us_per_sample` us to read," \
  "`k unwind_us_per_sample` us to unwind, `k name_us_per_sample` us to name a sample," \
  "`k frames_per_sample` frames a stack"

say "== a program of two threads"
PACKAGES=threads.posix,unix compile_native thr ocgc_test.ml cpu_threads.ml
start_bg thr ./thr "$WORK/thr.stop"
pid=$BGPID
wait_key thr pid "$pid"
( "$SAMPLER" "$pid" 2 100 50 worker_a worker_b >"$WORK/t.out" 2>"$WORK/t.err"
  echo $? >"$WORK/t.rc" ) &
spid=$!
wait_key t threads_at_open
: >"$WORK/thr.stop.go"
wait $spid
check_eq "cpu_sample of the threads: exit status" 0 "`cat "$WORK/t.rc"`"
check_eq "one thread at the open" 1 "`getkey "$WORK/t.out" threads_at_open`"
stop_bg thr "$pid"
cat "$WORK/t.out"
# main, the tick thread and the two workers
check_ge "threads sampled" 3 "`getkey "$WORK/t.out" threads_seen`"
check_gt "worker_a's thread sampled and unwound" 0 "`getkey "$WORK/t.out" fn.worker_a`"
check_gt "worker_b's thread sampled and unwound" 0 "`getkey "$WORK/t.out" fn.worker_b`"

say "== refused: uid 65534 samples root's program"
why=`nobody_why`
if test -n "$why"; then
  say "SKIP part: the refusal as uid 65534: $why"
else
  start_bg burnr ./burn "$WORK/burnr.stop"
  pid=$BGPID
  wait_key burnr pid "$pid"
  nobody_ocgc "$WORK/pub"
  bin="$OCGC_BUILDDIR/tests/attach/.libs/cpu_sample"
  test -x "$bin" || bin="$SAMPLER"
  cp "$bin" "$WORK/pub/cpu_sample" && chmod a+rx "$WORK/pub/cpu_sample" ||
    hard_error "cannot copy cpu_sample"
  setpriv --reuid=65534 --regid=65534 --clear-groups env LD_LIBRARY_PATH="$WORK/pub" \
    "$WORK/pub/cpu_sample" "$pid" 1 100 0 >"$WORK/r.out" 2>"$WORK/r.err"
  check_eq "refused: exit status 3 (OCGC_E_PERF_DENIED)" 3 "$?"
  cat "$WORK/r.err"
  check_true "the hint names the setting" grep -q 'perf_event_paranoid' "$WORK/r.err"
  check_true "the hint names the capability" grep -q 'CAP_PERFMON' "$WORK/r.err"
  stop_bg burnr "$pid"
fi

say "== a program that execs while it is sampled"
compile_native burnx ocgc_test.ml cpu_burn.ml
start_bg burnx ./burnx "$WORK/burnx.stop" exec
pid=$BGPID
wait_key burnx pid "$pid"
( sleep 1; : >"$WORK/burnx.stop" ) &
"$SAMPLER" "$pid" 30 100 0 burn_one >"$WORK/x.out" 2>"$WORK/x.err"
check_eq "cpu_sample across an exec: exit status" 0 "$?"
cat "$WORK/x.out"
check_eq "the exec seen" 1 "`getkey "$WORK/x.out" execed`"
check_gt "samples before the exec" 0 "`getkey "$WORK/x.out" samples`"
check_true "it stopped at the exec, not after 30 s" \
  awk -v s="`getkey "$WORK/x.out" seconds`" 'BEGIN { exit !(s < 20) }'
wait "$pid"
finish
