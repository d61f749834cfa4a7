#!/bin/sh
# serve_exec_pid.sh - a PID given to `ocgc serve` is followed across an
# exec into another OCaml program (tests/ocaml/exec_watch.ml, which execs
# a copy of itself under another name: same pid, same start time, a new
# ring that names the new program).  After the exec, /metrics has the
# pid's series under the new program's name only, and its minor
# collections equal the new image's Gc.quick_stat.  It used to drop the
# pid at the exec (its ring gone) and never look at it again: no series of
# it at all.  (--all follows an exec by its listing: hostile/serve_exec.sh.)
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init

compile_native prog ocgc_test.ml exec_watch.ml
cp "$WORK/prog" "$WORK/next_image" || hard_error "cannot copy the program"
start_bg prog ./prog first "$WORK/prog.go" "$WORK/prog.stop" "$WORK/next_image"
pid=$BGPID
wait_key prog first.minor_collections "$pid"
serve srv --listen 127.0.0.1:0 "$pid"

# scrape_until FILE WANT: scrape into FILE until the pid's minor
# collections are WANT (at most 30 s: the new ring is looked for once a
# second)
scrape_until() {
  _n=0
  while test "`get $1 /metrics`" != 200 ||
        test "`val $1 ocaml_gc_collections_total "$pid" 'kind="minor"'`" != "$2"; do
    _n=$((_n + 1)); test $_n -le 150 || break
    sleep 0.2
  done
}
# programs FILE: the program labels of the pid's series, one per line
programs() {
  grep -F "{pid=\"$pid\"," "$WORK/$1" | sed -n 's/.*,program="\([^"]*\)".*/\1/p' | sort -u
}

first=`outkey prog first.minor_collections`
scrape_until m0 "$first"
check_eq "before the exec: its minor collections" "$first" \
  "`val m0 ocaml_gc_collections_total "$pid" 'kind="minor"'`"
check_eq "before the exec: its program" prog "`programs m0`"

: >"$WORK/prog.go"
wait_key prog second.minor_collections "$pid"
second=`outkey prog second.minor_collections`
check_eq "the same process after the exec" "$pid" "`outkey prog second.pid`"
t0=`date +%s`
scrape_until m1 "$second"
say "the new image's figures were served `expr \`date +%s\` - $t0` s after it printed them"
check_eq "after the exec: the new image's minor collections" "$second" \
  "`val m1 ocaml_gc_collections_total "$pid" 'kind="minor"'`"
check_eq "after the exec: its series name the new program only" next_image "`programs m1`"
check_eq "one series of its heap chunks (not the old ring's too)" 1 \
  "`series m1 "$pid" ocaml_gc_heap_chunks`"
check_true "serve still runs" kill -0 "$srv"

: >"$WORK/prog.stop"
kill "$srv" 2>/dev/null
finish
