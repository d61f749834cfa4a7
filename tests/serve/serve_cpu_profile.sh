#!/bin/sh
# serve_cpu_profile.sh - `ocgc serve`'s CPU profiles,
# /debug/pprof/profile?pid=N&seconds=S (Go's path and meaning), of
# cpu_gc_burn (burn_one, burn_two and burn_four in a 1:2:4 ratio while it
# churns the minor heap) and cpu_threads (two worker threads), read by
# Debian's `go tool pprof`:
# - ?pid=N&seconds=3&frequency=400: `-top -cum` names the three burn_*
#   functions by their OCaml names (their ratio printed, not asserted: the
#   exact measure is tests/attach/cpu_profile.sh's); `-tags` shows gc_phase
#   with minor among its values, and gc_cause; pprof's Duration is 3 s
#   (and the last turn's ms);
# - a threaded program: worker_a's and worker_b's stacks, each its own
#   thread's, are in its profile;
# - /metrics answers while a CPU window of 10 s runs (the time printed);
# - two CPU windows of 300 s (the bound at once) of two clients that
#   leave: a third is refused 503 while they run and answered 200 once
#   they have left (the time printed), ocgc_serve_pprof_abandoned_total 2;
# - a window of 120 s across an exec of its process (exec_watch.ml: same
#   pid, a new image) ends at the exec: 200 with the samples before, its
#   Duration the part sampled (the time printed);
# - ?program=NAME&seconds=3: two processes of cpu_gc_burn merged (the
#   comment says 2, the functions named, gc_phase minor, the period), and
#   /debug/pprof/targets names its CPU path (__meta_ocgc_cpu_profile_path);
# - bad requests: frequency out of bounds (400);
# - without --web.enable-pprof, a client over TCP is refused 403; over a
#   unix socket, uid 65534 is refused 403 for root's program.
# Skips (77) only where perf_event_open is refused to root (the answer is
# 403 with libocgc's line), or go is missing.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init
. "$OCGC_SRCDIR/tests/lib/pprof_lib.sh"
pprof_init

gauge() { awk -v n="$2" '$1 == n { print $2 }' "$WORK/$1"; }

compile_native burn ocgc_test.ml cpu_gc_burn.ml
PACKAGES=threads.posix,unix compile_native thr ocgc_test.ml cpu_threads.ml
compile_native ew ocgc_test.ml exec_watch.ml
start_bg burn ./burn "$WORK/burn.stop"
pid=$BGPID
wait_key burn pid "$pid"
start_bg thr ./thr "$WORK/thr.stop"
tpid=$BGPID
wait_key thr pid "$tpid"
: >"$WORK/thr.stop.go"

serve srv --listen 127.0.0.1:0 --web.enable-pprof "$pid" "$tpid"

say "== ?pid=N&seconds=3: the program's functions and its labels"
code=`curl -s --max-time 120 -D "$WORK/p.h" -o "$WORK/p.pb.gz" -w '%{http_code}' \
  "${url%/}/debug/pprof/profile?pid=$pid&seconds=3&frequency=400"`
if test "$code" = 403 && grep -q 'perf_event_paranoid' "$WORK/p.pb.gz"; then
  say "skipped: perf_event_open is refused here: `cat "$WORK/p.pb.gz"`"
  stop_bg burn "$pid"; stop_bg thr "$tpid"
  exit 77
fi
check_eq "profile?pid=N&seconds=3: 200" 200 "$code"
test "$code" = 200 || sed 's/^/answer: /' "$WORK/p.pb.gz"
check_true "pprof's content type" grep -qi '^content-type: application/octet-stream' "$WORK/p.h"
go tool pprof -top -cum -sample_index=samples -nodecount=100000 "$WORK/p.pb.gz" \
  >"$WORK/top" 2>"$WORK/top.err" || hard_error "go tool pprof -top: `cat "$WORK/top.err"`"
