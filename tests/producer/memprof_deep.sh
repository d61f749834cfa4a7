#!/bin/sh
# memprof_deep.sh - a table that recursive code cannot fill: a 4-thread
# service rendering random documents recursively (tests/ocaml/
# memprof_render.ml: trees up to 40 deep, List.map over every node's
# children, mutual recursion), sampled at the default rate (512 KiB) for a
# fixed amount of work (thousands of samples, whatever the machine's
# speed): at most 2% of samples in the overflow row and at most 2% cut
# (before: 41% in the overflow row and 32% cut at 32 frames, rows made for
# each recursion depth).  Stacks are folded: no stack keeps a return
# address twice.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
ocgc_init

PACKAGES=unix,threads.posix compile_native mpd ocgc_test.ml memprof_funs.ml memprof_render.ml
run_ok d env OCGC_MEMPROF=on ./mpd 4 100 43
ring_of d
mp_dump d "$RING"
samples=`dkey d memprof.samples`
overflow=`dkey d memprof.overflow`
cut=`dkey d memprof.cut`
say "samples $samples, overflow $overflow, cut $cut, stacks `dkey d memprof.stacks` of `dkey d memprof.table_rows` rows; rendered `outkey d rendered` bytes"
check_dkey d memprof.rate_bytes 524288
check_true "thousands of samples (`echo $samples`)" test "$samples" -ge 2000
check_true "at most 2% of samples in the overflow row ($overflow of $samples)" \
  test $((overflow * 50)) -le "$samples"
check_true "at most 2% of samples cut ($cut of $samples)" test $((cut * 50)) -le "$samples"
# folded: each stack keeps a return address once
check_eq "no stack repeats a return address" 0 "`awk '$1 == "memprof.stack" {
    for (f = 3; f <= NF; f++) if ($f ~ /^frames=/) {
      n = split(substr($f, 8), a, ","); delete seen
      for (i = 1; i <= n; i++) { if (a[i] in seen) { bad++; break } seen[a[i]] = 1 }
    }
  } END { print bad + 0 }' "$WORK/d.dump"`"
finish
