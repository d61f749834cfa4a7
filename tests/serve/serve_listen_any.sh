#!/bin/sh
# serve_listen_any.sh - `--listen :PORT`, Prometheus's own form (no host:
# every address).  `--listen :0` listens on a free port of every address:
# [::] taking IPv4 too where the host has IPv6 (answered on 127.0.0.1 and
# [::1]), else 0.0.0.0 (answered on 127.0.0.1); without ::1 on the
# loopback the IPv6 part is skipped, saying so.  A port that is not one
# is refused with one line.  It used to refuse ':PORT' altogether
# ("--listen wants ADDR:PORT").
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init

serve_try srv --listen :0 --all || { cat "$WORK/srv.err"; fail "serve --listen :0 did not start"; finish; }
say "it says: `grep 'listening on' "$WORK/srv.err"`"
port=`printf '%s\n' "$url" | sed -n 's|^http://.*:\([0-9]*\)/$|\1|p'`
check_true "a port was chosen ($port)" test -n "$port" -a "${port:-0}" != 0
case $url in
  "http://[::]:"*) v6=1 ;;
  "http://0.0.0.0:"*) v6=0 ;;
  *) v6=x ;;
esac
check_true "it listens on every address ($url)" test "$v6" != x
url=http://127.0.0.1:$port/
check_eq "GET /metrics on 127.0.0.1" 200 "`get m4 /metrics`"
if test "$v6" = 1 && grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; then
  url=http://[::1]:$port/
  check_eq "GET /metrics on [::1]" 200 "`get m6 /metrics -g`"
else
  say "SKIP part: this host has no IPv6 loopback (::1): [::1] is not tried"
fi
kill -TERM "$srv"
ocgc_wait srv
check_eq "serve --listen :0: exit status" 0 "`rc_of srv`"

for bad in :x :65536 ':'; do
  ocgc_cmd bad serve --listen "$bad" --all
  check_error bad 2 "--listen"
done
finish
