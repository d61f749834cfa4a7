#!/bin/sh
# serve_rules.sh - contrib/prometheus/ocgc-rules.yml: promtool accepts it,
# and its unit tests (ocgc-rules.test.yml: each alert fires where it should
# and stays quiet beside, by pid and by program; the recording rules'
# values) pass.  And the labels of contrib/grafana/ocgc.json and of the
# rules (dash_labels.py): every aggregation keeps `instance` (two hosts
# with the same program and pid stay two series), every legend's
# {{label}} is one its expression keeps; the alerts and the panel of the
# processes' ends (ocaml_process_exits_total).  (serve_prometheus.sh loads the
# rules into a real Prometheus scraping real programs: every recording
# rule returns data, and so does every expression of the dashboard.)
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
R="$OCGC_SRCDIR/contrib/prometheus"
DASHBOARD="$OCGC_SRCDIR/contrib/grafana/ocgc.json"
if command -v python3 >/dev/null 2>&1; then
  python3 "$OCGC_SRCDIR/tests/serve/dash_labels.py" "$DASHBOARD" "$R/ocgc-rules.yml" \
    >"$WORK/labels.out" 2>&1; rc=$?
  cat "$WORK/labels.out"
  check_eq "dashboard and rules: aggregations keep instance, legends print kept labels (`tail -n 1 "$WORK/labels.out"`)" 0 "$rc"
  check_gt "dashboard and rules: expressions read" 40 \
    "`sed -n 's/^\([0-9]*\) expressions.*/\1/p' "$WORK/labels.out"`"
  # The panels of the leak and of the profile's overflow.
  check_true "dashboard: a panel of the live heap" grep -q '"expr": "ocaml_gc_heap_live_bytes{' "$DASHBOARD"
  check_true "dashboard: a panel of the allocation table's overflow" \
    grep -q '"expr": "rate(ocaml_memprof_overflow_samples_total{' "$DASHBOARD"
  check_true "dashboard: a panel of the process ends by how" \
    grep -q '"expr": "sum by (instance, program, how) (rate(ocaml_process_exits_total{' "$DASHBOARD"
else
  say "SKIP part: python3 is missing: the dashboard's labels are not checked"
fi
if ! command -v promtool >/dev/null 2>&1; then
  say "SKIP part: promtool is missing (apt-get install prometheus): the rules are not checked"
  finish
fi
promtool check rules "$R/ocgc-rules.yml" >"$WORK/check.out" 2>&1; rc=$?
check_eq "promtool check rules (`tail -n 1 "$WORK/check.out"`)" 0 "$rc"
check_true "rules found" grep -q 'SUCCESS: [1-9][0-9]* rules found' "$WORK/check.out"
(cd "$R" && promtool test rules ocgc-rules.test.yml) >"$WORK/test.out" 2>&1; rc=$?
check_eq "promtool test rules (`grep -m 3 -v '^ *$' "$WORK/test.out" | tr '\n' ' '`)" 0 "$rc"
# Every alert has a test that makes it fire.
for a in `sed -n 's/^ *- alert: *//p' "$R/ocgc-rules.yml"`; do
  check_true "alert $a is tested" grep -q "alertname: $a\$" "$R/ocgc-rules.test.yml"
done
# The ends of processes: an alert on the OOM killer's, one on a signal's.
check_true "an alert on ocaml_process_exits_total{how=\"oom\"}" \
  grep -q '^ *expr:.*increase(ocaml_process_exits_total{how="oom"}' "$R/ocgc-rules.yml"
check_true "an alert on ocaml_process_exits_total{how=\"killed\"}" \
  grep -q '^ *expr:.*increase(ocaml_process_exits_total{how="killed"}' "$R/ocgc-rules.yml"
# The leak alert watches the live heap's slope, not the heap's size.
check_true "an alert on deriv(ocaml_gc_heap_live_bytes[...])" \
  grep -q '^ *expr:.*deriv(ocaml_gc_heap_live_bytes\[' "$R/ocgc-rules.yml"
finish
