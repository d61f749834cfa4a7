#!/bin/sh
# layout.sh - the ring moves none of the program's mappings (issue 30).
# With address randomisation off (setarch -R), the same program runs with
# the ring off, on, and on with allocation sampling (whose private tables
# are a mapping too): the blocks of the heap's first chunks are at the same
# addresses in all three, and every line of /proc/PID/maps of the run
# without the ring is in the others, unchanged; what the others add is the
# ring's own mapping (and the tables'), nothing else.  A ring mapped where
# the kernel puts mappings by default (just below the lowest) moved the
# minor heap, every heap chunk and the thread's stack down by its size, and
# on 4.13/4.14, whose page table is a hash of page numbers, changed how
# long every lookup probed.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime

command -v setarch >/dev/null 2>&1 || { say "skipped: setarch (util-linux) is not installed"; exit 77; }
setarch -R true 2>/dev/null ||
  { say "skipped: setarch -R cannot turn address randomisation off here (personality refused)"; exit 77; }

PACKAGES=threads.posix compile_native layout layout.ml

# The three runs set the same variables to values of the same length, so
# that the stack (where the environment lies) is the same.
lay() {
  run_ok "$1" env OCGC_DISABLE=$2 OCGC_MEMPROF=$3 setarch -R "$WORK/layout"
}
lay off 1 off
lay off2 1 off
lay on 0 off
lay mp 0 on

maps() { sed -n 's/^map //p' "$WORK/$1.out" >"$WORK/$1.maps"; }
for r in off off2 on mp; do maps $r; done
check_gt "mappings of the run without the ring" 5 "`wc -l <"$WORK/off.maps"`"
# Without randomisation two runs without the ring are the same; if they are
# not, randomisation was not off and nothing below would mean anything.
if ! cmp -s "$WORK/off.maps" "$WORK/off2.maps"; then
  diff "$WORK/off.maps" "$WORK/off2.maps" | head -n 10
  say "skipped: two runs under setarch -R have different mappings (randomisation is still on)"
  exit 77
fi

# keys TAG: the chunk.* lines
for r in off on mp; do grep '^chunk\.' "$WORK/$r.out" >"$WORK/$r.chunks"; done
check_eq "heap blocks printed" 40 "`wc -l <"$WORK/off.chunks"`"
for r in on mp; do
  check_true "$r: the heap's first chunks at the same addresses as without the ring" \
    cmp -s "$WORK/off.chunks" "$WORK/$r.chunks"
done

# only_in A B: lines of A.maps that are not in B.maps
only_in() { grep -vxF -f "$WORK/$2.maps" "$WORK/$1.maps"; }
for r in on mp; do
  only_in off $r >"$WORK/$r.gone"
  only_in $r off >"$WORK/$r.added"
  if test -s "$WORK/$r.gone"; then
    say "$r: mappings moved or gone:"; cat "$WORK/$r.gone"
    say "$r: mappings added:"; cat "$WORK/$r.added"
  fi
  check_eq "$r: mappings of the run without the ring that moved" 0 "`wc -l <"$WORK/$r.gone"`"
  # The ring: a sealed memfd (/memfd:ocgc:...), or a file in the folder.
  check_eq "$r: the ring's mapping added" 1 \
    "`grep -c -e ' /memfd:ocgc:' -e " $EVDIR/" "$WORK/$r.added"`"
done
check_eq "on: nothing else added" 1 "`wc -l <"$WORK/on.added"`"
# Sampling adds its tables: one private anonymous mapping.
check_eq "mp: the ring and the sampling tables added" 2 "`wc -l <"$WORK/mp.added"`"
check_eq "mp: the tables' mapping is private and anonymous" 1 \
  "`awk '$2 == "rw-p" && $5 == 0 && NF == 5' "$WORK/mp.added" | wc -l | tr -d ' '`"
finish
