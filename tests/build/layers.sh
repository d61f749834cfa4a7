#!/bin/sh
# layers.sh - the files of libocgc, of the ocgc command and of the producer
# use each other one way only (docs/architecture.md, "Layers"): no circle
# of use, read from this build's objects by scripts/circles.sh.  First the
# check itself is shown able to fail: two objects calling each other, and a
# circle through a third, are found.  Then every file of libconsumer/ is
# named in architecture.md's map, so a new file cannot be left off it.
# The reading stack has rules of its own (words.c reads every byte and uses
# no other file; source.c calls nothing above it), and so do the producer's
# writers (they call nothing that makes the file or runs start, fork, exit).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

command -v nm >/dev/null 2>&1 || { say "SKIP: no nm (binutils)"; exit 77; }
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || CC=gcc
CIRCLES="$OCGC_SRCDIR/scripts/circles.sh"

# A fake build folder: a.c calls b.c, b.c calls c.c, c.c calls a.c (one
# circle of three); d.c calls a.c only (no circle).
F=$WORK/fake
mkdir -p "$F/libconsumer/.libs"
mk() { # mk NAME CODE
  printf '%s\n' "$2" >"$WORK/$1.c"
  "$CC" -c -o "$F/libconsumer/.libs/libocgc_core_la-$1.o" "$WORK/$1.c" ||
    hard_error "cannot compile $1.c"
}
mk a 'int fb(void); int fa(void) { return fb(); }'
mk b 'int fc(void); int fb(void) { return fc(); }'
mk c 'int fa(void); int fc(void) { return fa() + 1; }'
mk d 'int fa(void); int fd(void) { return fa(); }'
out=`sh "$CIRCLES" "$F"`; rc=$?
check_eq "the check finds a circle of three files" "circle: lib/a.c lib/b.c lib/c.c" "$out"
check_eq "a circle is a failure (exit 1)" 1 "$rc"
mk c 'int fc(void) { return 1; }'
out=`sh "$CIRCLES" "$F"`; rc=$?
check_eq "with the circle broken nothing is printed" "" "$out"
check_eq "and the check passes" 0 "$rc"

# This build.
nlib=`ls "$OCGC_BUILDDIR"/libconsumer/.libs/libocgc_core_la-*.o 2>/dev/null | wc -l`
ntools=`ls "$OCGC_BUILDDIR"/tools/ocgc-*.o 2>/dev/null | wc -l`
check_true "the library's objects are built ($nlib)" test "$nlib" -gt 20
check_true "the command's objects are built ($ntools)" test "$ntools" -gt 20
if test "${OCGC_RUNTIME:-yes}" != no; then
  nrt=`ls "$OCGC_BUILDDIR"/runtime_patch/build/ocaml-*/runtime/ocgc_*.b.o 2>/dev/null | wc -l`
  check_true "the producer's objects are built ($nrt)" test "$nrt" -gt 3
else
  say "SKIP producer: configured --disable-runtime, no producer objects"
fi
out=`sh "$CIRCLES" "$OCGC_BUILDDIR" 2>&1`; rc=$?
test -z "$out" || say "$out"
check_eq "no circle of use between files" "" "$out"
check_eq "circles.sh passes on this build" 0 "$rc"
# The reading stack's own rules: every byte of a ring file is read in
# words.c, which uses no other file; source.c, on it, reaches up to none
# of the files that use it (liveness, the classifier, the totals).
sh "$CIRCLES" "$OCGC_BUILDDIR" --edges >"$WORK/edges" 2>&1 ||
  hard_error "circles.sh --edges failed: `cat "$WORK/edges"`"
check_true "the uses were read (source.c -> words.c)" grep -q '^lib/source\.c -> lib/words\.c$' "$WORK/edges"
check_eq "files of libocgc words.c uses" "" \
  "`grep '^lib/words\.c -> lib/' "$WORK/edges" | tr '\n' ' '`"
check_eq "files above it that source.c uses" "" \
  "`grep -E '^lib/source\.c -> lib/(attach|classify|totals|cursor|stream)\.c$' "$WORK/edges" | tr '\n' ' '`"
# The producer's writers (ocgc_writer.c, ocgc_hooks.c, ocgc_memprof.c) use
# none of the files that make the ring file and run the start, fork and
# exit: a forked child's file is asked for through a pointer
# (caml_ocgc_file.reopen), never by a call up.
if test "${OCGC_RUNTIME:-yes}" != no; then
  for w in writer hooks memprof; do
    check_eq "ocgc_$w.c's uses of the files above the writers" "" \
      "`awk -v w="runtime/ocgc_$w.c" \
        '$1 == w && $3 ~ /\/ocgc_(file|stale|lifecycle|start)\.c$/ { printf "%s ", $3 }' \
        "$WORK/edges"`"
  done
fi

# Every file of the library is on the map.
missing=
for c in "$OCGC_SRCDIR"/libconsumer/*.c; do
  n=${c##*/}
  grep -q "\`$n\`" "$OCGC_SRCDIR/docs/architecture.md" || missing="$missing $n"
done
check_eq "every libconsumer/*.c is named in docs/architecture.md" "" "$missing"
finish
