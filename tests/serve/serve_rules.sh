#!/bin/sh
# serve_rules.sh - contrib/prometheus/ocgc-rules.yml: promtool accepts it,
# and its unit tests (ocgc-rules.test.yml: each alert fires where it should
# and stays quiet beside, by pid and by program; the recording rules'
# values) pass.  (serve_prometheus.sh loads the rules into a real
# Prometheus scraping real programs: every recording rule returns data.)
. "$OCGC_SRCDIR/tests/lib/lib.sh"
command -v promtool >/dev/null 2>&1 || { echo "SKIP: promtool is missing (apt-get install prometheus)"; exit 77; }
ocgc_init
R="$OCGC_SRCDIR/contrib/prometheus"
promtool check rules "$R/ocgc-rules.yml" >"$WORK/check.out" 2>&1; rc=$?
check_eq "promtool check rules (`tail -n 1 "$WORK/check.out"`)" 0 "$rc"
check_true "rules found" grep -q 'SUCCESS: [1-9][0-9]* rules found' "$WORK/check.out"
(cd "$R" && promtool test rules ocgc-rules.test.yml) >"$WORK/test.out" 2>&1; rc=$?
check_eq "promtool test rules (`grep -m 3 -v '^ *$' "$WORK/test.out" | tr '\n' ' '`)" 0 "$rc"
# Every alert has a test that makes it fire.
for a in `sed -n 's/^ *- alert: *//p' "$R/ocgc-rules.yml"`; do
  check_true "alert $a is tested" grep -q "alertname: $a\$" "$R/ocgc-rules.test.yml"
done
finish
