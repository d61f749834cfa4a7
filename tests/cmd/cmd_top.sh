#!/bin/sh
# cmd_top.sh - `ocgc top` in a real terminal (tmux) on a live native
# program: the panels show (header with the program, rates, a pause
# histogram whose bars step 1-2-5, three a decade, the sparklines of the
# last minute, which grow a sample a second, in ASCII in the C locale and
# in block characters in a UTF-8 one, the cause table with
# minor_heap_full), a resize keeps it
# running and redraws for the new size, `q` quits with status 0 and the
# terminal restored; SIGTERM restores the terminal too (status 143); when
# the process exits, top says so and keeps the last figures on screen
# until a key, as it says; with stdout not a terminal it prints `ocgc
# stat` rows, its messages still `ocgc top`'s.  The CPU panel: off by
# default (a line says so and what it costs), c switches sampling on (the
# hottest functions of cpu_gc_burn by CPU samples over the last window,
# Cpu_gc_burn.churn, the loop the burn functions run, among them;
# the GC share of the samples with minor among the phases, beside the
# ring's) and off again (no perf event left open), --cpu starts with it
# on; where perf_event_open is refused that part is skipped, saying so.  Skipped (77) without tmux, and when tmux
# cannot start a terminal here (no pseudo-terminals: no /dev/pts, say), with
# tmux's own words as the reason; once tmux runs, every failure is ocgc's.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
command -v tmux >/dev/null 2>&1 || { echo "tmux is missing: skip"; exit 77; }
attach_init

# A private tmux server (its socket in $WORK), killed at exit.
TMUX_SOCK="$WORK/tmux.sock"
unset TMUX
tm() { tmux -S "$TMUX_SOCK" "$@"; }
trap 'tm kill-server >/dev/null 2>&1; attach_cleanup' EXIT

# tmux needs a pseudo-terminal for its window: without one there is no
# terminal to run `ocgc top` in, whatever ocgc does.
if ! tm new-session -d -s probe -x 80 -y 24 "sleep 60" >"$WORK/probe.err" 2>&1 ||
    ! tm has-session -t probe 2>>"$WORK/probe.err"; then
  why=`tr '\n' ' ' <"$WORK/probe.err" | sed 's/ *$//'`
  ptys=`ls /dev/pts 2>/dev/null | wc -l | tr -d ' '`
  say "tmux cannot start a terminal here (${why:-no message}; /dev/pts holds $ptys entries): skip"
  exit 77
fi
tm kill-session -t probe >/dev/null 2>&1

