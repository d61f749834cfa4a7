#!/bin/sh
# html_report.sh - `ocgc run --html` and `ocgc report --file --html` on a
# real program, read without a browser (html_chromium.sh opens them in one):
# the file is one self-contained document (the CSP, one script element: the
# JSON data, no control character, no event attribute, no reference out),
# its JSON block is byte for byte the --json report of the same run (a
# whole run, a ring file, a 500 ms window of a live process), and
# the SVG's figures equal the JSON's: pause marks (data-pauses, data-drawn,
# data-max-ns, each mark's kind and cause among the JSON's, a <title> each),
# a histogram per kind with pauses with its percentiles, a bar per cause
# row with its count, total and worst, every series (the /proc ones only
# for a live run).  A program named with HTML and control characters comes
# out escaped.  Errors: a folder that does not exist (or, as non-root, one
# without write permission) fails before the program runs, nothing left;
# /dev/full fails with ENOSPC and exit 5; `ocgc run` keeps a failing
# program's status.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_report_lib.sh"
cmd_report_init

compile_native workload ocgc_test.ml workload.ml
compile_native cmd_exit ocgc_test.ml cmd_exit.ml
compile_native target ocgc_test.ml attach_target.ml

# check_html TAG HTML JSON LIVE: what html_check (below) finds wrong in HTML
# against JSON (LIVE 1: the /proc series must be there, 0: must not).
check_html() {
  python3 - "$2" "$3" "$4" >"$WORK/$1.check" 2>&1 <<'EOF'
import html.parser, json, re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
ref_text = open(sys.argv[2], encoding="utf-8").read()
live = sys.argv[3] == "1"
bad = []
def need(cond, what):
    if not cond: bad.append(what)
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.els = []; self.stack = []; self.scripts = []; self.titles = 0; self.in_script = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs); self.els.append((tag, a)); self.stack.append((tag, a))
        for k, _ in attrs:
            need(not k.startswith("on"), "event attribute " + k)
            need(k not in ("src", "href", "action", "xlink:href"), "reference attribute " + k)
        if tag == "script": self.scripts.append(a); self.in_script = []
        if tag == "title" and len(self.stack) > 1 and "pause" in self.stack[-2][1].get("class", "").split():
            self.titles += 1
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs); self.stack.pop()
    def handle_endtag(self, tag):
        if self.stack: self.stack.pop()
        if tag == "script": self.script = "".join(self.in_script); self.in_script = None
    def handle_data(self, d):
        if self.in_script is not None: self.in_script.append(d)
