#!/bin/sh
# serve_hup.sh - SIGHUP reads --web.config.file again, and never stops
# serve.  Serving on a unix socket with --textfile and basic auth (user
# alice): after the file names bob instead and SIGHUP, bob is let in and
# alice refused; after the file is broken and SIGHUP, it says so on stderr
# and keeps bob; a file that changes tls_server_config is refused the same
# way.  Through it all serve runs, its socket and its --textfile stay; on
# SIGTERM it exits 0 and removes both.  SIGHUP used to kill it, leaving
# the socket and the textfile behind.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init

# bcrypt at cost 4: the test's time, not the hash's strength
hash() {
  python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' "$1"
}
HA=`hash 'alice pass'`
HB=`hash 'bob pass'`
case "$HA$HB" in '$2'*'$2'*) ;; *) hard_error "python3 made no bcrypt hash ($HA)" ;; esac
CONF="$WORK/web.yml"
printf 'basic_auth_users:\n  alice: %s\n' "'$HA'" >"$CONF"

SOCK="$WORK/s.sock"
TF="$WORK/ocgc.prom"
serve srv --listen "unix:$SOCK" --web.config.file "$CONF" --textfile "$TF" --interval 100ms --all
url=http://localhost/
# as USER PASS: the status of GET /metrics over the socket
as() { get a /metrics --unix-socket "$SOCK" -u "$1:$2"; }
# hup: SIGHUP to serve, and wait (at most 20 s) for its "SIGHUP:" line;
# what it said since in $WORK/hup.txt
hup() {
  _l=`lines_of srv.err`
  kill -HUP "$srv"
  _n=0
  while tail -n +$((_l + 1)) "$WORK/srv.err" >"$WORK/hup.txt" && ! grep -q 'SIGHUP:' "$WORK/hup.txt"; do
    _n=$((_n + 1)); test $_n -le 400 || break
    sleep 0.05
  done
  say "serve said: `tr '\n' ' ' <"$WORK/hup.txt"`"
}
# said TEXT: whether serve said TEXT after the last hup
said() { grep -q -F -- "$1" "$WORK/hup.txt"; }

check_eq "alice, before" 200 "`as alice 'alice pass'`"
check_eq "bob, before" 401 "`as bob 'bob pass'`"

printf 'basic_auth_users:\n  bob: %s\n' "'$HB'" >"$CONF"
hup
check_true "SIGHUP: it says it read the file again" said "read again"
check_true "SIGHUP: serve still runs" kill -0 "$srv"
check_eq "bob, after SIGHUP" 200 "`as bob 'bob pass'`"
check_eq "alice, after SIGHUP" 401 "`as alice 'alice pass'`"

printf 'basic_auth_users:\n  bob: [\n' >"$CONF"
hup
check_true "a broken file: it says the one in use is kept" said "does not load: the configuration in use is kept"
check_true "a broken file: serve still runs" kill -0 "$srv"
check_eq "a broken file: bob still let in" 200 "`as bob 'bob pass'`"
check_eq "a broken file: alice still refused" 401 "`as alice 'alice pass'`"

printf 'tls_server_config:\n  cert_file: nothing.pem\n  key_file: nothing.key\nbasic_auth_users:\n  alice: %s\n' "'$HA'" >"$CONF"
hup
check_true "a file that turns TLS on: the one in use is kept" said "the configuration in use is kept"
check_eq "still bob" 200 "`as bob 'bob pass'`"
check_true "the socket is still there" test -S "$SOCK"
check_true "the textfile is still there" test -f "$TF"

kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit status" 0 "`rc_of srv`"
check_false "SIGTERM: the socket is removed" test -e "$SOCK"
check_false "SIGTERM: the textfile is removed" test -e "$TF"

# A serve started without users, whose file gains some: the password
# checks (serve_auth.c's worker, made only for users) start with them.
# Without it every password was answered 503, never checked.
printf 'http_server_config:\n  headers:\n    X-Frame-Options: deny\n' >"$CONF"
SOCK="$WORK/s2.sock"
serve srv --listen "unix:$SOCK" --web.config.file "$CONF" --all
url=http://localhost/
check_eq "no users: anyone" 200 "`get a /metrics --unix-socket "$SOCK"`"
printf 'basic_auth_users:\n  bob: %s\n' "'$HB'" >"$CONF"
hup
check_true "users given: it says it read the file again" said "read again"
check_eq "users given: no credentials refused" 401 "`get a /metrics --unix-socket "$SOCK"`"
check_eq "users given: bob let in" 200 "`as bob 'bob pass'`"
check_eq "users given: a wrong password refused" 401 "`as bob 'not his'`"
printf 'basic_auth_users:\n  alice: %s\n' "'$HA'" >"$CONF"
hup
check_eq "bob gone: bob refused, though his password passed a moment ago" 401 "`as bob 'bob pass'`"
check_eq "alice let in" 200 "`as alice 'alice pass'`"
kill -TERM "$srv"
ocgc_wait srv
check_eq "the second serve: exit status" 0 "`rc_of srv`"
finish
