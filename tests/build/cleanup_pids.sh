#!/bin/sh
# cleanup_pids.sh - a test's exit (attach_lib.sh: attach_cleanup) kills
# only what it started and still holds: its own children.  It used to
# `kill -9` every pid it had ever listed in BG_PIDS, and a pid whose
# process had exited and been reaped may name any process of the host by
# then (pid_max is often 32768): it SIGKILLed the `cat` of another test
# run (serve_textfile.sh in fresh-debian.sh's mode C, "Killed").  Here a
# process that is not the shell's child (a stand-in for such a reused
# pid) is listed, and must outlive the cleanup; the shell's own child
# must not.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
ocgc_init

# A shell of its own (its $$ is its pid, as a test's main shell), with
# one child it started and the pid of a process it did not start (a
# grandchild: sh forks sleep and exits), both listed; then its exit trap's
# cleanup.  It prints both pids.
cat >"$WORK/t.sh" <<'SH'
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
BG_PIDS=
trap 'attach_cleanup' EXIT
sleep 60 &
BG_PIDS="$BG_PIDS $!"
echo "child $!"
other=`sh -c 'sleep 60 >/dev/null 2>&1 & echo $!'`
BG_PIDS="$BG_PIDS $other"
echo "other $other"
SH
mkdir "$WORK/sub"
WORK=$WORK/sub sh "$WORK/t.sh" >"$WORK/pids" 2>"$WORK/pids.err"
child=`sed -n 's/^child //p' "$WORK/pids"`
other=`sed -n 's/^other //p' "$WORK/pids"`
is_uint "$child" && is_uint "$other" || { cat "$WORK/pids.err"; hard_error "the subshell printed no pids"; }
# SIGKILL is delivered before kill(2) returns; the child may stay a zombie
# until init reaps it, which /proc/PID/stat says (state Z).
alive() { _s=`sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null` && test "$_s" != Z; }
_n=0
while alive "$child" && test $_n -lt 100; do _n=$((_n + 1)); sleep 0.05; done
check_false "the shell's own child is killed at its exit" alive "$child"
check_true "a listed pid that is not the shell's child is left alone" alive "$other"
kill "$other" 2>/dev/null
finish