p = P(); p.feed(doc)
need(not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", doc), "control characters")
need(len(p.scripts) == 1 and p.scripts[0] == {"type": "application/json", "id": "ocgc-report"}, "scripts %r" % p.scripts)
need(any(t == "meta" and a.get("http-equiv") == "Content-Security-Policy" and
         a.get("content") == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
         for t, a in p.els), "CSP")
need("<" not in p.script, "a < in the data block")
need(p.script.replace("\\u003c", "<") == ref_text, "JSON block differs from --json")
j = json.loads(p.script)
def els(cls): return [a for t, a in p.els if cls in a.get("class", "").split()]
tl = [a for t, a in p.els if a.get("id") == "ocgc-timeline"][0]
marks = els("pause")
need(int(tl["data-pauses"]) == j["pauses"]["count"], "data-pauses")
need(int(tl["data-drawn"]) == len(marks), "data-drawn %s, marks %d" % (tl["data-drawn"], len(marks)))
if j["pauses"]["count"] <= 4000:
    need(len(marks) == j["pauses"]["count"], "marks %d of %d pauses" % (len(marks), j["pauses"]["count"]))
else:
    need(2000 <= len(marks) <= 4024, "marks %d of %d pauses" % (len(marks), j["pauses"]["count"]))
need(int(tl["data-max-ns"]) == j["pauses"]["max_ns"], "data-max-ns")
need(max(int(m["data-ns"]) for m in marks) == j["pauses"]["max_ns"], "longest mark")
need(p.titles == len(marks), "titles %d" % p.titles)
rows = {(r["kind"], r["cause"]) for r in j["causes"]}
need(all((m["data-kind"], m["data-cause"]) in rows for m in marks), "a mark's kind/cause not in the cause table")
need(all(0 <= int(m["data-t-ns"]) <= j["window"]["wall_ns"] for m in marks), "a mark outside the window")
bars = {(a["data-kind"], a["data-cause"]): a for a in els("cause-bar")}
need(len(bars) == len(j["causes"]), "cause bars")
for r in j["causes"]:
    a = bars.get((r["kind"], r["cause"]), {})
    need([a.get("data-count"), a.get("data-total-ns"), a.get("data-max-ns")] ==
         [str(r["count"]), str(r["total_ns"]), str(r["worst_ns"])], "cause bar %r" % (r,))
hists = {a["data-kind"]: a for a in els("ocgc-hist")}
want = dict(j["kinds"], pause=j["pauses"])
need(set(hists) == {k for k, h in want.items() if h["count"] > 0}, "histograms %r" % sorted(hists))
for k, a in hists.items():
    h = want[k]
    need([a["data-count"], a["data-p50-ns"], a["data-p99-ns"], a["data-p999-ns"], a["data-max-ns"]] ==
         [str(h[f]) for f in ("count", "p50_ns", "p99_ns", "p99_9_ns", "max_ns")], "histogram " + k)
need(len(els("pcts")) == len(hists), "percentile tables")
need(len(els("bucket")) >= 3 and len(els("pct")) == 4 * len(hists), "buckets and percentile marks")
series = {a["data-series"]: int(a["data-points"]) for a in els("ocgc-series")}
names = ["alloc_mib_s", "promo_mib_s", "gc_share", "heap_bytes", "top_heap_bytes"] + \
        ["collections_per_s." + k for k in j["kinds"]]
proc = ["cpu_share", "ctx_switches_per_s", "faults_per_s"]
need(set(series) == set(names + (proc if live else [])), "series %r" % sorted(series))
need(all(0 < series[n] <= 2000 for n in ["alloc_mib_s", "gc_share", "heap_bytes", "collections_per_s.minor"]), "empty series")
facts = {a["data-key"] for t, a in p.els if t == "dd" and "data-key" in a}
need({"program", "pid", "ocaml", "window_ns", "events", "lost"} <= facts, "facts %r" % facts)
print("bad: " + "; ".join(bad) if bad else "ok")
EOF
  check_eq "$1: the HTML against the JSON" ok "`tail -1 "$WORK/$1.check"`"
  test "`tail -1 "$WORK/$1.check"`" = ok || cat "$WORK/$1.check"
}

say "== ocgc run --html: a live run"
mkdir -p "$WORK/out"
report_cmd live run --json -o "$WORK/live.ref" --html "$WORK/out/live.html" -- ./workload 4
check_eq "live: exit status" 0 "`cat "$WORK/live.rc"`"
check_eq "live: only the file is left in its folder" live.html "`ls -A "$WORK/out"`"
check_html live "$WORK/out/live.html" "$WORK/live.ref" 1
check_true "live: the program's stdout is its own" grep -q "^gc.minor_collections " "$WORK/live.json"

say "== ocgc report --file --html: the same JSON on stdout and in the file"
run_ok wl ./workload 3
ring_of wl
report_cmd file report --file "$RING" --json --html "$WORK/out/file.html"
check_eq "file: exit status" 0 "`cat "$WORK/file.rc"`"
check_html file "$WORK/out/file.html" "$WORK/file.json" 0
check_true "file: the path is in the facts" grep -q "data-key=\"path\">$RING<" "$WORK/out/file.html"
report_cmd file2 report --file "$RING" --json
check_true "file: --json alone prints the same bytes" cmp -s "$WORK/file.json" "$WORK/file2.json"

say "== ocgc report PID --duration --html: a window of a live process"
start_bg target ./target 60
pid=$BGPID
wait_key target pid "$pid"
report_cmd win report "$pid" --duration 500ms --json --html "$WORK/out/win.html"
check_eq "win: exit status" 0 "`cat "$WORK/win.rc"`"
check_html win "$WORK/out/win.html" "$WORK/win.json" 1
{ kill -9 "$pid"; wait "$pid"; } 2>/dev/null