sed -n 1,16p "$WORK/top"
cum() { awk -v f="$1" '$NF == f { print $4; exit }' "$WORK/top"; }
one=`cum Cpu_gc_burn.burn_one`; two=`cum Cpu_gc_burn.burn_two`; four=`cum Cpu_gc_burn.burn_four`
check_gt "Cpu_gc_burn.burn_one named, its samples" 0 "${one:-0}"
check_gt "Cpu_gc_burn.burn_two named, its samples" 0 "${two:-0}"
check_gt "Cpu_gc_burn.burn_four named, its samples" 0 "${four:-0}"
say "burn_one:burn_two:burn_four = $one:$two:$four (1:2:4 burnt)"
check_true "a window of 3 s (pprof's Duration: the time sampled, 3 s and the last turn)" \
  grep -Eq '^Duration: 3(\.[0-9]+)?s' "$WORK/top"
go tool pprof -tags -sample_index=samples "$WORK/p.pb.gz" >"$WORK/tags" 2>"$WORK/tags.err" ||
  hard_error "go tool pprof -tags: `cat "$WORK/tags.err"`"
cat "$WORK/tags"
check_true "gc_phase among the labels, minor among its values" \
  awk '$1 == "gc_phase:" { on = 1; next } /^ *[a-z_]+: Total/ { on = 0 } on && $NF == "minor" { ok = 1 }
    END { exit !ok }' "$WORK/tags"
check_true "gc_cause among the labels" grep -q '^ *gc_cause: Total' "$WORK/tags"
go tool pprof -comments "$WORK/p.pb.gz" >"$WORK/p.comments" 2>&1
cat "$WORK/p.comments"
check_true "its comment: the window's samples, threads and lost" \
  grep -q "ocgc serve: process $pid: [0-9]* samples from [0-9]* threads, [0-9]* lost" "$WORK/p.comments"

say "== a threaded program: every worker thread sampled"
check_eq "threads' profile: 200" 200 "`curl -s --max-time 120 -o "$WORK/t.pb.gz" -w '%{http_code}' \
  "${url%/}/debug/pprof/profile?pid=$tpid&seconds=2&frequency=200"`"
go tool pprof -top -sample_index=samples -nodecount=100000 "$WORK/t.pb.gz" >"$WORK/t.top" 2>&1
sed -n 1,12p "$WORK/t.top"
for f in worker_a worker_b; do
  check_true "Cpu_threads.$f's thread in the profile" \
    awk -v f="Cpu_threads.$f" '$NF == f && $4 + 0 > 0 { ok = 1 } END { exit !ok }' "$WORK/t.top"
done

say "== bad requests"
check_eq "frequency=0: 400" 400 "`get bad1 "/debug/pprof/profile?pid=$pid&frequency=0"`"
check_eq "frequency=1001: 400" 400 "`get bad2 "/debug/pprof/profile?pid=$pid&frequency=1001"`"
check_eq "seconds=301: 400" 400 "`get bad3 "/debug/pprof/profile?pid=$pid&seconds=301"`"
check_eq "a process not watched: 404" 404 "`get bad4 "/debug/pprof/profile?pid=1&seconds=1"`"

say "== /metrics answers while a CPU window runs"
curl -s --max-time 120 -o "$WORK/w.pb.gz" -w '%{http_code}' \
  "${url%/}/debug/pprof/profile?pid=$pid&seconds=10" >"$WORK/w.code" &
wc_=$!
n=0
until test "`get wm /metrics`" = 200 && test "`gauge wm ocgc_serve_pprof_windows`" = 1; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the CPU window never began"
  sleep 0.05
done
worst=0; i=0
while test $i -lt 10; do
  t0=`date +%s%N`
  c=`get m$i /metrics`
  ms=$(( (`date +%s%N` - t0) / 1000000 ))
  test "$ms" -gt "$worst" && worst=$ms
  check_eq "/metrics during the window ($i): 200" 200 "$c"
  i=$((i + 1))
  sleep 0.2
done
say "/metrics answered within $worst ms at worst during a 10 s CPU window"
check_true "/metrics never waited for the window ($worst ms; the window is 10 s)" test "$worst" -lt 5000
wait $wc_
check_eq "the 10 s window: 200" 200 "`cat "$WORK/w.code"`"

