#!/bin/sh
# memprof_forkcost.sh - a forked child of a sampling program pays nothing
# for the tables it inherited: its first collection (which makes its own
# ring and empty table) gives the private tables' pages back
# (MADV_DONTNEED) rather than writing them with zeros, which copied or
# committed every page of them (1.3 MB, some 330 page faults and about
# 1 ms, in each child of a program that ever sampled).  The child's minor
# faults since the fork, its first minor collection included, are printed
# and bounded well below what clearing the tables costs.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

compile_native fc ocgc_test.ml memprof_funs.ml memprof_forkcost.ml
# the same child, of a program that never sampled: what the rest costs
run_ok off ./fc 100000
run_ok on env OCGC_MEMPROF=4k ./fc 100000
off=`outkey off child.faults` on=`outkey on child.faults`
say "child's minor faults since the fork: $on (parent sampling), $off (parent not sampling); time: `outkey on child.us` us and `outkey off child.us` us"
check_true "the child's faults are a number" is_uint "$on"
# Clearing the old tables alone was over 300 faults; the rest of the
# child's first collection is the same with sampling off.
check_true "sampling costs the child fewer than 100 more faults ($on against $off)" \
  test "$on" -lt $((off + 100))
finish
