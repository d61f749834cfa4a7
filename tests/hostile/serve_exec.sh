#!/bin/sh
# serve_exec.sh - a watched process that execs is followed into its new
# image.  A program on ocgc's runtime collects, is
# watched by `ocgc serve --all`, then execs itself: same pid, same start
# time, a new ring (the old one's runtime never wrote its exit).  The
# exporter must drop the dead ring's frozen figures and serve the new
# one's: its minor collections equal to the new image's Gc.quick_stat.  It
# used to keep the old ring for good (pid and start time still matched,
# its state still said running) and never look at the new one.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"

compile_native prog ocgc_test.ml exec_watch.ml
start_bg prog ./prog first "$WORK/prog.go" "$WORK/prog.stop"
pid=$BGPID
wait_key prog first.minor_collections "$pid"
serve srv --listen 127.0.0.1:0 --all

# scrape_until FILE WANT: scrape into FILE until the program's minor
# collections are WANT (at most 20 s)
scrape_until() {
  _n=0
  while test "`get $1 /metrics`" != 200 ||
        test "`val $1 ocaml_gc_collections_total "$pid" 'kind="minor"'`" != "$2"; do
    _n=$((_n + 1)); test $_n -le 100 || break
    sleep 0.2
  done
}

first=`outkey prog first.minor_collections`
scrape_until m0 "$first"
check_eq "before the exec: its minor collections" "$first" \
  "`val m0 ocaml_gc_collections_total "$pid" 'kind="minor"'`"

: >"$WORK/prog.go"
wait_key prog second.minor_collections "$pid"
second=`outkey prog second.minor_collections`
check_eq "the same process after the exec" "$pid" "`outkey prog second.pid`"
scrape_until m1 "$second"
check_eq "after the exec: the new image's minor collections" "$second" \
  "`val m1 ocaml_gc_collections_total "$pid" 'kind="minor"'`"
check_eq "one series of its heap chunks (not the dead ring's too)" 1 \
  "`series m1 "$pid" ocaml_gc_heap_chunks`"

: >"$WORK/prog.stop"
kill "$srv" 2>/dev/null
finish