say "== two clients that leave free their places"
for i in 2 3; do
  curl -s --max-time 600 --interface 127.0.0.$i -o /dev/null \
    "${url%/}/debug/pprof/profile?pid=$pid&seconds=300&frequency=10" &
  eval "c$i=\$!"
done
n=0
until test "`get wm /metrics`" = 200 && test "`gauge wm ocgc_serve_pprof_windows`" = 2; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the two windows never began: `gauge wm ocgc_serve_pprof_windows`"
  sleep 0.05
done
check_eq "two CPU windows: a third 503" 503 "`get busy "/debug/pprof/profile?pid=$pid&seconds=1"`"
check_true "503 says CPU profiles are being made" grep -q "CPU profiles are being made" "$WORK/busy"
check_eq "an allocation profile still: not refused busy" 1 \
  "`test "\`get al "/debug/pprof/allocs?pid=$pid"\`" != 503 && echo 1`"
kill $c2 $c3; wait $c2; wait $c3
t0=`date +%s%N`
n=0
while test "`get third "/debug/pprof/profile?pid=$pid&seconds=1"`" != 200; do
  n=$((n + 1)); test $n -le 150 || break
  sleep 0.2
done
ms=$(( (`date +%s%N` - t0) / 1000000 ))
say "a third CPU window answered 200 $ms ms after the two clients left"
check_eq "the clients gone: a third 200" 200 "`get third "/debug/pprof/profile?pid=$pid&seconds=1"`"
check_true "within 30 s ($ms ms; the windows were of 300 s)" test $ms -le 30000
get wm /metrics >/dev/null
check_eq "ocgc_serve_pprof_abandoned_total" 2 "`gauge wm ocgc_serve_pprof_abandoned_total`"
check_eq "ocgc_serve_pprof_windows" 0 "`gauge wm ocgc_serve_pprof_windows`"

say "== ?program=NAME: two processes of one program merged"
start_bg burn2 ./burn "$WORK/burn2.stop"
pid2=$BGPID
wait_key burn2 pid "$pid2"
serve srvp --listen 127.0.0.1:0 --web.enable-pprof "$pid" "$pid2"
n=0
until get idx / >/dev/null && grep -q "^$pid2	" "$WORK/idx" && grep -q "^$pid	" "$WORK/idx"; do
  n=$((n + 1)); test $n -le 600 || hard_error "serve never listed both: `cat "$WORK/idx"`"
  sleep 0.05
done
prog=`awk -F '	' -v p="$pid" '$1 == p { print $2 }' "$WORK/idx"`
check_eq "both processes under one program ($prog)" 2 "`awk -F '	' -v n="$prog" '$2 == n' "$WORK/idx" | wc -l`"
code=`curl -s --max-time 120 -G --data-urlencode "program=$prog" --data-urlencode seconds=3 \
  --data-urlencode frequency=200 -o "$WORK/pm.pb.gz" -w '%{http_code}' "${url%/}/debug/pprof/profile"`
check_eq "profile?program=NAME&seconds=3: 200" 200 "$code"
test "$code" = 200 || sed 's/^/answer: /' "$WORK/pm.pb.gz"
go tool pprof -comments "$WORK/pm.pb.gz" >"$WORK/pm.comments" 2>&1
cat "$WORK/pm.comments"
check_true "its comment: 2 processes sampled" grep -q '2 processes sampled' "$WORK/pm.comments"
go tool pprof -top -cum -sample_index=samples -nodecount=100000 "$WORK/pm.pb.gz" \
  >"$WORK/pm.top" 2>"$WORK/pm.top.err" || hard_error "go tool pprof -top: `cat "$WORK/pm.top.err"`"
sed -n 1,12p "$WORK/pm.top"
for f in burn_one burn_two burn_four; do
  check_true "the merged profile names Cpu_gc_burn.$f" \
    awk -v f="Cpu_gc_burn.$f" '$NF == f && $4 + 0 > 0 { ok = 1 } END { exit !ok }' "$WORK/pm.top"