# screen TAG: the pane of session TAG into $WORK/TAG.screen
screen() { tm capture-pane -p -t "$1" >"$WORK/$1.screen" 2>/dev/null; }
# wait_screen TAG TEXT [SECONDS]: until the pane shows TEXT
wait_screen() {
  _n=0
  while :; do
    screen "$1"
    grep -F -q -- "$2" "$WORK/$1.screen" && return 0
    _n=$((_n + 1))
    test $_n -le $(( ${3:-20} * 10 )) || return 1
    sleep 0.1
  done
}
# wait_gone TAG [SECONDS]: until session TAG has ended
wait_gone() {
  _n=0
  while tm has-session -t "$1" 2>/dev/null; do
    _n=$((_n + 1))
    test $_n -le $(( ${2:-10} * 10 )) || return 1
    sleep 0.1
  done
  return 0
}
# start_top TAG PID [LOCALE]: `ocgc top PID` in a 120x40 tmux session, in
# LOCALE (default C: ASCII); when it ends the shell writes its exit status
# to TAG.rc and the terminal modes to TAG.stty (so that we can tell the
# terminal was restored).
start_top() {
  tm new-session -d -s "$1" -x 120 -y 40 \
    "LC_ALL=${3:-C} TERM=screen \"$OCGC\" top $2 2>\"$WORK/$1.err\"; echo \$? >\"$WORK/$1.rc\"; stty -a >\"$WORK/$1.stty\" 2>&1; sleep 0.2" ||
    hard_error "tmux new-session failed"
}
# restored TAG: the terminal is back in canonical mode with echo
restored() {
  grep -q -- ' icanon' "$WORK/$1.stty" && grep -q -- ' echo ' "$WORK/$1.stty"
}
# bar_labels TAG: the bucket labels of the minor histogram (the left column)
# of TAG.screen, as "BOUND_NS FOLDED" lines, top to bottom
bar_labels() {
  awk '/^minor  *n=/ { on = 1; next } on && !/^ (<=|>)[0-9]+(ns|us|ms|s) *\|/ { exit }
    on { l = $1; f = (l ~ /^>/); sub(/^(<=|>)/, "", l); sub(/\|.*/, "", l)
         u = l; sub(/^[0-9]+/, "", u); v = l + 0
         m = u == "us" ? 1000 : u == "ms" ? 1000000 : u == "s" ? 1000000000 : 1
         print v * m, f }' "$WORK/$1.screen"
}
# bar_steps TAG: "ROWS STEPS MANTISSAS": rows of bar_labels, how many of
# them (but the first) are 2 or 2.5 times the one before (1-2-5 steps),
# and which first digits the bounds have (a decade's three: "125")
bar_steps() {
  bar_labels "$1" | awk '!$2 { n++ } !$2 && n > 1 && ($1 == 2 * p || 2 * $1 == 5 * p) { s++ }
    !$2 { p = $1; d[substr($1, 1, 1)] = 1 }
    END { printf "%d %d %s%s%s\n", n, s + 0, d[1] ? 1 : "", d[2] ? 2 : "", d[5] ? 5 : "" }'
}
# spark_n TAG: the samples the p99 sparkline of TAG.screen says it shows
spark_n() { sed -n 's/^p99 .*(\([0-9][0-9]*\)s) *$/\1/p' "$WORK/$1.screen"; }
# wait_spark_grows TAG N: until the sparkline shows more than N samples
wait_spark_grows() {
  _n=0
  while :; do
    screen "$1"
    _s=`spark_n "$1"`
    test -n "$_s" && test "$_s" -gt "$2" && return 0
    _n=$((_n + 1))
    test $_n -le 100 || return 1
    sleep 0.1
  done
}

compile_native target ocgc_test.ml attach_target.ml
start_bg live ./target 60 "$WORK/live.stop"
pid=$BGPID
wait_key live pid "$pid"

say "== the panels"
start_top t1 "$pid"
check_true "header: program and pid" wait_screen t1 "target (pid $pid)"
check_true "rates shown (after a refresh)" wait_screen t1 "minor/s "
# the first screen has no rates yet ("minor/s -"): wait for a refresh or two
sleep 2.5
screen t1
check_true "rates: minor/s with a figure" grep -Eq 'minor/s [0-9]' "$WORK/t1.screen"
for w in "slices/s" "cycles/s" "alloc" "promoted" "promotion" "GC "; do
  check_true "rates: $w" grep -Fq "$w" "$WORK/t1.screen"
done
check_true "header: OCaml version" grep -q "OCaml 4\.1[34]" "$WORK/t1.screen"
check_true "header: heap" grep -q "heap [0-9.]* MiB" "$WORK/t1.screen"
check_true "pause histogram title" grep -q "pause histograms" "$WORK/t1.screen"
check_true "histogram of minor" grep -q "^minor  *n=[1-9]" "$WORK/t1.screen"
# The bars: consecutive 1-2-5 bounds (three a decade), as many as the
# minor pauses span (at least three: p1 to the maximum, a major cycle's
# minor collections are longer than the common ones).
set -- `bar_steps t1`
say "minor histogram: $1 bars, $2 steps of 1-2-5, first digits $3"
check_ge "histogram: bars of minor" 3 "$1"
check_eq "histogram: every step 1-2-5" "$(($1 - 1))" "$2"
check_eq "histogram: three bars a decade (bounds 1, 2 and 5)" 125 "$3"
check_true "histogram bars" grep -Eq '\|#+ +[0-9]+' "$WORK/t1.screen"

