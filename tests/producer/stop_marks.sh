#!/bin/sh
# stop_marks.sh - the producer's stop marks (ocgc.stop.join): a collection
# carries one exactly when it continues the stop of the mutator that an
# earlier collection began, and never after the mutator ran.
# - s=4k: caml_gc_dispatch runs a minor collection and a major slice back
#   to back: the slice is marked, and every mark is followed, on its ring
#   and at its timestamp, by a cause event and a collection's begin;
# - the first collection of a Gc.* call, or after its finalisers ran OCaml
#   code (a finaliser's Gc.stat span), is never marked;
# - threads: a collection whose allocation found the minor heap full is the
#   first of its thread's stop, never marked, even while another thread's
#   Gc.full_major waits in a finaliser (finaliser_block.ml) or 13 threads
#   call Gc.* at once (gc_storm.ml, whose results must stay right).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

# marks TAG KEY: a count that check_marks found in TAG's ring
marks() { getkey "$WORK/$1.marks" "$2"; }

# check_marks TAG: decode $RING (TAG's ring) event by event and check the rules
# above; prints the counts as "marks.* N" lines into $WORK/TAG.marks.
check_marks() {
  "$OCGC" dump --events "$RING" >"$WORK/$1.events" 2>"$WORK/$1.events.err" ||
    hard_error "ocgc dump --events $RING failed: `cat "$WORK/$1.events.err"`"
  awk '
    function coll(i) { return what[i] == "begin" &&
      name[i] ~ /^(minor|major_slice|major_finish_cycle|compact)$/ }
    function cause(i) { return (what[i] == "user" && name[i] ~ /^ocgc\.cause\./) ||
      what[i] == "counter" && name[i] ~ /^(force_minor_|request_m)/ }
    function here(i, j) { return j <= n && ts[j] == ts[i] && ring[j] == ring[i] }
    function marked(i) { return i > 2 && what[i - 2] == "user" &&
      name[i - 2] == "ocgc.stop.join" && ring[i - 2] == ring[i] }
    NF == 5 && $1 ~ /^[0-9]+$/ { n++; ts[n] = $1; ring[n] = $2; what[n] = $3; name[n] = $4 }
    END {
      for (i = 1; i <= n; i++) {
        r = ring[i]
        if (what[i] == "user" && name[i] == "ocgc.stop.join") {
          joins++
          if (!(here(i, i + 1) && cause(i + 1) && here(i, i + 2) && coll(i + 2))) stray++
        }
        if (what[i] == "begin" && fresh[r] != "finaliser" &&
            name[i] ~ /^explicit_gc_(minor|major|full_major|compact|major_slice)$/)
          fresh[r] = "call"
        if (what[i] == "end" && name[i] == "explicit_gc_stat") fresh[r] = "finaliser"
        if (!coll(i)) continue
        if (marked(i) && (name[i - 1] == "force_minor_alloc_small" ||
                          name[i - 1] == "ocgc.cause.minor_heap_full_c")) heap_full++
        if (fresh[r] != "") {
          first[fresh[r]]++
          if (marked(i)) after[fresh[r]]++
          fresh[r] = ""
        }
      }
      printf "marks.joins %d\nmarks.stray %d\nmarks.heap_full %d\n", joins, stray, heap_full
      printf "marks.first_of_call %d\nmarks.after_call %d\n", first["call"], after["call"]
      printf "marks.first_after_finaliser %d\nmarks.after_finaliser %d\n",
        first["finaliser"], after["finaliser"]
    }' "$WORK/$1.events" >"$WORK/$1.marks"
  check_eq "$1: marks not followed by a cause and a collection" 0 "`marks $1 marks.stray`"
  check_eq "$1: marked collections of a full minor heap" 0 "`marks $1 marks.heap_full`"
  check_eq "$1: marked first collections of a Gc.* call" 0 "`marks $1 marks.after_call`"
  check_eq "$1: marked collections after a finaliser ran" 0 "`marks $1 marks.after_finaliser`"
}

say "== one program at s=4k: dispatches, Gc.full_major with a finaliser"
compile_native marks ocgc_test.ml stop_marks.ml
OCAMLRUNPARAM=s=4k,e=20 run_ok m ./marks
ring_of m
dump_ring "$RING" m
check_no_loss m
check_stat_agrees m
check_eq "m: finalisers run" 1 "`outkey m finaliser.ran`"
check_marks m
check_gt "m: stop marks" 50 "`marks m marks.joins`"
check_gt "m: first collections of Gc.* calls" 2 "`marks m marks.first_of_call`"
check_eq "m: collections after the finaliser's Gc.stat" 1 "`marks m marks.first_after_finaliser`"

PACKAGES=threads.posix,unix
say "== a thread's Gc.full_major waits in a finaliser, another allocates"
compile_native fblock ocgc_test.ml finaliser_block.ml
OCAMLRUNPARAM=e=20 run_ok fb ./fblock
ring_of fb
dump_ring "$RING" fb
check_no_loss fb
check_marks fb
check_gt "fb: stop marks" 0 "`marks fb marks.joins`"

say "== 13 threads call Gc.* at once"
compile_native storm ocgc_test.ml gc_storm.ml
OCAMLRUNPARAM=e=21 run_ok st ./storm 13 2
check_eq "st: threads with right results" 13 "`outkey st threads.ok`"
ring_of st
dump_ring "$RING" st
check_no_loss st
check_stat_agrees st
check_marks st
check_gt "st: first collections of Gc.* calls" 100 "`marks st marks.first_of_call`"
finish
