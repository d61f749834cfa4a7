#!/bin/sh
# load-check.sh - the test suite on a loaded machine: `make check` of a
# build, ROUNDS times in a row, beside busy loops and, if a second build is
# named, that build's own `make check` running over and over at the same
# time (two test runs at once).  A test that depends on how fast the
# machine is fails here first.
#
#   scripts/load-check.sh [--rounds N] [--hogs N] [--nice N] [--unit]
#                         BUILD [BESIDE]
#
#   BUILD     a configured and built tree (scripts/dev.sh check makes
#             _build-check/): its `make check` is the one counted
#   BESIDE    another built tree (not BUILD: the two would share test
#             logs), whose `make check` runs in a loop until the rounds end;
#             its results are printed but not counted
#   --rounds  how many times (default 3)
#   --hogs    busy loops beside, each in a session of its own (default 2:
#             one per core of a 2-core CI)
#   --nice    the niceness of BUILD's tests (default 0; 19 gives them the
#             least CPU there is beside the loops)
#   --unit    only the libcheck suites (tests/unit/unit.am's UNIT_TESTS)
#
# Each round prints its counts, its time and the load average; the last line
# is "N passed, N failed" over all rounds (rounds whose make check failed,
# with their failing tests' log ends above it).  Exit status 0 if every
# round passed.  Everything started here is stopped at exit.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/steps.sh"

rounds=3 hogs=2 niceness=0 unit=0
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --nice) niceness=$2; shift 2 ;;
    --unit) unit=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "load-check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: scripts/load-check.sh [options] BUILD [BESIDE]" >&2; exit 2; }
build=$(cd "$1" && pwd)
beside=
if [ $# -eq 2 ]; then
  beside=$(cd "$2" && pwd)
  [ "$beside" != "$build" ] || { echo "load-check.sh: BESIDE must be another tree" >&2; exit 2; }
fi
[ -f "$build/Makefile" ] || { echo "load-check.sh: $build is not a configured tree" >&2; exit 2; }

tests=
if [ "$unit" = 1 ]; then
  tests=$(sed -n '/^UNIT_TESTS = /,/[^\\]$/p' "$top/tests/unit/unit.am" |
    sed 's/^UNIT_TESTS = //; s/\\$//' | tr -s ' \t\n' ' ')
fi

pids=
round_pid=
stop_all() {
  # Each is a session's leader, so its group is its pid: "-PID" (dash's
  # kill takes no "--": with one, it signalled nothing).
  for _p in $pids $round_pid; do kill -TERM "-$_p" 2>/dev/null || :; done
  wait 2>/dev/null || :
}
trap 'stop_all' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each busy loop runs in a session of its own, as the programs of other
# logins and services do: where the kernel groups tasks by session
# (sched_autogroup, Debian's default), each loop then takes a share of the
# CPU as a whole group would, and --nice ranks BUILD's tests only against
# what shares their session.  (In one session, a test at nice 19 beside six
# loops gets about 1% of a core: tests that take seconds of CPU then run
# into libcheck's wall-clock timeouts, whatever they test.)  Started
# without job control, setsid needs no fork, so $! is the loop itself.
i=0
while [ "$i" -lt "$hogs" ]; do
  setsid sh -c 'while :; do :; done' &
  pids="$pids $!"
  i=$((i + 1))
done
# The loop of BESIDE's checks runs in a session (so a process group) of its
# own, so that stopping the group stops what it started.
if [ -n "$beside" ]; then
  setsid sh -c 'n=0; while :; do n=$((n + 1)); make -C "$1" -j2 check >"$1/load-beside.$n.log" 2>&1 </dev/null
           printf "    (beside: make check round %d: %s)\n" "$n" "$(tail -n 40 "$1/load-beside.$n.log" |
             grep -E "^# (PASS|FAIL|ERROR):" | tr -s " \n" " ")"; done' sh "$beside" &
  pids="$pids $!"
fi
say "load: $hogs busy loops${beside:+, and make check of $beside in a loop}; BUILD's tests at nice $niceness"

pass=0 fail=0 r=1 failed_rounds=0
while [ "$r" -le "$rounds" ]; do
  t0=$(now)
  log=$build/load-check.$r.log
  rm -f "$build/test-suite.log"
  rc=0
  # In a session of its own too, so that stopping this script stops it.
  if [ -n "$tests" ]; then
    setsid nice -n "$niceness" make -C "$build" -j2 check TESTS="$tests" >"$log" 2>&1 </dev/null &
  else
    setsid nice -n "$niceness" make -C "$build" -j2 check >"$log" 2>&1 </dev/null &
  fi
  round_pid=$!
  wait "$round_pid" || rc=$?
  round_pid=
  p=$(suite_count "$build/test-suite.log" PASS)
  f=$(suite_count "$build/test-suite.log" FAIL)
  e=$(suite_count "$build/test-suite.log" ERROR)
  s=$(suite_count "$build/test-suite.log" SKIP)
  f=$((f + e))
  [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
  say "round $r: ${p:-0} passed, $f failed, ${s:-0} skipped ($(took "$t0"); load $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ "$f" -gt 0 ]; then
    failed_rounds=$((failed_rounds + 1))
    for t in $(sed -n 's/^\(FAIL\|ERROR\): //p' "$log"); do
      say "the end of $build/${t%.*}.log:"
      tail -n 25 "$build/${t%.*}.log" 2>/dev/null | sed 's/^/    /'
    done
  fi
  pass=$((pass + ${p:-0})); fail=$((fail + f))
  r=$((r + 1))
done
say "$rounds rounds, $failed_rounds failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
