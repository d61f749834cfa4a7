#!/bin/sh
# attach_container.sh - a program in a container (its own pid and mount
# namespaces, as `unshare -pf --mount-proc` makes them: pid 1 inside) is
# attached to from the host by its host pid.  Its ring names it by its
# pid in its own namespace (1): libocgc must find that this is the same
# process (/proc/PID/status NSpid), not call its ring stale.  `ocgc dump
# --pid`, `ocgc stat`, `ocgc ls` and libocgc's listing (which `ocgc serve
# --all` reads) must all see it running, with totals equal to its
# Gc.quick_stat; once it exits, it is gone.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init

LIST_PROCS="$OCGC_BUILDDIR/tests/attach/list_procs"
test -x "$LIST_PROCS" || hard_error "$LIST_PROCS is missing (run 'make check')"
if ! command -v unshare >/dev/null 2>&1; then
  say "unshare (util-linux) is missing: skip"; exit 77
fi
if ! _why=`unshare -pf --mount-proc --kill-child true 2>&1`; then
  say "no pid namespace can be made here (`printf '%s\n' "$_why" | head -n 1`; it needs CAP_SYS_ADMIN): skip"
  exit 77
fi

compile_native target ocgc_test.ml attach_target.ml
start_bg live unshare -pf --mount-proc --kill-child env OCAMLRUNPARAM=e=20 ./target 1 \
  "$WORK/live.stop"
wait_key live gc.heap_chunks "$BGPID"
check_eq "inside its namespace, the program is pid 1" 1 "`outkey live pid`"
host=`pgrep -P "$BGPID" | head -n 1`
is_uint "$host" || hard_error "the program's host pid was not found (child of $BGPID)"
check_eq "its own pid, as the host sees it (NSpid)" 1 \
  "`awk '$1 == "NSpid:" { print $NF }' /proc/$host/status`"

"$OCGC" dump --pid "$host" >"$WORK/c.dump" 2>"$WORK/c.err"
check_eq "ocgc dump --pid HOST_PID: exit status" 0 $?
cp "$WORK/live.out" "$WORK/c.out"
check_eq "ocgc dump: stderr lines" 0 "`stderr_lines c`"
check_dkey c producer.pid 1
check_dkey c producer.state running
check_totals_agree c

"$OCGC" stat "$host" 0.2 1 >"$WORK/stat.out" 2>"$WORK/stat.err"
check_eq "ocgc stat HOST_PID: exit status" 0 $?
check_eq "ocgc stat: one row under its header" 2 "`wc -l <"$WORK/stat.out" | tr -d ' '`"

"$LIST_PROCS" pid "$host" >"$WORK/list.out" 2>"$WORK/list.err"
check_eq "list_procs: exit status" 0 $?
check_eq "ocgc_list: listed" 1 "`getkey "$WORK/list.out" listed`"
check_eq "ocgc_list: state" running "`getkey "$WORK/list.out" state`"
check_eq "ocgc_list: alive (ocgc_source_check_alive)" 0 "`getkey "$WORK/list.out" alive`"

"$OCGC" ls >"$WORK/ls.out" 2>"$WORK/ls.err"
check_eq "ocgc ls: the program's state" running \
  "`awk -v p="$host" '$1 == p { print $7; exit }' "$WORK/ls.out"`"

say "== it exits"
stop_bg live "$BGPID"
check_eq "exit status" 0 "`cat "$WORK/live.rc"`"
"$OCGC" dump --pid "$host" >"$WORK/gone.dump" 2>"$WORK/gone.err"
check_false "ocgc dump --pid HOST_PID after its exit fails" test $? -eq 0
finish
