# trace_check.py - read a Chrome/Perfetto JSON trace written by `ocgc trace`
# and print "key value" facts that tests/cmd/cmd_trace.sh and
# trace_bounded.sh check: whether it loads, B/E pairing, nesting per
# (pid, tid) of the X events and B/E pairs together, same-timestamp reading
# order, slice counts per name, causes, cuts, loss markers, counter sums.
# A B/E pair counts as one slice (ts of the B, dur up to the E, args of
# both).  Usage: trace_check.py FILE
import json
import sys
from collections import Counter, defaultdict


def main():
    try:
        with open(sys.argv[1]) as f:
            doc = json.load(f)
    except Exception as e:  # noqa: BLE001 - any failure means "does not load"
        print("json.ok 0")
        print("json.error", str(e).replace("\n", " ")[:200])
        return
    print("json.ok 1")
    evs = doc.get("traceEvents", [])
    print("display_time_unit", doc.get("displayTimeUnit", "-"))
    print("events", len(evs))
    ph = Counter(e.get("ph") for e in evs)
    for k in sorted(ph):
        print("ph.%s %d" % (k, ph[k]))
    # B/E: matched per (pid, tid), properly nested; each pair becomes a
    # complete slice (with the B's place in the file) for the checks below
    stacks = defaultdict(list)
    bad_be = 0
    pairs = []
    order = sorted(((e, i) for i, e in enumerate(evs) if e.get("ph") in ("B", "E")),
                   key=lambda p: p[0]["ts"])
    for e, i in order:
        key = (e.get("pid"), e.get("tid"))
        if e["ph"] == "B":
            stacks[key].append((e, i))
        elif not stacks[key] or (e.get("name") and stacks[key][-1][0].get("name") != e["name"]):
            bad_be += 1
        else:
            b, bi = stacks[key].pop()
            args = dict(b.get("args", {}))
            args.update(e.get("args", {}))
            pairs.append(({"name": b.get("name"), "ph": "X", "ts": b["ts"],
                           "dur": e["ts"] - b["ts"], "pid": b.get("pid"),
                           "tid": b.get("tid"), "args": args}, bi))
    bad_be += sum(len(s) for s in stacks.values())
    print("be.unmatched", bad_be)
    print("be.pairs", len(pairs))
    # X: non-negative durations, properly nested per (pid, tid)
    xs_read = [(e, i) for i, e in enumerate(evs) if e.get("ph") == "X"]
    print("x.negative_dur", sum(1 for e, _ in xs_read if e.get("dur", -1) < 0))
    # Same-timestamp reading order: a viewer nests events that start
    # together in the order it reads them, so a slice read after one that
    # starts with it and ends sooner (but not at once) is nested wrongly.
    eps = 0.0015  # us: the three decimals of ts and dur
    half_ns = 0.0005  # us: what tells two durations apart after float rounding
    xs_read = sorted(xs_read + pairs, key=lambda p: p[1])
    xs = [e for e, _ in xs_read]
    bad_order = 0
    first = {}
    for e in xs:
        key = (e.get("pid"), e.get("tid"), e["ts"])
        d = e.get("dur", 0)
        shortest = first.get(key)
        if shortest is not None and shortest + half_ns < d:
            bad_order += 1
        if d > half_ns and (shortest is None or d < shortest):
            first[key] = d
    print("x.parent_after_child", bad_order)
    bad_nest = 0
    by_thread = defaultdict(list)
    for e in xs:
        by_thread[(e.get("pid"), e.get("tid"))].append(e)
    for lst in by_thread.values():
        lst.sort(key=lambda e: (e["ts"], -e["dur"]))
        ends = []
        for e in lst:
            while ends and e["ts"] >= ends[-1] - eps:
                ends.pop()
            end = e["ts"] + e["dur"]
            if ends and end > ends[-1] + eps:
                bad_nest += 1
            ends.append(end)
    print("x.bad_nesting", bad_nest)
    names = Counter(e["name"] for e in xs)
    for k in sorted(names):
        print("slice.%s %d" % (k, names[k]))
    causes = Counter()
    for e in xs:
        c = e.get("args", {}).get("cause")
        if c is not None:
            causes[(e["name"], c)] += 1
    for (n, c) in sorted(causes):
        print("cause.%s.%s %d" % (n, c, causes[(n, c)]))
    for n in ("minor", "major_slice", "compact", "major_finish_cycle"):
        print("uncaused.%s %d" % (n, sum(1 for e in xs if e["name"] == n
                                         and "cause" not in e.get("args", {}))))
    print("cut", sum(1 for e in xs if "cut" in e.get("args", {})))
    lost = [e for e in evs if e.get("ph") == "i" and e.get("name") == "events lost"]
    print("lost.markers", len(lost))
    print("lost.global", sum(1 for e in lost if e.get("s") == "g"))
    print("lost.count", sum(int(e.get("args", {}).get("count", 0)) for e in lost))
    print("lost.exact", int(all(e.get("args", {}).get("exact") is True for e in lost)))
    print("lost.before_start", sum(1 for e in lost if "when" in e.get("args", {})))
    early = [e for e in evs if e.get("ph") == "i" and e.get("name") == "slices written early"]
    print("early.markers", len(early))
    print("early.rings", len(set((e.get("pid"), e.get("tid")) for e in early)))
    print("early.spans_max", max([int(e.get("args", {}).get("spans", 0)) for e in early] or [0]))
    print("early.open_slices", sum(1 for e in xs if e.get("args", {}).get("early") is True))
    inst = Counter(e["name"] for e in evs if e.get("ph") == "i")
    for k in sorted(inst):
        print("instant.%s %d" % (k.replace(" ", "_"), inst[k]))
    csum = defaultdict(int)
    ccount = Counter()
    for e in evs:
        if e.get("ph") == "C":
            ccount[e["name"]] += 1
            for v in e.get("args", {}).values():
                csum[e["name"]] += int(v)
    for k in sorted(ccount):
        print("counter.%s.count %d" % (k, ccount[k]))
        print("counter.%s.sum %d" % (k, csum[k]))
    for e in evs:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            print("process_name", e["args"]["name"])
    pids = set(e.get("pid") for e in evs if e.get("ph") != "M")
    print("pids", ",".join(str(p) for p in sorted(pids, key=str)) or "-")
    other = doc.get("otherData", {})
    for k in sorted(other):
        print("other.%s %s" % (k, other[k]))


main()
