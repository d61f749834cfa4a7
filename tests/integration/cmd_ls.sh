#!/bin/sh
# cmd_ls.sh - `ocgc ls` against real programs on the patched runtime: a
# running program is listed with its pid, program, versions and state
# (found through its memory map, with or without --dir); the file of a
# killed one is marked stale and that of one that exited normally (with
# OCAML_RUNTIME_EVENTS_PRESERVE) exited; --prune removes exactly those two,
# never the running program's file nor another user's; --json is one JSON
# object per line; bad arguments and a missing --dir fail with one line.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
. "$OCGC_SRCDIR/tests/integration/attach_lib.sh"
. "$OCGC_SRCDIR/tests/integration/cmd_lib.sh"
cmd_init

ocaml_version=`"$OCAMLFIND" ocamlopt -version`
ocgc_version=`"$OCGC" --version | awk '{ print $2 }'`

target_start live 0.1; live=$BGPID
target_start killed 0.1; killed=$BGPID
target_start exited 0.1; exited=$BGPID
kill -9 "$killed"
wait "$killed" 2>/dev/null
target_stop exited "$exited"
check_eq "exited: exit status" 0 "`rc_of exited`"
for p in "$live" "$killed" "$exited"; do
  test -f "$EVDIR/$p.events" || hard_error "no ring $EVDIR/$p.events"
done

# row TAG PID: the table row of PID in TAG.out ("" when absent)
row() { awk -v p="$2" 'NR > 1 && $1 == p' "$WORK/$1.out"; }
# col TAG PID N: column N of that row
col() { row "$1" "$2" | awk -v n="$3" '{ print $n }'; }

say "== ocgc ls --dir (only that folder)"
ocgc_cmd ls1 ls --no-default-dirs --dir "$EVDIR"
check_eq "ls1: exit status" 0 "`rc_of ls1`"
check_eq "ls1: stderr lines" 0 "`lines_of ls1.err`"
check_eq "ls1: header" "PID PROGRAM OCAML OCGC RING_KiB WRITTEN STATE PATH" \
  "`head -n 1 "$WORK/ls1.out" | tr -s ' ' | sed 's/^ //'`"
check_eq "ls1: running program listed once" 1 "`row ls1 "$live" | wc -l | tr -d ' '`"
check_eq "ls1: running: program" cmd_target "`col ls1 "$live" 2`"
check_eq "ls1: running: OCaml version" "$ocaml_version" "`col ls1 "$live" 3`"
check_eq "ls1: running: ocgc version" "$ocgc_version" "`col ls1 "$live" 4`"
check_eq "ls1: running: ring KiB (default 2^16 words)" 512 "`col ls1 "$live" 5`"
check_gt "ls1: running: events written" 0 "`col ls1 "$live" 6`"
check_eq "ls1: running: state" running "`col ls1 "$live" 7`"
check_eq "ls1: running: path" "$EVDIR/$live.events" "`col ls1 "$live" 8`"
check_eq "ls1: killed: state" stale "`col ls1 "$killed" 7`"
check_eq "ls1: killed: program" cmd_target "`col ls1 "$killed" 2`"
check_eq "ls1: killed: path" "$EVDIR/$killed.events" "`col ls1 "$killed" 8`"
check_eq "ls1: exited: state" exited "`col ls1 "$exited" 7`"
check_eq "ls1: exited: path" "$EVDIR/$exited.events" "`col ls1 "$exited" 8`"
# The ring of a process that exited normally says how many events it wrote
# in all, the last being RING_STOP: the same count as `ocgc dump`.
dump_ring "$EVDIR/$exited.events" exited
check_eq "ls1: exited: events written (as ocgc dump)" "`dkey exited ring.0.written`" \
  "`col ls1 "$exited" 6`"
check_eq "ls1: the files of the folder, no more" 3 "`grep -c " $EVDIR/" "$WORK/ls1.out"`"

say "== ocgc ls (default folders: the running program is found by its memory map)"
ocgc_cmd ls2 ls
check_eq "ls2: exit status" 0 "`rc_of ls2`"
check_eq "ls2: running: state" running "`col ls2 "$live" 7`"
check_eq "ls2: running: path" "$EVDIR/$live.events" "`col ls2 "$live" 8`"
check_eq "ls2: the killed program's file is not in a default folder" "" "`row ls2 "$killed"`"

