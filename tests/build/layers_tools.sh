#!/bin/sh
# layers_tools.sh - no circle of use between the files of the ocgc command
# (tools/), read from this build's objects by scripts/circles.sh (a file
# that calls another is never called by it, directly or through others).
# The report's files (report_print.c, report_json.c, report_flight.c), the
# HTML report's (html.c and the files drawing its sections) and the
# profiles' (profile.c, profile_cpu.c, cpu_window.c) called each other
# until what they share went below them: report_figures.c, html_out.c,
# profile_output.c (docs/architecture.md, "Who uses whom").  The other
# groups' circles (libocgc's, the producer's) are not this test's.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
command -v nm >/dev/null 2>&1 || { say "SKIP all: no nm (binutils) to read the objects"; exit 77; }
B=${OCGC_BUILDDIR:-}
test -n "$B" || hard_error "OCGC_BUILDDIR is not set: run the tests with 'make check'"
sh "$OCGC_SRCDIR/scripts/circles.sh" "$B" --edges >"$WORK/edges" 2>"$WORK/edges.err"
rc=$?
test "$rc" -le 1 || hard_error "circles.sh --edges failed ($rc): `head -n 1 "$WORK/edges.err"`"
# the objects were read: without them, no circle would prove nothing
check_gt "uses between files of tools/ read from the objects" 0 \
  "`grep -c '^tools/.* -> tools/' "$WORK/edges"`"
check_true "report.c's use of html.c is seen" \
  grep -qx 'tools/report.c -> tools/html.c' "$WORK/edges"
sh "$OCGC_SRCDIR/scripts/circles.sh" "$B" >"$WORK/circles" 2>"$WORK/circles.err"
rc=$?
test "$rc" -le 1 || hard_error "circles.sh failed ($rc): `head -n 1 "$WORK/circles.err"`"
grep ' tools/' "$WORK/circles" >"$WORK/tools" || :
while read -r line; do say "$line"; done <"$WORK/tools"
check_eq "circles between files of tools/" "none" \
  "`if test -s "$WORK/tools"; then tr '\n' ' ' <"$WORK/tools" | sed 's/ $//'; else echo none; fi`"
finish