say "== the last minute: sparklines"
check_true "p99 sparkline (ASCII)" \
  grep -Eq '^p99 +[_.:=+*# -]+ +[0-9.]+(ns|us|ms|s) now, max [0-9.]+(ns|us|ms|s) \([0-9]+s\)' \
  "$WORK/t1.screen"
check_true "alloc sparkline (ASCII; its largest sample drawn #)" \
  grep -Eq '^alloc +[_.:=+*-]*#[_.:=+*#-]* +[0-9.]+ MiB/s now, max [0-9.]+ MiB/s \([0-9]+s\)' \
  "$WORK/t1.screen"
_rate=`sed -n 's/^alloc .* \([0-9.]*\) MiB\/s now.*/\1/p' "$WORK/t1.screen"`
check_true "alloc now above 0 MiB/s ($_rate)" awk "BEGIN { exit !(${_rate:-0} > 0) }"
_n1=`spark_n t1`
check_true "sparkline samples ($_n1)" is_uint "$_n1"
check_true "the sparklines move: more samples than $_n1" wait_spark_grows t1 "${_n1:-0}"
check_true "cause table header" grep -Eq 'KIND +CAUSE +COUNT +TOTAL_MS +WORST_MS' "$WORK/t1.screen"
check_true "cause table: minor minor_heap_full" \
  grep -Eq '^minor +minor_heap_full +[1-9][0-9]* ' "$WORK/t1.screen"
check_true "loss line" grep -q "events seen [0-9]* *lost" "$WORK/t1.screen"
check_true "keys line" grep -q "q quit" "$WORK/t1.screen"

say "== resize"
tm resize-window -t t1 -x 70 -y 24 >/dev/null 2>&1 || tm resize-pane -t t1 -x 70 -y 24
sleep 1.5
screen t1
check_true "still running after the resize" tm has-session -t t1
check_true "still showing the view after the resize" grep -q "q quit" "$WORK/t1.screen"
_w=`awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$WORK/t1.screen"`
check_true "redrawn for 70 columns (widest line $_w)" test "$_w" -le 70
check_eq "24 lines" 24 "`wc -l <"$WORK/t1.screen" | tr -d ' '`"
tm resize-window -t t1 -x 120 -y 40 >/dev/null 2>&1 || tm resize-pane -t t1 -x 120 -y 40
sleep 1.5
check_true "still running after growing back" tm has-session -t t1
check_true "the cause table is back" wait_screen t1 "minor_heap_full" 5

say "== a UTF-8 locale: block characters"
if test "`LC_ALL=C.UTF-8 locale charmap 2>/dev/null`" = UTF-8; then
  start_top t4 "$pid" C.UTF-8
  check_true "t4: the sparklines" wait_screen t4 "MiB/s now" 10
  wait_spark_grows t4 1
  check_true "UTF-8: block bars" grep -Eq '\|(█|▉|▊|▋|▌|▍|▎|▏)+ +[0-9]+' "$WORK/t4.screen"
  check_true "UTF-8: p99 sparkline of blocks" \
    grep -Eq '^p99 +(▁|▂|▃|▄|▅|▆|▇|█| )+ +[0-9.]+(ns|us|ms|s) now' "$WORK/t4.screen"
  check_true "UTF-8: alloc sparkline of blocks" \
    grep -Eq '^alloc +(▁|▂|▃|▄|▅|▆|▇)*█(▁|▂|▃|▄|▅|▆|▇|█)* +[0-9.]+ MiB/s now' "$WORK/t4.screen"
  tm send-keys -t t4 q
  check_true "t4 ended" wait_gone t4
  check_eq "t4: exit status" 0 "`cat "$WORK/t4.rc" 2>/dev/null`"
else
  say "no C.UTF-8 locale here: the block characters are not checked"
fi

