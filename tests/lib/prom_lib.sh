# prom_lib.sh - a real Prometheus for the tests of `ocgc serve` (sourced
# after lib.sh): Debian's prometheus on a free loopback port with its own
# config and data folder in $WORK, stopped with the test's other
# background processes.  Skips the test when prometheus is missing.
#
#   prom_start HOST:PORT [LINES]   # scrape HOST:PORT every second; LINES
#                                  # are added to its scrape config (scheme,
#                                  # tls_config, basic_auth); $PROM_URL
#   PROM_RULE_FILES='"a.yml"'      # rule files it loads (evaluated every second)
for _c in prometheus promtool; do
  command -v $_c >/dev/null 2>&1 ||
    { echo "SKIP: $_c is missing (apt-get install prometheus)"; exit 77; }
done
PROM_PID=

# prom_try PORT: start Prometheus on 127.0.0.1:PORT; 0 once it answers as
# ours, 1 if PORT was taken.
prom_try() {
  prometheus --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$1" >"$WORK/prom.log" 2>&1 &
  PROM_PID=$!
  BG_PIDS="$BG_PIDS $PROM_PID"
  _n=0
  while :; do
    if ! kill -0 "$PROM_PID" 2>/dev/null; then
      wait "$PROM_PID"
      grep -q 'address already in use' "$WORK/prom.log" && return 1
      tail -n 20 "$WORK/prom.log"; hard_error "prometheus died"
    fi
    # Something else may answer on PORT: ours names our data folder.
    curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$1/api/v1/status/flags" 2>/dev/null |
      grep -q -F "\"$WORK/tsdb\"" && return 0
    _n=$((_n + 1)); test $_n -le 600 || hard_error "prometheus not ready in 30 s"
    sleep 0.05
  done
}

prom_start() {
  cat >"$WORK/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [${PROM_RULE_FILES:-}]
scrape_configs:
  - job_name: ocgc
    static_configs:
      - targets: ['$1']
${2:-}
EOF
  for _try in 1 2 3 4 5 6 7 8 9 10; do
    _port=$((20000 + `od -An -N2 -tu2 /dev/urandom | tr -d ' '` % 40000))
    if prom_try $_port; then
      PROM_URL="http://127.0.0.1:$_port"
      say "prometheus listens on $PROM_URL"
      return
    fi
  done
  hard_error "prometheus found no free port in 10 tries"
}

# Q ARGS...: serve_prom_query.py against it
Q() { python3 "$OCGC_SRCDIR/tests/serve/serve_prom_query.py" "$PROM_URL" "$@"; }
# prom_eq WHAT WANT EXPR: Prometheus's latest value of EXPR comes to WANT
# (polled up to 30 s: it is there after a scrape or two)
prom_eq() { check_eq "$1" "$2" "`Q poll 30 "$2" "$3"`"; }
