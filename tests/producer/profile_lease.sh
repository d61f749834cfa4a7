#!/bin/sh
# profile_lease.sh - `ocgc profile --rate` holds the rate as a lease
# (docs/profiling.md, "The rate as a lease"), on a program that allocates
# all the time (serve_prom_ticker.ml: a minor collection every few tens of
# ms, where the producer reads the leases) sampling at a base rate of 1 MiB:
# 1. two overlapping windows, the first at 8 KiB, the second at 64 KiB
#    starting during the first and ending after it (each ended by SIGINT):
#    during the overlap the finer rate (8 KiB) is in force at every look,
#    then the second's alone, and after both the base rate again.  Before, the second window's
#    request replaced the first's, the first put back the base under the
#    second, and the second put back the first's 8 KiB for good;
# 2. an `ocgc profile --rate` killed with SIGKILL mid-window: the rate is
#    the base again within the producer's lease (10 s) and its next minor
#    collection (the time taken is printed; the bound asserted is 40 s).
#    Before, it stayed changed for good;
# 3. four windows hold every slot: a fifth is refused with one clear line
#    (exit 9), and the rate it asked for is never in force;
# 4. each profile states the rate its samples were drawn at, and whether
#    it was a lease (JSON: rate_bytes, rate_leased, rate_changes; pprof: a
#    comment).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

BASE=1048576
compile_native tk ocgc_test.ml serve_prom_ticker.ml

# rate PID: the rate in force, from `ocgc dump --pid`
rate() { "$OCGC" dump --pid "$1" 2>/dev/null | awk '$1 == "memprof.rate_bytes" { print $2 }'; }
ms() { date +%s%N | cut -c1-13; }
# alive PID: the mask of lease slots the producer counts alive
alive() { "$OCGC" dump --pid "$1" 2>/dev/null | awk '$1 == "memprof.leases_alive" { print $2 }'; }
# wait_alive PID MASK SECONDS: until alive says MASK, at most SECONDS; 1 if never
wait_alive() {
  _t0=`ms`
  while test "`alive "$1"`" != "$2"; do
    test $(( `ms` - _t0 )) -le $(($3 * 1000)) || return 1
    sleep 0.1
  done
}
# wait_rate PID RATE SECONDS: until the rate is RATE, at most SECONDS by
# the clock; prints the seconds waited, or "never"
wait_rate() {
  _t0=`ms`
  while test "`rate "$1"`" != "$2"; do
    test $(( `ms` - _t0 )) -le $(($3 * 1000)) || { echo never; return; }
    sleep 0.1
  done
  echo $(( `ms` - _t0 )) | awk '{ printf "%.1f\n", $1 / 1000 }'
}

start_bg tk env OCGC_MEMPROF=$BASE ./tk "$WORK/tk.stop"
tk=$BGPID
wait_key tk pid "$tk"
check_eq "the base rate at start" $BASE "`rate $tk`"

# 1. Two overlapping windows, each ended by SIGINT (so that the overlap
# lasts as long as the looks take, however loaded the machine): the first
# at 8 KiB, the second at 64 KiB from during the first to after it.
"$OCGC" profile $tk --rate 8k --duration 1h --format json -o "$WORK/a.json" \
  >"$WORK/a.out" 2>"$WORK/a.err" &
pa=$!
BG_PIDS="$BG_PIDS $pa"
t=`wait_rate $tk 8192 60`
test "$t" != never || hard_error "the first window's rate was never in force: `cat "$WORK/a.err"`"
"$OCGC" profile $tk --rate 64k --duration 1h --format json -o "$WORK/b.json" \
  >"$WORK/b.out" 2>"$WORK/b.err" &
pb=$!
BG_PIDS="$BG_PIDS $pb"
# the second window's lease counted: both slots alive
wait_alive $tk 3 60 || say "note: the second window's lease was not seen alive in 60 s"
# during the overlap, each look for 3 s must find the finer rate in force
seen=
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
  seen="$seen `rate $tk`"
  sleep 0.2
done
check_eq "overlap: the finer rate (8192) at every look" "" \
  "`echo $seen | tr ' ' '\n' | grep -v '^8192$' | sort -u | tr '\n' ' '`"
