#!/bin/sh
# gc_calls.sh - one EXPLICIT_GC_* span per Gc.* call.
# Readers count calls by counting spans.  The producer used to cut a call's
# span at its pending actions and reopen it after, so one call wrote 1 to
# 3 spans (every Gc.minor 2: 4.x always runs its pending actions); and a
# Gc.set raising Out_of_memory left its span open for good.  Two threads
# make every call a known number of times with finalisers that yield the
# lock in between; the ring must have exactly one begin and one end per
# call, for every name, spans of calls must never nest or interleave, and
# the Gc.set that raised must have closed its span.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
PACKAGES=threads.posix compile_native gc_calls ocgc_test.ml gc_calls.ml

# Under a 1 GiB address-space limit the 2 GiB minor heap cannot be had.
run_ok calls sh -c 'ulimit -v 1048576 && exec ./gc_calls 12 oom'
check_eq "the Gc.set asking for 2 GiB raised Out_of_memory" raised "`outkey calls oom`"
check_gt "finalisers ran" 0 "`outkey calls finalised`"
ring_of calls
dump_ring "$RING" calls
check_no_loss calls
check_lifecycle calls
"$OCGC" dump --events "$RING" >"$WORK/calls.events" 2>&1 ||
  hard_error "ocgc dump --events $RING failed"

# Per name: begins and ends; and spans of calls that begin inside another
# one, or end one that is not the open one.
awk '
  $4 ~ /^explicit_gc_/ && $3 == "begin" {
    b[$4]++; if (open != "") bad++; open = $4 }
  $4 ~ /^explicit_gc_/ && $3 == "end" {
    e[$4]++; if (open != $4) bad++; open = "" }
  END {
    for (n in b) printf "begins.%s %d\n", n, b[n]
    for (n in e) printf "ends.%s %d\n", n, e[n]
    printf "misnested %d\nleft_open %s\n", bad, open == "" ? "none" : open
  }' "$WORK/calls.events" >"$WORK/calls.spans"
spans() { getkey "$WORK/calls.spans" "$1" 0; }
for n in minor major full_major compact major_slice stat set; do
  want=`outkey calls calls.explicit_gc_$n`
  test "$n" = minor && want=$((want + 1)) # the report's own Gc.minor
  check_gt "explicit_gc_$n: calls made" 0 "$want"
  check_eq "explicit_gc_$n: spans begun, one per call" "$want" "`spans begins.explicit_gc_$n`"
  check_eq "explicit_gc_$n: spans ended, one per call" "$want" "`spans ends.explicit_gc_$n`"
done
check_eq "spans of calls inside another or ending another" 0 "`spans misnested`"
check_eq "span of a call left open" none "`spans left_open`"
check_stat_agrees calls
finish
