#!/usr/bin/python3
"""html_check.py - opens an `ocgc ... --html` report in headless Chromium
(cdp.py) and checks it against the contract (docs/html-report.md) and its own
JSON; optionally keeps its screenshots (the pictures in docs/img/).

  html_check.py HTML --profile DIR [--json FILE] [--live] [--heap]
                [--compaction] [--png OUT] [--shot OUT] [--width W] [--log FILE]

--json FILE: the same data's `ocgc report --json`, which the embedded
#ocgc-report block must equal byte for byte.  --live: the report is of a run
ocgc watched (process series expected).  --heap: the program has a heap
all along (the heap series must draw it).  --compaction: the program
compacted (compaction marks must show, in their colour).  Every rate
chart's bins (data-t-ns, data-w-ns, data-v) must add up to the report's
counts and be what its polyline draws.  --png OUT: the full-page
screenshot checked; --shot OUT: the docs' picture, the page's top down to
the histogram of all pauses.  Prints "ok:   ..." and
"FAIL: ..." lines like tests/lib/lib.sh.  Exit: 0 all passed, 1 a
check failed, 77 no Chromium here, 99 the browser could not be driven.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

KINDS = ("minor", "major_slice", "major_finish", "compaction")
SERIES = ["alloc_mib_s", "promo_mib_s", "gc_share", "heap_bytes",
          "top_heap_bytes"]
LIVE_SERIES = ["cpu_share", "ctx_switches_per_s", "faults_per_s"]
MAX_MARKS = 5048       # the contract's 2,000 + 2 x 1,024 + 1,000
COMPACTION_FILL = "rgb(214, 39, 40)"  # html.c's style: #d62728
# ocgc_hist_bounds(): 1, 2 and 5 times each power of ten ns, 1 ns to 5000 s
BOUNDS_125 = [m * 10 ** d for d in range(13) for m in (1, 2, 5)]
MAX_POINTS = 2048      # the contract's "~2,000"

# What the page holds, read in one evaluation: attributes as strings.
DOM_JS = r"""(() => {
  const q = (s, r) => Array.from((r || document).querySelectorAll(s));
  const a = (e, n) => e.getAttribute(n);
  const tl = document.getElementById('ocgc-timeline');
  const data = document.getElementById('ocgc-report');
  return {
    scripts: q('script').map(s => [s.type, s.id]),
    csp: q('meta[http-equiv="Content-Security-Policy"]').map(m => m.content),
    json: data ? data.textContent : null,
    timeline: tl ? ['data-pauses', 'data-drawn', 'data-max-ns'].map(n => a(tl, n))
                 : null,
    marks: q('#ocgc-timeline .pause').map(e => [a(e, 'data-kind'),
      a(e, 'data-ns'), a(e, 'data-t-ns'), a(e, 'data-cause'),
      e.querySelector('title') !== null]),
    losses: q('#ocgc-timeline .loss').map(e => [a(e, 'data-from-ns'),
      a(e, 'data-to-ns')]),
    hists: q('svg.ocgc-hist').map(h => ({kind: a(h, 'data-kind'),
      count: a(h, 'data-count'), p50: a(h, 'data-p50-ns'),
      p99: a(h, 'data-p99-ns'), p999: a(h, 'data-p999-ns'),
      max: a(h, 'data-max-ns'), pcts: q('.pct', h).length,
      buckets: q('.bucket', h).map(b => [a(b, 'data-le-ns'), a(b, 'data-count')])})),
    tables: q('table.pcts').length,
    series: q('svg.ocgc-series').map(s => [a(s, 'data-series'), a(s, 'data-points')]),
    bins: q('svg.ocgc-series').map(s => ({name: a(s, 'data-series'),
      type: a(s, 'data-type'), scale: a(s, 'data-scale'), t: a(s, 'data-t-ns'),
      w: a(s, 'data-w-ns'), v: a(s, 'data-v'),
      line: q('polyline', s).map(l => a(l, 'points'))})),
    legend: q('#ocgc-legend span[data-kind]').map(e => [a(e, 'data-kind'),
      a(e, 'data-count'), getComputedStyle(e.querySelector('circle')).fill]),
    fills: q('#ocgc-timeline .pause').map(e => [a(e, 'data-kind'),
      getComputedStyle(e).fill]),
    causes: q('.cause-bar').map(b => [a(b, 'data-kind'), a(b, 'data-cause'),
      a(b, 'data-count'), a(b, 'data-total-ns'), a(b, 'data-max-ns')]),
    facts: q('#ocgc-facts dd').map(d => [a(d, 'data-key'), d.textContent]),
  };
})()"""


class Checks:
    """lib.sh's check_* in Python: count, print, go on."""

    def __init__(self):
        self.fails = 0
        self.count = 0

    def true(self, what, cond, detail=""):
        self.count += 1
        if cond:
            print("ok:   " + what)
        else:
            self.fails += 1
            print("FAIL: %s%s" % (what, ": " + detail if detail else ""))
        return cond

    def eq(self, what, expected, actual):
        return self.true("%s = %s" % (what, actual), expected == actual,
                         "expected %r, got %r" % (expected, actual))


