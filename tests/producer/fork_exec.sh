#!/bin/sh
# fork_exec.sh - a program that forks and execs 50 children, each of which
# allocates a little (its argument vector) between the fork and the exec,
# leaves no entry of a child in the ring folder, at any sampling rate.  A
# forked child makes its file at its first GC event, so that one that
# execs at once leaves nothing; but an allocation sample made the file
# too, and the exec'd program never removes it: at a 64-byte rate nearly
# every child left its two entries (alias and identity link) behind.
# A child that samples and then collects keeps the samples taken before
# its file was made: they are written into it.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

N=50
test -x /bin/true || { say "skipped: no /bin/true to exec"; exit 77; }
compile_native fork_exec fork_exec.ml

for rate in off 64 1k on; do
  rm -rf "${EVDIR:?}"/* "$EVDIR"/.[!.]* 2>/dev/null
  run_ok fe.$rate env OCGC_MEMPROF=$rate ./fork_exec $N /bin/true
  ppid=`outkey fe.$rate pid`
  check_eq "rate $rate: children run" $N "`outkey fe.$rate children`"
  # The parent's ring, kept at its exit (run sets
  # OCAML_RUNTIME_EVENTS_PRESERVE), and nothing else.
  ls -A "$EVDIR" | grep -v "^$ppid\.events\$" >"$WORK/fe.$rate.left"
  check_eq "rate $rate: entries of the children left in the folder (`head -n 4 "$WORK/fe.$rate.left" | tr '\n' ' '`)" \
    0 "`wc -l <"$WORK/fe.$rate.left" | tr -d ' '`"
  check_true "rate $rate: the parent's ring kept" test -f "$EVDIR/$ppid.events"
  if test $rate = 64; then
    # The parent sampled: so did the children, into their private tables.
    dump_ring "$EVDIR/$ppid.events" fe.64
    check_dkey fe.64 memprof.rate_bytes 64
    check_gt "rate 64: the parent's samples" 0 "`dkey fe.64 memprof.samples 0`"
  fi
done

# A child that samples before its first GC event keeps those samples: its
# file, made by that event, holds them all.  30,000 words of list cells,
# sampled every 8 words (an estimate within 5 standard deviations,
# sqrt(30000 x 8) words each, of 30,000 or more: the child allocates a
# little more as it exits, after its file is made, and the estimate
# counts that too; without the samples from before the file, only that).
rm -rf "${EVDIR:?}"/* "$EVDIR"/.[!.]* 2>/dev/null
run_ok co env OCGC_MEMPROF=64 ./fork_exec collect
ring_of co "`outkey co child.pid`"
dump_ring "$RING" co
check_dkey co memprof.rate_bytes 64
check_ge "the child's words sampled, before its file was made and after" \
  $((30000 - `awk 'BEGIN { printf "%d", 5 * sqrt(30000 * 8) }'`)) "`dkey co memprof.words 0`"
finish
