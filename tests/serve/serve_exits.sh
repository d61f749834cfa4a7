#!/bin/sh
# serve_exits.sh - how a watched process ended (issue 45), under `ocgc
# serve --all --by program --program REGEX` (the programs named uniquely
# for this run, so that no other program or test run on the host is
# selected): ocaml_process_exits_total{program,how} is there at 0 while
# they live, then counts one SIGKILLed and one SIGABRTed as killed (2),
# one that exits 3 as exited (1), and nothing else, nor the exec of another
# (its new image then SIGKILLed: killed 3); libocgc's on_gone
# (exit_watch, a watch of one pid) says of the one that exits its status
# and its runtime's exit mark, of the SIGKILLed one its signal, of the
# exec'd one's old image no end.  Then one
# that grows its heap in a memory cgroup of 96 MiB of its own (v1's memory
# hierarchy, or a cgroup2 child with memory.max; removed afterwards) is
# OOM-killed, the cgroup removed as it dies (as a service manager does):
# how="oom" counted, and on_gone says oom_killed 1 and SIGKILL; its
# cgroup's limit was read while it lived.  Skipped, saying why, only where no memory
# cgroup can be made.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init
BG_PRESERVE=0
EXIT_WATCH="$OCGC_BUILDDIR/tests/serve/exit_watch"
test -x "$EXIT_WATCH" || hard_error "$EXIT_WATCH is missing (run 'make check')"
XP=ex`od -An -N4 -tx4 /dev/urandom | tr -d ' '`
compile_native "$XP" ocgc_test.ml exit_target.ml

# By pid (the default) too: the family is labelled by program there as well.
serve srvp --listen 127.0.0.1:0 --all --program "^$XP\$"
srv_pid=$srv url_pid=$url
# With a flight recorder (no cooldown: each end of the program is
# recorded): the OOM kill's recording says so.
mkdir -m 0700 "$WORK/flight"
serve srv --listen 127.0.0.1:0 --all --by program --program "^$XP\$" \
  --flight-dir "$WORK/flight" --flight-cooldown 0

# watched PID: wait until / lists PID (the listing looks every second)
watched() {
  _n=0
  while ! get idx / >/dev/null || ! grep -q "^$1	" "$WORK/idx"; do
    _n=$((_n + 1)); test $_n -le 600 || hard_error "ocgc serve did not watch $1 in 60 s"
    sleep 0.1
  done
}
# watched_by_both PID: until both serves list PID (the ends by pid below
# count only what the by-pid serve watched; a program that dies soon after
# the other serve lists it may not be watched by this one yet on a loaded
# machine)
watched_by_both() {
  _u=$url
  watched "$1"
  url=$url_pid
  watched "$1"
  url=$_u
}
# exits FILE HOW: the count of our program's ends of HOW in $WORK/FILE ("" if no series)
exits() {
  grep -F 'ocaml_process_exits_total{' "$WORK/$1" | grep -F "program=\"$XP\"" |
    grep -F "how=\"$2\"" | awk '{ print $NF }'
}
# until_exits TAG HOW N: scrape until HOW counts N (at most 60 s); the
# last scrape in $WORK/TAG
until_exits() {
  _n=0
  while get "$1" /metrics >/dev/null; test "`exits "$1" "$2"`" != "$3"; do
    _n=$((_n + 1)); test $_n -le 600 || break
    sleep 0.1
  done
}
# ew TAG KEY: a value exit_watch printed
ew() { outkey "$1" "$2"; }
# watch_one TAG PID: exit_watch on PID in the background, until it watches
watch_one() {
  : >"$WORK/$1.out"; : >"$WORK/$1.err"
  "$EXIT_WATCH" "$2" 120 >"$WORK/$1.out" 2>"$WORK/$1.err" &
  eval "ew_$1=\$!"
  BG_PIDS="$BG_PIDS $!"
  wait_key "$1" watching
}
ew_wait() { eval "wait \$ew_$1"; echo $? >"$WORK/$1.rc"; }

start_bg k "./$XP" loop "$WORK/k.go"; pid_k=$BGPID
start_bg e "./$XP" exit 3 "$WORK/e.go"; pid_e=$BGPID
start_bg a "./$XP" loop "$WORK/a.go"; pid_a=$BGPID
for t in k e a; do
  eval "p=\$pid_$t"
  wait_key $t before.heap_chunks "$p"
  watched_by_both "$p"
done
watch_one wk "$pid_k"
watch_one we "$pid_e"
get m0 /metrics >/dev/null
check_eq "while they live: killed counts 0" 0 "`exits m0 killed`"
check_eq "while they live: exited counts 0" 0 "`exits m0 exited`"
check_eq "while they live: oom counts 0" 0 "`exits m0 oom`"
check_eq "no unknown series" "" "`exits m0 unknown`"

