#!/usr/bin/env python3
"""callpath.py SRCDIR BUILDDIR [ROOT] [--skip NAME,...] - the functions and
files of libocgc a call of ROOT (default ocgc_cursor_poll) can pass through.

Each libconsumer/*.c is compiled again at -O0 with gcc's -fcallgraph-info
(nothing inlined: every static function and every inline function of a
header is a step), and the calls are followed from ROOT across files; a
call into the C library ends a path.  --skip names functions not followed
(e.g. ocgc_source_seq_stuck: the poll without its held-seqlock branch).

Prints the functions reached per file, the uses between files on the way
(and the pairs of files that use each other there: a bounce), and the
deepest call chain with the files it crosses.  Figures are of the code's
shape, for comparing two trees: `python3 scripts/callpath.py . _build`."""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

args = [a for a in sys.argv[1:] if not a.startswith("--")]
skip = set()
for i, a in enumerate(sys.argv):
    if a == "--skip" and i + 1 < len(sys.argv):
        skip = set(sys.argv[i + 1].split(","))
        args = [x for x in args if x != sys.argv[i + 1]]
if len(args) < 2:
    sys.exit("usage: callpath.py SRCDIR BUILDDIR [ROOT] [--skip NAME,...]")
src, build = os.path.abspath(args[0]), os.path.abspath(args[1])
root = args[2] if len(args) > 2 else "ocgc_cursor_poll"

tmp = tempfile.mkdtemp(prefix="callpath.")
inc = ["-I" + d for d in (build, src, src + "/include", build + "/include", src + "/common",
                          src + "/libconsumer")]
for c in sorted(glob.glob(src + "/libconsumer/*.c")):
    o = os.path.join(tmp, os.path.basename(c)[:-2] + ".o")
    subprocess.run(["gcc", "-DHAVE_CONFIG_H", *inc, "-std=c11", "-D_GNU_SOURCE", "-O0",
                    "-fcallgraph-info", "-c", c, "-o", o], check=True, cwd=tmp)

# node: { title: "T" label: "NAME\nFILE:LINE:COL" } (an ellipse: declared only)
node_re = re.compile(r'node: \{ title: "([^"]*)" label: "([^"\\]*)\\n([^":]*):\d+:\d+"( shape : ellipse)?')
edge_re = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')
defs, edges = {}, collections.defaultdict(set)
for ci in glob.glob(tmp + "/*.ci"):
    with open(ci) as f:
        for line in f:
            m = node_re.match(line)
            if m and not m.group(4):
                defs[m.group(1)] = (m.group(2), os.path.relpath(m.group(3), src))
            m = edge_re.match(line)
            if m:
                edges[m.group(1)].add(m.group(2))
for ci in glob.glob(tmp + "/*"):
    os.unlink(ci)
os.rmdir(tmp)
if root not in defs:
    sys.exit("callpath.py: %s is not defined in libconsumer/" % root)


def callees(t):
    return sorted(u for u in edges.get(t, ()) if u in defs and defs[u][0] not in skip)


seen, queue = {root}, collections.deque([root])
while queue:
    for u in callees(queue.popleft()):
        if u not in seen:
            seen.add(u)
            queue.append(u)
files = collections.Counter(defs[t][1] for t in seen)
cfiles = [f for f in files if f.endswith(".c")]
uses = sorted({(defs[t][1], defs[u][1]) for t in seen for u in callees(t)
               if defs[t][1] != defs[u][1]})
bounces = sorted({tuple(sorted(p)) for p in uses if (p[1], p[0]) in uses})

memo, onpath = {}, set()


def longest(t):
    if t in memo:
        return memo[t]
    onpath.add(t)
    best = [t]
    for u in callees(t):
        if u not in onpath:
            p = longest(u)
            if len(p) + 1 > len(best):
                best = [t] + p
    onpath.discard(t)
    memo[t] = best
    return best


chain = longest(root)
changes = sum(1 for a, b in zip(chain, chain[1:]) if defs[a][1] != defs[b][1])
print("%s%s: %d functions in %d files (%d functions in %d .c files)" % (
    root, " without " + ",".join(sorted(skip)) if skip else "", len(seen), len(files),
    sum(files[f] for f in cfiles), len(cfiles)))
for f, n in sorted(files.items()):
    print("  %-28s %d" % (f, n))
print("uses between files on the way: %d; files that use each other: %d" % (len(uses), len(bounces)))
for a, b in uses:
    print("  %s -> %s" % (a, b))
for a, b in bounces:
    print("  bounce: %s <-> %s" % (a, b))
print("deepest chain: %d calls through %d files, %d changes of file:" % (
    len(chain), len({defs[t][1] for t in chain}), changes))
print("  " + " -> ".join("%s (%s)" % (defs[t][0], os.path.basename(defs[t][1])) for t in chain))
