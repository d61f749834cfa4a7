"""serve_prom_query.py - serve_prometheus.sh's client of Prometheus's HTTP
API (/api/v1/query): one process polls as long as it must, so that the
shell test neither starts python per poll nor sleeps for a fixed time.

  serve_prom_query.py URL value EXPR
      the value of EXPR's one sample now, "none" if the result is empty
  serve_prom_query.py URL poll SECONDS WANT EXPR
      poll EXPR (every 0.2 s, at most SECONDS) until its value is WANT
      ("none": until the result is empty); prints the last value seen
  serve_prom_query.py URL dashboard SECONDS FILE.json
      every expr of every panel of a Grafana dashboard, its variables
      replaced ($instance, $program and $pid: .*, $job: $OCGC_DASH_JOB or
      .*, $__rate_interval: 30s): one line
      "TITLE [REFID]<TAB>RESULT<TAB>FAMILIES" each, RESULT "series N" once it
      returns N > 0 series (polled until SECONDS have passed since the
      start), else "empty" or "error: WHY"; FAMILIES the exporter's metric
      families (ocaml_*, ocgc_*) it reads, space-separated
  serve_prom_query.py URL variables FILE.json
      each label_values(SELECTOR, LABEL) variable of the dashboard, run as
      Grafana runs it (/api/v1/label/LABEL/values?match[]=SELECTOR, the
      variables replaced as above): "NAME<TAB>VALUE VALUE..."
  serve_prom_query.py - lint FILE.json
      what the dashboard lacks ("; " between), or "none": a unit on each
      panel, the DS_PROMETHEUS data source, the rows Pauses, Collections,
      Memory, Process, multi-select variables job, instance, program and
      pid with All

Values print as integers when they are whole (Prometheus sends them as
strings). Nothing here judges: the shell's check_eq does.
"""
import json
import os
import re
import sys
import time
import urllib.parse
import urllib.request

# $job: OCGC_DASH_JOB (the dashboard read with the series of one job: one
# exporter by pid, another by program), else all.
VARS = {"job": os.environ.get("OCGC_DASH_JOB", ".*"), "instance": ".*", "program": ".*",
        "pid": ".*", "__rate_interval": "30s"}
# Prometheus is on the loopback: never through an http_proxy of the caller
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def api(url, path, params):
    """(data, None) or (None, why)."""
    q = urllib.parse.urlencode(params)
    try:
        with OPENER.open(url.rstrip("/") + path + "?" + q, timeout=10) as r:
            doc = json.load(r)
    except Exception as e:  # an HTTP error carries Prometheus's reason
        body = getattr(e, "read", lambda: b"")()
        return None, "%s %s" % (e, body.decode("utf-8", "replace")[:200])
    if doc.get("status") != "success":
        return None, doc.get("error", "status %s" % doc.get("status"))
    return doc["data"], None


def query(url, expr):
    """(samples, None) or (None, why)."""
    data, why = api(url, "/api/v1/query", {"query": expr})
    if data is None:
        return None, why
    res = data["result"]
    if data["resultType"] == "scalar":
        res = [{"metric": {}, "value": res}]
    return res, None


def show(v):
    f = float(v)
    return str(int(f)) if f.is_integer() and abs(f) < 2 ** 63 else v


def value(url, expr):
    res, why = query(url, expr)
    if res is None:
        return "error: " + why
    if not res:
        return "none"
    return show(res[0]["value"][1]) if len(res) == 1 else "%d samples" % len(res)


def poll(url, seconds, want, expr):
    end = time.monotonic() + float(seconds)
    while True:
        got = value(url, expr)
        if got == want or time.monotonic() >= end:
            return got
        time.sleep(0.2)


def substitute(expr):
    def one(m):
        name = m.group(1) or m.group(2)
        return VARS.get(name, m.group(0))
    out = re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)
    return out, re.search(r"\$", out) is not None


def panel_targets(panels):
    for p in panels:
        yield from panel_targets(p.get("panels", []))  # collapsed rows
        for t in p.get("targets", []):
            if "expr" in t:
                yield "%s [%s]" % (p.get("title", "?"), t.get("refId", "?")), t["expr"]


def families(expr):
    """The exporter's families an expression reads (a histogram's by its
    name without _bucket, _count or _sum), in order, once each."""
    out = []
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # label values are no families
    for name in re.findall(r"\b((?:ocaml|ocgc)_[a-z0-9_]+)", expr):
        name = re.sub(r"_(bucket|count|sum)$", "", name)
        if name not in out:
            out.append(name)
    return out


def dashboard(url, seconds, path):
    end = time.monotonic() + float(seconds)
    with open(path) as f:
        doc = json.load(f)
    for title, text in panel_targets(doc.get("panels", [])):
        expr, unknown = substitute(text)
        while True:
            res, why = (None, "an unknown variable is left: " + expr) if unknown else query(url, expr)
            if res or res is None or time.monotonic() >= end:
                break
            time.sleep(0.2)
        result = "error: " + why if res is None else "series %d" % len(res) if res else "empty"
        print("%s\t%s\t%s" % (title, result, " ".join(families(text))), flush=True)


def esc_word(v):
    return json.dumps(v, ensure_ascii=False)[1:-1].replace(" ", "\\u0020")


def variables(url, path):
    with open(path) as f:
        doc = json.load(f)
    for v in doc["templating"]["list"]:
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", v.get("definition", ""))
        if v.get("type") != "query" or m is None:
            continue
        data, why = api(url, "/api/v1/label/%s/values" % m.group(2),
                        {"match[]": substitute(m.group(1))[0]})
        # One line a variable, its values between spaces: each value
        # escaped (JSON's escapes, a space as \u0020), since --all serves
        # every program of the host, and a name may hold a newline
        # (serve_pprof_byprog.sh's does): unescaped, it split the line and
        # the values after it were lost.
        print("%s\t%s" % (v["name"], " ".join(esc_word(x) for x in data)
                            if data is not None else "error: " + why))


def lint(path):
    with open(path) as f:
        doc = json.load(f)
    bad = []
    if not any(i.get("name") == "DS_PROMETHEUS" for i in doc.get("__inputs", [])):
        bad.append("no DS_PROMETHEUS input")
    rows = [p["title"] for p in doc["panels"] if p["type"] == "row"]
    if rows != ["Pauses", "Collections", "Memory", "Process"]:
        bad.append("rows %s" % rows)
    for p in doc["panels"]:
        if p["type"] == "row":
            continue
        if p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            bad.append("%s: data source" % p["title"])
        if not p.get("fieldConfig", {}).get("defaults", {}).get("unit"):
            bad.append("%s: no unit" % p["title"])
    vs = {v["name"]: v for v in doc["templating"]["list"]}
    for n in ("job", "instance", "program", "pid"):
        v = vs.get(n, {})
        if not (v.get("multi") and v.get("includeAll") and "label_values" in v.get("definition", "")):
            bad.append("variable %s: not a multi-select label_values with All" % n)
    print("; ".join(bad) if bad else "none")


def main(argv):
    url, cmd = argv[1], argv[2]
    if cmd == "value":
        print(value(url, argv[3]))
    elif cmd == "poll":
        print(poll(url, argv[3], argv[4], argv[5]))
    elif cmd == "dashboard":
        dashboard(url, argv[3], argv[4])
    elif cmd == "variables":
        variables(url, argv[3])
    elif cmd == "lint":
        lint(argv[3])
    else:
        sys.exit("serve_prom_query.py: unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
