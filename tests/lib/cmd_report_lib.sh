# cmd_report_lib.sh - shared by cmd_report.sh and cmd_run.sh (sourced after
# lib.sh and attach_lib.sh): running `ocgc report` / `ocgc run`, checking
# their JSON against docs/report.schema.json (python3's jsonschema) and
# reading it as "key value" lines, and the checks both tests make.
#
#   report_cmd TAG report --file "$RING" --json   # TAG.json (stdout), TAG.err, TAG.rc
#   report_json TAG                             # validate, flatten into TAG.flat
#   rkey_json TAG counts.collections.minor
#   check_report_sane TAG; check_report_quickstat TAG PROGTAG
#
# The flat form: one line per leaf, keys joined with dots ("kinds.minor.p50_ns
# 1234"), strings without quotes, null as "null"; the cause table as
# "causes.KIND.CAUSE.count N" (and .total_ns, .worst_ns); "command" as its
# words joined with spaces.

SCHEMA="$OCGC_SRCDIR/docs/report.schema.json"

# cmd_report_init: ocgc_init, and kill what we started in the background at
# exit (without attach_init's need of live_reader).
cmd_report_init() {
  ocgc_init
  python3 -c 'import jsonschema' 2>/dev/null ||
    hard_error "python3 with the jsonschema module is needed (python3-jsonschema)"
  test -f "$SCHEMA" || hard_error "$SCHEMA is missing"
  trap 'attach_cleanup' EXIT
}

# report_cmd TAG ARGS...: `$OCGC ARGS` in $WORK; stdout in TAG.json, stderr in
# TAG.err, exit status in TAG.rc, said.  (Not cmd_lib.sh's ocgc_cmd, which
# runs where it is and writes TAG.out: one name per helper.)
report_cmd() {
  _tag=$1; shift
  (cd "$WORK" && "$OCGC" "$@" >"$WORK/$_tag.json" 2>"$WORK/$_tag.err")
  echo $? >"$WORK/$_tag.rc"
  say "  ocgc $*: status `cat "$WORK/$_tag.rc"`"
}

# report_json TAG: validate $WORK/TAG.json against the schema (the key
# schema_valid is 1 if it is; errors are printed) and flatten it into
# $WORK/TAG.flat.  Stops the test if the file is not JSON at all.
report_json() {
  python3 - "$SCHEMA" "$WORK/$1.json" "$WORK/$1.flat" <<'EOF' || hard_error "$1.json: not JSON"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
errs = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
for e in errs[:10]:
    print("schema error: %s at %s" % (e.message, "/".join(map(str, e.absolute_path))))
out = open(sys.argv[3], "w")
out.write("schema_valid %d\n" % (0 if errs else 1))
def leaf(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, list): return " ".join(map(str, v))
    return str(v)
def flat(path, v):
    if isinstance(v, dict):
        for k, x in v.items(): flat(path + [k], x)
    elif path == ["causes"] and isinstance(v, list):
        for r in v:
            for k in ("count", "total_ns", "worst_ns"):
                out.write("causes.%s.%s.%s %s\n" % (r["kind"], r["cause"], k, r[k]))
    else:
        out.write("%s %s\n" % (".".join(path), leaf(v)))
flat([], doc)
EOF
}

# jkey TAG KEY: a value of TAG's flattened JSON, spaces and all (empty if
# absent)
jkey() {
  awk -v k="$2" 'index($0, k " ") == 1 { print substr($0, length(k) + 2); exit }' \
    "$WORK/$1.flat"
}

# check_jkey TAG KEY EXPECTED
check_jkey() { check_eq "$1: $2" "$3" "`jkey "$1" "$2"`"; }

KINDS="minor major_slice major_finish compaction"

