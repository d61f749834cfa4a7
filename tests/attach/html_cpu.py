#!/usr/bin/python3
"""html_cpu.py - "Where the CPU goes" of an `ocgc ... --cpu --html` report
opened in headless Chromium (tests/cmd/cdp.py), checked against the
page's own figures:

  html_cpu.py HTML --profile DIR [--log FILE]

- nothing requested, logged or thrown (html_check.py's rules);
- the CPU flame graph drawn, each frame's rendered width its samples over
  the graph's total (within a pixel), the root the total;
- every frame under a phase is rendered in that phase's colour, the one
  its legend key says and is drawn in; at least two phases drawn.
Prints "ok:" and "FAIL:" lines; exit 0, 1 (a check failed), 77 (no
Chromium), 99 (the browser could not be driven).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmd"))
import cdp  # noqa: E402
import html_check  # noqa: E402

DOM_JS = r"""(() => {
  const svg = document.getElementById('ocgc-flame-cpu');
  const keys = Array.from(document.querySelectorAll('#ocgc-cpu-legend span.phase')).map(s => ({
    phase: s.getAttribute('data-phase'), fill: s.getAttribute('data-fill'),
    drawn: getComputedStyle(s.querySelector('rect')).fill}));
  if (!svg) return {flame: null, keys: keys};
  const box = svg.getBoundingClientRect();
  return {keys: keys, flame: {total: svg.getAttribute('data-total'), width: box.width,
    frames: Array.from(svg.querySelectorAll('g.frame')).map(g => {
      const r = g.querySelector('rect'), b = r.getBoundingClientRect();
      return {fn: g.getAttribute('data-fn'), samples: g.getAttribute('data-samples'),
              depth: g.getAttribute('data-depth'), phase: g.getAttribute('data-phase'),
              fill: getComputedStyle(r).fill, w: b.width};
    })}};
})()"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("html")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--log")
    args = ap.parse_args()
    exe = cdp.find_chromium()
    if exe is None:
        print("skipped: no Chromium here (Debian: apt-get install chromium)")
        return 77
    ck = html_check.Checks()
    url = "file://" + os.path.abspath(args.html)
    browser = cdp.Browser(exe, args.profile, log=args.log)
    try:
        browser.open_page(url)
        dom = browser.evaluate(DOM_JS)
        events = browser.events
    except cdp.CdpError as err:
        print("ERROR: driving Chromium: %s" % err)
        return 99
    finally:
        browser.close()
    ck.eq("processes left behind", [], cdp.leftovers(browser.profile))
    html_check.check_events(ck, events, url)
    g = dom["flame"]
    if ck.true("the CPU flame graph drawn", g is not None and len(g["frames"]) > 1):
        total = int(g["total"])
        root = [f for f in g["frames"] if f["depth"] == "0"]
        ck.eq("one root, every sample", [total], [int(f["samples"]) for f in root])
        bad = [f["fn"] for f in g["frames"]
               if abs(f["w"] - g["width"] * int(f["samples"]) / total) > 1.0]
        ck.true("every frame as wide as its share of the samples", not bad, str(bad[:5]))
        keys = {k["phase"]: k for k in dom["keys"]}
        ck.true("each legend key drawn in its colour",
                all(k["drawn"].replace(" ", "") == k["fill"] for k in dom["keys"])
                and dom["keys"], str(dom["keys"]))
        wrong = [(f["fn"], f["phase"], f["fill"]) for f in g["frames"] if f["depth"] != "0"
                 and (f["phase"] not in keys or f["fill"] != keys[f["phase"]]["drawn"])]
        ck.true("every frame in its phase's legend colour", not wrong, str(wrong[:5]))
        phases = set(f["phase"] for f in g["frames"] if f["depth"] != "0")
        ck.true("frames of two phases or more: %s" % sorted(phases), len(phases) >= 2)
    print("%d of %d checks failed" % (ck.fails, ck.count) if ck.fails
          else "all %d checks passed" % ck.count)
    return 1 if ck.fails else 0


if __name__ == "__main__":
    sys.exit(main())
