#!/bin/sh
# exit_barrier.sh - what the producer's exit costs.
# The exit handler shuts the hooks out with a process-wide barrier, and
# that barrier must be the cheap one: the expedited membarrier registered
# when the ring is made (in a forked child too), never MEMBARRIER_CMD_GLOBAL
# (an RCU grace period, 9-14 ms on every exit: the expedited commands are
# enum values in <linux/membarrier.h>, so an #ifdef compiled them out).
# Where membarrier is denied (a seccomp filter, injected here with strace),
# a single-threaded program needs no barrier at all, and a threaded one
# still gets one; in every case the ring ends EXITED with totals equal to
# Gc.quick_stat.  Needs strace (in scripts/debian-packages.txt); skipped,
# saying so, without it or where ptrace is denied.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
need_runtime
ocgc_init
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace is missing (apt-get install strace)"; exit 77; }
strace -f -qq -e trace=none true 2>/dev/null || { echo "SKIP: strace cannot trace here (ptrace denied)"; exit 77; }

compile_native workload ocgc_test.ml workload.ml
PACKAGES=threads.posix,unix
compile_native threads ocgc_test.ml threads.ml

# traced TAG PROG [STRACE ARGS...]: PROG under strace -f, its membarrier
# calls (and those strace injected an error into) in TAG.trace
traced() {
  _t=$1; _p=$2; shift 2
  run "$_t" strace -f -qq -o "$WORK/$_t.trace" -e trace=membarrier "$@" "./$_p"
}
# count TAG REGEX: TAG's membarrier calls whose command (strace names it)
# matches REGEX
count() { grep -c "membarrier($2[,)]" "$WORK/$1.trace" | tr -d ' '; }
# MEMBARRIER_CMD_GLOBAL was called MEMBARRIER_CMD_SHARED before Linux 4.16
global='MEMBARRIER_CMD_GLOBAL\|MEMBARRIER_CMD_SHARED'


# ended TAG: the ring of TAG ended EXITED, its totals equal its quick_stat
ended() {
  ring_of "$1"
  dump_ring "$RING" "$1"
  check_dkey "$1" producer.state exited
  check_totals_agree "$1"
}

for p in workload threads; do
  say "== $p: membarrier as the kernel gives it"
  traced $p $p
  check_eq "$p: exit status" 0 "`cat "$WORK/$p.rc"`"
  check_ge "$p: the expedited barrier registered (at the ring's making)" 1 \
    "`count $p MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED`"
  check_eq "$p: the global barrier (an RCU grace period) never used" 0 \
    "`count $p "\\($global\\)"`"
  check_eq "$p: the expedited barrier used once (at exit)" 1 \
    "`count $p MEMBARRIER_CMD_PRIVATE_EXPEDITED`"
  ended $p
done

say "== the same with membarrier denied (strace injects EPERM)"
for p in workload threads; do
  traced $p-denied $p --inject=membarrier:error=EPERM
  check_eq "$p-denied: exit status" 0 "`cat "$WORK/$p-denied.rc"`"
  ended $p-denied
done
# Alone, the exit needs no barrier: registration is the only call.
check_eq "workload-denied: membarrier calls (registration only)" 1 \
  "`grep -c 'membarrier(' "$WORK/workload-denied.trace" | tr -d ' '`"
finish
