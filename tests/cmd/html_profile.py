#!/usr/bin/python3
"""html_profile.py - the allocation profile of an `ocgc ... --html` report
("Which code allocates") opened in headless Chromium (cdp.py), checked
against the report's own figures:

  html_profile.py HTML --profile DIR --top FUNCTION [--log FILE]

- nothing requested, logged or thrown (html_check.py's rules);
- both flame graphs drawn, each frame's rendered width its bytes over the
  graph's total (within a pixel), the root the total, a parent at least as
  wide as its children together;
- the widest leaf frame of the allocation graph is FUNCTION, the known top
  allocating function, and so is the first row of the top allocating
  functions; that row's flat bytes are the sum of FUNCTION's leaf frames.
Prints "ok:" and "FAIL:" lines; exit 0, 1 (a check failed), 77 (no
Chromium), 99 (the browser could not be driven).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import html_check  # noqa: E402

DOM_JS = r"""(() => {
  const flame = id => {
    const svg = document.getElementById(id);
    if (!svg) return null;
    const w = svg.getBoundingClientRect().width;
    return {
      total: svg.getAttribute('data-total'), width: w,
      frames: Array.from(svg.querySelectorAll('g.frame')).map(g => ({
        fn: g.getAttribute('data-fn'), bytes: g.getAttribute('data-bytes'),
        depth: g.getAttribute('data-depth'), leaf: g.getAttribute('data-leaf'),
        x: g.querySelector('rect').getBoundingClientRect().left -
           svg.getBoundingClientRect().left,
        w: g.querySelector('rect').getBoundingClientRect().width}))
    };
  };
  const rows = Array.from(document.querySelectorAll('#ocgc-top-alloc tr[data-fn]'))
    .map(r => ({fn: r.getAttribute('data-fn'), flat: r.getAttribute('data-flat')}));
  return {alloc: flame('ocgc-flame-alloc'), inuse: flame('ocgc-flame-inuse'), rows: rows};
})()"""


def check_flame(ck, name, g):
    if not ck.true("%s: drawn" % name, g is not None and len(g["frames"]) > 1):
        return
    total = int(g["total"])
    root = [f for f in g["frames"] if f["depth"] == "0"]
    ck.eq("%s: one root" % name, 1, len(root))
    ck.eq("%s: the root's bytes are the total" % name, total, int(root[0]["bytes"]))
    bad = [f["fn"] for f in g["frames"]
           if abs(f["w"] - g["width"] * int(f["bytes"]) / total) > 1.0]
    ck.true("%s: every frame as wide as its share of the bytes" % name, not bad, str(bad[:5]))
    # children: the frames one row up within the parent's span
    over = []
    for p in g["frames"]:
        d = int(p["depth"]) + 1
        kids = [f for f in g["frames"] if int(f["depth"]) == d
                and f["x"] >= p["x"] - 0.5 and f["x"] + f["w"] <= p["x"] + p["w"] + 0.5]
        if sum(int(k["bytes"]) for k in kids) > int(p["bytes"]):
            over.append(p["fn"])
    ck.true("%s: no frame narrower than its children" % name, not over, str(over[:5]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("html")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--top", required=True)
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
    check_flame(ck, "allocation", dom["alloc"])
    check_flame(ck, "in use", dom["inuse"])
    if dom["alloc"] is not None:
        leaves = [f for f in dom["alloc"]["frames"] if f["leaf"] == "1"]
        widest = max(leaves, key=lambda f: f["w"]) if leaves else None
        ck.eq("the widest leaf of the allocation graph", args.top, widest and widest["fn"])
        rows = dom["rows"]
        ck.eq("the top allocating function", args.top, rows[0]["fn"] if rows else None)
        if rows:
            ck.eq("its flat bytes: the sum of its leaf frames", int(rows[0]["flat"]),
                  sum(int(f["bytes"]) for f in leaves if f["fn"] == args.top))
    print("%d of %d checks failed" % (ck.fails, ck.count) if ck.fails
          else "all %d checks passed" % ck.count)
    return 1 if ck.fails else 0


if __name__ == "__main__":
    sys.exit(main())
