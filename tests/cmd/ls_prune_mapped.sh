#!/bin/sh
# ls_prune_mapped.sh - `ocgc ls --prune` never removes a ring that some
# process of the host maps, whatever pid its header or its link's name
# gives: that pid is the pid in the producer's own pid
# namespace, so from the host a container's live ring looks stale.
# - A folder holds, next to each other: a copy of a killed program's ring
#   (its pid is dead) that a live process maps (read-only, as a reader
#   does), and another such copy that nobody maps; a link <Q>.events ->
#   /proc/<Q>/fd/N of a pid Q that no process has here, while a live
#   process maps a memfd named ocgc:<Q>.events (what a producer whose pid
#   is Q in its own namespace maps), and another such link that nobody
#   backs; a link to a file that a live process maps.  The process is
#   ls_prune_holder (tests/cmd/ls_prune_holder.c).  `ocgc ls`
#   shows the mapped ones as "mapped" and the link as "foreign" (also in
#   --json, with the pid that maps them), --prune keeps them and says why,
#   and still removes the copy and the link that nobody maps.  Once the
#   holder has exited, --prune removes what it held too.
# - A real program run by `unshare --pid --fork --mount-proc`, whose pid
#   in its namespace is one that no process has on the host: its link
#   dangles from here, and --prune keeps it while it runs, then removes
#   the file it leaves at exit.  Skipped (that part only) where unshare
#   cannot make a pid namespace.
# - The scan itself (tools/hostmaps.c, run by ls_prune_maps) over a made-up
#   /proc whose maps hold hostile text: names that mimic a memfd, an
#   escaped newline that mimics a line, lines cut short, too long, across
#   reads, malformed fields; entries of /proc that are no process; and each
#   of its limits, which make the scan incomplete.
# Other OCaml programs may come and go on the host: every listing is of our
# own folders (--no-default-dirs --dir), and the pids planted in names are
# above the kernel's PID_MAX_LIMIT (2^22), so that no process anywhere, and
# no other run of this test (they differ by $$), has or maps them.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
cmd_init

HOLDER="$OCGC_BUILDDIR/tests/cmd/ls_prune_holder"
MAPS="$OCGC_BUILDDIR/tests/cmd/ls_prune_maps"
for x in "$HOLDER" "$MAPS"; do
  test -x "$x" || hard_error "$x is missing (run 'make check')"
done

# state_of TAG PATH: the STATE column of the row of PATH in TAG.out
state_of() { awk -v p="$2" 'NR > 1 && $NF == p { print $7 }' "$WORK/$1.out"; }
# said TAG TEXT: ocgc wrote a line holding TEXT on stderr
said() { grep -q -F -- "$2" "$WORK/$1.err"; }

# Two programs killed (their memfd rings went with them): what their rings
# held, as regular files whose pid is dead.
for tag in k1 k2; do
  target_start $tag 0.1
  cp -L "$EVDIR/$BGPID.events" "$WORK/$tag.copy" || hard_error "cp -L"
  kill -9 "$BGPID"
  wait "$BGPID" 2>/dev/null
  eval "$tag=\$BGPID"
done

pidmax=4194304
q=$((pidmax + 4 * $$)); r=$((q + 1)); t=$((q + 2))
MIX="$WORK/mix"
mkdir -m 0700 "$MIX" "$WORK/aside" || hard_error "mkdir"
cp "$WORK/k1.copy" "$MIX/$k1.events" || hard_error "cp"
cp "$WORK/k2.copy" "$MIX/$k2.events" || hard_error "cp"
cp "$WORK/k1.copy" "$WORK/aside/ring" || hard_error "cp"
ln -s "/proc/$q/fd/1000" "$MIX/$q.events" || hard_error "ln -s"
ln -s "/proc/$r/fd/1000" "$MIX/$r.events" || hard_error "ln -s"
ln -s "$WORK/aside/ring" "$MIX/$t.events" || hard_error "ln -s"

start_bg holder "$HOLDER" "$WORK/holder.stop" --map "$MIX/$k1.events" \
  --map "$WORK/aside/ring" --memfd "ocgc:$q.events" "$WORK/k1.copy"
holder=$BGPID
wait_key holder ready "$holder"

