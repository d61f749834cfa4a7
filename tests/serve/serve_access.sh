#!/bin/sh
# serve_access.sh - who may scrape `ocgc serve`: the
# exporters' web configuration (--web.config.file) and a unix socket.
# A test CA made here with openssl; over TLS
# with basic auth, a real program's figures are served to the right
# password only (401 without one, with a wrong one, or for an unknown
# user), and equal its Gc.quick_stat; the configured headers are on every
# answer; a real Prometheus scrapes it over TLS with basic auth (up 1, the
# program's counters) and a second job without credentials is refused (up
# 0); with RequireAndVerifyClientCert a client without a certificate or
# with one of another CA is refused, one of our CA served; a plain HTTP
# request to the TLS port gets a 400 saying why, 100 silent clients do not
# keep a TLS client out and are let go;
# bad files are refused at start with a line saying what and where.
# --listen unix:PATH: the socket made with its mode (--socket-mode; 0660
# by default), served over it (with the same basic auth), removed at
# exit; a stale socket at PATH is replaced, a live one or a file is left
# alone and refused; as root, user nobody cannot connect to a 0600 one.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
. "$OCGC_SRCDIR/tests/lib/prom_lib.sh"
command -v openssl >/dev/null 2>&1 || { echo "SKIP: openssl is missing (apt-get install openssl)"; exit 77; }
cmd_init
P="$WORK/pki"
mkdir -m 0700 "$P" || hard_error "cannot make $P"

# mkcert NAME CA SUBJ [SAN]: NAME.key and NAME.pem signed by CA (none:
# self-signed, a CA)
mkcert() {
  if test "$2" = none; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj "/CN=$3" -keyout "$P/$1.key" -out "$P/$1.pem" >"$WORK/ssl.$1.log" 2>&1
  else
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$3" \
      -keyout "$P/$1.key" -out "$P/$1.csr" >"$WORK/ssl.$1.log" 2>&1 &&
    printf '%s\n' "${4:-extendedKeyUsage=clientAuth}" >"$P/$1.ext" &&
    openssl x509 -req -in "$P/$1.csr" -CA "$P/$2.pem" -CAkey "$P/$2.key" -CAcreateserial \
      -days 2 -extfile "$P/$1.ext" -out "$P/$1.pem" >>"$WORK/ssl.$1.log" 2>&1
  fi || { cat "$WORK/ssl.$1.log"; hard_error "openssl could not make $1"; }
}
mkcert ca none "ocgc test CA"
mkcert other none "another CA"
mkcert server ca localhost "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
mkcert client ca "scraper"
mkcert stranger other "stranger"

# The password's hash: libcrypt's bcrypt, cost 4 (the test's time, not
# its strength).
HASH=`python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret pass", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))'`
case "$HASH" in '$2'*) ;; *) hard_error "python3 made no bcrypt hash ($HASH)" ;; esac

cat >"$WORK/web.yml" <<EOF
# certificates relative to this file's folder
tls_server_config:
  cert_file: pki/server.pem
  key_file: pki/server.key
http_server_config:
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
basic_auth_users:
  alice: '$HASH'
EOF

target_start a 0.2
pid_a=$BGPID
target_go a
wait_key a gc.heap_chunks "$pid_a"

serve srv --listen 127.0.0.1:0 --web.config.file "$WORK/web.yml" "$pid_a"
check_true "listening line names https://127.0.0.1:PORT/ ($url)" \
  sh -c "echo '$url' | grep -Eq '^https://127\.0\.0\.1:[1-9][0-9]*/$'"
C="--cacert $P/ca.pem"
check_eq "no credentials: 401" 401 "`get n0 /metrics $C`"
check_true "401 asks for basic auth" grep -qi '^www-authenticate: basic realm="ocgc"' "$WORK/n0.h"
check_false "401 holds no figures" grep -q ocaml_gc "$WORK/n0"
check_eq "wrong password: 401" 401 "`get n1 /metrics $C -u 'alice:s3cret'`"
check_eq "unknown user: 401" 401 "`get n2 /metrics $C -u 'bob:s3cret pass'`"
check_eq "/-/healthy wants them too: 401" 401 "`get n3 /-/healthy $C`"
check_eq "right password: 200" 200 "`get m1 /metrics $C -u 'alice:s3cret pass'`"
check_eq "a: minor collections over causes" "`outkey a gc.minor_collections`" \
  "`val m1 ocaml_gc_collections_total $pid_a 'kind="minor"'`"
check_eq "a: minor allocated bytes" "$((`outkey a gc.minor_words` * 8))" \
  "`val m1 ocaml_gc_allocated_bytes_total $pid_a 'heap="minor"'`"
for f in n0 m1; do
  check_true "$f: X-Frame-Options deny" grep -qi '^x-frame-options: deny' "$WORK/$f.h"
  check_true "$f: X-Content-Type-Options nosniff" grep -qi '^x-content-type-options: nosniff' "$WORK/$f.h"
