# attach_lib.sh - shared by the attach_*.sh tests (sourced after lib.sh):
# programs run in the background so that a test can attach to them while
# they live, waiting for what they print, and the live_reader helper
# (tests/attach/live_reader.c, built by `make check`).
#
#   . "$OCGC_SRCDIR/tests/lib/lib.sh"
#   . "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
#   attach_init
#   start_bg prog ./prog 2 "$WORK/prog.stop"; pid=$BGPID
#   wait_key prog gc.heap_chunks
#   reader r1 --once "$pid"; check_reader_accounts r1
#   stop_bg prog "$pid"

LIVE_READER="${OCGC_BUILDDIR:-}/tests/attach/live_reader"
BG_PIDS=

# attach_init: ocgc_init, and kill what we started in the background at exit.
attach_init() {
  ocgc_init
  test -n "${OCGC_BUILDDIR:-}" || hard_error "OCGC_BUILDDIR is not set: run the tests with 'make check'"
  test -x "$LIVE_READER" || hard_error "$LIVE_READER is missing (run 'make check')"
  trap 'attach_cleanup' EXIT
}

# A pid of BG_PIDS may have exited and been reaped long ago, and the pid
# reused by any process of the host (pid_max is often 32768): only a
# process whose parent is still this shell is ours to kill.  (Killing them
# all once SIGKILLed a `cat` of another test run.)
attach_cleanup() {
  # Each reaped here, quietly: else the shell says "NNN Killed (command)"
  # on stderr at its next command, and that line became the reason of a
  # test that skipped (exit 77), in place of the one it had said.
  for _p in $BG_PIDS; do
    own_child "$_p" && { kill -9 "$_p"; wait "$_p"; } 2>/dev/null
  done
  ocgc_cleanup
}

# own_child PID: PID is a child of this shell (its parent in /proc/PID/stat,
# read after the last ')' since the name may hold one)
own_child() {
  _st=`cat "/proc/$1/stat" 2>/dev/null` || return 1
  _st=${_st##*) }
  set -- $_st
  test "${2:-}" = "$$"
}

# start_bg TAG COMMAND...: as run (lib.sh), but in the background; BGPID is
# the program's own pid (the subshell execs it).  The ring is kept at exit
# unless BG_PRESERVE=0.
start_bg() {
  _tag=$1; shift
  # (emptied before the job starts, as ocgc_bg's: cmd_lib.sh)
  : >"$WORK/$_tag.out"; : >"$WORK/$_tag.err"
  if test "${BG_PRESERVE:-1}" = 1; then
    (cd "$WORK" && exec env OCAML_RUNTIME_EVENTS_DIR="$EVDIR" \
       OCAML_RUNTIME_EVENTS_PRESERVE=1 "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err") &
  else
    (cd "$WORK" && exec env OCAML_RUNTIME_EVENTS_DIR="$EVDIR" \
       "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err") &
  fi
  BGPID=$!
  BG_PIDS="$BG_PIDS $BGPID"
}

# wait_key TAG KEY [PID [SECONDS]]: wait until the program printed KEY
# (and stop the test if PID died first, or after SECONDS, default 60).
wait_key() {
  _n=0; _max=$(( ${4:-60} * 20 ))
  while test -z "`outkey "$1" "$2"`"; do
    if test -n "${3:-}" && ! kill -0 "$3" 2>/dev/null; then
      cat "$WORK/$1.err"
      hard_error "$1 (pid $3) died before printing '$2'"
    fi
    _n=$((_n + 1))
    test $_n -le $_max || hard_error "$1 printed no '$2' in ${4:-60} s"
    sleep 0.05
  done
}

# stop_bg TAG PID: let a program waiting for its stop file ($WORK/TAG.stop)
# exit, and put its exit status in $WORK/TAG.rc.
stop_bg() {
  : >"$WORK/$1.stop"
  wait "$2"
  echo $? >"$WORK/$1.rc"
}

# reader TAG ARGS...: run live_reader ARGS; output in TAG.out, TAG.err,
# exit status in TAG.rc.
reader() {
  _tag=$1; shift
  "$LIVE_READER" "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err"
  echo $? >"$WORK/$_tag.rc"
}

# rkey TAG KEY: a value of live_reader's output, whose lines hold
# "key value" pairs ("seen N lost N ...", "state exited").
rkey() {
  awk -v k="$2" '{ for (i = 1; i < NF; i += 2) if ($i == k) { print $(i + 1); exit } }' \
    "$WORK/$1.out"
}

# check_reader_accounts TAG [live]: a reader that has read up to the tail
# of a quiet ring accounted for every event the producer wrote, exactly.
# The producer publishes its count of events written at the end of each
# collection (wire.h: written_events), so while it lives ("live") the
# count may miss the few events written after its last collection (the end
# of the Gc.minor span that ran it): then written is a lower bound, at most
# LIVE_SLACK (4) behind.  Once the producer has exited it is exact.
LIVE_SLACK=4
check_reader_accounts() {
  check_eq "$1: exit status" 0 "`cat "$WORK/$1.rc"`"
  _s=`rkey $1 seen`; _l=`rkey $1 lost`; _k=`rkey $1 skipped`; _w=`rkey $1 written`
  for _x in "$_s" "$_l" "$_k" "$_w"; do
    is_uint "$_x" || { cat "$WORK/$1.out" "$WORK/$1.err"; hard_error "$1: bad output"; }
  done
  say "  $1: seen $_s lost $_l skipped $_k written $_w"
  if test "${2:-}" = live; then
    check_live_written "$1" "$((_s + _l + _k))" "$_w"
  else
    check_eq "$1: seen + lost + skipped (written)" "$_w" "$((_s + _l + _k))"
  fi
  check_eq "$1: lost_exact" 1 "`rkey $1 lost_exact`"
  check_eq "$1: disorder" 0 "`rkey $1 disorder`"
}

# check_live_written WHAT ACCOUNTED WRITTEN: events accounted for by a
# reader of a quiet live ring against the producer's published count
check_live_written() {
  CHECKS=$((CHECKS + 1))
  if test "$2" -ge "$3" && test "$2" -le "$(($3 + LIVE_SLACK))"; then
    pass "$1: seen + lost + skipped = $2, written (published) = $3"
  else
    fail "$1: seen + lost + skipped = $2, expected written (published) $3 .. +$LIVE_SLACK"
  fi
}

# grep_err TAG TEXT: the program's stderr holds TEXT
grep_err() { grep -F -q -- "$2" "$WORK/$1.err"; }