say "== ocgc ls: what a process maps is not stale"
ocgc_cmd ls1 ls --no-default-dirs --dir "$MIX"
check_eq "ls1: exit status" 0 "`rc_of ls1`"
check_eq "ls1: stderr lines" 0 "`lines_of ls1.err`"
check_eq "ls1: rows (header + 5)" 6 "`lines_of ls1.out`"
check_eq "ls1: the mapped copy (pid $k1 is dead)" mapped "`state_of ls1 "$MIX/$k1.events"`"
check_eq "ls1: the copy nobody maps" stale "`state_of ls1 "$MIX/$k2.events"`"
check_eq "ls1: the link whose memfd ocgc:$q.events is mapped" foreign \
  "`state_of ls1 "$MIX/$q.events"`"
check_eq "ls1: the link nobody backs" stale "`state_of ls1 "$MIX/$r.events"`"
check_eq "ls1: the link to a mapped file" mapped "`state_of ls1 "$MIX/$t.events"`"

ocgc_cmd js ls --json --no-default-dirs --dir "$MIX"
check_eq "js: exit status" 0 "`rc_of js`"
check_json_lines js
check_eq "js: the mapped copy: state, mapped, mapped_by" "mapped True $holder" \
  "`jq_py js "' '.join('%s %s %s' % (r['state'], r['mapped'], r['mapped_by'])
     for r in rows if r['path'] == '$MIX/$k1.events')"`"
check_eq "js: the link of ocgc:$q.events: state, mapped, mapped_by" "foreign False $holder" \
  "`jq_py js "' '.join('%s %s %s' % (r['state'], r['mapped'], r['mapped_by'])
     for r in rows if r['path'] == '$MIX/$q.events')"`"
check_eq "js: the copy nobody maps: mapped_by" None \
  "`jq_py js "' '.join(str(r['mapped_by']) for r in rows if r['path'] == '$MIX/$k2.events')"`"

say "== ocgc ls --prune keeps them, and still removes what nobody maps"
ocgc_cmd prune ls --prune --no-default-dirs --dir "$MIX"
check_eq "prune: exit status" 0 "`rc_of prune`"
check_true "prune: the mapped copy is there" test -f "$MIX/$k1.events"
check_true "prune: the link of ocgc:$q.events is there" test -L "$MIX/$q.events"
check_true "prune: the link to a mapped file is there" test -L "$MIX/$t.events"
check_false "prune: the copy nobody maps is gone" test -e "$MIX/$k2.events"
check_false "prune: the link nobody backs is gone" test -L "$MIX/$r.events"
check_true "prune: says it removed the copy" said prune \
  "removed $MIX/$k2.events (process $k2, stale)"
check_true "prune: says it removed the link" said prune \
  "removed $MIX/$r.events (process $r, stale)"
check_true "prune: says why it keeps the copy" said prune \
  "keeping $MIX/$k1.events: process $holder maps it"
check_true "prune: says why it keeps the link" said prune \
  "keeping $MIX/$q.events: process $holder maps the memory ring ocgc:$q.events"
check_eq "prune: stderr lines" 4 "`lines_of prune.err`"
check_eq "prune: the listing: the mapped copy" mapped "`state_of prune "$MIX/$k1.events"`"
check_eq "prune: the listing: the link" foreign "`state_of prune "$MIX/$q.events"`"

say "== once nothing maps them, they are stale again"
stop_bg holder "$holder"
check_eq "holder: exit status" 0 "`rc_of holder`"
ocgc_cmd ls2 ls --no-default-dirs --dir "$MIX"
check_eq "ls2: the copy" stale "`state_of ls2 "$MIX/$k1.events"`"
check_eq "ls2: the link of ocgc:$q.events" stale "`state_of ls2 "$MIX/$q.events"`"
ocgc_cmd prune2 ls --prune --no-default-dirs --dir "$MIX"
check_eq "prune2: exit status" 0 "`rc_of prune2`"
check_false "prune2: the copy is gone" test -e "$MIX/$k1.events"
check_false "prune2: the link is gone" test -L "$MIX/$q.events"
# A link that leads to a file is never removed: that file may be a ring ls
# could not see.
check_eq "prune2: the folder holds" "$t.events" "`ls_dir "$MIX"`"

