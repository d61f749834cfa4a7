#!/bin/sh
# bg_outputs.sh - a background job's output files are empty when the
# helper that starts it returns (cmd_lib.sh: ocgc_bg; attach_lib.sh:
# start_bg), so that a tag used a second time never shows the first
# run's lines.  The redirections of `cmd >FILE &` run in the child,
# whenever it is scheduled: serve_hup.sh's second serve, started under
# the first one's tag, was found "listening" in the first one's stderr
# before it had started, and its first requests got no answer.  Each
# helper is tried 200 times, the files read at once: without the fix a
# loaded machine shows the old lines in some of them (2 in 10 here).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
ocgc_init
EVDIR=$WORK
OCGC=/bin/true
stale_ocgc=0; stale_start=0; i=0
while test $i -lt 200; do
  echo "listening on the first run" >"$WORK/t.err"
  echo "pid 1" >"$WORK/t.out"
  ocgc_bg t
  test -s "$WORK/t.err" || test -s "$WORK/t.out" && stale_ocgc=$((stale_ocgc + 1))
  wait "$OCGC_BGPID"
  echo "ready 1" >"$WORK/u.out"
  echo "an old line" >"$WORK/u.err"
  start_bg u /bin/true
  test -s "$WORK/u.out" || test -s "$WORK/u.err" && stale_start=$((stale_start + 1))
  wait "$BGPID"
  i=$((i + 1))
done
check_eq "ocgc_bg: runs whose files still held the first run's lines" 0 "$stale_ocgc"
check_eq "start_bg: runs whose files still held the first run's lines" 0 "$stale_start"
finish