say "== q quits"
tm send-keys -t t1 q
check_true "the session ended" wait_gone t1
check_eq "exit status" 0 "`cat "$WORK/t1.rc" 2>/dev/null`"
check_true "terminal restored (stty: icanon echo)" restored t1
check_eq "nothing on stderr" "" "`cat "$WORK/t1.err"`"

say "== SIGTERM"
start_top t2 "$pid"
check_true "t2 shows the view" wait_screen t2 "q quit"
shpid=`tm list-panes -t t2 -F '#{pane_pid}'`
toppid=`ps -o pid= --ppid "$shpid" | tr -d ' ' | head -n 1`
check_true "found top's pid ($toppid)" is_uint "$toppid"
kill -TERM "$toppid" 2>/dev/null
check_true "the session ended" wait_gone t2
check_eq "exit status after SIGTERM" 143 "`cat "$WORK/t2.rc" 2>/dev/null`"
check_true "terminal restored after SIGTERM" restored t2

say "== stdout not a terminal: stat rows"
"$OCGC" top -d 0.5 -n 2 "$pid" >"$WORK/stat.out" 2>"$WORK/stat.err"
check_eq "top | cat: exit status" 0 $?
check_true "top | cat: a stat header (MINOR/s)" grep -q "MINOR/s" "$WORK/stat.out"
check_true "top | cat: no escape sequences" sh -c "! grep -q \"`printf '\033'`\" \"$WORK/stat.out\""
check_ge "top | cat: rows" 3 "`wc -l <"$WORK/stat.out" | tr -d ' '`"

start_bg off ./target 60 "$WORK/off.stop"
pid_off=$BGPID
wait_key off pid "$pid_off"

say "== the process exits: its last figures stay until a key"
start_top t3 "$pid"
check_true "t3 shows the view" wait_screen t3 "q quit"
stop_bg live "$pid"
check_true "a message says the process exited" wait_screen t3 "exited" 10
check_true "and to press a key to leave" wait_screen t3 "press a key to leave" 5
# It used to leave by itself 3 s after saying so: 10 s on, it is still there.
sleep 10
check_true "10 s later, still running (it waits for the key it asks for)" tm has-session -t t3
screen t3
check_true "10 s later, the last figures and the message still shown" \
  grep -q "exited: last figures above; press a key to leave" "$WORK/t3.screen"
tm send-keys -t t3 x
check_true "a key ends it" wait_gone t3 10
check_eq "exit status" 0 "`cat "$WORK/t3.rc" 2>/dev/null`"
check_true "terminal restored" restored t3

say "== the top allocating functions of a program that samples"
compile_native ta memprof_funs.ml top_alloc.ml
start_bg ta env OCGC_MEMPROF=4096 ./ta "$WORK/ta.stop"
tapid=$BGPID
wait_key ta pid "$tapid"
start_top t4 "$tapid"
check_true "t4: the panel of the top allocating functions" \
  wait_screen t4 "TOP ALLOCATING FUNCTIONS" 20
check_true "t4: its first row is the one function that allocates" \
  wait_screen t4 "Memprof_funs.alloc_c" 20
check_eq "t4: Memprof_funs.alloc_c first, under the title" "Memprof_funs.alloc_c" \
  "`awk '/TOP ALLOCATING FUNCTIONS/ { getline; print $1; exit }' "$WORK/t4.screen"`"
tm send-keys -t t4 q
check_true "t4: q ends it" wait_gone t4
: >"$WORK/ta.stop"
wait "$tapid"
start_top t5 "$pid_off"
check_true "a program that does not sample: one line says so" \
  wait_screen t5 "allocation sampling is off" 20
tm send-keys -t t5 q
check_true "t5: q ends it" wait_gone t5
stop_bg off "$pid_off"

