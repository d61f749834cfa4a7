"""dash_labels.py - serve_rules.sh's check of the labels of
contrib/grafana/ocgc.json and contrib/prometheus/ocgc-rules.yml:

  dash_labels.py DASHBOARD.json RULES.yml

- every aggregation (sum, avg, max, min, count, group, stddev, stdvar,
  topk, bottomk, quantile, count_values, limitk ... by/without) of every
  dashboard expression and every rule keeps `instance` (groups by it):
  two hosts with the same program and pid are two series, never one;
- every {{label}} of a dashboard legend is a label its expression keeps
  (a recording rule's series keep what the rule's expression keeps).

Prints one line per fault ("PANEL [REFID]: WHY") and then "N expressions,
M faults"; exit status 1 if there is a fault, 2 if an expression cannot
be read.  A small reader of PromQL: selectors, functions, aggregations,
binary operators with on/ignoring/group_left/group_right, offsets,
ranges and subqueries, numbers and strings.  The labels an expression
keeps are either all its series' labels but some (ALL minus a set) or a
set.  The rules file is read by lines (no YAML module needed): `record:`
and `expr:` (inline, or a folded `>` block).
"""
import json
import re
import sys

AGGS = {"sum", "avg", "max", "min", "count", "group", "stddev", "stdvar", "topk", "bottomk",
        "quantile", "count_values", "limitk", "limit_ratio"}
# Aggregations whose result is some of the input's series, labels and all.
PICK = {"topk", "bottomk", "limitk", "limit_ratio"}
# Functions whose result is not labelled from their vector argument.
NO_LABELS = {"absent", "absent_over_time", "vector", "scalar", "time", "pi"}


class Labels:
    """The labels an expression's series keep: all but [minus], or [only]."""

    def __init__(self, only=None, minus=()):
        self.only = None if only is None else frozenset(only)
        self.minus = frozenset(minus)

    def has(self, name):
        return name in self.only if self.only is not None else name not in self.minus

    def without(self, names):
        if self.only is not None:
            return Labels(self.only - set(names))
        return Labels(None, self.minus | set(names))

    def meet(self, other):
        if self.only is None and other.only is None:
            return Labels(None, self.minus | other.minus)
        if self.only is None:
            return Labels(other.only - self.minus)
        if other.only is None:
            return Labels(self.only - other.minus)
        return Labels(self.only & other.only)


ALL = Labels()
NONE = Labels(())

TOKEN = re.compile(r"""\s*(?:
    (?P<offs>(?:\d+(?:ms|[smhdwy]))+)
  | (?P<num>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?![a-zA-Z_])|[Ii]nf(?![\w])|NaN(?![\w]))
  | (?P<dur>\[[^\]]*\])
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<id>[a-zA-Z_:][\w:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^<>(){},=@])
  )""", re.X)


