#!/bin/sh
# phases_clock.sh - what the producer says of its own timing, and that it
# is so.  OCGC_PHASES picks the sub-phase spans written inside collections:
# 0 none, 1 (the default) those that last longer than their two events
# cost (not minor_remembered_set, minor_finalized), 2 all; the ring's
# extension block says which (`ocgc dump`: producer.phases), and at every
# level the collections themselves, their counts and the totals still equal
# Gc.quick_stat.  OCGC_TSC=0 or a machine whose kernel does not time
# CLOCK_MONOTONIC with an invariant TSC times every event with the clock
# (producer.clock monotonic); otherwise inner events use the TSC
# (producer.clock tsc).  Native and bytecode.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native workload ocgc_test.ml workload.ml
compile_byte workload.byte ocgc_test.ml workload.ml

# The sub-phases of each level (5.2 names).
MEASURED="major_sweep major_mark_roots major_mark minor_local_roots"
SHORT="minor_remembered_set minor_finalized"

# run_level TAG LEVEL PROGRAM...: run with OCGC_PHASES=LEVEL ("unset": not
# in the environment) and dump its ring; the collections equal quick_stat.
run_level() {
  _tag=$1 _lv=$2; shift 2
  if test "$_lv" = unset; then run_ok "$_tag" env -u OCGC_PHASES "$@"
  else run_ok "$_tag" env OCGC_PHASES="$_lv" "$@"; fi
  ring_of "$_tag"
  dump_ring "$RING" "$_tag"
  check_no_loss "$_tag"
  check_stat_agrees "$_tag"
  check_totals_agree "$_tag"
  check_spans_paired "$_tag"
}

# spans TAG PHASE: spans of PHASE in TAG's dump (0 when absent)
spans() { dkey "$1" "phase.$2.spans" 0; }

for code in native bytecode; do
  if test $code = native; then prog=./workload; else prog="$OCGC_STAGE/ocamlrun_ocgc ./workload.byte"; fi
  say "== $code: the default (OCGC_PHASES unset) writes the measured phases"
  run_level ${code}_dflt unset $prog
  check_dkey ${code}_dflt producer.phases measured
  minors=`outkey ${code}_dflt gc.minor_collections`
  check_gt "$code: minor collections" 0 "$minors"
  check_eq "$code default: minor_local_roots spans = Gc minor collections" "$minors" \
    "`spans ${code}_dflt minor_local_roots`"
  for ph in major_sweep major_mark_roots major_mark; do
    check_gt "$code default: $ph spans" 0 "`spans ${code}_dflt $ph`"
  done
  for ph in $SHORT; do
    check_eq "$code default: $ph spans" 0 "`spans ${code}_dflt $ph`"
  done

  say "== $code: OCGC_PHASES=2 writes every phase"
  run_level ${code}_all 2 $prog
  check_dkey ${code}_all producer.phases all
  for ph in $SHORT minor_local_roots; do
    check_eq "$code all: $ph spans = Gc minor collections" \
      "`outkey ${code}_all gc.minor_collections`" "`spans ${code}_all $ph`"
  done

  say "== $code: OCGC_PHASES=0 writes no sub-phase"
  run_level ${code}_none 0 $prog
  check_dkey ${code}_none producer.phases none
  for ph in $MEASURED $SHORT; do
    check_eq "$code none: $ph spans" 0 "`spans ${code}_none $ph`"
  done
  # The collections and the Gc.* calls are still there.
  check_eq "$code none: minor spans = Gc minor collections" \
    "`outkey ${code}_none gc.minor_collections`" "`spans ${code}_none minor`"
  check_gt "$code none: major_slice spans" 0 "`spans ${code}_none major_slice`"
  check_gt "$code none: explicit_gc_full_major spans" 0 "`spans ${code}_none explicit_gc_full_major`"
done

say "== a value OCGC_PHASES does not know: said once on stderr, the default kept"
run bad env OCGC_PHASES=3 ./workload
check_eq "OCGC_PHASES=3: exit status" 0 "`cat "$WORK/bad.rc"`"
check_eq "OCGC_PHASES=3: stderr lines" 1 "`stderr_lines bad`"
printf 'ocgc: OCGC_PHASES must be 0, 1 or 2: using 1\n' >"$WORK/bad.expected"
check_true "OCGC_PHASES=3: stderr is that line, byte for byte" cmp -s "$WORK/bad.expected" "$WORK/bad.err"
ring_of bad
dump_ring "$RING" bad
check_dkey bad producer.phases measured

