#!/bin/sh
# memprof_control.sh - ocgc's allocation sampling switched from outside,
# at run time, through libocgc (ocgc_memprof_request, by tests/producer/
# mp_control): a program started without sampling gets it on for its
# second phase of known allocations only, and the table shows that window
# alone (the rate changes counted, each request answered); control words
# out of bounds, written raw as a hostile process would, are refused with
# one line on stderr and change nothing; libocgc refuses them itself.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
attach_init

MPCTL=$OCGC_BUILDDIR/tests/producer/mp_control
test -x "$MPCTL" || hard_error "$MPCTL is missing (run 'make check')"
N=500000 RATE=4096
W=$((RATE / 8))
compile_native mph ocgc_test.ml memprof_funs.ml memprof_phases.ml

# ctl TAG ARGS...: mp_control ARGS, its word in TAG.ctl
ctl() {
  _t=$1; shift
  "$MPCTL" "$@" >"$WORK/$_t.ctl" 2>&1
  echo $? >"$WORK/$_t.ctlrc"
}

# 1. Off at start; on for phase b; off again.
start_bg on ./mph $N "$WORK/on.s1" "$WORK/on.s2" "$WORK/on.stop"
pid=$BGPID
wait_key on phase.a "$pid"
ctl on1 "$pid" $RATE
check_eq "request $RATE: accepted" 0 "`cat "$WORK/on1.ctlrc"`"
: >"$WORK/on.s1"
wait_key on phase.b "$pid"
"$OCGC" dump --pid "$pid" >"$WORK/mid.dump" 2>"$WORK/mid.err" || hard_error "ocgc dump --pid failed: `cat "$WORK/mid.err"`"
check_dkey mid memprof.state on
check_dkey mid memprof.rate_bytes $RATE
check_dkey mid memprof.control_seen "`awk '{ print $2 }' "$WORK/on1.ctl"`"
check_dkey mid memprof.control_result 1
ctl on2 "$pid" 0
check_eq "request 0: accepted" 0 "`cat "$WORK/on2.ctlrc"`"
: >"$WORK/on.s2"
wait_key on phase.c "$pid"
stop_bg on "$pid"
check_eq "exit status" 0 "`cat "$WORK/on.rc"`"
check_eq "nothing on stderr" "" "`cat "$WORK/on.err"`"
ring_of on "$pid"
mp_dump on "$RING"
mp_functions on "$WORK/mph"
check_dkey on memprof.state off
check_dkey on memprof.rate_bytes 0
check_dkey on memprof.rate_changes 2
check_dkey on memprof.control_seen "`awk '{ print $2 }' "$WORK/on2.ctl"`"
check_eq "phase a (before the request): no sample" 0 "`mp_fn on camlMemprof_funs__alloc_a_ 2`"
check_eq "phase c (after the second): no sample" 0 "`mp_fn on camlMemprof_funs__alloc_c_ 2`"
mp_within "phase b, sampled" "`mp_fn on camlMemprof_funs__alloc_b_ 3`" $((2 * N * 11)) $W
check_eq "phase b: every sampled block found dead" "`mp_fn on camlMemprof_funs__alloc_b_ 2`" \
  "`mp_fn on camlMemprof_funs__alloc_b_ 6`"

# 2. On from the start; hostile words between the phases.
start_bg bad env OCGC_MEMPROF=$RATE ./mph $N "$WORK/bad.s1" "$WORK/bad.s2" "$WORK/bad.stop"
pid=$BGPID
wait_key bad phase.a "$pid"
ctl lib "$pid" 1
check_eq "libocgc refuses a rate of 1 byte" 1 "`cat "$WORK/lib.ctlrc"`"
ctl raw1 "$pid" --raw $(( (1 << 40) | 1 ))
: >"$WORK/bad.s1"
wait_key bad phase.b "$pid"
ctl raw2 "$pid" --raw $(( (2 << 40) | (1 << 39) ))
: >"$WORK/bad.s2"
wait_key bad phase.c "$pid"
stop_bg bad "$pid"
check_eq "hostile words: exit status" 0 "`cat "$WORK/bad.rc"`"
check_eq "hostile words: one line on stderr" 1 "`grep -c 'refused' "$WORK/bad.err"`"
check_eq "hostile words: nothing else on stderr" 1 "`wc -l <"$WORK/bad.err" | tr -d ' '`"
ring_of bad "$pid"
mp_dump bad "$RING"
mp_functions bad "$WORK/mph"
check_dkey bad memprof.state on
check_dkey bad memprof.rate_bytes $RATE
check_dkey bad memprof.rate_changes 1
check_dkey bad memprof.control_result 2
check_dkey bad memprof.control_refused 2
check_dkey bad memprof.control_seen $(( (2 << 40) | (1 << 39) ))
for f in a:1 b:2 c:4; do
  mp_within "alloc_${f%:*} sampled throughout" "`mp_fn bad camlMemprof_funs__alloc_${f%:*}_ 3`" \
    $((${f#*:} * N * 11)) $W
done
finish