def as_int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def check_events(ck, events, url):
    """No request but the document, nothing failed, nothing logged."""
    reqs = [e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"]
    others = [u for u in reqs if u != url and not u.startswith("data:")]
    ck.eq("requests for the document", 1, reqs.count(url))
    ck.true("no other request", not others, "requested %s" % others[:5])
    bad = {"Network.loadingFailed": "failed resource",
           "Runtime.exceptionThrown": "exception",
           "Runtime.consoleAPICalled": "console message",
           "Log.entryAdded": "log entry"}
    for method, what in sorted(bad.items()):
        seen = [e["params"] for e in events if e.get("method") == method]
        if method == "Log.entryAdded":
            seen = [p for p in seen if p["entry"]["level"] in ("error", "warning")]
        ck.true("no %s" % what, not seen, json.dumps(seen[:3])[:600])


def check_static(ck, dom, jtext):
    """The page's own rules: the CSP, one data block and no other script."""
    ck.eq("scripts", [["application/json", "ocgc-report"]], dom["scripts"])
    ck.eq("Content-Security-Policy",
          ["default-src 'none'; style-src 'unsafe-inline'; img-src data:"],
          dom["csp"])
    ck.true("the data block has no '<'", dom["json"] is not None
            and "<" not in dom["json"])
    if jtext is not None:
        block = (dom["json"] or "").replace("\\u003c", "<").rstrip("\n")
        ck.true("the data block is `ocgc report --json` byte for byte",
                block == jtext.rstrip("\n"),
                "%d bytes against %d" % (len(block), len(jtext)))


def check_timeline(ck, dom, rep):
    pauses = rep["pauses"]
    ck.true("timeline present", dom["timeline"] is not None)
    if dom["timeline"] is None:
        return
    total, drawn, maxns = (as_int(v) for v in dom["timeline"])
    marks = dom["marks"]
    ck.eq("timeline data-pauses (JSON pauses.count)", pauses["count"], total)
    ck.eq("timeline data-drawn (marks)", len(marks), drawn)
    if pauses["count"] <= 4000:
        ck.eq("marks (not downsampled)", pauses["count"], len(marks))
    else:
        ck.true("marks downsampled to %d" % len(marks), len(marks) <= MAX_MARKS)
    ns = [as_int(m[1]) for m in marks]
    wall = rep["window"]["wall_ns"]
    ck.true("every mark has data-ns and a data-t-ns in the window (0..%d)" % wall,
            None not in ns and all(
                as_int(m[2]) is not None and 0 <= as_int(m[2]) <= wall
                for m in marks))
    ck.eq("timeline data-max-ns (JSON pauses.max_ns)", pauses["max_ns"], maxns)
    ck.eq("longest mark (JSON pauses.max_ns)", pauses["max_ns"],
          max([v or 0 for v in ns], default=0))
    above = [v for v in ns if v and v > pauses["p99_ns"]]
    ck.true("marks above p99 kept (%d)" % len(above),
            len(above) >= min(1, pauses["count"]) or pauses["count"] == 0
            or pauses["p99_ns"] == pauses["max_ns"])
    ck.true("every mark has a <title>", all(m[4] for m in marks))
    causes = {c["cause"] for c in rep["causes"]} | {"unknown"}
    ck.true("mark kinds are JSON kinds", all(m[0] in KINDS for m in marks),
            str({m[0] for m in marks}))
    ck.true("mark causes are JSON causes", all(m[3] in causes for m in marks),
            str({m[3] for m in marks} - causes))
    ck.true("loss periods well formed", all(
        as_int(f) is not None and as_int(t) is not None and as_int(f) <= as_int(t)
        for f, t in dom["losses"]))


def check_hist(ck, hist, jh):
    """One histogram against its JSON object."""
    name = "histogram %s" % hist["kind"]
    for key, jkey in (("count", "count"), ("p50", "p50_ns"), ("p99", "p99_ns"),
                      ("p999", "p99_9_ns"), ("max", "max_ns")):
        ck.eq("%s %s" % (name, key), jh[jkey], as_int(hist[key]))
    counts = [as_int(c) for _, c in hist["buckets"]]
    les = [as_int(le) for le, _ in hist["buckets"]]
    ck.eq("%s: the buckets add up" % name, jh["count"], sum(c or 0 for c in counts))
    ck.true("%s: bucket bounds are consecutive 1-2-5 ones (libocgc's, as top and serve)"
            % name, None not in les and len(les) > 0 and les[0] in BOUNDS_125 and
            les == BOUNDS_125[BOUNDS_125.index(les[0]):][:len(les)], str(les[:20]))
    ck.true("%s: percentile marks" % name, hist["pcts"] >= 1)


def check_hists(ck, dom, rep):
    want = {"pause": rep["pauses"]}
    want.update({k: rep["kinds"][k] for k in KINDS if rep["kinds"][k]["count"]})
    got = {h["kind"]: h for h in dom["hists"]}
    ck.eq("histogram kinds", sorted(want), sorted(h["kind"] for h in dom["hists"]))
    ck.eq("percentile tables", len(dom["hists"]), dom["tables"])
    for kind in sorted(want):
        if kind in got:
            check_hist(ck, got[kind], want[kind])


def check_causes(ck, dom, rep):
    want = sorted([c["kind"], c["cause"], c["count"], c["total_ns"], c["worst_ns"]]
                  for c in rep["causes"])
    got = sorted([k, c] + [as_int(v) for v in rest]
                 for k, c, *rest in dom["causes"])
    ck.eq("cause bars (kind, cause, count, total, max) = JSON causes", want, got)


def check_series(ck, dom, rep, live):
    got = dict(dom["series"])
    want = SERIES + ["collections_per_s." + k for k in KINDS
                     if rep["counts"]["collections"][k]]
    if live:
        want += LIVE_SERIES
    missing = [s for s in want if s not in got]
    ck.true("series present", not missing, "missing %s" % missing)
    ck.true("series have at most %d points" % MAX_POINTS, all(
        as_int(n) is not None and 0 <= as_int(n) <= MAX_POINTS
        for n in got.values()), str(got))


def ints(text, unknown=False):
    """A data-* list of integers ("-": None where a gauge allows it)."""
    out = []
    for word in (text or "").split():
        if unknown and word == "-":
            out.append(None)
        else:
            out.append(as_int(word))
    return out


# Where the report's JSON has each rate series' count over the window:
# the events' own figures where it has them (collections seen, pause
# time), else the producer's exact counters.
def json_total(rep, name):
    c = rep["counts"]
    if name == "alloc_mib_s":
        return c["allocated_bytes"], "counts.allocated_bytes"
    if name == "promo_mib_s":
        return c["promoted_bytes"], "counts.promoted_bytes"
    if name.startswith("collections_per_s."):
        kind = name.split(".", 1)[1]
        return rep["events"]["collections_seen"][kind], "events.collections_seen." + kind
    if name == "gc_share":
        return rep["pauses"]["sum_ns"], "pauses.sum_ns"
    return None, None


def c_minor(rep):
    return rep["counts"]["collections"]["minor"]


def drawn(series, span):
    """The polyline's points as the data says they are: (x, y) a point."""
    scale = float(series["scale"])
    pts = []
    vals = []
    for t, w, v in zip(series["t"], series["w"], series["v"]):
        if v is None:
            continue
        vals.append((t, w, v if series["type"] == "gauge" else v * 1e9 / w / scale))
    most = max([v for _, _, v in vals], default=0)
    for t, w, v in vals:
        x = (t + w / 2) / (span or 1)
        pts.append((64 + min(x, 1) * (960 - 64 - 12),
                    8 + (1 - (v / most if most > 0 else 0)) * (110 - 8 - 18)))
    return pts


def check_bins(ck, dom, rep, want_heap):
    """Every rate chart is its bins: integers that sum to the report's own
    counts for the window, a gc_share never above 1, a heap never a made-up
    0, and a polyline drawn from exactly those figures."""
    span = rep["window"]["wall_ns"]
    gc_bins = None
    exactish = rep["events"]["lost"] == 0
    for raw in dom["bins"]:
        name = raw["name"]
        gauge = raw["type"] == "gauge"
        s = dict(raw, t=ints(raw["t"]), w=ints(raw["w"]), v=ints(raw["v"], gauge))
        n = len(s["t"])
        ok = (None not in s["t"] and None not in s["w"] and len(s["w"]) == n
              and len(s["v"]) == n and all(w > 0 for w in s["w"])
              and (gauge or None not in s["v"]) and as_int(raw["scale"]) is not None)
        if not ck.true("%s: %d bins of integers (data-t-ns, data-w-ns, data-v)" % (name, n), ok,
                       "%r" % {k: raw[k] for k in ("t", "w", "v")}):
            continue
        line = [tuple(float(c) for c in p.split(",")) for l in s["line"] for p in l.split()]
        want = drawn(s, span)
        ck.true("%s: the polyline is the bins' figures (%d points)" % (name, len(want)),
                len(line) == len(want) and all(
                    abs(a[0] - b[0]) <= 0.11 and abs(a[1] - b[1]) <= 0.11
                    for a, b in zip(line, want)),
                "drawn %s, from the data %s" % (line[:4], want[:4]))
        if name in LIVE_SERIES:
            continue
        edges = list(zip(s["t"], s["w"]))
        if gc_bins is None:
            gc_bins = edges
            width = max(s["w"])
            ck.true("%s: fixed bins of %d ns, end to end (%d; the first and last cut "
                    "by the window)" % (name, width, n),
                    all(t1 == t0 + w0 for (t0, w0), (t1, _) in zip(edges, edges[1:]))
                    and all(w == width for w in s["w"][1:-1]) and s["t"][:1] == [0]
                    and s["t"][-1] + s["w"][-1] <= max(span, width))
        else:
            ck.true("%s: the same bins as %s" % (name, dom["bins"][0]["name"]), edges == gc_bins)
        if gauge:
            known = [v for v in s["v"] if v is not None]
            ck.true("%s: no made-up 0 (%d bins known)" % (name, len(known)),
                    all(v > 0 for v in known), str(known[:10]))
            if want_heap:
                ck.true("%s: a heap is drawn (JSON heap %d bytes)" % (name, rep["heap"]["heap_bytes"]),
                        len(known) > 0 and rep["heap"]["heap_bytes"] > 0)
            continue
        if name == "gc_share":
            over = [(t, w, v) for t, w, v in zip(s["t"], s["w"], s["v"]) if v > w]
            ck.true("gc_share: never above 1 (ns in pauses <= the bin's width)", not over,
                    str(over[:5]))
        total, key = json_total(rep, name)
        if total is None:
            continue
        got = sum(s["v"])
        if not exactish:
            ck.true("%s: bins sum to %d <= %s %d (events were lost)" % (name, got, key, total),
                    got <= total)
            continue
        slack = 0
        if key.startswith("counts."):
            # the producer's exact counters against the events' counts:
            # they differ by the collections at a window's edges (its
            # counters are read a moment after the cursor starts), each
            # of at most a minor heap (2 MiB: the programs' default), one
            # each edge
            edge = abs(rep["events"]["collections_seen"]["minor"] - c_minor(rep))
            slack = (edge + 2) * (2 << 20)
        ck.true("%s: bins x width sum to %s (%d against %d%s)"
                % (name, key, got, total, ", within %d" % slack if slack else ""),
                abs(got - total) <= slack, "off by %d" % (got - total))


def check_kinds(ck, dom, rep, want_compaction):
    """The legend counts every kind the pauses had; a compaction shows."""
    legend = {k: as_int(n) for k, n, _ in dom["legend"]}
    marks = {m[0] for m in dom["marks"]}
    ck.eq("legend counts add up to the pauses", rep["pauses"]["count"],
          sum(v or 0 for v in legend.values()))
    ck.true("every mark's kind is in the legend %s" % sorted(legend),
            marks <= set(legend), str(marks - set(legend)))
    if rep["counts"]["collections"]["compaction"] > 0 and want_compaction:
        fills = [f for k, f in dom["fills"] if k == "compaction"]
        ck.true("compactions (%d) show: %d compaction marks, in the compaction colour"
                % (rep["counts"]["collections"]["compaction"], len(fills)),
                len(fills) >= 1 and all(f == COMPACTION_FILL for f in fills), str(fills[:3]))
        ck.true("the legend has compaction", legend.get("compaction", 0) >= 1)


def check_facts(ck, dom, rep):
    facts = dict(dom["facts"])
    need = ["program", "pid", "ocaml", "window_ns", "events", "lost"]
    ck.true("facts %s" % sorted(facts), all(k in facts for k in need),
            "missing %s" % [k for k in need if k not in facts])
    plain = {k: "".join(ch for ch in v if ch not in ", \u202f\u00a0")
             for k, v in facts.items()}
    src = rep["source"]
    if src["pid"] is not None:
        ck.true("facts: pid", str(src["pid"]) in plain.get("pid", ""), facts.get("pid"))
    if src["program"]:
        ck.true("facts: program", src["program"] in facts.get("program", ""),
                facts.get("program"))
    ck.true("facts: events", str(rep["events"]["seen"]) in plain.get("events", ""),
            facts.get("events"))
    ck.true("facts: lost", str(rep["events"]["lost"]) in plain.get("lost", ""),
            facts.get("lost"))


def check_picture(ck, browser, width, keep):
    """The full-page screenshot is a sound PNG; a scaled-down one is not
    blank (pure-Python decoding: small on purpose)."""
    full = browser.screenshot()
    try:
        w, h, _, raw = cdp.png_info(full)
        ck.eq("screenshot width", width, w)
        ck.true("screenshot %dx%d, %d bytes" % (w, h, len(full)),
                h >= 300 and 2000 < len(full) < 20 << 20)
    except ValueError as err:
        ck.true("screenshot is a PNG", False, str(err))
    if keep:
        with open(keep, "wb") as f:
            f.write(full)
    _, _, pixels = cdp.png_pixels(browser.screenshot(scale=0.25))
    inked = sum(1 for p in pixels if p != (255, 255, 255))
    colours = len(set(pixels))
    ck.true("screenshot not blank: %d of %d pixels inked, %d colours"
            % (inked, len(pixels), colours),
            inked * 100 >= len(pixels) and colours >= 8)


# Where the docs' picture ends: below the histogram of all pauses and its
# table (the header facts, the timeline and that histogram; the whole page
# would be too big a PNG for a README).
SHOT_END_JS = r"""(() => {
  const ends = ['svg.ocgc-hist', 'table.pcts'].map(s => document.querySelector(s))
    .filter(e => e).map(e => e.getBoundingClientRect().bottom + window.scrollY);
  return ends.length ? Math.ceil(Math.max(...ends)) + 16 : null;
})()"""


def run(args, ck):
    exe = cdp.find_chromium()
    if exe is None:
        print("skipped: no Chromium here (Debian: apt-get install chromium)")
        return 77
    url = "file://" + os.path.abspath(args.html)
    jtext = None
    if args.json:
        with open(args.json, encoding="utf-8") as f:
            jtext = f.read()
    browser = cdp.Browser(exe, args.profile, width=args.width, log=args.log)
    try:
        browser.open_page(url)
        dom = browser.evaluate(DOM_JS)
        check_picture(ck, browser, args.width, args.png)
        if args.shot:
            with open(args.shot, "wb") as f:
                f.write(browser.screenshot(height=browser.evaluate(SHOT_END_JS)))
        events = browser.events
    finally:
        browser.close()
    ck.eq("processes left behind", [], cdp.leftovers(browser.profile))
    check_events(ck, events, url)
    check_static(ck, dom, jtext)
    rep = json.loads(dom["json"] or "null")
    if not ck.true("the data block is a report", isinstance(rep, dict)):
        return 1
    for check in (check_timeline, check_hists, check_causes, check_facts):
        check(ck, dom, rep)
    check_series(ck, dom, rep, args.live)
    check_bins(ck, dom, rep, args.heap)
    check_kinds(ck, dom, rep, args.compaction)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("html")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--json")
    ap.add_argument("--live", action="store_true")
    ap.add_argument("--heap", action="store_true")
    ap.add_argument("--compaction", action="store_true")
    ap.add_argument("--png")
    ap.add_argument("--shot")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--log")
    args = ap.parse_args()
    ck = Checks()
    try:
        status = run(args, ck)
    except cdp.CdpError as err:
        print("ERROR: driving Chromium: %s" % err)
        return 99
    if status:
        return status
    print("%d of %d checks failed" % (ck.fails, ck.count) if ck.fails
          else "all %d checks passed" % ck.count)
    return 1 if ck.fails else 0


if __name__ == "__main__":
    sys.exit(main())
