#!/bin/sh
# ocaml5-root.sh DIR [RELEASE] - a Debian root holding a stock OCaml 5
# (its OCaml, ocaml-findlib, gcc, libc6-dev), able to compile native
# programs inside `chroot DIR`; the OCaml 5 tests (tests/lib/ocaml5_lib.sh)
# compile with it.  RELEASE 5.3 (the default): trixie's OCaml 5.3
# (ocaml-nox); 5.4: forky's OCaml 5.4 (forky calls the package ocaml),
# bootstrapped with debootstrap's sid script where the host's debootstrap
# has none for forky (as Debian 12's).  A root whose OCaml is not of
# RELEASE (forky moved on) is refused, with the version found.
#
# A cache: a finished root holds DIR/.ocgc-ready (its OCaml version) and a
# second run returns at once.  The root is built in DIR.tmp and renamed to
# DIR only once it compiled and ran a program, so an interrupted run
# leaves nothing that looks done.  Runs for the same DIR wait for each
# other (flock on DIR.lock); runs for two DIRs share nothing.
# When the root cannot be made (not root, no debootstrap or chroot, the
# archive unreachable, debootstrap failed) it prints one line saying why
# and exits 77, so that callers can skip.  It mounts nothing itself;
# whatever debootstrap left mounted under DIR.tmp is unmounted on exit.
#
# Environment: OCGC_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -u

# debootstrap does not resolve virtual packages: the last three provide
# what ocaml's packages depend on by an ABI-hashed virtual name
# (libstdlib-ocaml-dev-m4xw9 and the like).
PACKAGES=ocaml-findlib,gcc,libc6-dev,ocaml-base,libstdlib-ocaml,libstdlib-ocaml-dev
MIRROR=${OCGC_DEBIAN_MIRROR:-http://deb.debian.org/debian}

say() { printf 'ocaml5-root: %s\n' "$*"; }
# cannot WHY: the one line a caller shows when it skips
cannot() { say "skipped: cannot make the OCaml 5 root: $*"; exit 77; }

usage() { echo "usage: $0 DIR [5.3|5.4]" >&2; exit 2; }
test $# -ge 1 && test $# -le 2 && test -n "$1" || usage
RELEASE=${2:-5.3}
case $RELEASE in
  5.3) SUITE=trixie; PACKAGES=ocaml-nox,$PACKAGES ;;
  5.4) SUITE=forky; PACKAGES=ocaml,$PACKAGES ;;
  *) usage ;;
