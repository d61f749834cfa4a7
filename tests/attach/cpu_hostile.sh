#!/bin/sh
# cpu_hostile.sh - the CPU sampler and unwinder (ocgc/cpu.h, ocgc/unwind.h)
# against targets that do what a sampled process may do to them (issue
# 44's "hostile input"), each a C program (cpu_hostile_target.c) sampled
# by cpu_sample (the public API only).  Whatever the target does, the
# sampling ends on its own, with a clear error or a partial profile: no
# crash, no sanitizer report, no hang (every run under `timeout`, its
# seconds printed and asserted far looser than they take), memory bounded
# (cpu_sample's peak resident size printed and asserted):
# - a target that exits mid-window: the samples before, "gone", at once;
# - one that unmaps a library it dlopen'd, mid-window, while samples of
#   it wait in the rings (read every 500 ms): they are unwound and given;
# - one whose stack pointer and frame pointer point at crafted memory
#   (return addresses into its own code, into that memory, at nothing) or
#   at an unmapped page: every stack ends marked (lost, loop, depth);
# - one whose executable is replaced on disk (renamed over, as an upgrade
#   does) before the sampler's open and again mid-window: the names are
#   those of the mapped file (burn_main), never the new file's;
# - the thread bound: 6 threads sampled at most 3, the others counted
#   (threads_over); threads that exit mid-window: their samples given, and
#   their events closed (threads_end);
# - a library dlopen'd after the open, burnt in: the unwinder reads it
#   when a stack meets it, and its stacks unwind through it to its caller
#   (burn_lib; its own frames have no names: the symbolizer's maps are
#   those of its open);
# - as uid 65534 sampling its own threads, more than the memory a user may
#   lock for rings allows (kernel.perf_event_mlock_kb, ulimit -l 64): a
#   partial profile counting the threads not sampled and naming the
#   setting, not a refusal.
# Skips (77) only where perf_event_open is refused or has no cpu-clock.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
SAMPLER="$OCGC_BUILDDIR/tests/attach/cpu_sample"
TARGET="$OCGC_BUILDDIR/tests/attach/cpu_hostile_target"
test -x "$SAMPLER" || hard_error "$SAMPLER is missing (run 'make check')"
test -x "$TARGET" || hard_error "$TARGET is missing (run 'make check')"
# A run's bound: far above what one takes on a loaded machine (2 to 5 s),
# far below a hang.
BOUND=120
# ASan's shadow memory counts in the resident size: a bound of 400 MiB
# still catches a sampler growing with what a target throws at it.
RSS_KB=409600

# sample TAG PID SECONDS HZ MIN [FUNCTION...]: cpu_sample under timeout,
# its output in TAG.out, exit status in TAG.rc
sample() {
  _t=$1; shift
  timeout -s KILL $BOUND "$SAMPLER" "$@" >"$WORK/$_t.out" 2>"$WORK/$_t.err"
  echo $? >"$WORK/$_t.rc"
  cat "$WORK/$_t.out"
  test -s "$WORK/$_t.err" && sed 's/^/  stderr: /' "$WORK/$_t.err"
  return 0
}
k() { getkey "$WORK/$1.out" "$2"; }
# check_run TAG: cpu_sample ended by itself, in bounded time and memory
check_run() {
  check_eq "$1: cpu_sample's exit status (137: killed at $BOUND s)" 0 "`cat "$WORK/$1.rc"`"
  check_true "$1: done in `k $1 seconds` s, under $BOUND" \
    awk -v s="`k $1 seconds`" -v b=$BOUND 'BEGIN { exit !(s != "" && s < b) }'
  check_true "$1: peak resident size `k $1 maxrss_kb` KiB, under $RSS_KB" \
    awk -v m="`k $1 maxrss_kb`" -v b=$RSS_KB 'BEGIN { exit !(m != "" && m < b) }'
  check_eq "$1: no corrupt record" 0 "`k $1 corrupt`"
}

say "== a target that exits mid-window"
start_bg ex "$TARGET" exit "$WORK/ex.stop"
pid=$BGPID
wait_key ex ready "$pid"
( sleep 1; : >"$WORK/ex.stop" ) &
sample s_ex "$pid" 30 200 0 burn_main
rc=`cat "$WORK/s_ex.rc"`
if test "$rc" = 3 || test "$rc" = 4; then
  say "skipped: perf_event_open is refused here, or has no cpu-clock event: `cat "$WORK/s_ex.err"`"
  exit 77
fi
check_run s_ex
check_eq "exit: the end seen (gone)" 1 "`k s_ex gone`"
check_gt "exit: samples before it" 0 "`k s_ex samples`"
check_gt "exit: burn_main named" 0 "`k s_ex fn.burn_main`"
wait "$pid"

