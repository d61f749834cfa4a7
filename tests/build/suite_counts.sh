#!/bin/sh
# suite_counts.sh - scripts/dev.sh check (and load-check.sh) add up the
# counts of automake's test-suite.log from its summary only
# (scripts/steps.sh: suite_count).  The logs of tests that did not pass
# follow the summary in the same file, and a test's output line
# "SKIP: unshare -m is denied here" is logged there as "# SKIP: unshare -m
# is denied here": read as a count, the total became "6 / unshare -m is
# denied here" and dev.sh died in its arithmetic after a run where every
# test passed, in a root that may not make namespaces (issue 42).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
. "$OCGC_SRCDIR/scripts/steps.sh"

# A test-suite.log as automake 1.16 writes it, with two skipped tests whose
# logs (their skip reasons, and lines of every shape of the summary's) it
# copies after the summary.
cat >"$WORK/test-suite.log" <<'LOG'
==================================
   ocgc 0.1.0: ./test-suite.log
==================================

# TOTAL: 6398
# PASS:  6390
# SKIP:  6
# XFAIL: 0
# FAIL:  2
# XPASS: 0
# ERROR: 0

.. contents:: :depth: 2

SKIP: tests/producer/root_0700
==============================

# SKIP: unshare -m is denied here
1..0 # SKIP SKIP: unshare -m is denied here
SKIP: tests/producer/root_0700.sh - SKIP: unshare -m is denied here

SKIP: tests/attach/attach_container
===================================

# PASS: 3
# FAIL: a line the test printed
# SKIP: unshare -pf is denied here
LOG
check_eq "PASS from the summary" 6390 "`suite_count "$WORK/test-suite.log" PASS`"
check_eq "SKIP from the summary, not the skip reasons" 6 "`suite_count "$WORK/test-suite.log" SKIP`"
check_eq "FAIL from the summary" 2 "`suite_count "$WORK/test-suite.log" FAIL`"
check_eq "ERROR from the summary" 0 "`suite_count "$WORK/test-suite.log" ERROR`"
check_eq "a key the summary lacks counts 0" 0 "`suite_count "$WORK/test-suite.log" BOGUS`"
check_eq "no log counts 0" 0 "`suite_count "$WORK/none.log" PASS`"

# A summary line that is not a number (a log cut short, a hand edit) is not
# taken, and nothing below the summary is read in its place.
cat >"$WORK/odd.log" <<'LOG'
# PASS:  twelve
.. contents:: :depth: 2
# PASS: 7
LOG
check_eq "a summary value that is no number counts 0" 0 "`suite_count "$WORK/odd.log" PASS`"

# What dev.sh does with them: arithmetic that must not fail.
s=`suite_count "$WORK/test-suite.log" SKIP`
check_eq "the counts add up in sh arithmetic" 8 "$((2 + s))"

# dev.sh and load-check.sh read counts through suite_count alone: no other
# parser of the summary is left to drift.
check_eq "dev.sh reads no '# KEY:' line itself" 0 \
  "`grep -c "s/^# [A-Z]*: " "$OCGC_SRCDIR/scripts/dev.sh" "$OCGC_SRCDIR/scripts/load-check.sh" | awk -F: '{n += $2} END {print n + 0}'`"
finish