say "== the CPU panel: off until asked; c switches it; --cpu starts with it"
compile_native burn ocgc_test.ml cpu_gc_burn.ml
start_bg burn ./burn "$WORK/burn.stop"
bpid=$BGPID
wait_key burn pid "$bpid"
start_top t6 "$bpid"
check_true "t6: CPU sampling off by default, and it says what it costs" \
  wait_screen t6 "CPU sampling off: press c to sample this process's CPU (it costs" 20
check_true "t6: the keys line names c" grep -q "c CPU panel on" "$WORK/t6.screen"
tm send-keys -t t6 c
_n=0
while :; do
  screen t6
  grep -q -e "CPU (sampled at" -e "perf_event_paranoid" -e "cannot sample" "$WORK/t6.screen" && break
  _n=$((_n + 1)); test $_n -le 200 || break
  sleep 0.1
done
if grep -q "perf_event_paranoid" "$WORK/t6.screen"; then
  say "SKIP part: the CPU panel: perf_event_open is refused here: `grep -A2 'CPU sampling needs' "$WORK/t6.screen" | tr -s ' \n' ' '`"
  tm send-keys -t t6 q
  check_true "t6: q ends it" wait_gone t6
else
  check_true "t6: c switches sampling on" grep -q "CPU (sampled at 100 Hz, it costs the process some CPU; c: off)" "$WORK/t6.screen"
  check_true "t6: the hottest functions of the last window" wait_screen t6 "HOTTEST FUNCTIONS (CPU samples)" 30
  check_true "t6: Cpu_gc_burn.churn among them (the burn functions' loop)" \
    wait_screen t6 "Cpu_gc_burn.churn" 30
  sed -n '/^CPU (sampled/,/^$/p' "$WORK/t6.screen"
  check_true "t6: the GC share of the samples, minor among the phases" \
    grep -Eq "^GC [0-9.]+% of [0-9]+ samples in the last [0-9.]+ s .*: .*minor [0-9.]+%" "$WORK/t6.screen"
  check_true "t6: beside the ring's" \
    grep -Eq "^GC [0-9.]+% of [0-9]+ samples in the last [0-9.]+ s \(the ring: [0-9.]+% of wall time\):" "$WORK/t6.screen"
  tpid=`pgrep -f "top $bpid\$" | head -n 1`
  check_true "t6: top's pid found ($tpid)" test -n "$tpid"
  check_true "t6: top samples (perf events open)" sh -c "ls -l /proc/$tpid/fd | grep -q perf_event"
  tm send-keys -t t6 c
  check_true "t6: c again switches it off" wait_screen t6 "CPU sampling off: press c" 20
  check_true "t6: no perf event left open" sh -c "! ls -l /proc/$tpid/fd | grep -q perf_event"
  tm send-keys -t t6 q
  check_true "t6: q ends it" wait_gone t6
  check_eq "t6: exit status" 0 "`cat "$WORK/t6.rc" 2>/dev/null`"
  start_top t7 "--cpu $bpid"
  check_true "t7: --cpu starts with the panel on" wait_screen t7 "CPU (sampled at 100 Hz" 20
  check_true "t7: its hottest functions" wait_screen t7 "Cpu_gc_burn.churn" 30
  tm send-keys -t t7 q
  check_true "t7: q ends it" wait_gone t7
fi
stop_bg burn "$bpid"

say "== errors"
"$OCGC" top "$pid" >/dev/null 2>"$WORK/e1.err"
check_eq "gone pid: exit status" 3 $?
check_eq "gone pid: one line" 1 "`wc -l <"$WORK/e1.err" | tr -d ' '`"
# stdout is not a terminal there: stat's rows, but still top's messages.
check_true "gone pid: the message says ocgc top (`cat "$WORK/e1.err"`)" \
  grep -q "^ocgc top: process $pid: " "$WORK/e1.err"
"$OCGC" top notapid >/dev/null 2>&1
check_eq "bad pid: exit status" 2 $?
"$OCGC" top --help >"$WORK/help.out" 2>&1
check_eq "--help: exit status" 0 $?
check_true "--help: usage" grep -q "usage: ocgc top" "$WORK/help.out"
finish