say "== a target that unmaps a library mid-window"
start_bg um "$TARGET" unmap "$WORK/um.stop"
pid=$BGPID
wait_key um ready "$pid"
( sleep 1; : >"$WORK/um.stop.unmap"; sleep 2; : >"$WORK/um.stop" ) &
CPU_SAMPLE_READ_MS=500 CPU_SAMPLE_RING_PAGES=1024 sample s_um "$pid" 30 100 0 burn_lib burn_after
wait "$pid"
check_run s_um
check_eq "unmap: the library was unmapped" 1 "`outkey um unmapped`"
check_gt "unmap: samples in the library's caller" 0 "`k s_um fn.burn_lib`"
check_gt "unmap: samples after it" 0 "`k s_um fn.burn_after`"

say "== stack and frame pointers at garbage"
start_bg gb "$TARGET" garbage "$WORK/gb.stop"
pid=$BGPID
wait_key gb ready "$pid"
sample s_gb "$pid" 3 400 300 spin_garbage
stop_bg gb "$pid"
check_eq "garbage: the target exits normally" 0 "`cat "$WORK/gb.rc"`"
check_run s_gb
n=`k s_gb samples`
check_ge "garbage: samples" 300 "$n"
# (the samples outside spin_garbage, where it fills the memory, have a
# real stack)
g=$((`k s_gb leaf.outermost` + `k s_gb leaf.lost` + `k s_gb leaf.loop` + `k s_gb leaf.depth`))
check_ge "garbage: most samples in spin_garbage (half)" $((n / 2)) "$g"
check_eq "garbage: no stack from spin_garbage ends 'outermost'" 0 "`k s_gb leaf.outermost`"
say "garbage: `k s_gb leaf.lost` lost, `k s_gb leaf.loop` loop, `k s_gb leaf.depth` depth" \
  "of $g; `k s_gb unwind_us_per_sample` us to unwind a sample, `k s_gb frames_per_sample` frames"

say "== its executable replaced on disk"
cp "$TARGET" "$WORK/victim" && chmod 755 "$WORK/victim" || hard_error "cannot copy the target"
start_bg vi "$WORK/victim" burn "$WORK/vi.stop"
pid=$BGPID
wait_key vi ready "$pid"
# renamed over (a running file cannot be written: ETXTBSY), as an upgrade
# does: first by garbage, then mid-window by another executable
head -c 65536 /dev/urandom >"$WORK/victim.new" && mv -f "$WORK/victim.new" "$WORK/victim"
( sleep 1; cp "$SAMPLER" "$WORK/victim.new" 2>/dev/null || cp /bin/sh "$WORK/victim.new"
  mv -f "$WORK/victim.new" "$WORK/victim" ) &
sample s_vi "$pid" 3 200 200 burn_main main
stop_bg vi "$pid"
check_run s_vi
n=`k s_vi samples`
check_ge "replaced: samples" 200 "$n"
check_ge "replaced: burn_main named in 90% of the samples (the mapped file's name)" \
  $((n * 9 / 10)) "`k s_vi fn.burn_main`"

say "== a library dlopen'd mid-window"
start_bg lt "$TARGET" late "$WORK/lt.stop"
pid=$BGPID
wait_key lt ready "$pid"
( n=0; while test ! -f "$WORK/lt.stop.go" && test $n -lt 1200; do sleep 0.05; n=$((n + 1)); done
  sleep 2; : >"$WORK/lt.stop" ) &
CPU_SAMPLE_GO="$WORK/lt.stop.go" sample s_lt "$pid" 30 100 0 burn_main burn_lib
wait "$pid"
check_run s_lt
check_eq "late: the library was loaded" 1 "`outkey lt loaded`"
check_eq "late: the end seen (gone)" 1 "`k s_lt gone`"
n=`k s_lt samples`
check_gt "late: samples" 0 "$n"
# 2 s of zlib's crc32 after some of burn_main: its caller, burn_lib, is
# named only where the stack was unwound through zlib's frame
check_ge "late: stacks unwound through the library to burn_lib (a quarter)" $((n / 4)) \
  "`k s_lt fn.burn_lib`"
say "late: `k s_lt fn.burn_main` in burn_main, `k s_lt fn.burn_lib` named burn_lib," \
  "`k s_lt end.lost` stacks lost of `k s_lt samples`"