class Parser:
    def __init__(self, text, records):
        self.toks = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError("cannot read %r" % text[pos:pos + 20])
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0
        self.records = records
        self.faults = []

    def peek(self, k=0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else (None, None)

    def take(self, want=None):
        t = self.peek()
        if t[0] is None or (want is not None and t[1] != want):
            raise ValueError("expected %r, found %r" % (want, t[1]))
        self.i += 1
        return t

    def label_list(self):
        self.take("(")
        names = []
        while self.peek()[1] != ")":
            names.append(self.take()[1])
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        return names

    # binary operators, lowest precedence first
    LEVELS = [["or"], ["and", "unless"], ["==", "!=", ">", "<", ">=", "<="], ["+", "-"],
              ["*", "/", "%", "atan2"], ["^"]]

    def expr(self, level=0):
        if level == len(self.LEVELS):
            return self.unary()
        left = self.expr(level + 1)
        while self.peek()[1] in self.LEVELS[level]:
            op = self.take()[1]
            if self.peek()[1] == "bool":
                self.take()
            on = ignoring = None
            group = False
            if self.peek()[1] in ("on", "ignoring"):
                kw = self.take()[1]
                names = self.label_list()
                on, ignoring = (names, None) if kw == "on" else (None, names)
                if self.peek()[1] in ("group_left", "group_right"):
                    self.take()
                    group = True
                    if self.peek()[1] == "(":
                        self.label_list()
            right = self.expr(level + 1) if op != "^" else self.expr(level)
            left = self.binary(op, left, right, on, ignoring, group)
        return left

    def binary(self, op, left, right, on, ignoring, group):
        if left is None:  # a scalar on the left
            return right
        if right is None:
            return left
        if op in ("or",):
            return left.meet(right)
        if op in ("and", "unless"):
            return left
        if group:
            return left
        # one-to-one: with on(...), only the labels matched on are kept
        if on is not None:
            return Labels([n for n in on if left.has(n)])
        if ignoring is not None:
            return left.without(ignoring)
        return left

    def unary(self):
        if self.peek()[1] in ("-", "+"):
            self.take()
        return self.postfix(self.primary())

    def postfix(self, labels):
        while True:
            t = self.peek()
            if t[0] == "dur":
                self.take()
            elif t[1] == "offset":
                self.take()
                if self.peek()[1] == "-":
                    self.take()
                self.take()
            elif t[1] == "@":
                self.take()
                self.take()
                if self.peek()[1] == "(":
                    self.take("(")
                    self.take(")")
            else:
                return labels

    def selector_body(self):
        self.take("{")
        depth = 1
        while depth:
            v = self.take()[1]
            depth += v == "{"
            depth -= v == "}"

    def primary(self):
        kind, v = self.peek()
        if kind == "num" or kind == "str":
            self.take()
            return None  # a scalar or a string: no labels
        if v == "(":
            self.take()
            inner = self.expr()
            self.take(")")
            return inner
        if v == "{":
            self.selector_body()
            return ALL
        if kind != "id":
            raise ValueError("unexpected %r" % v)
        self.take()
        if v in AGGS and self.peek()[1] in ("(", "by", "without"):
            return self.aggregation(v)
        if self.peek()[1] == "(":
            return self.function(v)
        if self.peek()[1] == "{":
            self.selector_body()
        return self.records.get(v, ALL)

    def aggregation(self, name):
        by = without = None
        if self.peek()[1] in ("by", "without"):
            kw = self.take()[1]
            names = self.label_list()
            by, without = (names, None) if kw == "by" else (None, names)
        self.take("(")
        args = [self.expr()]
        while self.peek()[1] == ",":
            self.take(",")
            args.append(self.expr())
        self.take(")")
        if self.peek()[1] in ("by", "without"):
            kw = self.take()[1]
            names = self.label_list()
            by, without = (names, None) if kw == "by" else (None, names)
        inner = args[-1] if args[-1] is not None else NONE
        if by is not None:
            grouped = Labels([n for n in by if inner.has(n)])
        elif without is not None:
            grouped = inner.without(without)
        else:
            grouped = NONE
        if not grouped.has("instance"):
            how = "by (%s)" % ", ".join(by) if by is not None else \
                "without (%s)" % ", ".join(without) if without is not None else "over everything"
            self.faults.append("%s %s drops instance" % (name, how))
        return inner if name in PICK else grouped

    def function(self, name):
        self.take("(")
        args = []
        while self.peek()[1] != ")":
            args.append(self.expr())
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        if name in NO_LABELS:
            return NONE
        vectors = [a for a in args if a is not None]
        out = vectors[0] if vectors else NONE
        if name == "histogram_quantile":
            out = out.without(["le"])
        return out


def parse(text, records):
    """(labels kept, [faults]); ValueError if it cannot be read."""
    p = Parser(text, records)
    labels = p.expr()
    if p.peek()[0] is not None:
        raise ValueError("left over: %r" % (p.peek()[1],))
    return (labels if labels is not None else NONE), p.faults


def rules_of(path):
    """[(name, expr)]: each rule's record or alert name and its expression."""
    out, name, lines = [], None, open(path).read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*-?\s*(record|alert):\s*(\S+)", line)
        if m:
            name = (m.group(1), m.group(2))
        m = re.match(r"(\s*)expr:\s*(.*)$", line)
        if m and name is not None:
            text = m.group(2)
            if text.strip() in (">", "|", ">-", "|-"):
                ind, body = len(m.group(1)), []
                i += 1
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) > ind):
                    body.append(lines[i].strip())
                    i += 1
                text = " ".join(body)
                out.append((name, text))
                name = None
                continue
            out.append((name, text))
            name = None
        i += 1
    return out


def targets(panels):
    for p in panels:
        yield from targets(p.get("panels", []))
        for t in p.get("targets", []):
            if "expr" in t:
                yield "%s [%s]" % (p.get("title", "?"), t.get("refId", "?")), t["expr"], \
                    t.get("legendFormat", "")


def main(dash, rules):
    faults, n = [], 0
    records = {}
    for (kind, name), text in rules_of(rules):
        n += 1
        try:
            labels, fl = parse(text, records)
        except ValueError as e:
            print("%s %s: cannot read: %s" % (kind, name, e))
            return 2
        faults += ["%s %s: %s" % (kind, name, f) for f in fl]
        if kind == "record":
            records[name] = labels
    with open(dash) as f:
        doc = json.load(f)
    for title, expr, legend in targets(doc.get("panels", [])):
        n += 1
        try:
            labels, fl = parse(expr, records)
        except ValueError as e:
            print("%s: cannot read: %s" % (title, e))
            return 2
        faults += ["%s: %s" % (title, f) for f in fl]
        for lab in re.findall(r"\{\{\s*([\w]+)\s*\}\}", legend):
            if not labels.has(lab):
                faults.append("%s: the legend prints {{%s}}, which the expression drops" %
                              (title, lab))
    for f in faults:
        print(f)
    print("%d expressions, %d faults" % (n, len(faults)))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
