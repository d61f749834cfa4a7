#!/bin/sh
# ls_as_user.sh - `ocgc ls` of a folder, run by the user whose program
# writes the ring, not by root.  A memfd ring's name leads through
# /proc/PID/map_files, which only root may follow: a user's
# stat(2) of his own ring's name gets EPERM.  ls used to list such a ring
# as "denied", with nothing of it; it now reads the links' texts (never
# following them) and matches the name to the ring it found in that
# process's memory map: program, sizes, state running, the folder's path.
# Then with a ring of root's in root's default folder (/dev/shm/ocgc-0,
# else /tmp/ocgc-0, private): nobody's `ocgc ls` cannot show it, nor count
# it, but says on stderr what it could not look into and why (root's ring
# folder, the processes whose maps are private); root's does not.
# Run as uid 65534 (nobody); skipped where that cannot be (not root, no
# setpriv, / not searchable by all).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
why=`nobody_why`
if test -n "$why"; then echo "SKIP: cannot run as another user: $why"; exit 77; fi
compile_native lifecycle ocgc_test.ml lifecycle.ml

# What nobody runs: copies of this build's ocgc and libocgc, and the
# program, in a folder all may read (the build may be under /root).
nobody_ocgc "$WORK/pub"
cp "$WORK/lifecycle" "$WORK/pub/" && chmod -R a+rX "$WORK/pub" || hard_error "cannot copy the program"
mkdir -m 0700 "$WORK/nev" && chown 65534 "$WORK/nev" || hard_error "cannot make nobody's folder"
as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR \
    LD_LIBRARY_PATH="$WORK/pub" OCAML_RUNTIME_EVENTS_DIR="$WORK/nev" "$@"
}

# The program sleeps a minute once it has reported (lifecycle.ml "sleep").
(cd "$WORK/pub" && as_nobody ./lifecycle "" 0 sleep >"$WORK/prog.out" 2>"$WORK/prog.err") &
bg=$!
n=0
while test -z "`outkey prog pid_again`"; do
  kill -0 $bg 2>/dev/null || { cat "$WORK/prog.err"; hard_error "the program ended before reporting"; }
  sleep 0.05
done
pid=`outkey prog pid`
test -L "$WORK/nev/$pid.events" || hard_error "no name $WORK/nev/$pid.events"
check_false "nobody cannot follow the name (map_files is root's)" \
  as_nobody sh -c "test -e '$WORK/nev/$pid.events'"
as_nobody "$WORK/pub/ocgc" ls --no-default-dirs --dir "$WORK/nev" >"$WORK/ls.out" 2>"$WORK/ls.err"
check_eq "ls: exit status (`head -n 1 "$WORK/ls.err"`)" 0 "$?"
cat "$WORK/ls.out"
row=`awk -v p="$pid" '$1 == p' "$WORK/ls.out"`
check_eq "ls: one row for the program" 1 "`printf '%s\n' "$row" | grep -c .`"
check_eq "ls: its program" lifecycle "`printf '%s\n' "$row" | awk '{ print $2 }'`"
check_eq "ls: its state" running "`printf '%s\n' "$row" | awk '{ print $(NF - 1) }'`"
check_eq "ls: its path, the folder's name" "$WORK/nev/$pid.events" "`printf '%s\n' "$row" | awk '{ print $NF }'`"

say "== what nobody cannot see"
# Root's program, its ring in root's default folder (no XDG_RUNTIME_DIR).
if test -d /dev/shm; then rdir=/dev/shm/ocgc-0; else rdir=/tmp/ocgc-0; fi
# The runtime makes the folder if it is not there; the test takes away
# what it made (fresh-debian.sh found /tmp/ocgc-0 left after the check).
rdir_was=0; test -e "$rdir" && rdir_was=1
(cd "$WORK" && env -u XDG_RUNTIME_DIR ./lifecycle "$rdir" 0 sleep >"$WORK/root.out" 2>"$WORK/root.err") &
rbg=$!
while test -z "`outkey root pid_again`"; do
  kill -0 $rbg 2>/dev/null || { cat "$WORK/root.err"; hard_error "root's program ended before reporting"; }
  sleep 0.05
done
rpid=`outkey root pid`
check_eq "root's ring is in $rdir" true "`outkey root ring_exists`"
check_false "nobody cannot open $rdir" as_nobody sh -c "ls '$rdir' >/dev/null 2>&1"
as_nobody "$WORK/pub/ocgc" ls >"$WORK/ls2.out" 2>"$WORK/ls2.err"
check_eq "nobody's ls: exit status" 0 "$?"
cat "$WORK/ls2.err"
check_eq "nobody's ls: root's program is not listed" "" "`awk -v p="$rpid" '$1 == p' "$WORK/ls2.out"`"
check_eq "nobody's ls: one line on stderr" 1 "`wc -l <"$WORK/ls2.err" | tr -d ' '`"
# ocgc ls: rings of other users not shown: 1 ring folder of theirs is
# private, and so are the memory maps of 57 processes (run as root to see them)
check_true "nobody's ls: says root's ring folder and processes are private, and what to do" \
  grep -Eq '^ocgc ls: rings of other users not shown: [1-9][0-9]* ring folders? of theirs (is|are) private, and so (is the memory map|are the memory maps) of [1-9][0-9]* process(es)? \(run as root to see them\)$' \
  "$WORK/ls2.err"
"$OCGC" ls >"$WORK/ls3.out" 2>"$WORK/ls3.err"
check_eq "root's ls: exit status" 0 "$?"
check_eq "root's ls: lists root's program" 1 "`awk -v p="$rpid" '$1 == p' "$WORK/ls3.out" | grep -c .`"
# Root opens every folder and reads every maps it can (what even root may
# not, a sandbox's init, is not its to lift): nothing to say.
check_eq "root's ls: nothing said" "" "`cat "$WORK/ls3.err"`"

kill $bg $rbg 2>/dev/null; kill `outkey prog pid` "$rpid" 2>/dev/null
wait
# Root's program died of SIGTERM, before its exit could unlink its names
# there: they are ours to take away (the program is reaped).  Then the
# folder, if the test made it (rmdir: only while empty, so never while a
# ring another run put there since is in it).
rm -f "$rdir/$rpid.events" "$rdir"/.ocgc-ring.*."$rpid"
test $rdir_was = 1 || rmdir "$rdir" 2>/dev/null || say "$rdir is left: another run's program uses it"
finish
