#!/bin/sh
# serve_scraper_first.sh - a scraper always gets in to `ocgc serve`,
# whatever slow clients do.  600 clients trickle their requests' heads (a
# header line a second, never ending it; one the server closes connects
# again a second later), first all from the scraper's own address
# (127.0.0.1), then spread over 127.0.0.2 to 127.0.0.6; meanwhile a scrape
# from 127.0.0.1 every second must answer 200.  The same over TLS (the
# handshake trickled: a record's first bytes, then a byte a second), and
# with 600 silent TLS clients from the scraper's address (the front door's
# own list, tools/serve_frontdoor.c).  The issue asks for an answer within
# 2 s; each scrape's time is printed, and the test asserts BOUND_MS (6 s),
# which the code before failed: the connection table full (512) or the
# address's share of it (128) made libmicrohttpd refuse a scraper from the
# crowd's address outright, and hold one from elsewhere in the listen
# backlog until the crowd's heads reached their 10 s deadline (5 s and
# more).  Now the oldest connection whose head is not whole gives way to
# the newcomer (tools/serve_conns.c), counted in
# ocgc_serve_slow_clients_total.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
HC="$OCGC_BUILDDIR/tests/serve/http_client"
test -x "$HC" || hard_error "$HC is missing (run 'make check')"
# 600 descriptors in the client, 576 connections and 512 waiting over TLS
# in the server: each raises its soft limit to the hard one.
need_open_files 2048
N=600
PER_ADDRESS=128   # tools/serve.c
BOUND_MS=6000
SCRAPES=4
RUN_S=14          # past the 10 s deadline of the first heads

compile_native target ocgc_test.ml attach_target.ml
start_bg target ./target 0.3 "$WORK/target.stop"
tpid=$BGPID
wait_key target gc.heap_chunks "$tpid"

# slow_total TAG: ocgc_serve_slow_clients_total as a scrape into $WORK/TAG
# says it.
slow_total() {
  get "$1" /metrics $CURL >/dev/null
  sed -n 's/^ocgc_serve_slow_clients_total //p' "$WORK/$1"
}

# phase NAME MODE MIN_GAVE_WAY [ENV...]: N slow clients of MODE (http_client's
# "trickle N RUN_S", "trickle N RUN_S tls", "silent N RUN_S") with ENV;
# SCRAPES scrapes from 127.0.0.1 meanwhile, each answered 200 within
# BOUND_MS; at least MIN_GAVE_WAY of the crowd counted as slow clients.
# Returns 1 (having said SKIP) if the crowd's addresses cannot be bound.
phase() {
  _name=$1 _mode=$2 _min=$3; shift 3
  _before=`slow_total "$_name.0"`
  ( env "$@" "$HC" 127.0.0.1 "$port" $_mode >"$WORK/$_name.out" 2>"$WORK/$_name.err"
    echo $? >"$WORK/$_name.rc" ) &
  BG_PIDS="$BG_PIDS $!"
  _n=0
  while ! grep -q '^ready' "$WORK/$_name.out" 2>/dev/null; do
    if test -s "$WORK/$_name.rc"; then
      if test "`cat "$WORK/$_name.rc"`" = 2; then
        say "SKIP $_name: `cat "$WORK/$_name.err"` (loopback addresses past 127.0.0.1 are not there)"
        return 1
      fi
      hard_error "the slow clients of $_name ended: `cat "$WORK/$_name.err"`"
    fi
    _n=$((_n + 1)); test $_n -le 600 || hard_error "the slow clients of $_name never connected"
    sleep 0.1
  done
  say "$_name: slow clients `head -n 1 "$WORK/$_name.out"`"
  sleep 1
  _bad=0 _slow=0 _i=1
  while test $_i -le $SCRAPES; do
    set -- `get "$_name.s$_i" /metrics $CURL -w '%{http_code} %{time_total}'`
    _ms=`awk -v t="$2" 'BEGIN { printf "%d", t * 1000 }'`
    say "  $_name: scrape $_i from 127.0.0.1: $1 in $_ms ms (the issue's target: 2000 ms)"
    test "$1" = 200 || _bad=$((_bad + 1))
    test "$_ms" -le $BOUND_MS || _slow=$((_slow + 1))
    _i=$((_i + 1))
    sleep 1
  done
  check_eq "$_name: scrapes from 127.0.0.1 that did not answer 200" 0 "$_bad"
  check_eq "$_name: scrapes from 127.0.0.1 slower than $BOUND_MS ms" 0 "$_slow"
  check_true "$_name: the last one holds the program's figures" \
    grep -q "^ocaml_gc_collections_total{pid=\"$tpid\"," "$WORK/$_name.s$SCRAPES"
  _n=0
  while ! test -s "$WORK/$_name.rc"; do
    _n=$((_n + 1)); test $_n -le 600 || hard_error "the slow clients of $_name never ended"
    sleep 0.1
  done
  say "$_name: slow clients `tail -n 1 "$WORK/$_name.out"`"
  # The count is in the figures the poll thread renders next.
  _n=0
  while _after=`slow_total "$_name.9"` && test $((${_after:-0} - ${_before:-0})) -lt "$_min" &&
        test $_n -lt 50; do
    _n=$((_n + 1)); sleep 0.2
  done
  check_true "$_name: at least $_min of the crowd gave way, counted ($((${_after:-0} - ${_before:-0})))" \
    test $((${_after:-0} - ${_before:-0})) -ge "$_min"
}

# Plain HTTP.
CURL=
serve srv --listen 127.0.0.1:0 "$tpid"
port=${url##*:}; port=${port%/}
check_eq "a scrape before" 200 "`get m0 /metrics`"
phase own "trickle $N $RUN_S" $((N - PER_ADDRESS))
# Five addresses hold 120 each, within their share: 600 past the 512 of
# the table.
phase spread "trickle $N $RUN_S" $((N - 512)) HC_SOURCES=5 HC_FIRST_SOURCE=2
kill "$srv" 2>/dev/null

# TLS, through the front door.
if command -v openssl >/dev/null 2>&1; then
  P="$WORK/pki"
  mkdir -m 0700 "$P" || hard_error "cannot make $P"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=localhost" -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$P/server.key" -out "$P/server.pem" >"$WORK/ssl.log" 2>&1 ||
    { cat "$WORK/ssl.log"; hard_error "openssl could not make a certificate"; }
  printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$P/server.pem" "$P/server.key" \
    >"$WORK/web.yml"
  CURL="--cacert $P/server.pem"
  serve tls --listen 127.0.0.1:0 --web.config.file "$WORK/web.yml" "$tpid"
  port=${url##*:}; port=${port%/}
  check_eq "over TLS, a scrape before" 200 "`get t0 /metrics $CURL`"
  phase tls_own "trickle $N $RUN_S tls" $((N - PER_ADDRESS))
  phase tls_spread "trickle $N $RUN_S tls" $((N - 512)) HC_SOURCES=5 HC_FIRST_SOURCE=2
  # Silent ones wait in the front door's list, not libmicrohttpd's: they
  # are not counted, but the scrapes must get past them all the same.
  phase tls_silent "silent $N $RUN_S" 0
  kill "$srv" 2>/dev/null
else
  say "SKIP TLS: openssl is missing (apt-get install openssl), to make a certificate"
fi

: >"$WORK/target.stop"
finish
