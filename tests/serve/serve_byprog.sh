#!/bin/sh
# serve_byprog.sh - `ocgc serve --all --by program --program REGEX` (issue
# 26): 100 short-lived processes of one program (named uniquely for this
# run, so that other programs and other test runs on the host are not
# selected), ten at a time, each watched before it works and exits
# (byprog_target.ml: its counters printed at the exit itself).  The
# series are the same after the first ten as after all hundred (no pid
# label, nothing per process; only a collection cause met later may add
# one), and once all are gone the program's
# counters equal the sums of their own Gc.quick_stat (minor collections
# over causes, major cycles, minor-heap and promoted bytes); counters never
# go backwards from one batch to the next; the gauge of living processes
# goes back to 0; a program --program does not select is not served.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
cmd_init
BG_PRESERVE=0
BP=bp`od -An -N4 -tx4 /dev/urandom | tr -d ' '`
# Its counters at exit are printed with nothing allocated after them:
# what the runtime's final totals hold.
compile_native "$BP" ocgc_stubs.c ocgc_test.ml byprog_target.ml
# One of another name: not selected.
start_bg other ./cmd_target 0.05 "$WORK/other.go" "$WORK/other.stop"
pid_other=$BGPID
wait_key other before.heap_chunks "$pid_other"

serve srv --listen 127.0.0.1:0 --all --by program --program "^$BP\$"

# samples FILE: the sample lines of our program
samples() { grep -v '^#' "$WORK/$1" | grep -F "program=\"$BP\""; }
# pv FILE NAME [MATCH]: the sum of NAME's samples of our program (whose line holds MATCH)
pv() {
  grep -F "$2{" "$WORK/$1" | grep -F "program=\"$BP\"" | grep -F -- "${3:-}" |
    awk '{ s += $NF } END { printf "%.0f\n", s }'
}

minors=0 majors=0 minor_bytes=0 promoted=0 prev_minors=0 backwards=0
batch=1
while test $batch -le 10; do
  pids=
  i=1
  while test $i -le 10; do
    t=p${batch}_$i
    (cd "$WORK" && exec env OCAML_RUNTIME_EVENTS_DIR="$EVDIR" "./$BP" 0.05 "$WORK/$t.go" \
       "$WORK/$t.stop" >"$WORK/$t.out" 2>"$WORK/$t.err") &
    eval "pid_$t=\$!"
    BG_PIDS="$BG_PIDS $!"
    pids="$pids $!"
    i=$((i + 1))
  done
  i=1
  for p in $pids; do
    t=p${batch}_$i
    wait_key $t before.heap_chunks "$p"
    watched "$p"
    : >"$WORK/$t.go"
    i=$((i + 1))
  done
  i=1
  for p in $pids; do
    t=p${batch}_$i
    stop_bg $t "$p"
    check_eq "$t: exit status" 0 "`rc_of $t`"
    minors=$((minors + `outkey $t exit.minor_collections`))
    majors=$((majors + `outkey $t exit.major_collections`))
    minor_bytes=$((minor_bytes + `outkey $t exit.minor_words` * 8))
    promoted=$((promoted + `outkey $t exit.promoted_words` * 8))
    i=$((i + 1))
  done
  # Until serve has seen them all go: no living process of the program.
  _n=0
  while :; do
    get m$batch /metrics >/dev/null
    test "`pv m$batch ocgc_serve_program_processes`" = 0 && break
    _n=$((_n + 1)); test $_n -le 300 || hard_error "batch $batch: its processes still live for serve after 30 s"
    sleep 0.1
  done
  now=`pv m$batch ocaml_gc_collections_total 'kind="minor"'`
  test "$now" -ge "$prev_minors" || backwards=$((backwards + 1))
  prev_minors=$now
  test $batch = 1 && series1=`samples m1 | wc -l`
  batch=$((batch + 1))
done
m=m10
# The same series after 100 processes as after 10: none of a process, and
# none gone; only a collection cause first met later may add one (kinds
# and causes are a fixed, small set).
samples m1 | sed 's/ [^ ]*$//' | sort >"$WORK/keys1"
samples $m | sed 's/ [^ ]*$//' | sort >"$WORK/keys10"
check_gt "the program has series" 20 "$series1"
check_eq "no series of the first ten is gone" "" "`comm -23 "$WORK/keys1" "$WORK/keys10" | head -n 3`"
check_eq "no new series but a new collection cause" "" \
  "`comm -13 "$WORK/keys1" "$WORK/keys10" | grep -v '^ocaml_gc_collections_total{' | head -n 3`"
check_eq "no pid label at all" 0 "`grep -c 'pid=' "$WORK/$m"`"
check_eq "minor collections never went back between batches" 0 "$backwards"
check_eq "minor collections: the sum of the 100 Gc.quick_stat" "$minors" \
  "`pv $m ocaml_gc_collections_total 'kind="minor"'`"
check_eq "major cycles: the sum" "$majors" "`pv $m ocaml_gc_major_cycles_total`"
check_eq "minor-heap bytes: the sum" "$minor_bytes" "`pv $m ocaml_gc_allocated_bytes_total 'heap="minor"'`"
check_eq "promoted bytes: the sum" "$promoted" "`pv $m ocaml_gc_promoted_bytes_total`"
check_gt "pauses observed" 100 "`pv $m ocaml_gc_pause_seconds_count`"
check_eq "the other program is not served" 0 "`grep -c 'program="cmd_target"' "$WORK/$m"`"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$WORK/$m" >"$WORK/promtool.out" 2>&1; _rc=$?
  check_eq "promtool check metrics: status (`head -n 3 "$WORK/promtool.out"`)" 0 "$_rc"
fi

kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit 0" 0 "`rc_of srv`"
: >"$WORK/other.go"
stop_bg other "$pid_other"
finish
