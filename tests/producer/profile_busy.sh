#!/bin/sh
# profile_busy.sh - `ocgc profile` of a program whose allocation profile
# is busy (its seq held odd, as a producer stopped mid-update or sampling
# very often leaves it; written here with tests/producer/mp_control):
# 1. held for 1.5 s, then released: the profile is written, exit 0 (the
#    time it took is printed).  Before, it exited 5 at once with EAGAIN;
# 2. held for good: it gives up after its bound (5 s; the time is
#    printed, asserted under 60 s), exit 5 and one line saying why.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

MPCTL=$OCGC_BUILDDIR/tests/producer/mp_control
test -x "$MPCTL" || hard_error "$MPCTL is missing (run 'make check')"
compile_native pl memprof_funs.ml profile_live.ml

# A rate so coarse that the waiting program takes no sample, which would
# publish (and end the hold) under the test.
mkdir -p "$WORK/d"
start_bg pl env OCGC_MEMPROF=1024m ./pl "$WORK/d" 1000 10
pid=$BGPID
wait_key pl ready "$pid"
"$OCGC" profile $pid --format json -o "$WORK/free.json" 2>"$WORK/free.err"
check_eq "not busy: exit 0" 0 $?

# hold: the seq odd; prints the word it had
hold() { "$MPCTL" $pid --raw-seq 1 | awk '$1 == "was" { print $2 }'; }
ms() { date +%s%N | cut -c1-13; }

# 1. Busy for 1.5 s.
was=`hold`
test -n "$was" || hard_error "mp_control --raw-seq failed"
t0=`ms`
"$OCGC" profile $pid --format json -o "$WORK/busy.json" 2>"$WORK/busy.err" &
pp=$!
BG_PIDS="$BG_PIDS $pp"
sleep 1.5
"$MPCTL" $pid --raw-seq "$was" >/dev/null || hard_error "mp_control could not put the seq back"
wait $pp
rc=$?
say "busy for 1.5 s: ocgc profile ended after $(( (`ms` - t0) )) ms, exit $rc"
check_eq "busy for 1.5 s, then released: exit 0" 0 $rc
check_eq "... nothing on stderr" "" "`cat "$WORK/busy.err"`"
check_true "... the profile written" test -s "$WORK/busy.json"

# 2. Busy for good.
was=`hold`
t0=`ms`
"$OCGC" profile $pid --format json -o "$WORK/stuck.json" 2>"$WORK/stuck.err" &
pp=$!
BG_PIDS="$BG_PIDS $pp"
n=0
while kill -0 $pp 2>/dev/null && test $n -lt 600; do n=$((n + 1)); sleep 0.1; done
kill -0 $pp 2>/dev/null && { kill $pp; hard_error "ocgc profile still ran after 60 s of a busy table"; }
wait $pp
rc=$?
took=$(( `ms` - t0 ))
"$MPCTL" $pid --raw-seq "$was" >/dev/null
say "busy for good: ocgc profile gave up after $took ms (its bound: 5 s), exit $rc"
check_eq "busy for good: exit 5" 5 $rc
check_true "... after retrying for a while (>= 4 s)" test $took -ge 4000
check_eq "... one line" 1 "`wc -l <"$WORK/stuck.err" | tr -d ' '`"
check_true "... saying the profile stayed busy" grep -q "stayed busy" "$WORK/stuck.err"
check_false "... and no file" test -e "$WORK/stuck.json"

: >"$WORK/d/go"
wait_key pl allocated "$pid"
: >"$WORK/d/end"
wait "$pid"
check_eq "the program: exit 0" 0 $?
finish