esac
case $1 in
  /*) DIR=$1 ;;
  *) DIR=`pwd`/$1 ;;
esac
DIR=${DIR%/}
TMP=$DIR.tmp
LOG=$DIR.log

is_ready() { test -s "$DIR/.ocgc-ready"; }
if is_ready; then
  case `cat "$DIR/.ocgc-ready"` in
    $RELEASE.*) ;;
    *) cannot "$DIR holds OCaml `cat "$DIR/.ocgc-ready"`, not $RELEASE: remove it first" ;;
  esac
  say "ready: $DIR (OCaml `cat "$DIR/.ocgc-ready"`)"
  exit 0
fi

test "`id -u`" = 0 || cannot "debootstrap and chroot need root (uid `id -u`)"
PATH=$PATH:/usr/sbin:/sbin
export PATH
for t in debootstrap chroot; do
  command -v $t >/dev/null 2>&1 ||
    cannot "no $t (apt-get install debootstrap; it is in scripts/debian-packages.txt)"
done
mkdir -p "`dirname "$DIR"`" || cannot "cannot make the folder of $DIR"
# Only this script makes DIR, and only finished: anything else there is not
# ours to remove.
test -e "$DIR" && cannot "$DIR exists but is no finished root (no .ocgc-ready): remove it first"

# One builder per DIR: a second run waits, then finds the root ready.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$DIR.lock" || cannot "cannot open $DIR.lock"
  flock 9 || cannot "cannot lock $DIR.lock"
  if is_ready; then say "ready: $DIR (made by another run)"; exit 0; fi
fi

# unmount_under D: whatever is mounted under D, deepest first
unmount_under() {
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts 2>/dev/null |
    sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
}

# --one-file-system: should anything still be mounted in the root (a bind
# mount of a device from the host), never remove through it.
cleanup() {
  unmount_under "$TMP"
  rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT
trap 'exit 98' HUP INT TERM

START=`date +%s`

# reachable: the suite's Release file answers (when curl is there; else
# debootstrap's own failure says it)
reachable() {
  command -v curl >/dev/null 2>&1 || return 0
  curl -fsS -o /dev/null --max-time 30 "$MIRROR/dists/$SUITE/Release" >>"$LOG" 2>&1
}

# bootstrap: debootstrap into $TMP, its output in $LOG; on failure its own
# log is kept as $DIR.debootstrap.log
bootstrap() {
  unmount_under "$TMP"
  rm -rf --one-file-system "$TMP" "$DIR.debootstrap.log" || cannot "cannot remove $TMP"
  # A debootstrap older than the suite has no script for it: the suite is
  # a testing one, which sid's script makes.
  set -- "$SUITE" "$TMP" "$MIRROR"
  _scripts=/usr/share/debootstrap/scripts
  test -e "$_scripts/$SUITE" || ! test -e "$_scripts/sid" || set -- "$@" "$_scripts/sid"
  say "debootstrap $SUITE into $TMP (log $LOG) ..."
  if ! debootstrap --variant=minbase --include=$PACKAGES "$@" >>"$LOG" 2>&1; then
    cp "$TMP/debootstrap/debootstrap.log" "$DIR.debootstrap.log" 2>/dev/null
    _l=$LOG
    test -f "$DIR.debootstrap.log" && _l="$LOG and $DIR.debootstrap.log"
    # its last error, else its last line (a warning naming its own log,
    # which is kept as $DIR.debootstrap.log)
    _e=`grep '^E:' "$LOG" | tail -n 1`
    test -n "$_e" || _e=`tail -n 1 "$LOG"`
    cannot "debootstrap $SUITE failed: `echo "$_e" | cut -c1-160` (see $_l)"
  fi
}

# try_compile: the root compiles a static native program using threads,
# Unix and a second domain, and that program runs on this host
try_compile() {
  mkdir -p "$TMP/tmp/ocgc-check" || return 1
  cat >"$TMP/tmp/ocgc-check/check.ml" <<'EOF'
let () =
  (* OCaml 5 refuses Unix.fork once a domain was spawned *)
  (match Unix.fork () with 0 -> exit 0 | p -> ignore (Unix.waitpid [] p));
  let t = Thread.create (fun () -> ()) () in
  Thread.join t;
  let d = Domain.spawn (fun () -> List.length (List.init 1000 Fun.id)) in
  Printf.printf "ocaml %s %d\n" Sys.ocaml_version (Domain.join d)
EOF
  chroot "$TMP" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LC_ALL=C.UTF-8 \
    /bin/sh -c 'cd /tmp/ocgc-check && ocamlfind ocamlopt -package unix,threads.posix \
      -linkpkg -ccopt -static check.ml -o check' >>"$LOG" 2>&1 || return 1
  "$TMP/tmp/ocgc-check/check" >"$TMP/tmp/ocgc-check/out" 2>>"$LOG" || return 1
  grep -q '^ocaml 5\.[0-9.]* 1000$' "$TMP/tmp/ocgc-check/out" || return 1
  rm -rf "$TMP/tmp/ocgc-check"
}

: >"$LOG" || cannot "cannot write $LOG"
reachable || cannot "$MIRROR is unreachable (see $LOG)"
bootstrap
VERSION=`chroot "$TMP" /usr/bin/ocamlopt -version 2>>"$LOG"`
case $VERSION in
  $RELEASE.*) ;;
  *) cannot "the root's ocamlopt -version says '$VERSION', not $RELEASE.x (see $LOG)" ;;
esac
try_compile || cannot "OCaml $VERSION in the root did not compile and run a static program (see $LOG)"
# Nothing the tests need: the package cache (most of the download).
rm -rf --one-file-system "$TMP"/var/cache/apt/archives/*.deb
printf '%s\n' "$VERSION" >"$TMP/.ocgc-ready"
unmount_under "$TMP"
mv "$TMP" "$DIR" || cannot "cannot rename $TMP to $DIR"
END=`date +%s`
say "ready: $DIR (OCaml $VERSION, `du -sh "$DIR" 2>/dev/null | cut -f1`, $((END - START)) s)"
