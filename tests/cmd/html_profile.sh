#!/bin/sh
# html_profile.sh - "Which code allocates" in the HTML report, for programs
# of known allocations (memprof_funs.ml: alloc_a, alloc_b, alloc_c 1:2:4,
# retain K arrays), sampled at 4 KiB:
# - `ocgc run --html` of profile_live (its whole life): the top allocating
#   functions by their OCaml names, each within 5 standard deviations of
#   its known bytes, retain's in-use bytes too, Memprof_funs.alloc_c first;
#   in headless Chromium (html_profile.py): nothing requested or logged,
#   both flame graphs drawn with every frame as wide as its bytes, the
#   widest leaf the known top function and equal to the table's row;
# - `ocgc report PID --duration --html` of a live program whose
#   allocations all come from one function (top_alloc): that function first,
#   in the table and the flame graph;
# - `ocgc report --file RING --html` of the run's ring: the program is
#   gone, so the frames are addresses, and the page says why;
# - a run that does not sample: the page says there is no profile.
# Without Chromium the browser part is skipped (77) with one line; the rest
# needs none.
HERE="$OCGC_SRCDIR/tests/cmd"
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
attach_init

N=300000 K=10000 RATE=4096
W=$((RATE / 8))
compile_native mpr ocgc_test.ml memprof_funs.ml memprof_ratio.ml
compile_native ta memprof_funs.ml top_alloc.ml
compile_native pl memprof_funs.ml profile_live.ml

# flat TAG FUNCTION [TABLE]: data-flat of FUNCTION's row in TABLE
# (default ocgc-top-alloc) of $WORK/TAG.html
flat() {
  python3 - "$WORK/$1.html" "$2" "${3:-ocgc-top-alloc}" <<'EOF'
import sys
from html.parser import HTMLParser
path, fn, table = sys.argv[1:4]
class P(HTMLParser):
    inside, value = False, 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.inside = a.get("id") == table
        if tag == "tr" and self.inside and a.get("data-fn") == fn:
            self.value = int(a["data-flat"])
p = P()
p.feed(open(path, encoding="utf-8").read())
print(p.value)
EOF
}
within() { mp_within "$1" $(($2 / 8)) "$3" $W; }

# 1. ocgc run --html: the program's whole life.  The program
# (profile_live) allocates only once told, after `ocgc run` has found its
# ring and so read its names (a program that ends before the run's first
# look leaves addresses: its /proc is gone).
mkdir -p "$WORK/run"
(cd "$WORK" && exec env OCGC_MEMPROF=$RATE "$OCGC" run --html "$WORK/run.html" -- \
   ./pl "$WORK/run" $N $K >"$WORK/run.out" 2>"$WORK/run.err") &
runpid=$!
BG_PIDS="$BG_PIDS $runpid"
wait_key run ready
_n=0
until grep -q '\.events' "/proc/$runpid/maps" 2>/dev/null; do
  kill -0 $runpid 2>/dev/null || hard_error "ocgc run ended before it found the ring"
  _n=$((_n + 1)); test $_n -le 1200 || hard_error "ocgc run found no ring in 60 s"
  sleep 0.05
done
: >"$WORK/run/go"
wait_key run allocated
: >"$WORK/run/end"
wait $runpid
check_eq "run: ocgc run's status" 0 "$?"
for f in a:1 b:2 c:4; do
  within "run: Memprof_funs.alloc_${f%:*} in the top allocating functions" \
    "`flat run Memprof_funs.alloc_${f%:*}`" $((${f#*:} * N * 11))
done
within "run: Memprof_funs.retain in the top allocating functions" \
  "`flat run Memprof_funs.retain`" $((K * 104))
check_gt "run: Memprof_funs.retain among the top promoting functions" 0 \
  "`flat run Memprof_funs.retain ocgc-top-promoted`"
_which=`python3 "$HERE/cdp.py" which`
if test $? -eq 77; then
  say "skipped the browser: $_which"
else
  python3 "$HERE/html_profile.py" "$WORK/run.html" --profile "$WORK/profile-run" \
    --top Memprof_funs.alloc_c --log "$WORK/run.chromium.log" >"$WORK/run.browse" 2>&1
  _rc=$?
  sed 's/^/  /' "$WORK/run.browse"
  check_eq "run: html_profile.py in Chromium" 0 "$_rc"
  check_eq "run: browser processes left" "" \
    "`python3 "$HERE/cdp.py" leftovers "$WORK/profile-run"`"
fi

# 2. ocgc report PID --duration --html: the window of a program whose
# allocations all come from Memprof_funs.alloc_c (top_alloc.ml), however
# the window falls.
start_bg ta env OCGC_MEMPROF=$RATE ./ta "$WORK/ta.stop"
pid=$BGPID
wait_key ta pid "$pid"
"$OCGC" report "$pid" --duration 2s --html "$WORK/win.html" >"$WORK/win.out" 2>"$WORK/win.err"
check_eq "report --duration 2s --html: exit 0" 0 $?
check_eq "report window: its top allocating function" Memprof_funs.alloc_c \
  "`sed -n '/id="ocgc-top-alloc"/,/<\/table>/ s/^<tr data-fn="\([^"]*\)".*/\1/p' "$WORK/win.html" | head -n 1`"
check_gt "report window: its bytes" 0 "`flat win Memprof_funs.alloc_c`"
check_true "report window: a flame graph of what it allocated" \
  grep -q 'id="ocgc-flame-alloc"' "$WORK/win.html"
: >"$WORK/ta.stop"
wait "$pid"

# 3. The ring of the run above, the program gone: addresses, said so.
ring=`ls "$EVDIR"/*.events 2>/dev/null | head -n 1`
if test -n "$ring"; then
  "$OCGC" report --file "$ring" --html "$WORK/file.html" >/dev/null 2>"$WORK/file.err"
  check_eq "report --file --html: exit 0" 0 $?
  check_true "report --file: the page says its frames are addresses" \
    grep -q "Frames are addresses" "$WORK/file.html"
  check_true "report --file: its rows are addresses" grep -q '<tr data-fn="0x' "$WORK/file.html"
else
  hard_error "no ring of the live program in $EVDIR"
fi

# 4. Not sampled: no profile, said so.
(cd "$WORK" && "$OCGC" run --html "$WORK/off.html" -- ./mpr 1000 10 >/dev/null 2>&1)
check_eq "run without sampling: status" 0 "$?"
check_true "run without sampling: the page says there is no profile" \
  grep -q 'id="ocgc-profile-none"' "$WORK/off.html"
check_false "run without sampling: no flame graph" grep -q 'class="flame"' "$WORK/off.html"
finish
