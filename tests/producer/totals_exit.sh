#!/bin/sh
# totals_exit.sh - the final totals equal Gc.quick_stat at exit, words still
# in the minor heap included (minor_words left out what
# the minor heap held, so a program that allocated and never collected
# again reported it not at all).  exit_stat.ml collects, allocates about
# WORDS more words in the minor heap and exits through a C stub that prints
# the counters as Gc.quick_stat computes them and calls exit(0), with
# nothing allocated in between; the ring, kept at exit, must hold exactly
# those counters, for 0, 3,000 and 60,000 words left.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
compile_native exit_stat ocgc_stubs.c ocgc_test.ml exit_stat.ml

# agree TAG: TAG's ring (state EXITED) against the exit.* lines
agree() {
  ring_of "$1"
  dump_ring "$RING" "$1"
  check_dkey "$1" producer.state exited
  for _k in minor_collections major_collections minor_words promoted_words major_words; do
    _x=`outkey "$1" exit.$_k`
    is_uint "$_x" || hard_error "$1: the program printed no 'exit.$_k'"
    check_dkey "$1" totals.$_k "$_x"
  done
}

for w in 0 3000 60000; do
  say "== native, about $w words left in the minor heap"
  run_ok n$w ./exit_stat $w
  agree n$w
  # The words left are in the exit totals, beyond the last collection's.
  check_ge "n$w: minor words at exit >= after the last collection + $w" \
    "$((`outkey n$w gc.minor_words` + w))" "`outkey n$w exit.minor_words`"
done
finish
