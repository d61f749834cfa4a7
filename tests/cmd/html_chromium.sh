#!/bin/sh
# html_chromium.sh - the HTML report (`--html FILE`) opened in a real
# headless Chromium (Debian's chromium) through the DevTools protocol
# (html_check.py, cdp.py), for a live run (`ocgc run --html` of an OCaml
# program on the patched runtime) and for a stock OCaml 5.2 ring file
# (`ocgc report --file --html` of tests/fixtures/ocaml5.2/full-3695):
# - the page asks for nothing but itself (no network request, no failed
#   resource), logs no console error and throws no exception;
# - its full-page screenshot is a PNG of the page's size, and not blank;
# - every rate chart is drawn over fixed time bins whose integers
#   (data-t-ns, data-w-ns, data-v) add up to the report's own counts for
#   the window (bytes allocated and promoted, collections by kind, time in
#   pauses) and are exactly what its polyline draws; gc_share is never
#   above 1; the heap is never a made-up 0, and is drawn for a window of a
#   live program (`ocgc report PID --html`) whose heap last changed before
#   the window; a run that compacted shows compaction marks in their
#   colour, and the legend counts the pauses of every kind;
# - its SVG marks agree with its own embedded JSON, which is byte for byte
#   the `--json` report of the same data: pause marks (= data-drawn =
#   data-pauses = pauses.count when not downsampled), the longest mark =
#   pauses.max_ns, histograms (count, p50, p99, p99.9, max, buckets adding
#   up), cause bars (count, total, worst) = the cause table, the series,
#   the header facts;
# - no browser process is left behind, whatever way the test ends.
# Without Chromium it is skipped (77) with one line (OCGC_CHROMIUM=PATH
# names another browser binary; cdp.py otherwise tries Debian's).  About
# 15 s (three browser starts; the live program runs 1 s, the window 1 s).  With OCGC_SHOTS=DIR
# (`make screenshots`) it also writes DIR/report-live.png and
# DIR/report-stock5.png, the pictures of docs/ and the README: the page's
# top (facts, timeline, histogram of all pauses), 1040 pixels wide, each
# under 300 KB (the whole page is ~430 KB).
HERE="$OCGC_SRCDIR/tests/cmd"
LIB="$OCGC_SRCDIR/tests/lib"
_which=`python3 "$HERE/cdp.py" which`
if test $? -eq 77; then
  echo "skipped: $_which"
  exit 77
fi
. "$LIB/lib.sh"
. "$LIB/attach_lib.sh"
. "$LIB/cmd_report_lib.sh"
cmd_report_init

# The driver (and so the browser) is killed on every way out; then anything
# still running with one of our profiles, the crash handlers included.
DRIVER_PID=
html_cleanup() {
  test -n "$DRIVER_PID" && kill -TERM "$DRIVER_PID" 2>/dev/null && wait "$DRIVER_PID"
  for _p in "$WORK"/profile-*; do
    test -d "$_p" && python3 "$HERE/cdp.py" kill "$_p" >/dev/null
  done
  attach_cleanup
}
trap 'html_cleanup' EXIT
say "browser $_which"

# chromium_tmp: Chromium's temporary folders in the system's TMPDIR
# (org.chromium.Chromium.*, its shared memory under --disable-dev-shm-usage)
chromium_tmp() { ls -d "${TMPDIR:-/tmp}"/org.chromium.Chromium.* 2>/dev/null | sort; }

# browse TAG [--live]: html_check.py on $WORK/TAG.html against
# $WORK/TAG.json, its lines in the log, its status a check; nothing of
# Chromium's left in TMPDIR (its temporaries go in the profile: cdp.py).
browse() {
  _tag=$1; shift
  chromium_tmp >"$WORK/$_tag.tmp0"
  _png=
  test -n "${OCGC_SHOTS:-}" && _png="--shot=$WORK/$_tag.png"
  python3 "$HERE/html_check.py" "$WORK/$_tag.html" --profile "$WORK/profile-$_tag" \
    --log "$WORK/$_tag.chromium.log" --json "$WORK/$_tag.json" --width 1040 $_png "$@" \
    >"$WORK/$_tag.browse" 2>&1 &
  DRIVER_PID=$!
  wait "$DRIVER_PID"
  _rc=$?
  DRIVER_PID=
  sed 's/^/  /' "$WORK/$_tag.browse"
  test $_rc -eq 99 && tail -n 20 "$WORK/$_tag.chromium.log"
  check_eq "$_tag: html_check.py's status" 0 "$_rc"
  check_eq "$_tag: browser processes left" "" \
    "`python3 "$HERE/cdp.py" leftovers "$WORK/profile-$_tag"`"
  chromium_tmp >"$WORK/$_tag.tmp1"
  check_eq "$_tag: Chromium's temporaries left in ${TMPDIR:-/tmp}" "" \
    "`comm -13 "$WORK/$_tag.tmp0" "$WORK/$_tag.tmp1" | tr '\n' ' '`"
}

# keep_shot TAG NAME: with OCGC_SHOTS, the screenshot into the docs (small).
keep_shot() {
  test -n "${OCGC_SHOTS:-}" || return 0
  _size=`wc -c <"$WORK/$1.png" | tr -d ' '`
  check_true "$1: screenshot under 300 KB ($_size bytes)" test "$_size" -lt 307200
  check_true "$1: written to $OCGC_SHOTS/$2" cp "$WORK/$1.png" "$OCGC_SHOTS/$2"
}

say "== a live run: ocgc run --html"
compile_native workload ocgc_test.ml workload.ml
(cd "$WORK" && "$OCGC" run --html "$WORK/live.html" --json -o "$WORK/live.json" \
   -- ./workload 12 >"$WORK/live.out" 2>"$WORK/live.err")
check_eq "live: ocgc run's status" 0 "$?"
report_json live
check_jkey live schema_valid 1
check_jkey live mode run
browse live --live --heap --compaction
keep_shot live report-live.png

say "== a window of a live 4.13 program with a steady heap: ocgc report PID --html"
# The window starts after the program's last heap change, so no event in
# it says the heap: it must still be drawn (it was drawn as 0 all along),
# from the producer's totals at the window's start.
compile_native steady ocgc_test.ml steady_heap.ml
start_bg steady ./steady 30
tpid=$BGPID
wait_key steady steady "$tpid"
report_cmd win report "$tpid" --duration 1s --json --html "$WORK/win.html"
check_eq "win: status" 0 "`cat "$WORK/win.rc"`"
report_json win
check_jkey win schema_valid 1
check_true "win: the report has a heap" test "`jkey win heap.heap_bytes`" -gt 0
{ kill -9 "$tpid"; wait "$tpid"; } 2>/dev/null
browse win --live --heap

say "== a stock OCaml 5.2 ring: ocgc report --file --html"
xz -dc "$OCGC_SRCDIR/tests/fixtures/ocaml5.2/full-3695.events.xz" |
  cp --sparse=always /dev/stdin "$WORK/full-3695.events" ||
  hard_error "cannot unpack full-3695.events.xz"
report_cmd stock report --file full-3695.events --json
check_eq "stock --json: status" 0 "`cat "$WORK/stock.rc"`"
report_json stock
check_jkey stock schema_valid 1
check_jkey stock source.ocgc_ring false
report_cmd stockhtml report --file full-3695.events --html "$WORK/stock.html"
check_eq "stock --html: status" 0 "`cat "$WORK/stockhtml.rc"`"
browse stock
keep_shot stock report-stock5.png
finish
