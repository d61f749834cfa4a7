#!/bin/sh
# attach_live.sh - attach by pid to a running native program, detach and
# attach again, with `ocgc dump --pid` and with live_reader (a reader built
# on the public API only).  Mid-run, both attach while the program collects;
# once the program has printed its Gc.quick_stat (after Gc.minor) and waits,
# the extension block's totals read by pid must equal that quick_stat
# exactly, and a ring large enough to lose nothing must hold events that
# agree with it too.  Attaching leaves no trace: the figures are the same
# at each attach, and the program exits normally.  After its exit the pid
# finds nothing, the folder holds a stale ring, and the file still reads.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

compile_native target ocgc_test.ml attach_target.ml
# e=22: 4 Mi words (32 MiB), so the ring keeps every event of the run
start_bg live env OCAMLRUNPARAM=e=22 ./target 3 "$WORK/live.stop"
pid=$BGPID
wait_key live pid "$pid"
check_eq "the program's pid" "$pid" "`outkey live pid`"

say "== attach mid-run"
"$OCGC" dump --pid "$pid" >"$WORK/mid1.dump" 2>"$WORK/mid1.err" ||
  { cat "$WORK/mid1.err"; hard_error "ocgc dump --pid $pid failed mid-run"; }
check_dkey mid1 file.ocgc 1
check_dkey mid1 producer.pid "$pid"
check_dkey mid1 producer.state running
check_dkey mid1 producer.program target
check_gt "mid-run: events seen" 0 "`dkey mid1 events.seen`"
reader lr1 --for 300 "$pid"
check_eq "live_reader --for 300: exit status" 0 "`cat "$WORK/lr1.rc"`"
check_eq "live_reader --for 300: state" running "`rkey lr1 state`"
check_gt "live_reader --for 300: events seen" 0 "`rkey lr1 seen`"
check_eq "live_reader --for 300: lost_exact" 1 "`rkey lr1 lost_exact`"
check_eq "live_reader --for 300: disorder" 0 "`rkey lr1 disorder`"
say "-- detached; attach again"
reader lr2 --once "$pid"
check_eq "live_reader --once: exit status" 0 "`cat "$WORK/lr2.rc"`"
check_ge "live_reader --once: sees at least what the first one saw" "`rkey lr1 seen`" \
  "`rkey lr2 seen`"
"$OCGC" dump --pid "$pid" --dir "$EVDIR" >"$WORK/mid2.dump" 2>"$WORK/mid2.err" ||
  { cat "$WORK/mid2.err"; hard_error "ocgc dump --pid $pid --dir failed mid-run"; }
check_dkey mid2 producer.state running
check_ge "mid-run: minor collections go on" "`dkey mid1 totals.minor_collections`" \
  "`dkey mid2 totals.minor_collections`"
check_true "the program still runs" kill -0 "$pid"

say "== the program reported its Gc.quick_stat and waits"
wait_key live gc.heap_chunks "$pid"
for n in 1 2; do
  "$OCGC" dump --pid "$pid" >"$WORK/idle$n.dump" 2>"$WORK/idle$n.err" ||
    { cat "$WORK/idle$n.err"; hard_error "ocgc dump --pid $pid failed"; }
  cp "$WORK/live.out" "$WORK/idle$n.out"
done
check_dkey idle1 producer.state running
# The first attach came while the program was still in its workload.
check_gt "attached mid-run: collections after the first attach" \
  "`dkey mid1 totals.minor_collections`" "`dkey idle1 totals.minor_collections`"
check_totals_agree idle1
check_dkey idle1 events.lost 0
check_dkey idle1 events.skipped 0
check_live_written "idle1: events" "`dkey idle1 events.seen`" "`dkey idle1 ring.0.written`"
check_stat_agrees idle1
check_spans_paired idle1
check_all_caused idle1
check_eq "attach again: the same totals" "`grep '^totals\.' "$WORK/idle1.dump"`" \
  "`grep '^totals\.' "$WORK/idle2.dump"`"
check_eq "attach again: the same events" "`dkey idle1 events.seen`" "`dkey idle2 events.seen`"
reader lr3 --once "$pid"
check_reader_accounts lr3 live
check_eq "live_reader: totals.minor_collections" "`outkey live gc.minor_collections`" \
  "`rkey lr3 totals.minor_collections`"
check_eq "live_reader and ocgc dump see the same events" "`dkey idle1 events.seen`" \
  "`rkey lr3 seen`"

say "== the program exits"
stop_bg live "$pid"
check_eq "exit status" 0 "`cat "$WORK/live.rc"`"
check_eq "stderr lines" 0 "`stderr_lines live`"
"$OCGC" dump --pid "$pid" >"$WORK/gone.dump" 2>"$WORK/gone.err"
check_eq "ocgc dump --pid after exit: exit status" 3 $?
check_true "ocgc dump --pid after exit: says no such process" \
  grep -q "process $pid: no such process" "$WORK/gone.err"
"$OCGC" dump --pid "$pid" --dir "$EVDIR" >"$WORK/gone2.dump" 2>"$WORK/gone2.err"
check_true "ocgc dump --pid --dir after exit: fails" test $? -ne 0
check_true "ocgc dump --pid --dir after exit: says stale" grep -q "stale" "$WORK/gone2.err"
ring_of live "$pid"
dump_ring "$RING" final
cp "$WORK/live.out" "$WORK/final.out"
check_lifecycle final
check_no_loss final
check_totals_agree final
check_eq "the file after exit: events since the attach (ring_stop)" 1 \
  "$((`dkey final events.seen` - `dkey idle1 events.seen`))"
# (minor_words at the exit also counts what the minor heap holds then)
check_eq "the file after exit: the same totals as by pid" \
  "`grep '^totals\.' "$WORK/idle1.dump" | grep -v '^totals\.minor_words '`" \
  "`grep '^totals\.' "$WORK/final.dump" | grep -v '^totals\.minor_words '`"
check_ge "the file after exit: minor words >= by pid" "`dkey idle1 totals.minor_words`" \
  "`dkey final totals.minor_words`"
finish
