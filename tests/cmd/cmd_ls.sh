#!/bin/sh
# cmd_ls.sh - `ocgc ls` against real programs on the patched runtime: a
# running program is listed with its pid, program, versions and state
# (found through its memory map, with or without --dir); the link a killed
# one leaves (its memfd ring went with it) is marked stale, and the file of
# one that exited normally (with OCAML_RUNTIME_EVENTS_PRESERVE) exited;
# --no-default-dirs --dir DIR lists what DIR holds and nothing else (not a
# live program whose ring is in another folder; DIR may be relative or a
# link); --prune removes exactly the stale link and the exited file, never
# the running program's ring, and of a stale regular file only the
# caller's own, never another user's; --json is one JSON object per line;
# bad arguments and a missing --dir fail with one line.
# Other OCaml programs with rings may start and end on the host while this
# runs (another test run, say): every check is about our own programs, and
# the counts are taken with --no-default-dirs --dir of our own folders.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
cmd_init

ocaml_version=`"$OCAMLFIND" ocamlopt -version`
ocgc_version=`"$OCGC" --version | awk '{ print $2 }'`

target_start live 0.1; live=$BGPID
# A running program whose ring is in another folder of ours.
mkdir -m 0700 "$WORK/ev2" || hard_error "mkdir"
start_bg away env OCAML_RUNTIME_EVENTS_DIR="$WORK/ev2" ./cmd_target 0.1 \
  "$WORK/away.go" "$WORK/away.stop"
away=$BGPID
wait_key away before.heap_chunks "$away"
target_start killed 0.1; killed=$BGPID
target_start exited 0.1; exited=$BGPID
# What the killed program's ring held, as a regular file (state running).
cp -L "$EVDIR/$killed.events" "$WORK/killed.copy" || hard_error "cp -L"
kill -9 "$killed"
wait "$killed" 2>/dev/null
target_stop exited "$exited"
check_eq "exited: exit status" 0 "`rc_of exited`"
for p in "$live" "$exited"; do
  test -f "$EVDIR/$p.events" || hard_error "no ring $EVDIR/$p.events"
done
# A killed program's memfd ring goes with it: its link is left, dangling.
test -L "$EVDIR/$killed.events" || hard_error "no link $EVDIR/$killed.events"

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
check_eq "ls1: killed: program (nothing left to read)" - "`col ls1 "$killed" 2`"
check_eq "ls1: killed: path" "$EVDIR/$killed.events" "`col ls1 "$killed" 8`"
check_eq "ls1: exited: state" exited "`col ls1 "$exited" 7`"
check_eq "ls1: exited: path" "$EVDIR/$exited.events" "`col ls1 "$exited" 8`"
# The ring of a process that exited normally says how many events it wrote
# in all, the last being RING_STOP: the same count as `ocgc dump`.
dump_ring "$EVDIR/$exited.events" exited
check_eq "ls1: exited: events written (as ocgc dump)" "`dkey exited ring.0.written`" \
  "`col ls1 "$exited" 6`"
check_eq "ls1: the files of the folder" 3 "`grep -c " $EVDIR/" "$WORK/ls1.out"`"
check_eq "ls1: no more rows (header + 3)" 4 "`lines_of ls1.out`"
check_eq "ls1: not the live program whose ring is elsewhere" "" "`row ls1 "$away"`"

say "== ocgc ls --no-default-dirs with two folders, a relative one, a link"
ocgc_cmd two ls --no-default-dirs --dir "$EVDIR" --dir "$WORK/ev2"
check_eq "two: exit status" 0 "`rc_of two`"
check_eq "two: rows (header + 4)" 5 "`lines_of two.out`"
check_eq "two: the program of the second folder: state" running "`col two "$away" 7`"
check_eq "two: its path" "$WORK/ev2/$away.events" "`col two "$away" 8`"
ln -s ev2 "$WORK/ev2link" || hard_error "ln -s"
(cd "$WORK" && "$OCGC" ls --no-default-dirs --dir ev2link >"$WORK/rel.out" 2>"$WORK/rel.err")
echo $? >"$WORK/rel.rc"
check_eq "rel: exit status" 0 "`rc_of rel`"
check_eq "rel: rows (header + 1)" 2 "`lines_of rel.out`"
check_eq "rel: the program of ev2 (through the link): state" running "`col rel "$away" 7`"
ocgc_cmd nodirs ls --no-default-dirs
check_error nodirs 2 "name one with --dir"

say "== ocgc ls (default folders: the running programs are found by their memory maps)"
ocgc_cmd ls2 ls
check_eq "ls2: exit status" 0 "`rc_of ls2`"
check_eq "ls2: running: state" running "`col ls2 "$live" 7`"
# Outside the folders read, a memfd ring is named by where ocgc reached it.
check_true "ls2: running: path, through the process (`col ls2 "$live" 8`)" \
  expr "`col ls2 "$live" 8`" : "/proc/$live/\(fd\|map_files\)/"
check_true "ls2: the program whose ring is elsewhere: path (`col ls2 "$away" 8`)" \
  expr "`col ls2 "$away" 8`" : "/proc/$away/\(fd\|map_files\)/"
check_eq "ls2: the killed program's file is not in a default folder" 0 \
  "`grep -c " $EVDIR/$killed.events\$" "$WORK/ls2.out"`"

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

say "== a stale regular file (a producer without memfd, or a copy, leaves one)"
mkdir -m 0755 "$WORK/other" || hard_error "mkdir"
cp "$WORK/killed.copy" "$WORK/other/$killed.events" || hard_error "cp"
if test "`id -u`" = 0; then
  say "  --prune leaves another user's stale file alone (run as root)"
  chown 65534 "$WORK/other/$killed.events" || hard_error "chown"
  ocgc_cmd other ls --prune --no-default-dirs --dir "$WORK/other"
  check_eq "other: exit status" 0 "`rc_of other`"
  check_true "other: the file is still there" test -f "$WORK/other/$killed.events"
  check_true "other: says why" grep -q "not removing $WORK/other/$killed.events" "$WORK/other.err"
  check_eq "other: still listed as stale" stale "`col other "$killed" 7`"
  check_eq "other: with what it holds" cmd_target "`col other "$killed" 2`"
  chown "`id -u`" "$WORK/other/$killed.events" || hard_error "chown"
else
  say "  (not root: another user's file cannot be made; that check is skipped)"
fi
ocgc_cmd mine ls --prune --no-default-dirs --dir "$WORK/other"
check_eq "mine: exit status" 0 "`rc_of mine`"
check_false "mine: my stale file is removed" test -e "$WORK/other/$killed.events"
check_true "mine: says so" \
  grep -q "removed $WORK/other/$killed.events (process $killed, stale)" "$WORK/mine.err"

say "== ocgc ls --prune"
ocgc_cmd prune ls --prune --no-default-dirs --dir "$EVDIR"
check_eq "prune: exit status" 0 "`rc_of prune`"
check_false "prune: the killed program's link is gone" test -L "$EVDIR/$killed.events"
check_false "prune: the exited program's file is gone" test -e "$EVDIR/$exited.events"
check_true "prune: the running program's ring is there" test -f "$EVDIR/$live.events"
check_eq "prune: the folder holds (the killed one's identity link is gone too)" \
  ".ocgc-ring.NS.$live $live.events" "`ls_dir "$EVDIR" | sed 's/\.ocgc-ring\.[0-9]*\./.ocgc-ring.NS./'`"
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
target_stop away "$away"
check_eq "away: exit status" 0 "`rc_of away`"
check_eq "live: stderr lines" 0 "`stderr_lines live`"
finish
