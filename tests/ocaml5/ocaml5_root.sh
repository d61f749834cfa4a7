#!/bin/sh
# ocaml5_root.sh - scripts/ocaml5-root.sh and ocaml5_lib.sh when there is
# no OCaml 5 to be had, without the network: a finished root (its
# .ocgc-ready) is returned at once and nothing is rebuilt; an unreachable
# archive and a user who is not root each give exit 77 and one line saying
# why (the archive's with the log's path), and leave no root, no half root
# and no mount; a folder that is no finished root is refused, not removed; ocaml5_lib.sh skips (77) with one line naming
# `make ocaml5-root` when it finds neither a compiler nor a root.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
# A copy that user nobody can read (the checkout may be under /root).
chmod 0755 "$WORK"
SCRIPT="$WORK/ocaml5-root.sh"
cp "$OCGC_SRCDIR/scripts/ocaml5-root.sh" "$SCRIPT" && chmod 0644 "$SCRIPT" ||
  hard_error "cannot copy scripts/ocaml5-root.sh"

# root_run TAG DIR [VAR=VALUE...]: the script on DIR, its output in
# $WORK/TAG.out, its exit status in $WORK/TAG.rc
root_run() {
  _tag=$1; _dir=$2; shift 2
  env "$@" sh "$SCRIPT" "$_dir" >"$WORK/$_tag.out" 2>&1
  echo $? >"$WORK/$_tag.rc"
}

# check_skip TAG DIR WHAT: exit 77, one line, "skipped" and WHAT in it,
# neither DIR nor DIR.tmp left, nothing mounted under them
check_skip() {
  check_eq "$1: exit status" 77 "`cat "$WORK/$1.rc"`"
  check_eq "$1: output lines" 1 "`wc -l <"$WORK/$1.out" | tr -d ' '`"
  check_true "$1: the line says it skipped, and $3" grep -q "skipped:.*$3" "$WORK/$1.out"
  check_false "$1: no root left" test -e "$2"
  check_false "$1: no half root left" test -e "$2.tmp"
  check_eq "$1: mounts under $2" 0 "`grep -c " $2" /proc/self/mounts`"
}

say "== a finished root: returned at once"
mkdir -p "$WORK/done" && echo 5.3.0 >"$WORK/done/.ocgc-ready"
root_run done "$WORK/done" OCGC_DEBIAN_MIRROR=http://127.0.0.1:9/none
check_eq "done: exit status" 0 "`cat "$WORK/done.rc"`"
check_true "done: it says ready, with the version" grep -q "ready: $WORK/done (OCaml 5.3.0)" "$WORK/done.out"
check_false "done: no DIR.tmp made" test -e "$WORK/done.tmp"
check_false "done: no DIR.log made" test -e "$WORK/done.log"

if test "`id -u`" = 0 && command -v debootstrap >/dev/null 2>&1; then
  say "== an unreachable archive"
  root_run unreach "$WORK/r1" OCGC_DEBIAN_MIRROR=http://127.0.0.1:9/debian
  check_skip unreach "$WORK/r1" "unreachable\\|failed"
  check_true "unreach: the line names the log" grep -q "$WORK/r1.log" "$WORK/unreach.out"
  say "== a folder that is no finished root: left alone"
  mkdir -p "$WORK/mine" && echo keep >"$WORK/mine/file"
  root_run mine "$WORK/mine" OCGC_DEBIAN_MIRROR=http://127.0.0.1:9/debian
  check_eq "mine: exit status" 77 "`cat "$WORK/mine.rc"`"
  check_true "mine: the line says it is no finished root" grep -q "skipped:.*no finished root" \
    "$WORK/mine.out"
  check_eq "mine: its file is still there" keep "`cat "$WORK/mine/file"`"
else
  say "(not root with debootstrap: the unreachable archive is not tried)"
fi

NOBODY_WHY=`nobody_why`
if test -n "$NOBODY_WHY"; then
  say "SKIP part: not root is not tried: $NOBODY_WHY"
else
  say "== not root"
  mkdir -m 0777 "$WORK/nr"
  root_run nobody "$WORK/nr/r" setpriv --reuid=65534 --regid=65534 --clear-groups
  check_skip nobody "$WORK/nr/r" "need root"
fi

say "== ocaml5_lib.sh with no OCaml 5 anywhere"
# A PATH whose ocamlopt (if any) is the system's 4.x, and no root.
(OCGC_OCAML5_ROOT="$WORK/none" OCGC_OCAML54_ROOT="$WORK/none" OCGC_OCAML5_BIN= PATH=/usr/bin:/bin
 . "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"; echo "found $OCAML5_MODE") \
  >"$WORK/lib.out" 2>&1
echo $? >"$WORK/lib.rc"
if grep -q '^found' "$WORK/lib.out"; then
  say "(an OCaml 5 is in /usr/bin: the skip is not tried)"
else
  check_eq "lib: exit status" 77 "`cat "$WORK/lib.rc"`"
  check_eq "lib: output lines" 1 "`wc -l <"$WORK/lib.out" | tr -d ' '`"
  check_true "lib: the line names make ocaml5-root" grep -q "skipped: no OCaml 5.*make ocaml5-root" \
    "$WORK/lib.out"
fi
(OCGC_OCAML5_BIN="$WORK/none" . "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh") \
  >"$WORK/bin.out" 2>&1
echo $? >"$WORK/bin.rc"
check_eq "OCGC_OCAML5_BIN without OCaml 5: exit status" 77 "`cat "$WORK/bin.rc"`"
check_true "OCGC_OCAML5_BIN without OCaml 5: it says so" grep -q "skipped: OCGC_OCAML5_BIN=$WORK/none" \
  "$WORK/bin.out"
finish
