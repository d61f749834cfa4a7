#!/bin/sh
# attach_errors.sh - what `ocgc dump --pid` says when it cannot attach:
# a dead pid (exit status 3, "no such process"); live processes without a
# ring (`sleep`, the test shell itself, an ocgc program run with
# OCGC_DISABLE=1), with and without --dir; a program killed with SIGKILL
# (by pid there is no process; by folder the ring is stale, and since its
# memfd went with it, ocgc says so rather than pointing to `ocgc dump
# FILE`, which finds nothing behind the link left); the stale ring of a
# program that exited normally; another user's process (as root, through
# setpriv, when available: uid 65534 runs a copy of ocgc and libocgc made
# in a folder it can reach, since the build tree may be out of its reach,
# as under /root, mode 0700); bad arguments.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

# dump_pid TAG ARGS...: `ocgc dump ARGS` into TAG.dump/TAG.err, status TAG.rc
dump_pid() {
  _tag=$1; shift
  "$OCGC" dump "$@" >"$WORK/$_tag.dump" 2>"$WORK/$_tag.err"
  echo $? >"$WORK/$_tag.rc"
  say "  ocgc dump $*: status `cat "$WORK/$_tag.rc"`: `head -n 1 "$WORK/$_tag.err"`"
}

# check_refused TAG STATUS TEXT: ocgc dump failed with STATUS ("nonzero":
# any failure), printed TEXT on stderr and nothing on stdout
check_refused() {
  if test "$2" = nonzero; then
    check_true "$1: exit status nonzero" test "`cat "$WORK/$1.rc"`" -ne 0
  else
    check_eq "$1: exit status" "$2" "`cat "$WORK/$1.rc"`"
  fi
  check_true "$1: stderr says '$3'" grep_err "$1" "$3"
  check_eq "$1: stdout lines" 0 "`wc -l <"$WORK/$1.dump" | tr -d ' '`"
}

compile_native target ocgc_test.ml attach_target.ml

say "== a dead pid"
sh -c 'exit 0' &
dead=$!
wait "$dead"
dump_pid dead --pid "$dead"
check_refused dead 3 "process $dead: no such process"
dump_pid dead_dir --pid "$dead" --dir "$EVDIR"
check_refused dead_dir 3 "process $dead: no such process"

say "== live processes without a ring"
sleep 30 &
sl=$!
BG_PIDS="$BG_PIDS $sl"
dump_pid sleep --pid "$sl"
check_refused sleep 6 "process $sl has no ring: was it linked with -runtime-variant _ocgc"
check_false "sleep: not 'no such process'" grep_err sleep "no such process"
dump_pid sleep_dir --pid "$sl" --dir "$EVDIR"
check_refused sleep_dir 6 "process $sl has no ring $EVDIR/$sl.events"
kill "$sl"
dump_pid self --pid $$
check_refused self 6 "process $$ has no ring"
start_bg off env OCGC_DISABLE=1 ./target 0.2 "$WORK/off.stop"
off=$BGPID
wait_key off gc.heap_chunks "$off"
dump_pid off --pid "$off"
check_refused off 6 "process $off has no ring"
stop_bg off "$off"
check_eq "OCGC_DISABLE=1: exit status" 0 "`cat "$WORK/off.rc"`"

say "== a program killed with SIGKILL"
start_bg killed ./target 1 "$WORK/killed.stop"
k=$BGPID
wait_key killed gc.heap_chunks "$k"
dump_pid alive --pid "$k"
check_eq "alive: exit status" 0 "`cat "$WORK/alive.rc"`"
check_dkey alive producer.state running
kill -9 "$k"
wait "$k"
check_eq "killed: exit status (SIGKILL)" 137 $?
dump_pid killed_pid --pid "$k"
check_refused killed_pid 3 "process $k: no such process"
dump_pid killed_dir --pid "$k" --dir "$EVDIR"
check_refused killed_dir 7 "process $k: its ring is stale"
check_true "killed_dir: says the ring went with the process" \
  grep_err killed_dir "its ring lived in its memory and went with it"
check_true "killed: its link is left, leading nowhere" test -L "$EVDIR/$k.events"
dump_pid killed_file "$EVDIR/$k.events"
check_refused killed_file nonzero "No such file or directory"

