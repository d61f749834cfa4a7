#!/bin/sh
# pause_invariant.sh - a pause is a stop of the mutator, exactly:
# on binary-trees at s=4k, s=32k and the default minor heap, read live (by
# pid, while it runs) and from its file afterwards, libocgc's pauses
#  - follow the producer's stop marks (rule marks);
#  - each last no longer than the collections inside it, paired by
#    pause_check's own rule from the raw events;
#  - sum to no more than the producer's GC time (its totals), and so do
#    the aggregator's;
#  - are neither fused (at least as many as the minor collections or the
#    slices, whichever is more: no stop here holds two of one kind) nor
#    split (no more than the collections).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
CHECK="${OCGC_BUILDDIR:-}/tests/producer/pause_check"
test -x "$CHECK" || hard_error "$CHECK is missing (run 'make check')"

compile_native trees ocgc_test.ml binary_trees.ml

# check_pauses TAG: the checks above on $WORK/TAG.pc
check_pauses() {
  _f="$WORK/$1.pc"
  _k() { getkey "$_f" "$1"; }
  check_eq "$1: pause rule" marks "`_k rule`"
  check_eq "$1: pauses longer than their collections" 0 "`_k over`"
  _sum=`_k pause_sum_ns`; _gc=`_k gc_time_ns`
  check_true "$1: pauses' sum ($_sum) <= GC time ($_gc)" test "$_sum" -le "$_gc"
  _asum=`_k agg_pause_sum_ns`; _agc=`_k agg_gc_time_ns`
  check_true "$1: aggregator's pauses' sum ($_asum) <= its GC time ($_agc)" \
    test "$_asum" -le "$_agc"
  _p=`_k pauses`; _min=`_k colls.minor`; _sl=`_k colls.major_slice`; _all=`_k colls`
  _most=$_min; test "$_sl" -gt "$_most" && _most=$_sl
  if test "`_k lost`" = 0; then
    check_true "$1: pauses ($_p) >= max(minors $_min, slices $_sl)" test "$_p" -ge "$_most"
    check_eq "$1: the aggregator's pauses" "$_p" "`_k agg_pauses`"
  fi
  check_true "$1: pauses ($_p) <= collections ($_all)" test "$_p" -le "$_all"
  check_gt "$1: pauses" 0 "$_p"
}

for s in 4k 32k default; do
  # e=22: a ring of 4 Mi words holds the whole run, so that the file has
  # every collection
  if test $s = default; then param=e=22; else param="e=22,s=$s"; fi
  say "== s=$s: from the file"
  run_ok file-$s env OCAMLRUNPARAM="$param" ./trees 14
  ring_of file-$s
  "$CHECK" "$RING" >"$WORK/file-$s.pc" 2>"$WORK/file-$s.pcerr" ||
    { cat "$WORK/file-$s.pcerr"; hard_error "pause_check $RING failed"; }
  check_pauses file-$s
  check_eq "file-$s: minor collections seen" "`outkey file-$s gc.minor_collections`" \
    "`getkey "$WORK/file-$s.pc" colls.minor`"
  dump_ring "$RING" file-$s
  check_dkey file-$s agg.pause_rule marks

  say "== s=$s: live, by pid"
  rm -f "$WORK/go-$s"
  (cd "$WORK" && exec env OCAML_RUNTIME_EVENTS_DIR="$EVDIR" OCAMLRUNPARAM="$param" \
     ./trees 14 "$WORK/go-$s" >"$WORK/live-$s.out" 2>"$WORK/live-$s.err") &
  bg=$!
  n=0
  while test -z "`outkey live-$s pid`"; do
    n=$((n + 1)); test $n -le 1200 || hard_error "live-$s printed no pid"
    sleep 0.05
  done
  pid=`outkey live-$s pid`
  ( "$CHECK" --pid "$pid" "$WORK/ready-$s" >"$WORK/live-$s.pc" 2>"$WORK/live-$s.pcerr"
    echo $? >"$WORK/live-$s.pcrc" ) &
  checker=$!
  # the program works only once the checker has attached (it reads from
  # the oldest event, so nothing before is missed either way)
  n=0
  while ! test -e "$WORK/ready-$s" && ! test -e "$WORK/live-$s.pcrc"; do
    n=$((n + 1)); test $n -le 1200 || hard_error "pause_check did not attach to $pid"
    sleep 0.05
  done
  : >"$WORK/go-$s"
  wait $bg || hard_error "live-$s: the program failed"
  wait $checker
  test "`cat "$WORK/live-$s.pcrc"`" = 0 ||
    { cat "$WORK/live-$s.pcerr"; hard_error "pause_check --pid failed"; }
  check_pauses live-$s
done
finish
