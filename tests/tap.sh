#!/bin/sh
# tap.sh TEST [ARGS...] - run one shell test and say what it checked in
# TAP, for automake's tap-driver.sh (SH_LOG_DRIVER): each check the test
# makes through lib.sh (check_eq, check_true, pass, fail...) is one named
# result in the test-suite's output and count, not one line per script.
#
# The test runs with OCGC_TAP=1, under which lib.sh writes each result as
# "@@TAP ok - WHAT" or "@@TAP not ok - WHAT"; every other line it or its
# programs print becomes a TAP comment ("# ..."), so that no output that
# happens to start with "ok" can count as a check.  A part the test skips
# ("SKIP part: WHY") is a skipped result.  The test's own exit status
# says the rest:
#   0      its checks (a test that made none is one passed result);
#   1      its checks, one of which failed (or, if none did, one failed
#          result saying so);
#   77     skipped: "1..0 # SKIP WHY" when it checked nothing, else one
#          skipped result after its checks; WHY is its last line;
#   other  "Bail out!" with its status and last line: it could not run.
# Output goes to a file first and is converted once the test has exited,
# so a process the test leaves behind cannot hold the driver's pipe.
set -u
test $# -ge 1 || { echo "Bail out! usage: tap.sh TEST [ARGS...]"; exit 0; }
out=$(mktemp "${TMPDIR:-/tmp}/ocgc-tap.XXXXXX") || { echo "Bail out! mktemp failed"; exit 0; }
trap 'rm -f "$out"' EXIT
# The shell make runs tests with (OCGC_TEST_SHELL, tests/tests.am), never
# the caller's login shell ($SHELL), which need not be a POSIX sh.
OCGC_TAP=1 "${OCGC_TEST_SHELL:-/bin/sh}" "$@" >"$out" 2>&1 </dev/null
status=$?
awk -v name="$*" -v status="$status" '
  function desc(s) { gsub(/#/, "-", s); return s }
  /^@@TAP (not )?ok - / { sub(/^@@TAP /, ""); print; n++; if ($0 ~ /^not ok/) bad++; next }
  /^SKIP part: / { print "ok - " desc(substr($0, 12)) " # SKIP"; n++; next }
  { print "# " $0; if ($0 != "") last = $0 }
  END {
    if (status == 77) {
      if (n == 0) { print "1..0 # SKIP " desc(last); exit }
      print "ok - the rest: " desc(last) " # SKIP"; n++
    } else if (status == 1) {
      if (bad == 0) { print "not ok - " name " exited with status 1: " desc(last); n++ }
    } else if (status != 0) {
      print "Bail out! " name " stopped with status " status ": " desc(last); exit
    } else if (n == 0) {
      print "ok - " name; n++
    }
    print "1.." n
  }' "$out"
exit 0
