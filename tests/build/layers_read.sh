#!/bin/sh
# layers_read.sh - the reading stack of libocgc in one-way layers (issue 46
# item 2): words.c reads every byte of a ring file and uses no other file
# of libocgc; source.c sits on it and calls nothing above it (not
# attach.c's liveness, not classify.c's tables, not the totals); and no
# circle of use passes through words.c, source.c, classify.c, attach.c,
# totals.c, cursor.c or stream.c.  The uses are read from the build's
# objects by scripts/circles.sh; they used to make one circle of
# attach.c, classify.c, source.c and words.c.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

CIRCLES="$OCGC_SRCDIR/scripts/circles.sh"
if ! command -v nm >/dev/null 2>&1; then
  say "SKIP all: no nm to read the objects with"
  finish
fi
# Exit 1 means circles elsewhere (other layers' own), 2 no objects.
sh "$CIRCLES" "$OCGC_BUILDDIR" >"$WORK/circles" 2>"$WORK/circles.err"
rc=$?
if test "$rc" = 2; then
  say "SKIP all: `cat "$WORK/circles.err"`"
  finish
fi
sh "$CIRCLES" "$OCGC_BUILDDIR" --edges >"$WORK/edges" 2>>"$WORK/circles.err" ||
  hard_error "circles.sh --edges failed: `cat "$WORK/circles.err"`"
check_true "the objects' uses were read" grep -q '^lib/source\.c -> lib/words\.c$' "$WORK/edges"

stack='lib/(words|source|classify|attach|totals|cursor|stream)\.c'
check_eq "circles through the reading stack" "" \
  "`grep -E "$stack" "$WORK/circles" | tr '\n' ' '`"
check_eq "files of libocgc words.c uses" "" \
  "`grep '^lib/words\.c -> lib/' "$WORK/edges" | tr '\n' ' '`"
check_eq "files above it that source.c uses" "" \
  "`grep -E '^lib/source\.c -> lib/(attach|classify|totals|cursor|stream)\.c$' "$WORK/edges" | tr '\n' ' '`"
finish