done
go tool pprof -tags -sample_index=samples "$WORK/pm.pb.gz" >"$WORK/pm.tags" 2>/dev/null
check_true "the merged profile has gc_phase minor" grep -q ': minor$' "$WORK/pm.tags"
check_eq "the merged profile's period: 1/200 s" 1 \
  "`go tool pprof -raw "$WORK/pm.pb.gz" 2>/dev/null | grep -c '^Period: 5000000$'`"
check_eq "targets: 200" 200 "`get sd /debug/pprof/targets`"
cat "$WORK/sd"
check_true "targets: the program's CPU profile path" \
  grep -qF "\"__meta_ocgc_cpu_profile_path\": \"/debug/pprof/profile?program=$prog\"" "$WORK/sd"
stop_bg burn2 "$pid2"

say "== a window across an exec ends there: the samples before"
start_bg ew ./ew first "$WORK/ew.go" "$WORK/ew.stop"
epid=$BGPID
wait_key ew first.minor_collections "$epid"
serve srvx --listen 127.0.0.1:0 --web.enable-pprof "$epid"
t0=`date +%s%N`
curl -s --max-time 200 -o "$WORK/x.pb.gz" -w '%{http_code}' \
  "${url%/}/debug/pprof/profile?pid=$epid&seconds=120" >"$WORK/x.code" &
xc=$!
n=0
until test "`get wm /metrics`" = 200 && test "`gauge wm ocgc_serve_pprof_windows`" = 1; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the window never began: `cat "$WORK/x.code" "$WORK/x.pb.gz"`"
  sleep 0.05
done
: >"$WORK/ew.go"
wait_key ew second.pid "$epid"
wait $xc
ms=$(( (`date +%s%N` - t0) / 1000000 ))
say "a 120 s window across an exec answered after $ms ms"
check_eq "a window across an exec: 200, the samples before" 200 "`cat "$WORK/x.code"`"
check_true "it ended at the exec, long before 120 s ($ms ms)" test "$ms" -lt 60000
go tool pprof -top -sample_index=samples "$WORK/x.pb.gz" >"$WORK/x.top" 2>&1
sed -n 1,8p "$WORK/x.top"
check_true "its Duration is the part sampled, under 60 s" \
  awk '/^Duration:/ { d = $2; sub(/,$/, "", d); f = 1
    if (d ~ /ms$/) { f = 0.001; sub(/ms$/, "", d) } else sub(/s$/, "", d)
    ok = d ~ /^[0-9.]+$/ && d * f > 0 && d * f < 60 } END { exit !ok }' "$WORK/x.top"
stop_bg ew "$epid"

say "== who may have it"
serve srv2 --listen 127.0.0.1:0 "$pid"
check_eq "TCP, no --web.enable-pprof: 403" 403 "`get f1 "/debug/pprof/profile?pid=$pid&seconds=1"`"
check_true "403 names --web.enable-pprof" grep -q -- "--web.enable-pprof" "$WORK/f1"
why=`nobody_why`
if test -n "$why"; then
  say "SKIP part: uid 65534 on a unix socket: $why"
else
  S=$WORK/s.sock
  serve srv3 --listen "unix:$S" --socket-mode 0666 "$pid"
  chmod 0711 "$WORK"
  check_eq "unix: uid 65534, root's program: 403" 403 \
    "`setpriv --reuid=65534 --regid=65534 --clear-groups curl -s --max-time 30 --unix-socket "$S" \
      -o /dev/stdout -w '%{http_code}' "http://localhost/debug/pprof/profile?pid=$pid&seconds=1" | tail -c 3`"
  check_eq "unix: root, root's program: 200" 200 \
    "`curl -s --max-time 60 --unix-socket "$S" -o "$WORK/u.pb.gz" -w '%{http_code}' \
      "http://localhost/debug/pprof/profile?pid=$pid&seconds=1"`"
fi

stop_bg burn "$pid"
stop_bg thr "$tpid"
finish