say "== the clock"
# What the producer must have chosen on this machine: the TSC only when the
# CPU says it is invariant (cpuinfo: constant_tsc and nonstop_tsc, CPUID
# 0x80000007 EDX bit 8) and the kernel's clocksource, when /sys shows it,
# is one the TSC drives.
expect=monotonic
if test "`uname -m`" = x86_64 &&
    grep -q '^flags.* constant_tsc' /proc/cpuinfo && grep -q '^flags.* nonstop_tsc' /proc/cpuinfo; then
  cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
  if ! test -r $cs; then expect=tsc
  else
    case `cat $cs` in tsc | kvm-clock | hyperv_clocksource_tsc_page) expect=tsc ;; esac
  fi
fi
say "  this machine: expect producer.clock $expect"
check_dkey native_dflt producer.clock $expect
check_dkey bytecode_dflt producer.clock $expect
run_level notsc unset env OCGC_TSC=0 ./workload
check_dkey notsc producer.clock monotonic
check_dkey notsc producer.phases measured
run_level tsc1 unset env OCGC_TSC=1 ./workload
check_dkey tsc1 producer.clock $expect

say "== timestamps against the program's own clock"
# Each Gc.minor call of clock_check is one explicit_gc_minor span, from the
# call to its pending actions (4.x runs them after every Gc.minor; none of
# the program's is due).  Its duration in the ring can never exceed the
# wall-clock time the program measured around it (a TSC rate too high
# makes every one exceed it), and it falls short of it only by the call's
# entry and exit (a rate too low makes every one fall short).  The gaps
# between calls must agree too.  Slack: gettimeofday has a microsecond,
# the doubles printed keep 0.5 us.  A preemption between the program's
# clock read and the span's begin lengthens the measured time alone: on a
# loaded machine one or two of the eight calls may fall short, or put a
# gap apart, so two of each are forgiven, never an excess.
compile_native clock_check ocgc_test.ml clock_check.ml
for mode in default notsc; do
  if test $mode = default; then run_ok ck_$mode ./clock_check 8; want=$expect
  else run_ok ck_$mode env OCGC_TSC=0 ./clock_check 8; want=monotonic; fi
  ring_of ck_$mode
  dump_ring "$RING" ck_$mode
  check_dkey ck_$mode producer.clock $want
  "$OCGC" dump --events "$RING" >"$WORK/ck_$mode.events" 2>&1 ||
    hard_error "ocgc dump --events $RING failed"
  bad=`awk '
    FNR == NR { if ($1 == "call") { n++; t0[n] = $3; t1[n] = $4 } next }
    $4 == "explicit_gc_minor" && $3 == "begin" { b[++nb] = $1 }
    $4 == "explicit_gc_minor" && $3 == "end" { e[++ne] = $1 }
    END {
      if (n < 8 || nb != n || ne != n) { printf "calls %d, begins %d, ends %d ", n, nb, ne; exit }
      for (i = 1; i <= n; i++) {
        dr = e[i] - b[i]; dw = t1[i] - t0[i]
        if (dr > dw + 3000) printf "call %d: %d ns in the ring, more than the %d ns measured; ", i, dr, dw
        if (dr < dw - 30000 - dw / 20) { short++; why = why sprintf("call %d: %d ns in the ring, %d ns measured; ", i, dr, dw) }
        if (i > 1) {
          gr = b[i] - b[i - 1]; gw = t0[i] - t0[i - 1]; d = gr - gw; if (d < 0) d = -d
          if (d > 20000 + gw / 50) { apart++; why = why sprintf("gap %d: %d ns in the ring, %d ns measured; ", i, gr, gw) }
        }
      }
      if (short > 2 || apart > 2) printf "%s", why
      else if (why != "") print "forgiven: " why > "/dev/stderr"
    }' "$WORK/ck_$mode.out" "$WORK/ck_$mode.events" 2>"$WORK/ck_$mode.forgiven"`
  test -s "$WORK/ck_$mode.forgiven" && say "  `cat "$WORK/ck_$mode.forgiven"`"
  check_eq "$mode clock: the calls' durations and gaps agree with the program's" none "${bad:-none}"
done
finish