kill -INT $pa
wait $pa
check_eq "first window (SIGINT): exit 0" 0 $?
check_true "first window: its profile written" test -s "$WORK/a.json"
kill -0 $pb 2>/dev/null || hard_error "the second window ended with the first: `cat "$WORK/b.err"`"
t=`wait_rate $tk 65536 30`
say "the second window's rate in force $t s after the first ended"
check_eq "after the first: the second window's rate (65536)" 65536 "`rate $tk`"
"$OCGC" dump --pid $tk >"$WORK/mid.dump" 2>&1
check_dkey mid memprof.rate_leased 1
check_dkey mid memprof.base_rate_bytes $BASE
kill -INT $pb
wait $pb
check_eq "second window (SIGINT): exit 0" 0 $?
t=`wait_rate $tk $BASE 30`
say "the base rate back $t s after the second window ended (bound 30 s)"
check_eq "after both: the rate before the first ($BASE)" $BASE "`rate $tk`"
"$OCGC" dump --pid $tk >"$WORK/after.dump" 2>&1
check_dkey after memprof.rate_leased 0
check_dkey after memprof.leases_alive 0

# 4. What each profile states.
jget() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(str(v).lower())' "$WORK/$1" "$2"; }
if command -v python3 >/dev/null 2>&1; then
  check_eq "first window's profile: rate 8192" 8192 "`jget a.json rate_bytes`"
  check_eq "first window's profile: a lease" true "`jget a.json rate_leased`"
  check_eq "first window's profile: the rate did not change in it" 0 "`jget a.json rate_changes`"
  check_eq "second window's profile: rate 65536 at its end" 65536 "`jget b.json rate_bytes`"
  check_gt "second window's profile: says the rate changed in it" 0 "`jget b.json rate_changes`"
else
  say "SKIP part: python3 is missing: the JSON profiles are not read"
fi

# 2. A window killed with SIGKILL.
"$OCGC" profile $tk --rate 4k --duration 1h -o "$WORK/k.pb.gz" >"$WORK/k.out" 2>"$WORK/k.err" &
pk=$!
BG_PIDS="$BG_PIDS $pk"
t=`wait_rate $tk 4096 60`
test "$t" != never || hard_error "the killed window's rate was never in force: `cat "$WORK/k.err"`"
kill -KILL $pk
wait $pk 2>/dev/null
t=`wait_rate $tk $BASE 60`
say "SIGKILLed window: the base rate back after $t s (lease 10 s + the next minor collection)"
check_true "SIGKILLed window: the base rate back within 40 s (took $t s)" \
  awk -v t="$t" 'BEGIN { exit !(t != "never" && t + 0 <= 40) }'
check_eq "... the rate now" $BASE "`rate $tk`"

# 3. Every slot held: a fifth window is refused, clearly.
holders=
for r in 16k 32k 128k 256k; do
  "$OCGC" profile $tk --rate $r --duration 1h -o "$WORK/h$r.pb.gz" 2>"$WORK/h$r.err" &
  holders="$holders $!"
  BG_PIDS="$BG_PIDS $!"
done
wait_alive $tk 15 60 || hard_error "four windows never held the four slots"
"$OCGC" profile $tk --rate 2k --duration 2s -o "$WORK/fifth.pb.gz" >"$WORK/fifth.out" 2>"$WORK/fifth.err"
check_eq "a fifth window: exit 9" 9 $?
check_eq "... one line" 1 "`wc -l <"$WORK/fifth.err" | tr -d ' '`"
check_true "... saying the leases are all held" grep -q "all 4 of its rate leases are held" "$WORK/fifth.err"
check_eq "... its rate never in force (the finest holder's is)" 16384 "`rate $tk`"
for p in $holders; do kill -INT $p; done
for p in $holders; do wait $p; done
# pprof's comment (a string of the gzipped message): the rate and whether a lease
check_true "the 16 KiB window's pprof says its samples' rate, a lease" \
  sh -c "gzip -dc '$WORK/h16k.pb.gz' | grep -a -q 'samples drawn at a rate of 16384 bytes (a lease'"
t=`wait_rate $tk $BASE 30`
check_eq "the four windows ended (SIGINT): the base rate again" $BASE "`rate $tk`"

stop_bg tk $tk
check_eq "the program: exit 0" 0 "`cat "$WORK/tk.rc"`"
finish