say "== a program that exited, its ring preserved"
start_bg exited ./target 0.5 "$WORK/exited.stop"
e=$BGPID
wait_key exited gc.heap_chunks "$e"
stop_bg exited "$e"
check_eq "exited: exit status" 0 "`cat "$WORK/exited.rc"`"
dump_pid exited_dir --pid "$e" --dir "$EVDIR"
check_refused exited_dir 7 "process $e: its ring is stale"
ring_of exited "$e"
dump_ring "$RING" exited
# (the default ring may have overwritten ring_start: not checked)
check_dkey exited producer.state exited
check_dkey exited lifecycle.ring_stop 1
check_totals_agree exited

# as_nobody COMMAND...: run COMMAND as uid/gid 65534, from $NOBODY_DIR
as_nobody() {
  (cd "$NOBODY_DIR" && LD_LIBRARY_PATH="$NOBODY_DIR" \
     setpriv --reuid=65534 --regid=65534 --clear-groups "$@")
}

# nobody_copy DIR: copy the ocgc program (the real one behind libtool's
# wrapper script) and the libocgc it loads into DIR, readable and
# executable by everybody; NOBODY_DIR=DIR if uid 65534 can run it there.
nobody_copy() {
  _paths=`"$OCGC_BUILDDIR/libtool" --mode=execute sh -c 'echo "$1"; echo "${LD_LIBRARY_PATH:-}"' \
    sh "$OCGC"` || hard_error "libtool --mode=execute failed"
  _bin=`echo "$_paths" | sed -n 1p`
  _ldp=`echo "$_paths" | sed -n 2p`
  mkdir -p "$1" && cp "$_bin" "$1/ocgc" || hard_error "cannot copy $_bin into $1"
  _IFS=$IFS; IFS=:
  for _d in $_ldp; do
    IFS=$_IFS
    if test -e "$_d/libocgc.so.0"; then
      cp -L "$_d/libocgc.so.0" "$1/" || hard_error "cannot copy $_d/libocgc.so.0"
    fi
  done
  IFS=$_IFS
  chmod -R a+rX "$1"
  NOBODY_DIR=$1
  as_nobody ./ocgc --version >"$WORK/nobody-version.out" 2>&1
}

say "== another user's process"
start_bg other ./target 0.2 "$WORK/other.stop"
o=$BGPID
wait_key other gc.heap_chunks "$o"
NOBODY_WHY=`nobody_why`
if test -z "$NOBODY_WHY"; then
  # $WORK (mode 0700) opened for traversal only; its ring folder stays 0700.
  chmod 0711 "$WORK"
  NOBODY_TMP=
  if ! nobody_copy "$WORK/nobody"; then
    # $WORK's own parents are out of reach (TMPDIR under /root, say): /tmp
    NOBODY_TMP=`mktemp -d /tmp/ocgc-nobody.XXXXXX` || hard_error "mktemp -d /tmp failed"
    trap 'rm -rf "$NOBODY_TMP"; attach_cleanup' EXIT
    nobody_copy "$NOBODY_TMP" || NOBODY_DIR=
  fi
  if test -n "$NOBODY_DIR"; then
    say "  uid 65534 runs a copy of ocgc in $NOBODY_DIR"
    as_nobody ./ocgc dump --pid "$o" >"$WORK/perm.dump" 2>"$WORK/perm.err"
    echo $? >"$WORK/perm.rc"
    say "  as nobody: ocgc dump --pid $o: status `cat "$WORK/perm.rc"`: `head -n 1 "$WORK/perm.err"`"
    check_refused perm 8 "process $o: permission denied"
  else
    say "  (not tried: uid 65534 cannot run a copy of ocgc in $WORK/nobody nor in /tmp:" \
      "`head -n 1 "$WORK/nobody-version.out"`)"
  fi
else
  say "  SKIP part: another user's process is not tried: $NOBODY_WHY"
fi
stop_bg other "$o"

say "== bad arguments"
dump_pid badpid --pid abc
check_refused badpid 2 "--pid takes a process id"
dump_pid zeropid --pid 0
check_refused zeropid 2 "--pid takes a process id"
dump_pid both --pid 1 "$RING"
check_refused both 2 "not both"
dump_pid dironly --dir "$EVDIR" "$RING"
check_refused dironly 2 "--dir goes with --pid"
finish
