#!/bin/sh
# producer_layers.sh - the producer's files (runtime_patch/src/) use each
# other one way (docs/architecture.md, "Who uses whom, layer by layer"),
# read from the runtime's objects by scripts/circles.sh:
# - no circle among them;
# - the writers (ocgc_writer.c, ocgc_hooks.c, ocgc_memprof.c) use none of
#   the files that make the ring file and run the start, fork and exit
#   (ocgc_file.c, ocgc_stale.c, ocgc_lifecycle.c, ocgc_start.c): a forked
#   child's file is asked for through a pointer (caml_ocgc_file.reopen),
#   never by a call up.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime
command -v nm >/dev/null 2>&1 || { say "skipped: nm is not installed"; exit 77; }

sh "$OCGC_SRCDIR/scripts/circles.sh" "$OCGC_BUILDDIR" --edges >"$WORK/edges" 2>"$WORK/err" ||
  hard_error "circles.sh --edges failed: `cat "$WORK/err"`"
check_gt "uses between the producer's files (read at all)" 0 "`grep -c '^runtime/' "$WORK/edges"`"
# exit status 1 is any circle, the readers' and the command's too: only
# the producer's lines count here
sh "$OCGC_SRCDIR/scripts/circles.sh" "$OCGC_BUILDDIR" >"$WORK/circles" 2>&1
check_eq "circles among the producer's files" "" "`grep 'runtime/' "$WORK/circles"`"
for w in writer hooks memprof; do
  check_eq "ocgc_$w.c's uses of the files above the writers" "" \
    "`awk -v w="runtime/ocgc_$w.c" \
      '$1 == w && $3 ~ /\/ocgc_(file|stale|lifecycle|start)\.c$/ { printf "%s ", $3 }' \
      "$WORK/edges"`"
done
finish
