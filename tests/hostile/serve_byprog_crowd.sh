#!/bin/sh
# serve_byprog_crowd.sh - `ocgc serve --by program` against a crowd of
# names: 520 live rings (tests/hostile/hostile_producer
# crowd:520, names marked as this run's), each a program of its own name,
# fill the 512 programs the
# exporter gives series of their own; the rest share "(other programs)".
# Once the crowd is gone, a real program started after it gets series of
# its own (in the place of a program whose processes all went), with
# figures equal to its Gc.quick_stat; it is not merged into the shared
# group.  Before, the first 512 names kept their places for good.  The
# ends of processes (ocaml_process_exits_total) keep the same bound, and
# the real program's are its own.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
N=520
MAXP=512 # tools/serve.h SERVE_MAX_PROGRAMS

need_open_files $((N + 600))
# Names of this run's own (another test run at once has its crowd and its
# "target" too, which --by program would add to ours).
MARK=`od -An -N4 -tx4 /dev/urandom | tr -d ' '`
T=t$MARK
compile_native "$T" ocgc_test.ml attach_target.ml
CROWD_DIR=`mktemp -d /tmp/ocgc-crowd.XXXXXX` || hard_error "mktemp -d failed"
trap 'attach_cleanup; rm -rf "$CROWD_DIR"' EXIT
HOSTILE_NAME_PREFIX=c$MARK
export HOSTILE_NAME_PREFIX
start_bg crowd "$HBIN/hostile_producer" "$CROWD_DIR" crowd:$N 600 10
unset HOSTILE_NAME_PREFIX
crowd=$BGPID
wait_key crowd ready "$crowd" 300
check_eq "crowd processes ready" "$N" "`grep -c '^child ' "$WORK/crowd.out"`"

# The crowd's names begin with c$MARK; the real program is $T: nothing
# else of the host is selected.
serve srv --listen 127.0.0.1:0 --all --by program --program "^(c$MARK|$T\$)"
_n=0
while :; do
  get w /metrics >/dev/null
  n=`awk '$1 == "ocgc_serve_watched_processes" { print $2 }' "$WORK/w"`
  test "${n:-0}" -ge $N && break
  _n=$((_n + 1)); test $_n -le 300 || hard_error "the crowd not all watched in 150 s ($n)"
  sleep 0.5
done
get w /metrics >/dev/null
progs=`grep -c '^ocgc_serve_program_processes{' "$WORK/w"`
check_eq "programs with series of their own, and the shared one" $((MAXP + 1)) "$progs"
check_eq "the shared one holds the rest" $((N - MAXP)) \
  "`grep -F 'ocgc_serve_program_processes{program="(other programs)"}' "$WORK/w" | awk '{ print $NF }'`"

# The crowd goes.
kill -TERM "$crowd"
wait "$crowd" 2>/dev/null
_n=0
while :; do
  get w /metrics >/dev/null
  n=`awk '$1 == "ocgc_serve_watched_processes" { print $2 }' "$WORK/w"`
  test "${n:-1}" = 0 && break
  _n=$((_n + 1)); test $_n -le 300 || hard_error "the crowd still watched after 150 s ($n)"
  sleep 0.5
done

# A real program after it.
start_bg target "./$T" 0.3 "$WORK/target.stop"
tpid=$BGPID
wait_key target gc.heap_chunks "$tpid"
# (Patterns in variables: an escaped quote inside backquotes is not one.)
own="ocgc_serve_program_processes{program=\"$T\"} 1"
minors="ocaml_gc_collections_total{program=\"$T\",kind=\"minor\""
_n=0
# its minor collections as served (the sum of its series' samples)
served_minors() { grep -F "$minors" "$WORK/m" | awk '{ s += $NF } END { printf "%.0f\n", s }'; }
want=`outkey target gc.minor_collections`
# Its series appear at serve's first read of its ring, and reach its
# final figures at a later one (the program has stopped allocating): the
# figures are polled too, not read once when the series appear (126 of
# 262 on a loaded machine).
while :; do
  get m /metrics >/dev/null
  grep -q -F "$own" "$WORK/m" && test "`served_minors`" = "$want" && break
  _n=$((_n + 1)); test $_n -le 120 || break
  sleep 0.5
done
check_eq "the real program has series of its own" 1 "`grep -c -F "$own" "$WORK/m"`"
check_eq "its minor collections are its quick_stat's" "$want" "`served_minors`"
check_eq "still at most $MAXP programs and the shared one" $((MAXP + 1)) \
  "`grep -c '^ocgc_serve_program_processes{' "$WORK/m"`"
# The ends of processes (ocaml_process_exits_total) keep the same bound:
# the crowd's SIGTERMs counted, the real program's series its own.
check_eq "ends: at most $MAXP programs and the shared one" $((MAXP + 1)) \
  "`grep -c '^ocaml_process_exits_total{.*how="killed"}' "$WORK/m"`"
own_ends="ocaml_process_exits_total{program=\"$T\",how=\"exited\"} 0"
check_eq "ends: the real program has series of its own, at 0" 1 "`grep -c -F "$own_ends" "$WORK/m"`"
stop_bg target "$tpid"
kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit 0" 0 "`rc_of srv`"
finish
