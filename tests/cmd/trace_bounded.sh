#!/bin/sh
# trace_bounded.sh - `ocgc trace` holds back a bounded number of slices,
# whatever the target writes.  It holds the slices of
# an outermost slice back until it ends, to write them sorted; a span that
# never ends made it hold everything after it.  The rings are written by
# trace_bounded_ring (a user span "request" begun and never ended around
# minor collections that each have a sub-phase starting with them); the
# traces are read by trace_check.py.
# - memory: the peak resident memory of `ocgc trace --file` on 250 000
#   collections inside the open span, less that on the same collections
#   without it, is at most 12 MiB.  What it holds is at most 64 Ki slices
#   (the default --max-held) of 32 bytes, 2 MiB; the array's growth by
#   doubling and qsort's buffer make that at most about 5 MiB at once, and
#   the rest is the allocator's slack.  (ASan's quarantine, which keeps
#   every freed block resident, is turned off for these runs: it would
#   count memory the program gave back.)  Before the fix it held all
#   500 000 slices, 40 bytes each, about 24 MiB more;
# - that trace is valid and complete: it loads, every slice is there, the
#   open span is a B/E pair with args.early and cut at the end of the
#   trace, X events and B/E pairs nest properly, same-timestamp parents are
#   read before their children, one "slices written early" instant, and one
#   line on stderr saying so;
# - the limit holds for all rings together: four rings that each hold 800
#   slices, --max-held 1000: written early, never more than 1001 at once,
#   still valid, still one line on stderr;
# - --max-held 0 or junk: exit 2.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
ocgc_init
command -v python3 >/dev/null 2>&1 || { say "python3 is missing: skip" >&2; exit 77; }
GEN="${OCGC_BUILDDIR:-}/tests/cmd/trace_bounded_ring"
test -x "$GEN" || hard_error "$GEN is missing (run 'make check')"
CHECK="$OCGC_SRCDIR/tests/cmd/trace_check.py"
UNITS=250000
BOUND_KB=12288

# ring NAME ARGS...: $WORK/NAME.events, written by trace_bounded_ring
ring() {
  _n=$1; shift
  "$GEN" "$WORK/$_n.events" "$@" || hard_error "trace_bounded_ring $* failed"
}
# facts TAG: trace_check.py's facts about $WORK/TAG.json; tkey TAG KEY [DEFAULT]
facts() { python3 "$CHECK" "$WORK/$1.json" >"$WORK/$1.facts" 2>&1; }
tkey() { getkey "$WORK/$1.facts" "$2" "${3:-}"; }
# peak TAG ARGS...: as ocgc_cmd (cmd_lib.sh), and the peak resident memory
# of the command, in kB, in $WORK/TAG.peak
peak() {
  _tag=$1; shift
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" python3 -c '
import resource, subprocess, sys
with open(sys.argv[2], "w") as out, open(sys.argv[3], "w") as err:
    rc = subprocess.call(sys.argv[4:], stdout=out, stderr=err)
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$WORK/$_tag.peak" "$WORK/$_tag.out" "$WORK/$_tag.err" "$OCGC" "$@"
  echo $? >"$WORK/$_tag.rc"
}
# check_valid TAG: exit 0 and a trace that loads and nests properly
check_valid() {
  check_eq "$1: exit status" 0 "`rc_of $1`"
  test "`rc_of $1`" = 0 || { say "--- stderr of ocgc trace ($1):"; cat "$WORK/$1.err"; }
  facts "$1"
  check_eq "$1: loads as JSON" 1 "`tkey $1 json.ok`"
  check_eq "$1: B/E unmatched" 0 "`tkey $1 be.unmatched`"
  check_eq "$1: X with negative dur" 0 "`tkey $1 x.negative_dur`"
  check_eq "$1: slices (X and B/E) badly nested" 0 "`tkey $1 x.bad_nesting`"
  check_eq "$1: same-timestamp parents read after a child" 0 "`tkey $1 x.parent_after_child`"
}

say "== memory, with a span open around $UNITS collections"
ring open 1 $UNITS
ring flat 1 $UNITS flat
peak flat trace --file "$WORK/flat.events" -o "$WORK/flat.json"
check_eq "flat: exit status" 0 "`rc_of flat`"
rm -f "$WORK/flat.json" "$WORK/flat.events"
peak open trace --file "$WORK/open.events" -o "$WORK/open.json"
_flat=`cat "$WORK/flat.peak"`; _open=`cat "$WORK/open.peak"`
is_uint "$_flat" && is_uint "$_open" || hard_error "no peak memory measured ('$_open', '$_flat')"
say "  peak resident memory: $_open kB with the open span, $_flat kB without"
check_true "open: at most $BOUND_KB kB more than without the open span ($_open - $_flat)" \
  test $((_open - _flat)) -le $BOUND_KB

say "== that trace"
check_valid open
check_eq "open: minor slices" $UNITS "`tkey open slice.minor 0`"
check_eq "open: minor_local_roots slices" $UNITS "`tkey open slice.minor_local_roots 0`"
check_eq "open: the open span, one slice" 1 "`tkey open slice.request 0`"
check_ge "open: written as B/E" 1 "`tkey open be.pairs 0`"
check_ge "open: B/E slices with args.early" 1 "`tkey open early.open_slices 0`"
check_eq "open: one cut slice (the open span, at the end)" 1 "`tkey open cut`"
check_eq "open: one \"slices written early\" instant" 1 "`tkey open early.markers 0`"
check_eq "open: otherData.written_early" 1 "`tkey open other.written_early`"
check_eq "open: otherData.max_held (the default)" 65536 "`tkey open other.max_held`"
check_eq "open: nothing lost" 0 "`tkey open other.events_lost`"
check_eq "open: stderr says so once" 1 "`grep -c 'written early' "$WORK/open.err"`"
check_eq "open: stderr, with the summary" 2 "`lines_of open.err`"
rm -f "$WORK/open.json" "$WORK/open.events"

say "== four rings, each holding less than --max-held, more together"
ring four 4 400
ocgc_cmd four trace --max-held 1000 --file "$WORK/four.events" -o "$WORK/four.json"
check_valid four
check_eq "four: minor slices" 1600 "`tkey four slice.minor 0`"
check_eq "four: the open spans" 4 "`tkey four slice.request 0`"
check_ge "four: written early" 1 "`tkey four early.markers 0`"
check_true "four: never more than 1001 slices held (`tkey four early.spans_max`)" \
  test "`tkey four early.spans_max 0`" -le 1001
check_eq "four: otherData.written_early" "`tkey four early.markers`" \
  "`tkey four other.written_early`"
check_eq "four: the open spans cut at the end" 4 "`tkey four cut`"
check_eq "four: stderr says so once" 1 "`grep -c 'written early' "$WORK/four.err"`"

say "== --max-held errors"
for _bad in 0 -5 x 12x 99999999999; do
  ocgc_cmd bad trace --max-held "$_bad" --file "$WORK/four.events" -o "$WORK/bad.json"
  check_error bad 2 "--max-held takes a number"
done
check_false "--max-held errors: no trace written" test -e "$WORK/bad.json"
finish
