#!/bin/sh
# serve_lost_attach.sh - loss counts from the moment serve attaches.  A
# program whose ring (2^18 words) is full and written all the time
# (tests/ocaml/busy_ring.ml: some 100,000 events a second) is given to
# `ocgc serve PID`.  serve reads it from its oldest event, and the writer
# overwrites the oldest ones while the first reads catch up: events
# written before serve came, which no reader that came then could have
# had.  ocgc_ring_events_lost_total must stay 0 while serve keeps up
# (it polls the ring every 10 ms or more often than it laps, about every
# second here).  It used to count those as lost: 50 to several hundred at
# each start beside a busy program.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init

compile_native busy ocgc_test.ml busy_ring.ml
start_bg busy env OCAMLRUNPARAM=e=18 ./busy 3 "$WORK/busy.stop"
pid=$BGPID
wait_key busy ready "$pid"
serve srv --listen 127.0.0.1:0 "$pid"
for _i in 1 2 3; do
  sleep 1
  check_eq "scrape $_i: GET /metrics" 200 "`get m$_i /metrics`"
  say "scrape $_i: events written `val m$_i ocgc_ring_events_total "$pid"`, lost `val m$_i ocgc_ring_events_lost_total "$pid"`"
done
# The ring had wrapped before serve came: more events written than it holds
# (2^18 words, 2 to 3 words an event).
check_gt "events written by the last scrape, more than the ring holds" 131072 \
  "`val m3 ocgc_ring_events_total "$pid"`"
check_eq "events lost since serve attached" 0 "`val m3 ocgc_ring_events_lost_total "$pid"`"
: >"$WORK/busy.stop"
kill -TERM "$srv"
ocgc_wait srv
finish
