#!/bin/sh
# root_0700.sh - the checks that run as another user (uid 65534) on a
# machine where that user cannot resolve any path: a root whose / is 0700,
# as `tar -xp` of a tarball made from a mktemp -d folder leaves it (what
# scripts/fresh-debian.sh once made).  There they must skip, saying why,
# never fail with exit 127:
# - lib.sh's nobody_why, which attach_errors.sh, ocaml5_root.sh and
#   serve_unit.sh ask first, names the reason in such a root and says
#   nothing in the same root made 0755;
# - test_attach's checks as another user (list_denied, permission_denied)
#   pass in such a root, saying they were not tried.
# The root is this machine's /usr, /etc, /dev, /proc, the build and source
# trees bind-mounted into a folder, in a private mount namespace (so the
# mounts go with it); skipped, saying so, without root, unshare or setpriv.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

test "`id -u`" = 0 || { echo "SKIP: not root (a root of our own needs mounts)"; exit 77; }
for t in unshare setpriv chroot; do
  command -v $t >/dev/null 2>&1 || { echo "SKIP: $t (util-linux, coreutils) is missing"; exit 77; }
done
unshare -m true 2>/dev/null || { echo "SKIP: unshare -m is denied here"; exit 77; }

ROOT="$WORK/root"
SRC=`cd "$OCGC_SRCDIR" && pwd`
BLD=`cd "$OCGC_BUILDDIR" && pwd`
mkdir -m 0700 "$ROOT" && mkdir -p "$ROOT/usr" "$ROOT/etc" "$ROOT/dev" "$ROOT/proc" "$ROOT/t" \
  "$ROOT$SRC" "$ROOT$BLD" && mkdir -m 1777 "$ROOT/tmp" || hard_error "cannot make $ROOT"
for d in bin lib lib64 sbin; do
  if test -L "/$d"; then ln -s "usr/$d" "$ROOT/$d" || hard_error "cannot link $ROOT/$d"; fi
done
cp "$OCGC_SRCDIR/tests/lib/lib.sh" "$WORK/lib.sh" || hard_error "cannot copy lib.sh"

# in_root MODE TAG COMMAND: COMMAND (sh -c) in the root made MODE, its
# output in $WORK/TAG.out, its status in $WORK/TAG.rc.  Everything is mounted
# inside a mount namespace of its own, and gone with it.
in_root() {
  unshare -m --propagation private sh -c '
    r=$1; mode=$2; cmd=$3
    mount --rbind /usr "$r/usr" && mount --rbind /etc "$r/etc" && mount --rbind /dev "$r/dev" &&
    mount -t proc proc "$r/proc" && mount --bind "$4" "$r$4" && mount --bind "$5" "$r$5" &&
    mount --bind "$6" "$r/t" && chmod "$mode" "$r" &&
    exec chroot "$r" /bin/sh -c "PATH=/usr/sbin:/usr/bin:/sbin:/bin TMPDIR=/tmp; export PATH TMPDIR; $cmd"
  ' sh "$ROOT" "$1" "$3" "$SRC" "$BLD" "$WORK" >"$WORK/$2.out" 2>&1
  echo $? >"$WORK/$2.rc"
  chmod 0700 "$ROOT"
}

say "== lib.sh's nobody_why"
in_root 0700 why700 '. /t/lib.sh; echo "why: `nobody_why`"'
check_eq "in a 0700 root: it ran" 0 "`cat "$WORK/why700.rc"`"
check_true "in a 0700 root: it says why (`cat "$WORK/why700.out"`)" \
  grep -q '^why: uid 65534 cannot start a program here.*searchable by all' "$WORK/why700.out"
in_root 0755 why755 '. /t/lib.sh; echo "why: `nobody_why`"'
check_eq "in a 0755 root: it ran" 0 "`cat "$WORK/why755.rc"`"
check_eq "in a 0755 root: nothing stands in the way" "why: " "`cat "$WORK/why755.out"`"

T="$BLD/tests/unit/test_attach"
if test -x "$T"; then
  say "== test_attach's checks as another user"
  for m in 0700 0755; do
    in_root $m attach$m "cd '$BLD' && OCGC_SRCDIR='$SRC' CK_RUN_CASE=list CK_VERBOSITY=normal '$T'"
    say "  root $m: `tail -n 1 "$WORK/attach$m.out"`"
    check_eq "root $m: test_attach's list case passes" 0 "`cat "$WORK/attach$m.rc"`"
  done
  check_true "root 0700: list_denied says it was not tried, and why" \
    grep -q 'list_denied not tried (uid 65534 cannot reach /proc' "$WORK/attach0700.out"
  check_false "root 0755: list_denied was tried" grep -q 'list_denied not tried' "$WORK/attach0755.out"
else
  say "(test_attach is not built here: its checks are not tried)"
fi
finish