: >"$WORK/k.go"; : >"$WORK/a.go"
t0=`date +%s`
kill -KILL "$pid_k"
kill -ABRT "$pid_a"
: >"$WORK/e.go"
until_exits m1 killed 2
until_exits m1 exited 1
say "  counted within `expr \`date +%s\` - $t0` s of the ends (scraped every 0.1 s)"
check_eq "SIGKILL and SIGABRT: killed" 2 "`exits m1 killed`"
check_eq "exit 3: exited" 1 "`exits m1 exited`"
check_eq "none oom" 0 "`exits m1 oom`"
check_eq "none unknown" "" "`exits m1 unknown`"
wait "$pid_k"; wait "$pid_a"; wait "$pid_e"; echo $? >"$WORK/e.rc"
check_eq "the one that exits: status" 3 "`cat "$WORK/e.rc"`"
ew_wait wk; ew_wait we
check_eq "on_gone of the SIGKILLed: called" 0 "`cat "$WORK/wk.rc"`"
check_eq "on_gone of the SIGKILLed: known" 1 "`ew wk known`"
check_eq "on_gone of the SIGKILLed: how" killed "`ew wk how`"
check_eq "on_gone of the SIGKILLed: signal" 9 "`ew wk signal`"
check_eq "on_gone of the SIGKILLed: not oom" 0 "`ew wk oom_killed`"
check_eq "on_gone of the SIGKILLed: no exit mark" 0 "`ew wk exit_mark`"
check_eq "on_gone of the one that exits: called" 0 "`cat "$WORK/we.rc"`"
check_eq "on_gone of the one that exits: known" 1 "`ew we known`"
check_eq "on_gone of the one that exits: how" exited "`ew we how`"
check_eq "on_gone of the one that exits: code" 3 "`ew we code`"
check_eq "on_gone of the one that exits: its runtime's exit mark" 1 "`ew we exit_mark`"

# ---- an exec is no end: the old image's ring goes, the process lives ----
start_bg x "./$XP" exec "$WORK/x.go"; pid_x=$BGPID
wait_key x before.heap_chunks "$pid_x"
watched_by_both "$pid_x"
watch_one wx "$pid_x"
: >"$WORK/x.go"
ew_wait wx
check_eq "exec: on_gone of the old image called" 0 "`cat "$WORK/wx.rc"`"
check_eq "exec: on_gone says no end (gone_ns 0)" 0 "`ew wx gone`"
check_eq "exec: nor how" unknown "`ew wx how`"
_n=0
while test "`grep -c '^before.heap_chunks' "$WORK/x.out"`" -lt 2 && test $_n -lt 600; do
  _n=$((_n + 1)); sleep 0.1
done
check_eq "exec: the new image runs" 2 "`grep -c '^before.heap_chunks' "$WORK/x.out"`"
# serve reads the same way: nothing counted for it over 3 s
_n=0
while test $_n -lt 30; do
  get m1x /metrics >/dev/null
  test "`exits m1x killed`/`exits m1x exited`/`exits m1x unknown`" = 2/1/ || break
  _n=$((_n + 1)); sleep 0.1
done
check_eq "exec: serve counts no end (killed/exited/unknown)" 2/1/ \
  "`exits m1x killed`/`exits m1x exited`/`exits m1x unknown`"
kill -KILL "$pid_x"
{ wait "$pid_x"; } 2>/dev/null
until_exits m1y killed 3
check_eq "exec: the new image SIGKILLed: killed" 3 "`exits m1y killed`"

# ---- OOM: a memory cgroup of its own, under ours ----
CG=
oom_want=0
# the line of /proc/self/mountinfo of a hierarchy: its mount point (only
# mounts of the hierarchy's root: where our cgroup's path is below it)
mount_of() {
  awk -v want="$1" '{ for (i = 7; $i != "-"; i++) {}; fs = $(i + 1); so = $(i + 3)
    if ($4 != "/") next
    if (want == "v2" && fs == "cgroup2") { print $5; exit }
    if (want == "v1" && fs == "cgroup" && ("," so ",") ~ /,memory,/) { print $5; exit } }' \
    /proc/self/mountinfo
}
NAME="ocgc-exits-$$-`od -An -N4 -tx4 /dev/urandom | tr -d ' '`"
m=`mount_of v1`
own=`sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup`
if test -n "$m" && test -n "$own" && mkdir "$m${own%/}/$NAME" 2>/dev/null; then
  CG="$m${own%/}/$NAME"
  echo 96M >"$CG/memory.limit_in_bytes" || CG_BAD=1
  test -f "$CG/memory.memsw.limit_in_bytes" && echo 96M >"$CG/memory.memsw.limit_in_bytes"
  cg_kind=v1
else
  m=`mount_of v2`
  own=`sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup`
  if test -n "$m" && test -n "$own" && grep -qw memory "$m${own%/}/cgroup.controllers" 2>/dev/null; then
    grep -qw memory "$m${own%/}/cgroup.subtree_control" ||
      echo +memory >"$m${own%/}/cgroup.subtree_control" 2>/dev/null
    if grep -qw memory "$m${own%/}/cgroup.subtree_control" && mkdir "$m${own%/}/$NAME" 2>/dev/null; then
      CG="$m${own%/}/$NAME"
      echo 96M >"$CG/memory.max" || CG_BAD=1
      test -f "$CG/memory.swap.max" && echo 0 >"$CG/memory.swap.max"
      cg_kind=v2
    fi
  fi