done
check_eq "healthy with the password: 200" 200 "`get h1 /-/healthy $C -u 'alice:s3cret pass'`"
# After a success (remembered, by digest, so that the next costs no
# bcrypt): a wrong password, or the right one of another name, still fails.
check_eq "after a success, a wrong password: 401" 401 "`get n4 /metrics $C -u 'alice:s3cret pas'`"
check_eq "after a success, the password under another name: 401" 401 \
  "`get n5 /metrics $C -u 'alic:es3cret pass'`"
check_eq "and the right one again: 200" 200 "`get m3 /metrics $C -u 'alice:s3cret pass'`"
# Not TLS: a 400 in plain text that says why (serve_frontdoor.c; before,
# the connection was closed with no word), and the exporter goes on.
HP=`echo "$url" | sed 's|^https://\([^/]*\)/$|\1|'`
code=`curl -s --max-time 10 -o "$WORK/plain.body" -w '%{http_code}' "http://$HP/metrics"`
check_eq "plain HTTP to the TLS port: 400" 400 "$code"
check_true "which says so (`head -c 80 "$WORK/plain.body"`)" \
  grep -q 'HTTP request to an HTTPS server' "$WORK/plain.body"
check_eq "and it serves on: 200" 200 "`get m2 /metrics $C -u 'alice:s3cret pass'`"
# Silent clients wait at the front door (at most 10 s each, 128 of one
# address): a TLS client is served meanwhile, and they are let go.
HPORT=${HP##*:}
"$OCGC_BUILDDIR/tests/serve/http_client" 127.0.0.1 "$HPORT" silent 100 60 \
  >"$WORK/silent.out" 2>"$WORK/silent.err" &
silent_pid=$!
BG_PIDS="$BG_PIDS $silent_pid"
_n=0
while test "`lines_of silent.out`" -lt 1 && test $_n -lt 600; do _n=$((_n + 1)); sleep 0.1; done
check_eq "100 silent clients at the TLS port" "ready 100" "`head -n 1 "$WORK/silent.out"`"
check_eq "meanwhile a TLS client: 200" 200 "`get m4 /metrics $C -u 'alice:s3cret pass'`"
wait "$silent_pid"
check_eq "the silent clients were let go, none left open" \
  "silent 100 connected 100 closed 100 open 0" "`tail -n 1 "$WORK/silent.out"`"

# A real Prometheus over TLS with basic auth, and a job without them.
prom_start "$HP" "    scheme: https
    tls_config:
      ca_file: $P/ca.pem
    basic_auth:
      username: alice
      password: 's3cret pass'
  - job_name: nocreds
    scheme: https
    tls_config:
      ca_file: $P/ca.pem
    static_configs:
      - targets: ['$HP']"
prom_eq "prometheus over TLS with basic auth: up" 1 'up{job="ocgc"}'
prom_eq "prometheus: a's minor collections" "`outkey a gc.minor_collections`" \
  "sum by (pid) (ocaml_gc_collections_total{job=\"ocgc\",pid=\"$pid_a\",kind=\"minor\"})"
prom_eq "prometheus without credentials: up 0" 0 'up{job="nocreds"}'
kill -TERM "$PROM_PID"; wait "$PROM_PID" 2>/dev/null

kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit 0" 0 "`rc_of srv`"

# Client certificates: only ours.
cat >"$WORK/mtls.yml" <<EOF
tls_server_config:
  cert_file: $P/server.pem
  key_file: $P/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $P/ca.pem
EOF
serve mtls --listen 127.0.0.1:0 --web.config.file "$WORK/mtls.yml" "$pid_a"
code=`get c0 /metrics $C`
check_true "no client certificate: refused (403, or the handshake; got $code)" \
  sh -c "test '$code' = 403 || test '$code' = 000"
check_false "no client certificate: no figures" grep -q ocaml_gc "$WORK/c0"
code=`get c1 /metrics $C --cert "$P/stranger.pem" --key "$P/stranger.key"`
check_true "another CA's certificate: refused (403, or the handshake; got $code)" \
  sh -c "test '$code' = 403 || test '$code' = 000"
check_false "another CA's certificate: no figures" grep -q ocaml_gc "$WORK/c1"
check_eq "our CA's certificate: 200" 200 "`get c2 /metrics $C --cert "$P/client.pem" --key "$P/client.key"`"
check_true "our CA's certificate: a's figures" grep -q "ocaml_gc_heap_size_bytes{pid=\"$pid_a\"" "$WORK/c2"
kill -TERM "$srv"
ocgc_wait mtls

# Bad files: exit 2, one line saying what and where.
bad() {
  printf '%s\n' "$2" >"$WORK/bad.yml"
  ocgc_cmd "$1" serve --listen 127.0.0.1:0 --web.config.file "$WORK/bad.yml" "$pid_a"
  check_error "$1" 2 "$3"
}
bad unknown "basic_auth_user:
  alice: '$HASH'" "bad.yml:1: unknown key basic_auth_user"
bad badhash "basic_auth_users:
  alice: s3cret" "bad.yml:2: the password of 'alice' is not a bcrypt hash"
# A cost of 31 (2^31 rounds): refused at once, not hashed for hours.
bad slowhash "basic_auth_users:
  alice: '\$2y\$31\$${HASH#\$2?\$??\$}'" "bad.yml:2: the password of 'alice' is not a bcrypt hash"
bad nokey "tls_server_config:
  cert_file: $P/server.pem" "wants a certificate and a key"
bad nofile "tls_server_config:
  cert_file: $P/none.pem
  key_file: $P/server.key" "cannot open $P/none.pem"
bad insecure "tls_server_config:
  cert_file: $P/server.pem
  key_file: $P/server.key
  client_auth_type: RequireAnyClientCert" "RequireAnyClientCert is not supported"
bad notyaml "tls_server_config: [a" "not YAML"
ocgc_cmd missing serve --listen 127.0.0.1:0 --web.config.file "$WORK/none.yml" "$pid_a"
check_error missing 2 "cannot open $WORK/none.yml"
# A key that is not the certificate's: the server does not start.
cat >"$WORK/wrongkey.yml" <<EOF
tls_server_config:
  cert_file: $P/server.pem
  key_file: $P/client.key
EOF
ocgc_cmd wrongkey serve --listen 127.0.0.1:0 --web.config.file "$WORK/wrongkey.yml" "$pid_a"
check_eq "a key not the certificate's: exit 5" 5 "`rc_of wrongkey`"
check_true "it says the server cannot start" grep -q "cannot start the HTTP server" "$WORK/wrongkey.err"

# --listen unix:PATH
S="$WORK/ocgc.sock"
serve un1 --listen "unix:$S" "$pid_a"
check_eq "unix: it says where" "ocgc serve: listening on unix:$S" "`grep 'listening on' "$WORK/un1.err"`"
check_eq "unix: a socket of mode 0660 by default" "socket 660" "`stat -c '%F %a' "$S"`"
code=`curl -s --max-time 30 --unix-socket "$S" -o "$WORK/u1" -w '%{http_code}' http://localhost/metrics`
check_eq "unix: GET /metrics 200" 200 "$code"
check_eq "unix: a's minor collections" "`outkey a gc.minor_collections`" \
  "`val u1 ocaml_gc_collections_total $pid_a 'kind="minor"'`"
# Another serve on the same path: refused, the live one untouched.
ocgc_cmd un2 serve --listen "unix:$S" "$pid_a"
check_error un2 5 "a process listens on it already"
check_eq "unix: the first one still answers" 200 \
  "`curl -s --max-time 30 --unix-socket "$S" -o /dev/null -w '%{http_code}' http://localhost/-/healthy`"
kill -TERM "$srv"
ocgc_wait un1
check_eq "unix: SIGTERM, exit 0" 0 "`rc_of un1`"
check_false "unix: the socket is removed at exit" test -e "$S"

# A stale socket (an earlier run killed) is replaced; with a mode of its
# own and basic auth.
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$S"
check_eq "a stale socket is there" socket "`stat -c %F "$S"`"
printf 'basic_auth_users:\n  alice: %s\n' "'$HASH'" >"$WORK/auth.yml"
serve un3 --listen "unix:$S" --socket-mode 0600 --web.config.file "$WORK/auth.yml" "$pid_a"
check_eq "unix: --socket-mode 0600" "socket 600" "`stat -c '%F %a' "$S"`"
check_eq "unix: no password, 401" 401 \
  "`curl -s --max-time 30 --unix-socket "$S" -o /dev/null -w '%{http_code}' http://localhost/metrics`"
check_eq "unix: with the password, 200" 200 \
  "`curl -s --max-time 30 --unix-socket "$S" -u 'alice:s3cret pass' -o /dev/null -w '%{http_code}' http://localhost/metrics`"
as_nobody=
if test "`id -u`" = 0 && command -v setpriv >/dev/null 2>&1; then
  as_nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
  chmod 711 "$WORK" # the way to the socket open to nobody: only its mode decides
  $as_nobody curl -s --max-time 10 --unix-socket "$S" -o /dev/null http://localhost/metrics; rc=$?
  check_eq "unix 0600: user nobody cannot connect (curl: 7)" 7 "$rc"
else
  say "not root, or no setpriv: another user's connect to the socket is not tried"
fi
kill -TERM "$srv"
ocgc_wait un3
if test -n "$as_nobody"; then
  # The same, 0666: nobody connects (so the refusal above was the mode's).
  serve un6 --listen "unix:$S" --socket-mode 666 "$pid_a"
  check_eq "unix 0666: user nobody connects, 200" 200 \
    "`$as_nobody curl -s --max-time 30 --unix-socket "$S" -o /dev/null -w '%{http_code}' http://localhost/metrics`"
  kill -TERM "$srv"
  ocgc_wait un6
  chmod 700 "$WORK"
fi

# Something else at PATH: left alone, refused.
echo keep >"$WORK/plain"
ocgc_cmd un4 serve --listen "unix:$WORK/plain" "$pid_a"
check_error un4 5 "something that is not a socket is there"
check_eq "the file is untouched" keep "`cat "$WORK/plain"`"
ocgc_cmd un5 serve --listen 127.0.0.1:0 --socket-mode 0600 "$pid_a"
check_error un5 2 "--socket-mode is the mode of --listen unix:PATH"

target_stop a
finish