say "== the thread bound"
start_bg tb "$TARGET" threads 6 "$WORK/tb.stop"
pid=$BGPID
wait_key tb ready "$pid"
CPU_SAMPLE_MAX_THREADS=3 sample s_tb "$pid" 2 100 0 worker_fn burn_main
: >"$WORK/tb.stop.t"
stop_bg tb "$pid"
check_run s_tb
check_eq "bound: 3 threads sampled" 3 "`k s_tb threads_seen`"
check_eq "bound: the 4 past it counted" 4 "`k s_tb threads_over`"
check_gt "bound: samples" 0 "`k s_tb samples`"
check_true "bound: the partial profile said (max_threads)" grep -q 'past max_threads' "$WORK/s_tb.err"

say "== threads that exit mid-window"
start_bg th "$TARGET" threads 4 "$WORK/th.stop"
pid=$BGPID
wait_key th ready "$pid"
( sleep 1.5; : >"$WORK/th.stop.t" ) &
sample s_th "$pid" 3 100 0 worker_fn burn_main
stop_bg th "$pid"
check_run s_th
check_eq "exiting threads: all 5 sampled" 5 "`k s_th threads_seen`"
check_gt "exiting threads: the workers' samples given" 0 "`k s_th fn.worker_fn`"
check_gt "exiting threads: main's samples given" 0 "`k s_th fn.burn_main`"
check_eq "exiting threads: only main sampled at the end (the workers' events closed)" \
  1 "`k s_th threads_end`"

say "== as uid 65534, its own process: rings past kernel.perf_event_mlock_kb"
why=`nobody_why`
mlock=`cat /proc/sys/kernel/perf_event_mlock_kb 2>/dev/null`
paranoid=`cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null`
ncpu=`getconf _NPROCESSORS_ONLN 2>/dev/null`
page=`getconf PAGESIZE 2>/dev/null`
test -n "$why" || test -n "$mlock" -a -n "$paranoid" -a -n "$ncpu" -a -n "$page" ||
  why="the perf settings or the CPU count cannot be read"
test -n "$why" || test "$paranoid" -le 2 || why="kernel.perf_event_paranoid is $paranoid (> 2): users may not sample"
test -n "$why" || test "$paranoid" -ge 0 || why="kernel.perf_event_paranoid is $paranoid: no limit on the memory rings lock"
if test -z "$why"; then
  # A user may lock mlock_kb a CPU for rings, and beyond that its
  # RLIMIT_MEMLOCK (64 KiB here: ulimit -l); a ring is 64 + 1 pages: more
  # threads than that holds, and some to spare.
  nthreads=$(( (mlock * ncpu / (page / 1024) + 64 / (page / 1024)) / 65 + 3 ))
  test "$nthreads" -le 250 || why="$nthreads threads would be needed to pass kernel.perf_event_mlock_kb ($mlock KiB a CPU, $ncpu CPUs)"
fi
if test -n "$why"; then
  say "SKIP part: sampling as uid 65534 past the locked-memory limit: $why"
else
  nobody_ocgc "$WORK/pub"
  bin="$OCGC_BUILDDIR/tests/attach/.libs/cpu_sample"
  test -x "$bin" || bin="$SAMPLER"
  cp "$bin" "$WORK/pub/cpu_sample" && cp "$TARGET" "$WORK/pub/cpu_hostile_target" &&
    chmod a+rx "$WORK/pub/cpu_sample" "$WORK/pub/cpu_hostile_target" ||
    hard_error "cannot copy cpu_sample"
  say "$nthreads sleeping threads and main, as uid 65534 (mlock_kb $mlock, $ncpu CPUs, ulimit -l 64)"
  start_bg nb sh -c 'ulimit -l 64 && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"' \
    sh "$WORK/pub/cpu_hostile_target" sleepers "$nthreads" "$WORK/nb.stop"
  pid=$BGPID
  wait_key nb ready "$pid"
  ( ulimit -l 64 && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
      env LD_LIBRARY_PATH="$WORK/pub" timeout -s KILL $BOUND \
      "$WORK/pub/cpu_sample" "$pid" 2 100 0 burn_main ) >"$WORK/s_nb.out" 2>"$WORK/s_nb.err"
  echo $? >"$WORK/s_nb.rc"
  cat "$WORK/s_nb.out"; sed 's/^/  stderr: /' "$WORK/s_nb.err"
  : >"$WORK/nb.stop.t"
  stop_bg nb "$pid"
  check_run s_nb
  seen=`k s_nb threads_seen`; un=`k s_nb threads_unmapped`
  check_eq "65534: every thread sampled or counted unsampled" $((nthreads + 1)) $((seen + un))
  check_gt "65534: threads past the limit counted" 0 "$un"
  check_gt "65534: main's samples given" 0 "`k s_nb fn.burn_main`"
  check_true "65534: the line names the setting" grep -q 'perf_event_mlock_kb' "$WORK/s_nb.err"
  say "65534: $seen threads sampled, $un not (their rings over the limit)"
fi

finish