say "== the scan, over a made-up /proc"
P="$WORK/proc"
mkdir -p "$P/101" "$P/102" "$P/103" "$P/104/maps" "$P/0123" "$P/4294967296" "$P/self" ||
  hard_error "mkdir"
L="7f0000000000-7f0000001000 rw-s 00000000"
cat >"$P/101/maps" <<EOF
00400000-00452000 r-xp 00000000 08:02 173521                             /usr/bin/dbus-daemon
$L 00:01 4242                       /memfd:ocgc:57.events (deleted)
7f0000001000-7f0000002000 rw-p 00000000 00:00 0 
$L 103:0a 99                        /x
7f0000003000-7f0000004000 r--s 00000000 fd:01 12345678901234567890       /big
$L 00:01 4343                       /memfd:ocgc:65.events
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0                          [vdso]
EOF
{
  # The kernel writes a newline in a name as \012: one line, never two.
  printf '%s\n' "$L 00:01 5801 /memfd:ocgc:58.events (deleted) (deleted)" \
    "$L 00:01 5901 /memfd:ocgc:059.events (deleted)" \
    "$L 00:01 6001 /memfd:ocgc:60.events\\0127f0000000000-7f0000001000 rw-s 00000000 00:01 777 /memfd:ocgc:61.events (deleted)" \
    "$L 00:01 6201 /memfd:ocgc:2147483648.events (deleted)"
  # What is kept of a line too long ends in a memfd's name: it is not one.
  awk -v pre="$L 00:01 6301 " 'BEGIN { name = "/memfd:ocgc:63.events"; s = pre
    for (i = length(pre) + length(name); i < 1023; i++) s = s " "
    print s name "zzz (deleted)" }'
  printf '%s\n' garbage "$L zz:01 6401 /a" "$L 00:01 6402x /a" \
    "$L 00:01 99999999999999999999 /a" "$L 123456789:01 6403 /a" "$L 00:01" "" \
    "$L 00:01 6701 /memfd:ocgc:67.events (deleted)"
  # A line longer than a read, then one that must still be seen whole.
  awk -v pre="$L 00:01 6801 /" 'BEGIN { s = pre; for (i = 0; i < 40000; i++) s = s "a"; print s }'
  printf '%s\n' "$L 00:01 6901 /memfd:ocgc:69.events (deleted)"
  # The end of the maps of a process that vanished while it was read.
  printf '%s' "$L 00:01 6601 /memfd:ocgc:66.events (deleted)"
} >"$P/102/maps"
for d in 0123 4294967296 self; do
  printf '%s\n' "$L 00:01 7001 /memfd:ocgc:70.events (deleted)" >"$P/$d/maps"
done
"$MAPS" "$P" --file 8:2:173521 --file 0:1:4242 --file 259:10:99 \
  --file 253:1:12345678901234567890 --file 3:10:99 --file 0:1:5801 --file 0:1:6001 \
  --file 0:1:777 --file 0:1:6301 --file 0:1:6801 --file 0:1:6601 --file 0:1:7001 \
  --memfd 57 --memfd 65 --memfd 67 --memfd 69 --memfd 58 --memfd 59 --memfd 60 --memfd 61 \
  --memfd 2147483648 --memfd 63 --memfd 66 --memfd 70 >"$WORK/scan.out" 2>"$WORK/scan.err"
check_eq "scan: exit status" 0 "$?"
check_eq "scan: stderr" "" "`cat "$WORK/scan.err"`"
check_eq "scan: complete" 1 "`getkey "$WORK/scan.out" complete`"
# files: 5 of 101, and of 102 those of the lines that parse; memfds: 57 65
# 67 69; processes: 101, 102, 104 (whose maps, a folder, reads nothing)
check_eq "scan: counts (files memfds procs)" "13 4 3" \
  "`awk '$1 == "counts" { print $2, $3, $4 }' "$WORK/scan.out"`"
for f in 8:2:173521:101 0:1:4242:101 259:10:99:101 253:1:12345678901234567890:101 \
    3:10:99:0 0:1:5801:102 0:1:6001:102 0:1:777:0 0:1:6301:102 0:1:6801:102 0:1:6601:0 \
    0:1:7001:0; do
  check_eq "scan: file ${f%:*} mapped by" "${f##*:}" \
    "`awk -v f="${f%:*}" '$1 == "file" && $2 == f { print $3 }' "$WORK/scan.out"`"
