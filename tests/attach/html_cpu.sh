#!/bin/sh
# html_cpu.sh - "Where the CPU goes" in the HTML report and the report's
# JSON member "cpu", for cpu_gc_burn (three functions burning CPU 1:2:4
# while churning the minor heap):
# - `ocgc run --cpu F --json --html OUT`: the page's figures (#ocgc-cpu's
#   samples, samples in the collector, the two GC shares; the legend's
#   samples of each phase; the top functions) are those of the report's
#   JSON ("cpu", run --json's output and the page's own data block); the
#   phases add up to the samples, those in the collector to gc_samples;
#   minor among them; the flame graph has Cpu_gc_burn.burn_four in the
#   mutator's colour and a frame under [minor] in minor's;
# - `ocgc report PID --duration 3s --cpu --json --html OUT`: the same over
#   a window of a running program, the ring's share measured;
# - in headless Chromium (html_cpu.py): nothing requested or logged, each
#   frame as wide as its samples, each frame's rendered fill its phase's
#   legend colour;
# - report --cpu with --file is a usage error (2).
# Skips (77) only where perf_event_open is refused, saying why; the
# browser part only where there is no Chromium.
HERE="$OCGC_SRCDIR/tests/cmd"
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

compile_native burn ocgc_test.ml cpu_gc_burn.ml

# agree TAG: the page $WORK/TAG.html against the JSON $WORK/TAG.json
agree() {
  python3 - "$WORK/$1.html" "$WORK/$1.json" <<'PY'
import json, sys
from html.parser import HTMLParser
page, jpath = sys.argv[1:3]
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.cpu, self.legend, self.top, self.frames = None, {}, [], []
        self.block, self.data = False, ""
        self.table = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "ocgc-cpu": self.cpu = a
        if tag == "span" and a.get("class") == "phase": self.legend[a["data-phase"]] = a
        if tag == "table": self.table = a.get("id")
        if tag == "tr" and self.table == "ocgc-top-cpu" and "data-fn" in a: self.top.append(a)
        if tag == "g" and a.get("class") == "frame" and "data-samples" in a: self.frames.append(a)
        if tag == "script" and a.get("id") == "ocgc-report": self.block = True
    def handle_endtag(self, tag):
        if tag == "script": self.block = False
    def handle_data(self, d):
        if self.block: self.data += d
p = P(); p.feed(open(page, encoding="utf-8").read())
rep = json.load(open(jpath)); cpu = rep["cpu"]
fails = 0
def check(what, ok, extra=""):
    global fails
    print("%s: %s%s" % ("ok" if ok else "FAIL", what, (" (" + extra + ")") if extra else ""))
    fails += not ok
check("the page's data block is the JSON report", json.loads(p.data.replace("\\u003c", "<")) == rep)
check("a CPU section", p.cpu is not None)
if p.cpu is None: sys.exit(1)
for attr, key in (("data-samples", "samples"), ("data-gc-samples", "gc_samples"),
                  ("data-frequency-hz", "frequency_hz"), ("data-window-ns", "window_ns"),
                  ("data-threads", "threads_seen"), ("data-lost", "lost")):
    check("page %s = JSON cpu.%s = %s" % (attr, key, cpu[key]), int(p.cpu[attr]) == cpu[key], p.cpu[attr])
check("page's GC share of the samples = JSON's %s" % cpu["gc_share_samples"],
      abs(float(p.cpu["data-gc-share-samples"]) - cpu["gc_share_samples"]) < 1e-6, p.cpu["data-gc-share-samples"])
ring = cpu["gc_share_ring"]
check("page's GC share by the ring = JSON's %s" % ring,
      ring is not None and abs(float(p.cpu["data-gc-share-ring"]) - ring) < 1e-6, p.cpu["data-gc-share-ring"])
for ph, n in cpu["phases"].items():
    got = int(p.legend[ph]["data-count"]) if ph in p.legend else 0
    check("legend %s = JSON's %d" % (ph, n), got == n, str(got))
check("the phases add up to the samples (%d)" % cpu["samples"], sum(cpu["phases"].values()) == cpu["samples"])
check("those in the collector are gc_samples (%d)" % cpu["gc_samples"],
      cpu["samples"] - cpu["phases"]["mutator"] == cpu["gc_samples"])
check("gc_share_samples is gc_samples / samples",
      abs(cpu["gc_share_samples"] - cpu["gc_samples"] / max(cpu["samples"], 1)) < 1e-5)
check("minor among the phases (%d samples)" % cpu["phases"]["minor"], cpu["phases"]["minor"] > 0)
check("the top functions: the JSON's", [(r["data-fn"], int(r["data-flat"])) for r in p.top] ==
      [(t["function"], t["samples"]) for t in cpu["top_functions"]])
root = [f for f in p.frames if f["data-depth"] == "0"]
check("the flame graph's root is every sample", len(root) == 1 and int(root[0]["data-samples"]) == cpu["samples"])
four = [f for f in p.frames if f["data-fn"] == "Cpu_gc_burn.burn_four"]
check("Cpu_gc_burn.burn_four in the flame graph, as the mutator's", any(f.get("data-phase") == "mutator" for f in four))
check("frames under [minor]", any(f.get("data-phase") == "minor" and f["data-depth"] != "1" for f in p.frames))
print("share of the samples in the collector %.3f, the ring's %.3f" % (cpu["gc_share_samples"], ring or 0))
sys.exit(1 if fails else 0)
PY
}

