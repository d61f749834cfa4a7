#!/bin/sh
# attach_nofollow.sh - a target cannot choose what root's reader opens.
# The maps of a process name its ring by the path it
# has in the process's own mount namespace.  An attacker with a namespace
# of its own (here: unshare -m) hides a link of our namespace under a tmpfs
# and makes its ring there, so that the path its maps show leads, in our
# namespace, through that link to a FIFO of its choosing.  `ocgc dump
# --pid`, as root, must reach the real ring (through /proc/PID/map_files)
# and open nothing on that path but with O_PATH, which opens nothing
# (traced with strace).  The reader used to open the path with O_NOFOLLOW,
# which guards only its last component: it opened the FIFO (or /dev/zero,
# or a terminal) before checking what it was.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

test "`id -u`" = 0 || { echo "SKIP: needs root (a mount namespace of the attacker's own)"; exit 77; }
command -v unshare >/dev/null 2>&1 || { echo "SKIP: unshare is missing (util-linux)"; exit 77; }
unshare -m true 2>/dev/null || { echo "SKIP: unshare -m cannot make a mount namespace here"; exit 77; }
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace is missing (apt-get install strace)"; exit 77; }
strace -f -qq -e trace=none true 2>/dev/null || { echo "SKIP: strace cannot trace here (ptrace denied)"; exit 77; }
HBIN="$OCGC_BUILDDIR/tests/hostile"
test -x "$HBIN/hostile_producer" || hard_error "$HBIN/hostile_producer is missing (run 'make check')"

mkdir -p "$WORK/evil" "$WORK/trap"
ln -s "$WORK/trap" "$WORK/evil/p"
# The attacker: unshare -m execs sh, which execs the producer (one pid).
: >"$WORK/att.out"
start_bg att unshare -m sh -c "mount -t tmpfs none '$WORK/evil' && mkdir '$WORK/evil/p' &&
  exec '$HBIN/hostile_producer' '$WORK/evil/p' frozen 120 10"
apid=$BGPID
wait_key att ready "$apid" 30
check_eq "the attacker is the process that printed ready" "$apid" "`outkey att ready`"
ring="$WORK/evil/p/$apid.events"
check_true "its maps name its ring by the path of its namespace" grep -qF "$ring" "/proc/$apid/maps"
mkfifo "$WORK/trap/$apid.events"
check_true "in ours, that path leads through the link to a FIFO" test -p "$ring"

# (LeakSanitizer cannot work under ptrace: off for the traced run.)
strace -f -qq -e trace=open,openat,openat2 -o "$WORK/trace" \
  env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$OCGC" dump --pid "$apid" >"$WORK/dump.out" 2>"$WORK/dump.err"
rc=$?
test $rc = 0 || cat "$WORK/dump.err"
check_eq "ocgc dump --pid exit status" 0 "$rc"
check_eq "the dump is the attacker's own ring" "$apid" "`getkey "$WORK/dump.out" producer.pid`"
opened=`grep -F "$ring" "$WORK/trace" | grep -v 'O_PATH' | tr '\n' ' '`
check_eq "opens of the path the target chose, other than O_PATH" "none" "${opened:-none}"

kill "$apid" 2>/dev/null
finish
