#!/bin/sh
# serve_lifecycle.sh - processes coming and going under `ocgc serve`, real
# programs on the patched runtime (tests/ocaml/cmd_target.ml, which waits
# for files: no sleeps decide anything).
#
# --all: programs started after serve appear within a bounded poll of
# /metrics; one that exits, and one that is SIGKILLed, are gone from the
# first scrape after they were reaped (no series of that pid at all, so
# no stale value either); a pid reused by a new program shows the new one
# only (its program label, a later start time, its own counts, which equal
# its Gc.quick_stat), whether or not a scrape came between the death and
# the reuse.  PIDs given: the same exits and kill, and a given pid reused
# by another program is not followed (that pid named the old process).
#
# Pid reuse for real needs root: the test runs itself in a fresh pid
# namespace (unshare --pid --fork --mount-proc: only its own processes,
# the host is not disturbed) and picks the next pid with
# /proc/sys/kernel/ns_last_pid; without a namespace, it writes the host's
# ns_last_pid (retrying if another fork took the pid); when neither is
# possible (not root) only the reuse checks are skipped, with a line
# saying so.  OCGC_LIFE_NS=0 in the environment keeps it out of a
# namespace (to try the host's way).
if test -z "${OCGC_LIFE_NS:-}"; then
  OCGC_LIFE_NS=0
  if test "`id -u`" = 0 && command -v unshare >/dev/null 2>&1 &&
     unshare --pid --fork --mount-proc /bin/sh -c \
       'echo 1 >/proc/sys/kernel/ns_last_pid' 2>/dev/null; then
    OCGC_LIFE_NS=1; export OCGC_LIFE_NS
    # --kill-child: the namespace (and what runs in it) ends with us; TERM
    # so that the shell, its pid 1, cleans its work folder.
    exec unshare --pid --fork --mount-proc --kill-child=TERM /bin/sh "$0" "$@"
  fi
fi
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
cmd_init
# The same program under another name: a new program label.
cp "$WORK/cmd_target" "$WORK/life_new" || hard_error "cannot copy cmd_target"

if test "$OCGC_LIFE_NS" = 1; then
  say "in a fresh pid namespace (pid $$): only this test's processes are there"
  REUSE=yes
elif _last=`cat /proc/sys/kernel/ns_last_pid 2>/dev/null` &&
     (echo "$_last" >/proc/sys/kernel/ns_last_pid) 2>/dev/null; then
  # (writing back what was read: at worst the kernel skips a used pid)
  say "no pid namespace: pids are reused through the host's ns_last_pid"
  REUSE=yes
else
  say "SKIP (pid reuse only): neither a pid namespace nor ns_last_pid is writable (root needed)"
  REUSE=no
fi

# scrape FILE: GET /metrics into $WORK/FILE (the test stops unless 200)
scrape() {
  _c=`get "$1" /metrics`
  test "$_c" = 200 || hard_error "GET /metrics: status '$_c'"
}
# labels FILE PID: the program labels of PID's samples, one a line
labels() {
  grep -F "pid=\"$2\"" "$WORK/$1" | sed -n 's/.*program="\([^"]*\)".*/\1/p' | sort -u
}
# minors FILE PID: minor collections summed over causes
minors() { val "$1" ocaml_gc_collections_total "$2" 'kind="minor"'; }
# watched FILE: ocgc_serve_watched_processes
watched() { awk '$1 == "ocgc_serve_watched_processes" { print $2 }' "$WORK/$1"; }

# wait_served FILE PID...: scrape into FILE until each PID has series
# (a process is found by a listing, at most a second apart; 60 s bound)
wait_served() {
  _f=$1; shift
  _n=0
  while :; do
    scrape "$_f"
    _missing=
    for _p in "$@"; do test "`series "$_f" "$_p"`" -gt 0 || _missing="$_missing $_p"; done
    test -z "$_missing" && return 0
    _n=$((_n + 1)); test $_n -le 600 || hard_error "pids$_missing never served"
    sleep 0.1
  done
}

