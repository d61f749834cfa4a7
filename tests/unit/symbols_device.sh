#!/bin/sh
# symbols_device.sh - the symbolizer never opens for reading a device a
# target mapped: a process that maps /dev/zero executable is read
# (ocgc_symbols_open_pid, read_now) under strace, and its mapping's
# /proc/PID/map_files link is opened O_PATH only (proved not a regular
# file by fstat), never O_RDONLY (a device's open can have effects; a
# FIFO's blocks).  Before, root opened /dev/zero O_RDONLY through it.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
cli=$OCGC_BUILDDIR/tests/unit/elfgen_cli
test -x "$cli" || hard_error "$cli is missing (make check builds it)"
command -v strace >/dev/null 2>&1 || { say "SKIP: no strace (apt-get install strace)"; exit 77; }
test "`id -u`" = 0 || { say "SKIP: /proc/PID/map_files is root's"; exit 77; }
# LeakSanitizer cannot run under a tracer.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

mkfifo "$WORK/in" || hard_error "mkfifo failed"
"$cli" map /dev/zero <"$WORK/in" >"$WORK/map.out" 2>&1 &
tpid=$!
exec 3>"$WORK/in"
i=0
while ! grep -q mapped "$WORK/map.out" 2>/dev/null && test $i -lt 300; do
  kill -0 $tpid 2>/dev/null || break
  sleep 0.1
  i=$((i + 1))
done
if ! grep -q mapped "$WORK/map.out"; then
  exec 3>&-
  say "SKIP: /dev/zero cannot be mapped executable here: `cat "$WORK/map.out"`"
  exit 77
fi
range=`sed -n 's/^\([0-9a-f]*-[0-9a-f]*\) ..x. .* \/dev\/zero.*/\1/p' /proc/$tpid/maps | head -n 1`
check_true "the target maps /dev/zero executable ($range)" test -n "$range"
if ! strace -f -e trace=open,openat,openat2 -o "$WORK/strace.log" "$cli" pid $tpid \
     >"$WORK/pid.out" 2>"$WORK/strace.err"; then
  if grep -q -i "ptrace\|not permitted" "$WORK/strace.err"; then
    exec 3>&-
    say "SKIP: strace cannot trace here: `head -n 1 "$WORK/strace.err"`"
    exit 77
  fi
fi
say "reader: `cat "$WORK/pid.out"`"
grep "map_files/$range" "$WORK/strace.log" | sed 's/^/strace: /'
check_true "its map_files link was looked at, O_PATH" \
  grep -q "map_files/$range.*O_PATH" "$WORK/strace.log"
check_eq "opens of its map_files link not O_PATH" 0 \
  "`grep "map_files/$range" "$WORK/strace.log" | grep -v -c O_PATH`"
exec 3>&-
wait $tpid
finish
