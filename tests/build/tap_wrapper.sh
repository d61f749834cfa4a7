#!/bin/sh
# tap_wrapper.sh - tests/tap.sh, which turns every test's checks into the
# TAP results make check counts, says what the test said: each check one
# result by name, a failed check "not ok", a skip a skip (with its
# reason), a test that stops "Bail out!", a line of output that happens to
# start with "ok" no result at all; and it runs the test with make's
# shell, whatever the caller's login shell ($SHELL) is.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
TAP="$OCGC_SRCDIR/tests/tap.sh"
LIB="$OCGC_SRCDIR/tests/lib/lib.sh"

# tap NAME BODY: the TAP tests/tap.sh makes of a test whose body is BODY.
tap() {
  printf '%s\n' "$2" >"$WORK/$1.sh"
  env SHELL=/bin/false OCGC_TEST_SHELL=/bin/sh OCGC_SRCDIR="$OCGC_SRCDIR" \
    /bin/sh "$TAP" "$WORK/$1.sh" >"$WORK/$1.tap" 2>&1
  echo $? >"$WORK/$1.rc"
}
results() { grep -cE '^(not )?ok ' "$WORK/$1.tap"; }

tap good ". '$LIB'; ocgc_init; echo 'ok this line is output'; check_eq one 1 1; check_eq two 2 2; finish"
check_eq "good: exit status" 0 "`cat "$WORK/good.rc"`"
check_eq "good: two results, the stray line none" 2 "`results good`"
check_true "good: each named" grep -q '^ok - two = 2$' "$WORK/good.tap"
check_true "good: the plan" grep -qx '1\.\.2' "$WORK/good.tap"
check_true "good: the stray line a comment" grep -q '^# ok this line is output$' "$WORK/good.tap"

tap bad ". '$LIB'; ocgc_init; check_eq one 1 1; check_eq two 1 2; finish"
check_eq "bad: the failed check" 1 "`grep -c '^not ok - two: expected' "$WORK/bad.tap"`"
check_true "bad: the plan counts both" grep -qx '1\.\.2' "$WORK/bad.tap"

tap skipped "echo 'skipped: no frobnicator here'; exit 77"
check_true "skipped: a skip with its reason" grep -qx '1\.\.0 # SKIP skipped: no frobnicator here' \
  "$WORK/skipped.tap"

tap partskip ". '$LIB'; ocgc_init; check_eq one 1 1; say 'SKIP part: no nobody'; finish"
check_true "partskip: a skipped result" grep -q '^ok - no nobody # SKIP$' "$WORK/partskip.tap"

tap stopped ". '$LIB'; ocgc_init; check_eq one 1 1; hard_error 'no ring'"
check_true "stopped: Bail out with its status" grep -q '^Bail out! .* status 99: ERROR: no ring$' \
  "$WORK/stopped.tap"

tap plain "echo 'a script without lib.sh'; exit 0"
check_true "plain: one result for the script" grep -q '^ok - .*plain.sh$' "$WORK/plain.tap"
tap plainfail "echo 'a script without lib.sh'; exit 1"
check_true "plainfail: one failed result" grep -q '^not ok - .*plainfail.sh exited with status 1' \
  "$WORK/plainfail.tap"
finish
