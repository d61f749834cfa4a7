#!/bin/sh
# ring_tamper.sh - what other processes do to the ring's name cannot harm
# the program that writes it: its ring is a sealed
# memfd, so `truncate` of the published name (or of /proc/PID/fd/N, or of
# /proc/PID/map_files/RANGE, where its link leads), to
# zero or to any size, fails even for root, while the program runs its
# workload; removing the name, or putting another file in its place, leaves
# the ring reachable through the process (ocgc dump --pid), and at exit the
# program removes or replaces only its own entry: a file put there by
# someone else stays as it was.  Each program finishes with exit status 0,
# and the totals of its ring equal its own Gc.quick_stat.  (On a runtime
# whose ring is a plain shared file, the first truncate kills the program
# with SIGBUS, exit status 135.)
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
cmd_init

# try_truncate TAG SIZE PATH: truncate PATH to SIZE; must fail
try_truncate() {
  truncate -s "$2" "$3" 2>"$WORK/$1.err"
  _rc=$?
  say "  truncate -s $2 $3: status $_rc: `head -n 1 "$WORK/$1.err"`"
  check_true "$1: truncate -s $2 fails" test "$_rc" -ne 0
}

# live_dump TAG PID [ARGS]: ocgc dump --pid PID into TAG.dump; must work
live_dump() {
  _t=$1; _p=$2; shift 2
  "$OCGC" dump --pid "$_p" "$@" >"$WORK/$_t.dump" 2>"$WORK/$_t.err"
  check_eq "$_t: ocgc dump --pid $_p $*: exit status (`head -n 1 "$WORK/$_t.err"`)" 0 $?
  check_dkey "$_t" producer.pid "$_p"
  check_dkey "$_t" producer.state running
}

say "== truncated while it runs"
target_start t1 2; p=$BGPID
ring=$EVDIR/$p.events
test -L "$ring" || hard_error "$ring is no link: the ring is not a memfd"
size=`stat -L -c %s "$ring"`
ident=$EVDIR/`readlink "$ring"`
mfpath=`readlink "$ident"`
fdpath=
for _f in /proc/$p/fd/*; do
  test "`readlink "$_f"`" = "/memfd:ocgc:$p.events (deleted)" && fdpath=$_f
done
test -n "$fdpath" || hard_error "no descriptor of $p is its ring's memfd"
say "  $ring -> $ident -> $mfpath ($fdpath), $size bytes"
try_truncate tr_zero 0 "$ring"
try_truncate tr_half $((size / 2)) "$ring"
try_truncate tr_more $((size * 2)) "$ring"
try_truncate tr_fd 0 "$fdpath"
try_truncate tr_mf 0 "$mfpath"
check_eq "t1: the ring keeps its size" "$size" "`stat -L -c %s "$ring"`"
target_go t1
# and again and again while the workload collects
n=0
while test -z "`outkey t1 gc.heap_chunks`" && test $n -lt 400; do
  truncate -s 0 "$ring" 2>/dev/null && hard_error "truncate -s 0 $ring succeeded"
  n=$((n + 1))
  sleep 0.01
done
wait_key t1 gc.heap_chunks "$p"
say "  $n more truncates while the workload ran"
check_gt "t1: truncates tried during the workload" 0 "$n"
live_dump t1_live "$p"
target_stop t1 "$p"
check_eq "t1: exit status" 0 "`rc_of t1`"
check_eq "t1: stderr lines" 0 "`stderr_lines t1`"
check_true "t1: its result" is_uint "`outkey t1 sum`"
ring_of t1 "$p"
dump_ring "$RING" t1
check_dkey t1 producer.state exited
check_totals_agree t1

say "== its name removed while it runs"
target_start t2 1; p=$BGPID
rm "$EVDIR/$p.events" || hard_error "rm"
target_go t2
wait_key t2 gc.heap_chunks "$p"
live_dump t2_live "$p"
target_stop t2 "$p"
check_eq "t2: exit status" 0 "`rc_of t2`"
check_eq "t2: stderr lines" 0 "`stderr_lines t2`"
ring_of t2 "$p"
dump_ring "$RING" t2
check_dkey t2 producer.state exited
check_totals_agree t2

say "== another file put in its place while it runs"
target_start t3 1; p=$BGPID
rm "$EVDIR/$p.events" || hard_error "rm"
printf 'not a ring\n' >"$EVDIR/$p.events"
target_go t3
wait_key t3 gc.heap_chunks "$p"
live_dump t3_live "$p"
"$OCGC" dump --pid "$p" --dir "$EVDIR" >"$WORK/t3_dir.dump" 2>"$WORK/t3_dir.err"
check_true "t3: by --dir the planted file is refused (status $?)" \
  test "`wc -l <"$WORK/t3_dir.dump"`" -eq 0
target_stop t3 "$p"
check_eq "t3: exit status" 0 "`rc_of t3`"
check_eq "t3: the file put there is left as it was" "not a ring" "`cat "$EVDIR/$p.events"`"
check_eq "t3: stderr: one line" 1 "`stderr_lines t3`"
check_true "t3: which says why the ring is not kept" \
  grep -q "not keeping the ring: another file took its name" "$WORK/t3.err"
cp "$WORK/t3.out" "$WORK/t3_live.out" # what it printed, beside what was read
check_totals_agree t3_live

say "== without OCAML_RUNTIME_EVENTS_PRESERVE, the same, then exit"
BG_PRESERVE=0
start_bg t4 ./cmd_target 1 "$WORK/t4.go" "$WORK/t4.stop"
p=$BGPID
BG_PRESERVE=1
wait_key t4 before.heap_chunks "$p"
rm "$EVDIR/$p.events" || hard_error "rm"
printf 'mine\n' >"$EVDIR/$p.events"
target_stop t4 "$p"
check_eq "t4: exit status" 0 "`rc_of t4`"
check_eq "t4: stderr lines" 0 "`stderr_lines t4`"
check_eq "t4: the file put there is not removed at exit" mine "`cat "$EVDIR/$p.events"`"
finish
