#!/bin/sh
# attach_readers.sh - several readers at once on one live program.  Three
# live_reader processes attach by pid to a native program as it starts
# (waiting for its ring to appear), with a ring so small (e=10, 1 Ki words)
# and a minor heap so small (s=4k) that they lose events, each polling at
# its own pace; each follows until the producer's state says exited, reads
# to the tail, and accounts for every event the producer wrote:
# seen + lost + skipped == written, exactly (lost_exact 1).  The program
# removes its file at exit (no PRESERVE): the readers' mappings outlive it.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

compile_native target ocgc_test.ml attach_target.ml
BG_PRESERVE=0
start_bg prod env OCAMLRUNPARAM=e=10,s=4k ./target 2
pid=$BGPID
rpids=
for n in 1 2 3; do
  case $n in 1) ms=5 ;; 2) ms=20 ;; 3) ms=50 ;; esac
  "$LIVE_READER" --wait 5000 --poll-ms $ms "$pid" >"$WORK/r$n.out" 2>"$WORK/r$n.err" &
  rpids="$rpids $!"
  BG_PIDS="$BG_PIDS $!"
done
n=0
for p in $rpids; do
  n=$((n + 1))
  wait "$p"
  echo $? >"$WORK/r$n.rc"
done
wait "$pid"
check_eq "the program's exit status" 0 $?
check_eq "the program's stderr lines" 0 "`stderr_lines prod`"
check_eq "the program's pid" "$pid" "`outkey prod pid`"
check_eq "ring files left (none: no PRESERVE)" none "`ls_dir "$EVDIR"`"

say "== three readers"
written=
for n in 1 2 3; do
  if test "`cat "$WORK/r$n.rc"`" != 0; then
    cat "$WORK/r$n.out" "$WORK/r$n.err"
  fi
  check_reader_accounts r$n
  check_eq "r$n: saw the state exited" exited "`rkey r$n state`"
  check_gt "r$n: lost events (small ring)" 0 "`rkey r$n lost`"
  check_gt "r$n: saw events" 0 "`rkey r$n seen`"
  check_eq "r$n: totals.minor_collections = Gc.quick_stat" \
    "`outkey prod gc.minor_collections`" "`rkey r$n totals.minor_collections`"
  if test -z "$written"; then
    written=`rkey r$n written`
  else
    check_eq "r$n: the same events written as r1" "$written" "`rkey r$n written`"
  fi
done
check_gt "events written" 10000 "$written"
finish
