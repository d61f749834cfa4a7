#!/bin/sh
# memprof_inuse.sh - in use as of the last completed major marking (Go's
# "as of the last GC" rule), against sizes the programs measure themselves:
# 1. a bounded cache (tests/ocaml/memprof_cache.ml: 20,000 entries of 31
#    words, replaced continuously, so most of what its site allocated is
#    garbage awaiting a marking) sampled at 16 KiB from its start: the in
#    use of the entries' allocation site lies within 0.7x..1.3x of the
#    words the program measures (Obj.reachable_words), at three moments
#    the program chooses (each after 4 more major cycles: its progress,
#    not the machine's speed), never allocated - freed, which counted the
#    garbage (1.7x to 3.1x);
# 2. 200 MiB retained while 1.6 GB of short-lived blocks are allocated,
#    at a 4 KiB rate (51,000 samples retained: past the old limit of
#    32,768 followed blocks): total in use within 0.7x..1.3x of what the
#    program keeps, never a sample past the limit counted in use forever.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
attach_init

# 1. The cache.
ENTRIES=20000 CYCLES=4
compile_native mpc ocgc_test.ml memprof_funs.ml memprof_cache.ml
start_bg cache env OCGC_MEMPROF=16k ./mpc $ENTRIES $CYCLES 3 "$WORK/step"
pid=$BGPID
for m in 1 2 3; do
  wait_key cache moment.$m "$pid" 300
  "$OCGC" dump --stacks --pid "$pid" >"$WORK/m$m.dump" 2>"$WORK/m$m.err" ||
    hard_error "ocgc dump --pid failed: `cat "$WORK/m$m.err"`"
  echo "exe_base `outkey cache exe_base`" >"$WORK/m$m.out"
  mp_functions m$m "$WORK/mpc"
  check_dkey m$m memprof.live_known 1
  measured=`outkey cache moment.$m`
  check_eq "moment $m: the cache's words, as the program measures them" $((ENTRIES * 31)) "$measured"
  inuse=`mp_fn m$m camlMemprof_funs__cache_entry_ 9`
  say "moment $m: cache_entry in use $inuse words (samples `mp_fn m$m camlMemprof_funs__cache_entry_ 8`), allocated - freed $((`mp_fn m$m camlMemprof_funs__cache_entry_ 3` - `mp_fn m$m camlMemprof_funs__cache_entry_ 7`)), measured $measured, live as of marking `dkey m$m memprof.live_cycle`"
  mp_ratio "moment $m: cache_entry's in use against the cache's size" "$inuse" "$measured" 0.7 1.3
  : >"$WORK/step.$m"
done
wait "$pid"
check_eq "the cache program's exit status" 0 $?

# 2. 200 MiB retained at 4 KiB: K lists cells and arrays of 104 words.
K=$((200 * 1024 * 1024 / 832)) N=20000000
compile_native mpk ocgc_test.ml memprof_funs.ml memprof_retain.ml
run_ok k env OCGC_MEMPROF=4k ./mpk $K $N
ring_of k
mp_dump k "$RING"
check_dkey k memprof.live_known 1
kept=`outkey k kept_words`
inuse=`dkey k memprof.inuse_words`
say "retained: in use $inuse words, kept $kept words (`awk -v k="$kept" 'BEGIN { printf "%.1f", k * 8 / 1048576 }'` MiB), samples `dkey k memprof.samples`, followed `dkey k memprof.followed`, unfollowed `dkey k memprof.unfollowed`"
mp_ratio "200 MiB retained: total in use against what the program keeps" "$inuse" "$kept" 0.7 1.3
mp_ratio "the program keeps 200 MiB" "$kept" $((200 * 1024 * 1024 / 8)) 0.99 1.01
finish
