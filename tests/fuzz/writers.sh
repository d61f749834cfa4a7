#!/bin/sh
# writers.sh - the writers of untrusted strings, fuzzed: random
# bytes (tests/fuzz/writer_gen) through the exposition (text 0.0.4 and
# OpenMetrics), JSON, HTML text and dump's words, each output checked by a
# parser of its format: promtool check metrics and prometheus_client's two
# parsers, json.load, Python's HTML parser, and dump's field split.
# Checked for every string: the output parses, holds one item per string
# in order, and nothing a string holds makes another item or element; a
# string of printable ASCII (quotes, backslashes, braces and '<' included)
# comes back as it was.  Three seeds, 2,000 strings each.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
GEN="$OCGC_BUILDDIR/tests/fuzz/writer_gen"
test -x "$GEN" || hard_error "$GEN is missing (run 'make check')"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
python3 -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
  { echo "SKIP: python3-prometheus-client is missing (apt-get install python3-prometheus-client)"; exit 77; }
PROMTOOL=`command -v promtool 2>/dev/null || true`
test -n "$PROMTOOL" || say "(no promtool here: apt-get install prometheus; checked with prometheus_client only)"

for seed in 1 2 3; do
  d="$WORK/s$seed"
  mkdir -p "$d"
  "$GEN" "$d" $seed 2000 || hard_error "writer_gen failed"
  if test -n "$PROMTOOL"; then
    check_true "seed $seed: promtool check metrics accepts the text exposition" \
      sh -c '"$1" check metrics <"$2"' sh "$PROMTOOL" "$d/m.prom"
  fi
  python3 - "$d" >"$d/check.out" 2>&1 <<'PYEOF'
import html.parser, json, sys
from prometheus_client.parser import text_string_to_metric_families as parse_text
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om

d = sys.argv[1]
raw = open(d + "/strings.bin", "rb").read()
strs, pos = [], 0
while pos < len(raw):
    nl = raw.index(b"\n", pos)
    n = int(raw[pos:nl])
    strs.append(raw[nl + 1:nl + 1 + n])
    pos = nl + 1 + n
N = len(strs)
bad = []

def plain(b):  # printable ASCII: must come back as it was
    return all(0x20 <= c < 0x7f for c in b)

def expo(name, parse):
    text = open(d + "/" + name, encoding="utf-8").read()  # valid UTF-8, or this raises
    fams = list(parse(text))
    fam = [f for f in fams if f.name == "fuzz_value"]
    if len(fam) != 1:
        bad.append("%s: %d fuzz_value families" % (name, len(fam))); return
    samples = fam[0].samples
    if len(samples) != N:
        bad.append("%s: %d samples for %d strings" % (name, len(samples), N)); return
    for i, s in enumerate(samples):
        if s.labels.get("i") != str(i) or int(s.value) != i:
            bad.append("%s: sample %d is %r" % (name, i, s)); return
        if plain(strs[i]) and s.labels.get("v") != strs[i].decode():
            bad.append("%s: string %d came back as %r" % (name, i, s.labels.get("v"))); return
        # A line end is escaped (\\n) and comes back; no other control may.
        if any((ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f for c in s.labels.get("v", "")):
            bad.append("%s: string %d holds a control character" % (name, i)); return

expo("m.prom", parse_text)
expo("m.om", parse_om)

arr = json.load(open(d + "/s.json", encoding="utf-8"))
if len(arr) != N:
    bad.append("s.json: %d strings for %d" % (len(arr), N))
else:
    for i, s in enumerate(arr):
        ok = s == strs[i].decode() if plain(strs[i]) else isinstance(s, str)
        if not ok:
            bad.append("s.json: string %d came back as %r" % (i, s)); break

class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.paras, self.cur = [], [], None
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "p": self.cur = ""
    def handle_endtag(self, tag):
        if tag == "p" and self.cur is not None:
            self.paras.append(self.cur); self.cur = None
    def handle_data(self, data):
        if self.cur is not None: self.cur += data
p = P()
p.feed(open(d + "/t.html", encoding="utf-8").read())
p.close()
if p.tags != ["html", "head", "meta", "title", "body"] + ["p"] * N:
    bad.append("t.html: the strings made elements: %r" % [t for t in p.tags if t not in ("p",)][5:12])
elif len(p.paras) != N:
    bad.append("t.html: %d paragraphs for %d strings" % (len(p.paras), N))
else:
    for i, t in enumerate(p.paras):
        if plain(strs[i]) and "\\" not in strs[i].decode() and t != strs[i].decode():
            bad.append("t.html: string %d came back as %r" % (i, t)); break
        if any(ord(c) < 0x20 or ord(c) >= 0x7f for c in t):
            bad.append("t.html: string %d holds a byte outside printable ASCII" % i); break

lines = open(d + "/d.txt", "rb").read().split(b"\n")
if lines[-1] == b"": lines.pop()
if len(lines) != N:
    bad.append("d.txt: %d lines for %d strings" % (len(lines), N))
else:
    for i, l in enumerate(lines):
        f = l.split(b" ")
        if len(f) != 3 or f[0] != b"k" or f[1] != str(i).encode() or \
           any(c < 0x21 or c >= 0x7f for c in f[2]):
            bad.append("d.txt: line %d is %r" % (i, l)); break

print("strings %d plain %d bad %d" % (N, sum(1 for s in strs if plain(s)), len(bad)))
for b in bad[:10]: print(b)
PYEOF
  say "seed $seed: `head -n 1 "$d/check.out"`"
  check_true "seed $seed: every output parsed, one item per string, plain strings whole" \
    grep -q ' bad 0$' "$d/check.out"
  grep -v '^strings ' "$d/check.out" | head -n 5
done
finish