say "== ocgc ls --json"
ocgc_cmd js ls --json --no-default-dirs --dir "$EVDIR"
check_eq "js: exit status" 0 "`rc_of js`"
check_json_lines js
check_eq "js: running" "cmd_target running True native $ocaml_version $ocgc_version 524288" \
  "`jq_py js "' '.join(str(x) for r in rows if r['pid'] == $live for x in
     (r['program'], r['state'], r['mapped'], r['code'], r['ocaml'], r['ocgc'], r['ring_bytes']))"`"
check_eq "js: killed" "stale $EVDIR/$killed.events" \
  "`jq_py js "' '.join(r['state'] + ' ' + r['path'] for r in rows if r['pid'] == $killed)"`"
check_eq "js: exited" exited "`jq_py js "' '.join(r['state'] for r in rows if r['pid'] == $exited)"`"
check_eq "js: as many objects as table rows" "$((`lines_of ls1.out` - 1))" "`lines_of js.out`"

if test "`id -u`" = 0; then
  say "== --prune leaves another user's stale file alone (run as root)"
  mkdir -m 0755 "$WORK/other" || hard_error "mkdir"
  cp "$EVDIR/$killed.events" "$WORK/other/$killed.events" || hard_error "cp"
  chown 65534 "$WORK/other/$killed.events" || hard_error "chown"
  ocgc_cmd other ls --prune --no-default-dirs --dir "$WORK/other"
  check_eq "other: exit status" 0 "`rc_of other`"
  check_true "other: the file is still there" test -f "$WORK/other/$killed.events"
  check_true "other: says why" grep -q "not removing $WORK/other/$killed.events" "$WORK/other.err"
  check_eq "other: still listed as stale" stale "`col other "$killed" 7`"
else
  say "(not root: another user's file cannot be made; that check is skipped)"
fi

say "== ocgc ls --prune"
ocgc_cmd prune ls --prune --no-default-dirs --dir "$EVDIR"
check_eq "prune: exit status" 0 "`rc_of prune`"
check_false "prune: the killed program's file is gone" test -e "$EVDIR/$killed.events"
check_false "prune: the exited program's file is gone" test -e "$EVDIR/$exited.events"
check_true "prune: the running program's file is there" test -f "$EVDIR/$live.events"
check_eq "prune: the folder holds" "$live.events" "`ls_dir "$EVDIR"`"
check_true "prune: says it removed the killed program's file" \
  grep -q "removed $EVDIR/$killed.events (process $killed, stale)" "$WORK/prune.err"
check_true "prune: says it removed the exited program's file" \
  grep -q "removed $EVDIR/$exited.events (process $exited, exited)" "$WORK/prune.err"
check_eq "prune: stderr lines" 2 "`lines_of prune.err`"
check_eq "prune: the listing: the running program" running "`col prune "$live" 7`"
check_eq "prune: the listing: not the removed files" "" "`row prune "$killed"``row prune "$exited"`"
ocgc_cmd prune2 ls --prune --no-default-dirs --dir "$EVDIR"
check_eq "prune again: nothing to remove" 0 "`lines_of prune2.err`"
check_true "the program still runs" kill -0 "$live"

say "== errors"
ocgc_cmd nodir ls --no-default-dirs --dir "$WORK/nonexistent"
check_eq "nodir: exit status" 3 "`rc_of nodir`"
check_eq "nodir: stderr lines" 1 "`lines_of nodir.err`"
check_true "nodir: names the folder" grep -q "$WORK/nonexistent" "$WORK/nodir.err"
ocgc_cmd operand ls 123
check_error operand 2 "takes no operand"
ocgc_cmd badopt ls --bogus
check_eq "badopt: exit status" 2 "`rc_of badopt`"
ocgc_cmd help ls --help
check_eq "help: exit status" 0 "`rc_of help`"
check_true "help: usage" grep -q "usage: ocgc ls" "$WORK/help.out"

target_stop live "$live"
check_eq "live: exit status" 0 "`rc_of live`"
check_eq "live: stderr lines" 0 "`stderr_lines live`"
finish
