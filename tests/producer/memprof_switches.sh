#!/bin/sh
# memprof_switches.sh - ocgc's allocation sampling costs nothing where
# nothing is allocated (issue 43): a thread making 100,000 one-byte writes
# to /dev/null (each a blocking section: the runtime lock let go and taken
# back) and two threads handing a turn to each other 20,000 times (a mutex
# and a condition: thread switches) run within 1% of the instructions with
# sampling on at the default rate (OCGC_MEMPROF=on, 512 KiB) as with it off.
# Counted by callgrind: the process's own instructions, whatever the
# machine's speed or load.  Each leave of a blocking section and each
# thread switch drew ocgc's trigger anew (a log()): 1.13x and 1.09x.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

command -v valgrind >/dev/null 2>&1 ||
  { say "SKIP: valgrind is not installed (its callgrind counts the instructions)"; exit 77; }
valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file=/dev/null true \
  >/dev/null 2>&1 || { say "SKIP: valgrind cannot run a program here"; exit 77; }

PACKAGES=unix,threads.posix compile_native sw ocgc_test.ml memprof_switches.ml

# count TAG MEMPROF WORKLOAD N: one run under callgrind; INS its instructions
count() {
  run_ok "$1" env OCGC_MEMPROF="$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    --log-file="$WORK/$1.vg" ./sw "$3" "$4"
  INS=`awk '/Collected :/ { print $NF }' "$WORK/$1.vg"`
  is_uint "$INS" || { tail -n 5 "$WORK/$1.vg"; hard_error "$1: callgrind counted nothing"; }
}

for w in writes:100000 pingpong:20000; do
  wl=${w%:*} n=${w#*:}
  count "$wl-off" off "$wl" "$n"
  off=$INS
  count "$wl-on" on "$wl" "$n"
  on=$INS
  # the run sampled: ocgc's sampler was on, at 512 KiB, all along
  ring_of "$wl-on"
  dump_ring "$RING" "$wl-on"
  check_dkey "$wl-on" memprof.state on
  check_dkey "$wl-on" memprof.rate_bytes 524288
  say "  $wl $n: instructions off $off, on $on:" \
    "`awk -v a="$on" -v b="$off" -v n="$n" 'BEGIN { printf "%.4fx, %+.1f a round", a / b, (a - b) / n }'`"
  check_true "$wl: sampling on within 1% of off ($on <= 1.01 x $off)" \
    test $((on * 100)) -le $((off * 101))
done
finish
