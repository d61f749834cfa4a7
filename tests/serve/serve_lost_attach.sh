#!/bin/sh
# serve_lost_attach.sh - loss counts from the moment serve attaches.  A
# program whose ring (2^16 words, OCaml 5's default) is full and written
# all the time (tests/ocaml/busy_ring.ml: about 100,000 events a second,
# a lap of the ring about every quarter of a second) is watched by
# `ocgc serve PID` and by `ocgc serve --all`, started after the ring
# wrapped.  Each reads it from its oldest event, and the writer overwrites
# the oldest ones while the first reads catch up: events written before
# serve came, which no reader that came then could have had.
# ocgc_ring_events_lost_total must stay 0 while serve keeps up (it drains
# the ring every 10 ms or more often than it laps).  It used to count
# those as lost: a few dozen to hundreds at each start by pid, thousands
# with --all (whose first drain comes later).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init

compile_native busy ocgc_test.ml busy_ring.ml
start_bg busy env OCAMLRUNPARAM=e=16 ./busy 3 "$WORK/busy.stop"
pid=$BGPID
wait_key busy ready "$pid"
serve srv_all --listen 127.0.0.1:0 --all --program '^busy$'
srv_all=$srv url_all=$url
serve srv_pid --listen 127.0.0.1:0 "$pid"
srv_pid=$srv url_pid=$url
for _i in 1 2 3; do
  sleep 1
  for _m in pid all; do
    eval "url=\$url_$_m"
    check_eq "serve ($_m), scrape $_i: GET /metrics" 200 "`get $_m$_i /metrics`"
    say "serve ($_m), scrape $_i: events written `val $_m$_i ocgc_ring_events_total "$pid"`, lost `val $_m$_i ocgc_ring_events_lost_total "$pid"`"
  done
done
for _m in pid all; do
  # The ring had wrapped before serve came: more events written than it
  # holds (2^16 words, 2 to 3 words an event).
  check_gt "serve ($_m): events written, more than the ring holds" 32768 \
    "`val ${_m}3 ocgc_ring_events_total "$pid"`"
  check_eq "serve ($_m): events lost since it attached" 0 "`val ${_m}3 ocgc_ring_events_lost_total "$pid"`"
done
: >"$WORK/busy.stop"
kill -TERM "$srv_pid" "$srv_all"
finish