# check_gone FILE WHAT PID: nothing of PID in FILE (wherever the label
# stands), nor in the / page
check_gone() {
  check_eq "$2: samples labelled pid $3" 0 "`grep -c -F "pid=\"$3\"" "$WORK/$1"`"
  check_eq "$2: GET /" 200 "`get "$1.index" /`"
  check_false "$2: / does not list pid $3" grep -q "^$3	" "$WORK/$1.index"
}

# check_counts FILE TAG PID PREFIX PROGRAM: PID's series are labelled
# PROGRAM only and hold the counts TAG printed as PREFIX.* lines
check_counts() {
  _prog=`labels $1 $3 | tr '\n' ' '`
  check_eq "$2 (pid $3): program labels" "$5 " "$_prog"
  check_eq "$2: minor collections" "`outkey $2 $4.minor_collections`" "`minors $1 $3`"
  check_eq "$2: major cycles" "`outkey $2 $4.major_collections`" \
    "`val $1 ocaml_gc_major_cycles_total $3`"
  check_eq "$2: minor allocated bytes" "$((`outkey $2 $4.minor_words` * 8))" \
    "`val $1 ocaml_gc_allocated_bytes_total $3 'heap="minor"'`"
}

# start_at TAG PROGRAM PID: start PROGRAM (waiting for TAG.go) as pid PID:
# once PID is free, the pid before it goes to ns_last_pid and the fork
# comes at once (start_bg's subshell execs the program: same pid).  On the
# host another fork may come first: then that process is killed and it
# tries again; 1 if PID never came (20 tries).
start_at() {
  _try=0
  while test $_try -lt 20; do
    _try=$((_try + 1))
    _n=0
    while test -d /proc/$3 && test $_n -lt 200; do _n=$((_n + 1)); sleep 0.05; done
    echo $(($3 - 1)) >/proc/sys/kernel/ns_last_pid || return 1
    start_bg "$1" "./$2" 0.2 "$WORK/$1.go" "$WORK/$1.stop"
    if test "$BGPID" = "$3"; then
      wait_key "$1" before.heap_chunks "$BGPID"
      return 0
    fi
    kill -9 "$BGPID"; wait "$BGPID" 2>/dev/null
  done
  return 1
}

# no_reuse WHAT PID: start_at did not get PID: a failure in our own pid
# namespace, where nothing else forks; on the host, where others may hold
# the pid, that reuse check is skipped
no_reuse() {
  if test "$OCGC_LIFE_NS" = 1; then fail "$1: no process got pid $2 in 20 tries"
  else say "SKIP ($1): another process on the host holds pid $2"; fi
}

# start_ran TAG: start the target, let it run its workload and wait for its
# gc.* lines (so that its counts are well past a new program's); BGPID
start_ran() {
  target_start "$1" 0.2
  target_go "$1"
  wait_key "$1" gc.heap_chunks "$BGPID"
}

# kill_reap TAG PID: SIGKILL, then reap it
# (the shell's "Killed" line to /dev/null)
kill_reap() { kill -9 "$2"; { wait "$2"; echo $? >"$WORK/$1.rc"; } 2>/dev/null; }

# ==== --all ====================================================================
serve all --listen 127.0.0.1:0 --all
scrape m0
test "$OCGC_LIFE_NS" = 1 && check_eq "namespace: nothing watched before the programs" 0 "`watched m0`"

for t in a b c; do start_ran $t; eval "pid_$t=\$BGPID"; done
wait_served m1 "$pid_a" "$pid_b" "$pid_c"
for t in a b c; do eval "check_counts m1 $t \$pid_$t gc cmd_target"; done
test "$OCGC_LIFE_NS" = 1 && check_eq "namespace: watched" 3 "`watched m1`"

target_stop a "$pid_a"
scrape m2
check_gone m2 "a exited" "$pid_a"
check_gt "b is still served" 0 "`series m2 $pid_b`"

b_start=`val m2 ocaml_process_start_time_seconds "$pid_b" '' 100`
kill_reap b "$pid_b"
scrape m3
check_gone m3 "b SIGKILLed" "$pid_b"
check_gt "c is still served" 0 "`series m3 $pid_c`"
test "$OCGC_LIFE_NS" = 1 && check_eq "namespace: watched after the exit and the kill" 1 "`watched m3`"

if test $REUSE = yes; then
  # b's pid, after a scrape saw it gone
  if start_at y life_new "$pid_b"; then
    pid_y=$BGPID
    wait_served m4 "$pid_y"
    check_counts m4 y "$pid_y" before life_new
    check_gt "b counted more minor collections than y" "`minors m4 $pid_y`" \
      "`outkey b gc.minor_collections`"
    check_gt "y's start time after b's (1/100 s)" "$b_start" \
      "`val m4 ocaml_process_start_time_seconds $pid_y '' 100`"
  else
    no_reuse "reuse of b's pid" "$pid_b"
  fi
  # c's pid, reused before any scrape saw c gone: the first scrape shows
  # nothing of c (none of its counts, not its label), then z appears
  c_minor=`outkey c gc.minor_collections`
  target_stop c "$pid_c"
  if start_at z life_new "$pid_c"; then
    pid_z=$BGPID
    scrape m5
    check_eq "c's pid reused unseen: series labelled cmd_target" 0 \
      "`labels m5 $pid_z | grep -c -x cmd_target`"
    _m=`minors m5 $pid_z`
    test "`series m5 $pid_z`" = 0 && _m=none
    case $_m in "`outkey z before.minor_collections`"|none) _ok=yes ;; *) _ok=no ;; esac
    check_eq "c's pid reused unseen: minor collections z's or none ($_m), not c's $c_minor" yes $_ok
    wait_served m6 "$pid_z"
    check_counts m6 z "$pid_z" before life_new
  else
    no_reuse "reuse of c's pid" "$pid_c"
  fi
  for t in y z; do
    eval "_p=\${pid_$t:-}"
    test -n "$_p" || continue
    target_stop $t "$_p"
    scrape m7
    check_gone m7 "$t exited" "$_p"
  done
else
  target_stop c "$pid_c"
fi
scrape m8
check_gone m8 "c exited" "$pid_c"
test "$OCGC_LIFE_NS" = 1 && check_eq "namespace: nothing watched at the end" 0 "`watched m8`"
kill -TERM "$srv"
ocgc_wait all
check_eq "--all: exit status after SIGTERM" 0 "`rc_of all`"

# ==== PIDs given ===============================================================
for t in d e f; do start_ran $t; eval "pid_$t=\$BGPID"; done
serve pids --listen 127.0.0.1:0 "$pid_d" "$pid_e" "$pid_f"
scrape p1
for t in d e f; do eval "check_counts p1 $t \$pid_$t gc cmd_target"; done
check_eq "PIDs: watched" 3 "`watched p1`"

target_stop d "$pid_d"
scrape p2
check_gone p2 "PIDs: d exited" "$pid_d"
kill_reap e "$pid_e"
scrape p3
check_gone p3 "PIDs: e SIGKILLed" "$pid_e"
check_eq "PIDs: watched after the exit and the kill" 1 "`watched p3`"

target_stop f "$pid_f"
if test $REUSE = yes; then
  if start_at g life_new "$pid_f"; then
    scrape p4
    check_gone p4 "PIDs: f's pid reused by another program, not followed" "$pid_f"
    target_stop g "$pid_f"
  else
    no_reuse "PIDs: reuse of f's pid" "$pid_f"
  fi
fi
scrape p5
check_gone p5 "PIDs: f exited" "$pid_f"
check_eq "PIDs: nothing watched, still answering" 0 "`watched p5`"
kill -INT "$srv"
ocgc_wait pids
check_eq "PIDs: exit status after SIGINT" 0 "`rc_of pids`"
finish