fi
cg_cleanup() {
  test -n "$CG" && test -d "$CG" && rmdir "$CG" 2>/dev/null
  attach_cleanup
}
if test -z "$CG"; then
  say "SKIP part: no memory cgroup can be made here (no writable v1 memory hierarchy, no cgroup2 with the memory controller delegated): the OOM kill is not tried"
elif test -n "${CG_BAD:-}"; then
  rmdir "$CG"
  say "SKIP part: the memory cgroup $CG took no limit of 96 MiB: the OOM kill is not tried"
else
  trap 'cg_cleanup' EXIT
  say "  memory cgroup ($cg_kind): $CG"
  # Moved into the cgroup (by its own pid: the shell execs the program)
  # before it allocates anything.
  start_bg g sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "./$XP" grow "$WORK/g.go"
  pid_g=$BGPID
  wait_key g before.heap_chunks "$pid_g"
  check_true "the program is in the cgroup" grep -qx "$pid_g" "$CG/cgroup.procs"
  watched_by_both "$pid_g"
  watch_one wg "$pid_g"
  check_eq "its cgroup read while it lives" 1 "`ew wg watch.memcg.known`"
  check_eq "its cgroup's limit" 100663296 "`ew wg watch.memcg.limit`"
  check_eq "its cgroup's version" "`test $cg_kind = v2 && echo 1 || echo 0`" \
    "`ew wg watch.memcg.v2`"
  : >"$WORK/g.go"
  { wait "$pid_g"; echo $? >"$WORK/g.rc"; } 2>/dev/null
  # Removed at once, as a service manager removes a unit's cgroup when its
  # last process dies: the watches may not have read its death there yet.
  _n=0
  while ! rmdir "$CG" 2>/dev/null && test $_n -lt 100; do _n=$((_n + 1)); sleep 0.05; done
  test -d "$CG" || CG=
  check_eq "the cgroup removed as the program died" "" "$CG"
  check_eq "the growing program: killed by SIGKILL (128 + 9)" 137 "`cat "$WORK/g.rc"`"
  say "  it grew to `grep '^grown' "$WORK/g.out" | tail -n 1` MiB"
  until_exits m2 oom 1
  check_eq "OOM-killed: oom" 1 "`exits m2 oom`"
  oom_want=1
  # serve's recording of it (made in the turn that counted it)
  rec=`ls "$WORK/flight"/$XP-$pid_g-*-death.ocgcrec 2>/dev/null | head -n 1`
  check_true "a death recording of the OOM-killed program" test -n "$rec"
  ocgc_cmd grec report --file "${rec:-/nonexistent}" --json
  jr() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
      "$WORK/grec.out" "$1" 2>/dev/null
  }
  check_eq "its recording: exit.oom_killed" True "`jr 'd[\"exit\"][\"oom_killed\"]'`"
  check_eq "its recording: exit.signal" 9 "`jr 'd[\"exit\"][\"signal\"]'`"
  check_eq "its recording: its cgroup's limit" 100663296 \
    "`jr 'd[\"recording\"][\"memcg\"][\"limit_bytes\"]'`"
  check_eq "still 3 killed" 3 "`exits m2 killed`"
  ew_wait wg
  check_eq "on_gone of the OOM-killed: called" 0 "`cat "$WORK/wg.rc"`"
  check_eq "on_gone of the OOM-killed: how" oom "`ew wg how`"
  check_eq "on_gone of the OOM-killed: oom_killed" 1 "`ew wg oom_killed`"
  check_eq "on_gone of the OOM-killed: signal" 9 "`ew wg signal`"
  check_eq "on_gone of the OOM-killed: its cgroup's figures as last read" 100663296 "`ew wg memcg.limit`"
  say "  on_gone's cgroup: OOM kills `ew wg memcg.oom_kills` (1: read at its death; 0: removed first, the host's count told)"
fi
if command -v promtool >/dev/null 2>&1; then
  get m3 /metrics >/dev/null
  promtool check metrics <"$WORK/m3" >"$WORK/promtool.out" 2>&1; _rc=$?
  check_eq "promtool check metrics: status (`head -n 3 "$WORK/promtool.out"`)" 0 "$_rc"
fi
kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit 0" 0 "`rc_of srv`"
# The exporter by pid: the same ends, by program (no pid: a process that
# ended has no series), its other series by pid.
url=$url_pid
_n=0
while get mp /metrics >/dev/null
  test "`exits mp killed`/`exits mp exited`/`exits mp oom`" != "3/1/$oom_want"; do
  _n=$((_n + 1)); test $_n -le 600 || break
  sleep 0.1
done
check_eq "by pid: the ends by program (killed/exited/oom)" "3/1/$oom_want" \
  "`exits mp killed`/`exits mp exited`/`exits mp oom`"
check_eq "by pid: no pid label on the ends" 0 "`grep '^ocaml_process_exits_total{' "$WORK/mp" | grep -c 'pid='`"
kill -TERM "$srv_pid"
wait "$srv_pid"
check_eq "by pid: SIGTERM: exit 0" 0 "$?"
finish