say "== ocgc run --cpu F --json --html OUT"
( sleep 3; : >"$WORK/run.stop" ) &
spid=$!
(cd "$WORK" && "$OCGC" run --cpu "$WORK/run.pb.gz" --frequency 400 --json -o "$WORK/run.json" \
  --html "$WORK/run.html" -- ./burn "$WORK/run.stop" >"$WORK/run.out" 2>"$WORK/run.err")
rc=$?
wait $spid
cat "$WORK/run.err"
if grep -q 'running it without a CPU profile' "$WORK/run.err"; then
  say "skipped: perf_event_open is refused here, or has no cpu-clock event: `head -n 1 "$WORK/run.err"`"
  exit 77
fi
check_eq "ocgc run --cpu --json --html: exit status" 0 "$rc"
agree run >"$WORK/run.agree" 2>&1
check_eq "run: the page's CPU figures are the JSON report's" 0 "$?"
sed 's/^/  /' "$WORK/run.agree"

say "== ocgc report PID --duration 3s --cpu --json --html OUT"
start_bg burn ./burn "$WORK/burn.stop"
pid=$BGPID
wait_key burn pid "$pid"
"$OCGC" report "$pid" --duration 3s --cpu --frequency 400 --json --html "$WORK/rep.html" \
  >"$WORK/rep.json" 2>"$WORK/rep.err"
check_eq "ocgc report --cpu: exit status" 0 "$?"
cat "$WORK/rep.err"
stop_bg burn "$pid"
agree rep >"$WORK/rep.agree" 2>&1
check_eq "report: the page's CPU figures are the JSON report's" 0 "$?"
sed 's/^/  /' "$WORK/rep.agree"
check_true "report: it says its figures on stderr" grep -q 'samples in .* in the collector by their stacks' "$WORK/rep.err"

"$OCGC" report --file /nonexistent --cpu >/dev/null 2>"$WORK/file.err"
check_eq "report --file --cpu: a usage error" 2 "$?"

_which=`python3 "$HERE/cdp.py" which`
if test $? -eq 77; then
  say "skipped the browser: $_which"
else
  for t in run rep; do
    python3 "$OCGC_SRCDIR/tests/attach/html_cpu.py" "$WORK/$t.html" --profile "$WORK/profile-$t" \
      --log "$WORK/$t.chromium.log" >"$WORK/$t.browse" 2>&1
    _rc=$?
    sed 's/^/  /' "$WORK/$t.browse"
    check_eq "$t: html_cpu.py in Chromium" 0 "$_rc"
    check_eq "$t: browser processes left" "" "`python3 "$HERE/cdp.py" leftovers "$WORK/profile-$t"`"
  done
fi
finish