# check_report_sane TAG: what holds for every report: valid against the
# schema, the right schema name and version, percentiles in order in every
# histogram (min <= p50 <= p75 <= p90 <= p95 <= p99 <= p99.9 <= p99.99 <=
# max, mean between min and max), the cause table's rows adding up to the
# collections seen in the events, GC time no more than the wall time.
check_report_sane() {
  check_jkey $1 schema_valid 1
  check_jkey $1 schema ocgc-report
  check_jkey $1 schema_version 4
  _bad=`awk '
    { n = split($1, p, "."); f = p[n]; h = substr($1, 1, length($1) - length(f) - 1)
      if (f ~ /^(count|min_ns|mean_ns|p50_ns|p75_ns|p90_ns|p95_ns|p99_ns|p99_9_ns|p99_99_ns|max_ns)$/) v[h, f] = $2
      if (f == "max_ns") hs[h] = 1 }
    END {
      split("min_ns p50_ns p75_ns p90_ns p95_ns p99_ns p99_9_ns p99_99_ns max_ns", o, " ")
      for (h in hs) {
        if (v[h, "count"] == 0) continue
        for (i = 1; i < 9; i++) if (v[h, o[i]] + 0 > v[h, o[i + 1]] + 0)
          printf "%s:%s=%s>%s=%s ", h, o[i], v[h, o[i]], o[i + 1], v[h, o[i + 1]]
        if (v[h, "mean_ns"] + 0 < v[h, "min_ns"] + 0 || v[h, "mean_ns"] + 0 > v[h, "max_ns"] + 0)
          printf "%s:mean ", h
      } }' "$WORK/$1.flat"`
  check_eq "$1: percentiles out of order" none "${_bad:-none}"
  _nh=`grep -c '\.p99_99_ns ' "$WORK/$1.flat"`
  check_ge "$1: histograms (pauses, 4 kinds, phases)" 5 "$_nh"
  for _k in $KINDS; do
    _sum=`awk -v p="causes.$_k." 'index($1, p) == 1 && $1 ~ /\.count$/ { s += $2 } END { print s + 0 }' "$WORK/$1.flat"`
    check_eq "$1: cause rows of $_k (events.collections_seen.$_k)" \
      "`jkey $1 events.collections_seen.$_k`" "$_sum"
    check_eq "$1: kinds.$_k.count (events.collections_seen.$_k)" \
      "`jkey $1 events.collections_seen.$_k`" "`jkey $1 kinds.$_k.count`"
  done
  check_true "$1: gc_time_ns <= window.wall_ns" \
    test "`jkey $1 gc_time_ns`" -le "`jkey $1 window.wall_ns`"
}

# check_report_quickstat TAG PROG: the counts of TAG's report equal the
# Gc.quick_stat that the run PROG printed (gc.* lines), and the ring lost
# nothing, so the events tell the same story (cause rows = collections).
check_report_quickstat() {
  check_jkey $1 counts.exact true
  check_jkey $1 counts.collections.minor "`outkey $2 gc.minor_collections`"
  check_jkey $1 counts.major_cycles "`outkey $2 gc.major_collections`"
  check_jkey $1 counts.collections.compaction "`outkey $2 gc.compactions`"
  check_jkey $1 counts.forced_majors "`outkey $2 gc.forced_major_collections`"
  check_exit_minor "$1: counts.allocated_bytes" "`outkey $2 gc.minor_words`" \
    "`jkey $1 counts.allocated_bytes`" 8
  check_jkey $1 counts.promoted_bytes "$((`outkey $2 gc.promoted_words` * 8))"
  check_jkey $1 heap.heap_bytes "$((`outkey $2 gc.heap_words` * 8))"
  check_jkey $1 heap.top_heap_bytes "$((`outkey $2 gc.top_heap_words` * 8))"
  check_jkey $1 events.lost 0
  check_jkey $1 events.lost_exact true
  for _k in $KINDS; do
    check_jkey $1 events.collections_seen.$_k "`jkey $1 counts.collections.$_k`"
  done
  check_gt "$1: pauses seen" 0 "`jkey $1 counts.pauses_seen`"
  check_gt "$1: events seen" 0 "`jkey $1 events.seen`"
  check_gt "$1: events.span_ns" 0 "`jkey $1 events.span_ns`"
  check_true "$1: events.span_ns <= window.wall_ns" \
    test "`jkey $1 events.span_ns`" -le "`jkey $1 window.wall_ns`"
}

# check_one_line TAG STATUS TEXT: a refusal: exit STATUS, exactly one line
# on stderr holding TEXT, nothing on stdout
check_one_line() {
  check_eq "$1: exit status" "$2" "`cat "$WORK/$1.rc"`"
  check_eq "$1: stderr lines" 1 "`stderr_lines $1`"
  check_true "$1: stderr says '$3'" grep_err "$1" "$3"
  check_eq "$1: stdout bytes" 0 "`wc -c <"$WORK/$1.json" | tr -d ' '`"
}
