#!/bin/sh
# exec_name.sh - a ring's name never leads to another file.  A program
# that collected, then exec'd (itself, or a forked
# child that collected first), leaves its link behind (exec runs no exit
# handler); the new image opens /etc/passwd on descriptors 3..9.  The link
# used to say /proc/PID/fd/N, and opening the ring's name opened
# /etc/passwd.  Now PID.events is an alias of .ocgc-ring.NS.PID, which says
# /proc/PID/map_files/RANGE, which went with the mapping: the name opens nothing (for root; EPERM for others), and the
# next program to start in the folder removes the link although the pid is
# alive (its target no longer names the ring).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
compile_native exec_name ocgc_test.ml exec_name.ml
compile_native hello ocgc_test.ml hello.ml

# wait_ready TAG: until the shell that replaced TAG's process says "ready"
# (no time limit: the test harness's own timeout stops a hung test)
wait_ready() {
  while ! grep -q '^ready$' "$WORK/$1.out" 2>/dev/null; do
    if test -s "$WORK/$1.rc"; then
      cat "$WORK/$1.err"
      hard_error "$1: ended before the shell was ready"
    fi
    sleep 0.05
  done
}

# check_name TAG PID: what the name PID.events leads to now
check_name() {
  _n="$EVDIR/$2.events"
  check_true "$1: the link is still there (nothing ran at exec)" test -L "$_n"
  _id=`readlink "$_n"`
  check_true "$1: it is an alias of an identity link ($_id)" \
    sh -c "printf '%s\n' '$_id' | grep -q '^\.ocgc-ring\.[0-9]*\.$2\$'"
  check_true "$1: which says map_files (`readlink "$EVDIR/$_id"`)" \
    sh -c "readlink '$EVDIR/$_id' | grep -q '^/proc/$2/map_files/'"
  check_false "$1: opening it opens nothing, not /etc/passwd" \
    sh -c "head -c 1 '$_n' >/dev/null 2>&1"
  # The next start sweeps it: the pid lives, but its mapping is gone.
  run_ok sweep_$1 ./hello
  check_true "$1: the process that exec'd still runs" kill -0 "$2"
  check_false "$1: the next program's start removed the alias" test -L "$_n"
  check_false "$1: and the identity link" test -L "$EVDIR/$_id"
}

say "== exec without fork"
(run self ./exec_name self) &
wait_ready self
pid=`outkey self pid`
is_uint "$pid" || hard_error "self: no pid"
check_name self "$pid"
kill "$pid"
wait

say "== a forked child that collected, then exec'd"
(run child ./exec_name child) &
wait_ready child
cpid=`outkey child child.pid`
is_uint "$cpid" || hard_error "child: no child.pid"
check_name child "$cpid"
kill "$cpid"
wait
check_eq "the parent's exit status" 0 "`cat "$WORK/child.rc"`"
finish