done
for m in 57:101 65:101 67:102 69:102 58:0 59:0 60:0 61:0 2147483648:0 63:0 66:0 70:0; do
  check_eq "scan: memfd ocgc:${m%:*}.events mapped by" "${m#*:}" \
    "`awk -v m="${m%:*}" '$1 == "memfd" && $2 == m { print $3 }' "$WORK/scan.out"`"
done
for lim in "3 0 0 0 0:lines of a process" "0 5 0 0 0:lines in all" "0 0 100 0 0:bytes" \
    "0 0 0 2 0:files" "0 0 0 0 1:memfd names"; do
  "$MAPS" "$P" --limits ${lim%:*} >"$WORK/lim.out" 2>&1
  check_eq "scan: a limit on the ${lim#*:} makes it incomplete" "0 0" \
    "$? `getkey "$WORK/lim.out" complete`"
done
"$MAPS" "$WORK/nonexistent" >"$WORK/noproc.out" 2>&1
check_eq "scan: no /proc: exit status" 2 "$?"

say "== a real program in its own pid namespace"
NSDIR="$WORK/ns"
mkdir -m 0700 "$NSDIR" || hard_error "mkdir"
if ! unshare --pid --fork --kill-child --mount-proc \
     sh -c 'echo 300 >/proc/sys/kernel/ns_last_pid' >"$WORK/unshare.err" 2>&1; then
  say "  (skipped: unshare cannot make a pid namespace here: `head -n 1 "$WORK/unshare.err"`)"
  finish
fi
# Its pid in there: one that no process has on the host, so that its link
# dangles from here (as it does when the host has no such pid).
hostmax=`cat /proc/sys/kernel/pid_max`
n=$((1000 + $$ % 20000)); i=0
while test $i -lt 1000 && { test -e "/proc/$((n + 1))" || test $((n + 1)) -ge "$hostmax"; }; do
  n=$(((n + 7) % (hostmax - 2) + 1)); i=$((i + 1))
done
test $i -lt 1000 || hard_error "no free pid found below $hostmax"
# Inside, sh is pid 1; the program, its first child, gets pid n + 1.
start_bg ns env OCAML_RUNTIME_EVENTS_DIR="$NSDIR" \
  unshare --pid --fork --kill-child --mount-proc sh -c \
  'echo "$1" >/proc/sys/kernel/ns_last_pid || exit 97; shift; "$@" & wait $!' \
  sh "$n" ./cmd_target 0.1 "$WORK/ns.go" "$WORK/ns.stop"
ns=$BGPID
wait_key ns before.heap_chunks "$ns"
nspid=`outkey ns pid`
check_eq "ns: the program's pid in its namespace" "$((n + 1))" "$nspid"
test -L "$NSDIR/$nspid.events" || hard_error "no link $NSDIR/$nspid.events (`ls_dir "$NSDIR"`)"
check_false "ns: its link dangles from here" test -e "$NSDIR/$nspid.events"
ocgc_cmd nsprune ls --prune --no-default-dirs --dir "$NSDIR"
check_eq "nsprune: exit status" 0 "`rc_of nsprune`"
check_true "nsprune: the live program's link is there" test -L "$NSDIR/$nspid.events"
check_eq "nsprune: its state" foreign "`state_of nsprune "$NSDIR/$nspid.events"`"
check_true "nsprune: says why it keeps it" said nsprune \
  "keeping $NSDIR/$nspid.events: process "
check_eq "nsprune: stderr lines" 1 "`lines_of nsprune.err`"
target_stop ns "$ns"
check_eq "ns: exit status" 0 "`rc_of ns`"
check_eq "ns: stderr lines" 0 "`stderr_lines ns`"
# OCAML_RUNTIME_EVENTS_PRESERVE (start_bg) left the ring as a file.
ocgc_cmd nsprune2 ls --prune --no-default-dirs --dir "$NSDIR"
check_eq "nsprune2: exit status" 0 "`rc_of nsprune2`"
check_true "nsprune2: removes the file the program left" said nsprune2 \
  "removed $NSDIR/$nspid.events (process $nspid, exited)"
check_eq "nsprune2: the folder holds" none "`ls_dir "$NSDIR"`"
finish