say "== a hostile program name and command line"
bad="$WORK/a<b>&'\"x`printf '\033'`]0;t`printf '\007'`"
cp "$WORK/workload" "$bad"
report_cmd hostile run --html "$WORK/out/hostile.html" -- "$bad" 1
check_eq "hostile: exit status" 0 "`cat "$WORK/hostile.rc"`"
check_true "hostile: the name escaped" grep -q "a&lt;b&gt;&amp;&#39;&quot;x\\\\x1b]0;t\\\\x07" "$WORK/out/hostile.html"
check_false "hostile: nothing raw" grep -q "a<b>" "$WORK/out/hostile.html"
check_false "hostile: no escape character" grep -q "`printf '\033'`" "$WORK/out/hostile.html"

say "== errors"
report_cmd nodir run --html "$WORK/nowhere/x.html" -- ./cmd_exit 0
check_eq "no folder: exit status" 5 "`cat "$WORK/nodir.rc"`"
check_true "no folder: says so" grep -q "cannot write the HTML report $WORK/nowhere/x.html: No such file" "$WORK/nodir.err"
check_false "no folder: the program did not run" grep -q "pid" "$WORK/nodir.json"
if test "`id -u`" != 0; then
  mkdir "$WORK/ro" && chmod 555 "$WORK/ro"
  report_cmd ro report --file "$RING" --html "$WORK/ro/x.html"
  check_eq "read-only folder: exit status" 8 "`cat "$WORK/ro.rc"`"
  check_true "read-only folder: says so" grep -q "Permission denied" "$WORK/ro.err"
  check_eq "read-only folder: nothing in it" "" "`ls -A "$WORK/ro"`"
  chmod 755 "$WORK/ro"
else
  say "  (root: a folder without write permission does not stop root; not tried)"
fi
if test -w /dev/full; then
  report_cmd full report --file "$RING" --html /dev/full
  check_eq "/dev/full: exit status" 5 "`cat "$WORK/full.rc"`"
  check_true "/dev/full: says so" grep -q "writing the HTML report /dev/full: No space left on device" "$WORK/full.err"
  report_cmd fullrun run --html /dev/full -- ./cmd_exit 0
  check_eq "/dev/full, run: a status of 0 becomes 5" 5 "`cat "$WORK/fullrun.rc"`"
  report_cmd fullrun3 run --html /dev/full -- ./cmd_exit 3
  check_eq "/dev/full, run: the program's status 3 stays" 3 "`cat "$WORK/fullrun3.rc"`"
fi
# A link to a FIFO (or a terminal) planted where the report goes is never
# written through: an error at once, the FIFO not opened (it used to be
# opened for writing: with no reader, ocgc waited for ever).
mkfifo "$WORK/trap.fifo"
ln -s "$WORK/trap.fifo" "$WORK/linked.html"
timeout 60 "$OCGC" report --file "$RING" --html "$WORK/linked.html" >"$WORK/linked.out" 2>"$WORK/linked.err"
rc=$?
check_true "a link to a FIFO: refused (status 5, not 124 for a hang)" test $rc = 5
check_true "a link to a FIFO: says why" grep -q "never written through" "$WORK/linked.err"
check_true "a link to a FIFO: the link is left as it was" test -L "$WORK/linked.html"
# The FIFO named itself is the caller's choice: opened without waiting for
# a reader (an error, not a hang).
timeout 60 "$OCGC" report --file "$RING" --html "$WORK/trap.fifo" >"$WORK/fifo.out" 2>"$WORK/fifo.err"
rc=$?
check_true "a FIFO with no reader: an error, not a hang" test $rc = 5
check_true "a FIFO with no reader: says so" grep -q "No such device or address" "$WORK/fifo.err"
check_eq "no temporary file left" "file.html hostile.html live.html win.html" "`ls "$WORK/out" | tr '\n' ' ' | sed 's/ $//'`"

finish
