#!/bin/sh
# fresh-debian.sh - the README's quick start as a newcomer meets it: a
# brand-new Debian 12 root (debootstrap --variant=minbase bookworm, then
# `apt-get install git`), the repository cloned into /root/ocgc as root,
# and exactly the README's two commands run there, each timed:
# `scripts/dev.sh demo`, then `scripts/dev.sh check`.  Both must exit 0.
#
#   sudo scripts/fresh-debian.sh [--mode A|B|C|both|all] [--keep] [REPO]
#
#   REPO     the git repository to clone: a path or a URL (default: the one
#            this script belongs to; its HEAD is what gets cloned)
#   --mode   A: the root has /proc, /dev/pts (a new devpts instance) and
#               /dev/shm (a tmpfs) mounted, as a real machine does;
#            B: /proc only: no /dev/pts (no pseudo-terminals) and no /dev/shm;
#            C: as B, and no namespace may be made, as in many containers:
#               every command in the root runs without CAP_SYS_ADMIN
#               (dropped from its bounding set with setpriv), so unshare
#               is denied and the tests that need one skip, saying so;
#            both (the default): A, then B; all: A, B, then C.
#            In both modes /dev holds only what udev makes on any machine:
#            null, zero, full, random, urandom, tty (device nodes made with
#            mknod) and the fd, stdin, stdout, stderr links; in mode A also
#            ptmx (a link to pts/ptmx).  Nothing else is mounted (no /sys,
#            no /run, nothing of the host's).  Of this machine's own
#            settings only its network plumbing goes in: /etc/resolv.conf
#            and the CAs in /usr/local/share/ca-certificates (a
#            TLS-intercepting proxy's, say), added to the root's trust.
#   --keep   keep the roots (unmounted) for a look afterwards
#
# Environment:
#   OCGC_DEBIAN_MIRROR  the Debian mirror for debootstrap (default: the first
#                       bookworm source of this machine's apt configuration,
#                       /etc/apt/sources.list and /etc/apt/sources.list.d/)
#   OCGC_FRESH_CACHE    where the bootstrapped root is kept as a tarball, so
#                       that later runs skip debootstrap (default
#                       /var/cache/ocgc-fresh-debian; delete it to refresh)
#   OCGC_FRESH_WORK     where the roots and the results go (default /var/tmp;
#                       about 3 GB per root; not a nodev file system)
#
# Everything runs in a private mount namespace (unshare), and every mount is
# undone at exit whatever happens (trap), so nothing is left mounted on the
# host.  The results (each command's output, and a summary table) are kept
# in a folder whose path is printed at the end.  Needs root, debootstrap
# (installed with apt-get if missing) and the network to the Debian mirror.
set -eu

say() { printf '==> %s\n' "$*"; }
die() { printf 'fresh-debian.sh: %s\n' "$*" >&2; exit 1; }
now() { date +%s; }
took() {
  _s=$(( $(now) - $1 ))
  if [ "$_s" -ge 60 ]; then printf '%d min %02d s' $((_s / 60)) $((_s % 60))
  else printf '%d s' "$_s"; fi
}

# As root, go on in a private mount namespace: our mounts are invisible to
# the host and go away with us even if the trap below never runs.
if [ -z "${OCGC_FRESH_NS:-}" ] && [ "$(id -u)" -eq 0 ]; then
  command -v unshare >/dev/null 2>&1 || die "unshare (util-linux) is missing"
  exec env OCGC_FRESH_NS=1 unshare --mount --propagation private sh "$0" "$@"
fi

here=$(cd "$(dirname "$0")/.." && pwd)
modes="A B"
keep=0
repo=
while [ $# -gt 0 ]; do
  case $1 in
    --mode)
      [ $# -ge 2 ] || die "--mode takes A, B, C, both or all"
      case $2 in A|a) modes=A ;; B|b) modes=B ;; C|c) modes=C ;; both) modes="A B" ;;
        all) modes="A B C" ;;
        *) die "--mode takes A, B, C, both or all, not '$2'" ;; esac
      shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$repo" ] || die "one repository only"; repo=$1; shift ;;
  esac
done
[ -n "$repo" ] || repo=$here
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount): sudo $0"


cache=${OCGC_FRESH_CACHE:-/var/cache/ocgc-fresh-debian}
base=${OCGC_FRESH_WORK:-/var/tmp}
arch=$(dpkg --print-architecture)
suite=bookworm
tarball=$cache/$suite-minbase-git-$arch.tar.gz
mkdir -p "$cache" "$base"
out=$(mktemp -d "$base/ocgc-fresh.XXXXXX")
log=$out/fresh-debian.log
: >"$log"

# ---- mounts and cleanup ----------------------------------------------------------

MOUNTS=   # mount points, the last mounted first
ROOTS=    # roots to remove at exit (unless --keep)

# kill_inside ROOT: end the processes whose root is ROOT (ones our commands
# started and left behind), by pid; prints their pids and names.
kill_inside() {
  _left=
  for _p in /proc/[0-9]*; do
    _r=$(readlink "$_p/root" 2>/dev/null || true)
    if [ "$_r" = "$1" ]; then
      _left="$_left ${_p#/proc/}($(cat "$_p/comm" 2>/dev/null || echo '?'))"
      kill -9 "${_p#/proc/}" 2>/dev/null || :
    fi
  done
  [ -z "$_left" ] || sleep 0.5
  printf '%s' "$_left"
}

unmount_all() {
  for _m in $MOUNTS; do
    umount "$_m" 2>/dev/null || umount -l "$_m" 2>/dev/null || echo "cannot unmount $_m" >&2
  done
  MOUNTS=
}

# still_mounted DIR: whether anything is mounted at or under DIR
still_mounted() { awk -v d="$1" '$2 == d || index($2, d "/") == 1 { f = 1 } END { exit !f }' /proc/self/mounts; }

cleanup() {
  for _r in $ROOTS; do kill_inside "$_r" >/dev/null; done
  unmount_all
  for _r in $ROOTS; do
    if still_mounted "$_r"; then
      echo "fresh-debian.sh: $_r still has mounts: not removed" >&2
    elif [ "$keep" = 1 ]; then
      echo "fresh-debian.sh: kept $_r" >&2
    else
      rm -rf "$_r"
    fi
  done
}
trap 'cleanup' EXIT
trap 'exit 130' INT HUP
trap 'exit 143' TERM

# mnt TYPE OPTIONS SOURCE DIR: mount, and remember it for the cleanup
mnt() {
  mkdir -p "$4"
  mount -t "$1" -o "$2" "$3" "$4"
  MOUNTS="$4 $MOUNTS"
}

# ---- the Debian mirror ------------------------------------------------------------

# host_mirror: the URI of the first "deb" source for $suite in this
# machine's apt configuration (one-line .list files and deb822 .sources).
host_mirror() {
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$suite" '$1 == "deb" {
        i = 2
        if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == s) { print $i; exit }
      }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$suite" 'BEGIN { RS = "" }
      {
        types = ""; uris = ""; suites = ""; enabled = "yes"
        n = split($0, line, "\n")
        for (k = 1; k <= n; k++) {
          if (line[k] ~ /^#/) continue
          split(line[k], kv, ":")
          v = substr(line[k], length(kv[1]) + 2); gsub(/^[ \t]+|[ \t]+$/, "", v)
          if (kv[1] == "Types") types = v
          else if (kv[1] == "URIs") uris = v
          else if (kv[1] == "Suites") suites = v
          else if (kv[1] == "Enabled") enabled = v
        }
        if (enabled != "no" && (" " types " ") ~ / deb / && (" " suites " ") ~ (" " s " ")) {
          split(uris, u, " "); print u[1]; exit
        }
      }' "$f"
  done
}

mirror=${OCGC_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(host_mirror | grep -E '^(https?|file)://' | head -n 1 || true)
  [ -n "$mirror" ] || die "no $suite source in /etc/apt/sources.list(.d): set OCGC_DEBIAN_MIRROR"
fi

# ---- the fresh root, bootstrapped once -----------------------------------------------

# run_logged TITLE COMMAND...: one line with the time it took; the output
# goes into $log, whose end is shown on failure.
run_logged() {
  _title=$1; shift
  printf '==> %s ... ' "$_title"
  _t0=$(now)
  echo "==> $_title" >>"$log"
  if "$@" >>"$log" 2>&1 </dev/null; then
    printf 'done (%s)\n' "$(took "$_t0")"
  else
    printf 'FAILED (after %s)\n' "$(took "$_t0")"
    tail -n 30 "$log" | sed 's/^/    /'
    die "see $log"
  fi
}

# The minimal /dev of a machine (udev makes these on any Debian system).
make_dev() {
  rm -rf "$1/dev"
  mkdir -m 0755 "$1/dev"
  mknod -m 0666 "$1/dev/null" c 1 3
  mknod -m 0666 "$1/dev/zero" c 1 5
  mknod -m 0666 "$1/dev/full" c 1 7
  mknod -m 0666 "$1/dev/random" c 1 8
  mknod -m 0666 "$1/dev/urandom" c 1 9
  mknod -m 0666 "$1/dev/tty" c 5 0
  ln -s /proc/self/fd "$1/dev/fd"
  ln -s /proc/self/fd/0 "$1/dev/stdin"
  ln -s /proc/self/fd/1 "$1/dev/stdout"
  ln -s /proc/self/fd/2 "$1/dev/stderr"
}

# in_root ROOT COMMAND...: COMMAND in the chroot, as root, with the
# environment of a root login and nothing of ours ($confine before it: mode
# C's capabilities taken away)
confine=
in_root() {
  _r=$1; shift
  $confine chroot "$_r" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/sh \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM="${TERM:-dumb}" \
    ${http_proxy:+http_proxy="$http_proxy"} ${https_proxy:+https_proxy="$https_proxy"} \
    "$@"
}

if ! command -v debootstrap >/dev/null 2>&1; then
  run_logged "apt-get install debootstrap" \
    sh -c 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap'
fi

if [ -f "$tarball" ]; then
  say "fresh root: $tarball (cached; delete it to bootstrap again)"
else
  say "bootstrapping a Debian $suite root once (mirror $mirror), cached as $tarball"
  seed=$(mktemp -d "$base/ocgc-seed.XXXXXX")
  ROOTS="$seed"
  # mktemp made it 0700, and tar keeps the mode of "." in the tarball: a
  # real machine's / is 0755.
  chmod 0755 "$seed"
  run_logged "debootstrap --variant=minbase $suite" \
    debootstrap --variant=minbase --arch="$arch" "$suite" "$seed" "$mirror"
  make_dev "$seed"
  cat /etc/resolv.conf >"$seed/etc/resolv.conf"
  mnt proc nosuid,nodev,noexec proc "$seed/proc"
  run_logged "apt-get install git (as a newcomer would: with its recommended packages)" \
    in_root "$seed" sh -c 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y git && apt-get clean'
  kill_inside "$seed" >/dev/null
  unmount_all
  run_logged "saving the root" \
    tar -C "$seed" --numeric-owner -czf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  rm -rf "$seed"
  ROOTS=
fi

# ---- one mode ---------------------------------------------------------------------------

summary=$out/summary.txt
printf '| mode | mounted | scripts/dev.sh demo | scripts/dev.sh check |\n|---|---|---|---|\n' >"$summary"
failed=0

# timed ROOT TAG COMMAND: run "cd /root/ocgc && COMMAND" in ROOT; its output
# (shown indented) in $out/TAG.out; sets RC and SECS
timed() {
  _t0=$(now)
  rm -f "$out/$2.rc"
  { in_root "$1" sh -c "cd /root/ocgc && $3" 2>&1 </dev/null; echo $? >"$out/$2.rc"; } |
    tee "$out/$2.out" | sed -u 's/^/    /'
  RC=$(cat "$out/$2.rc" 2>/dev/null || echo 1)
  SECS=$(( $(now) - _t0 ))
}

# new_in_tmp ROOT TAG: names in ROOT/tmp that were not in the list TAG.tmp0
new_in_tmp() {
  ls -A "$1/tmp" | sort >"$out/$2.tmp1"
  comm -13 "$out/$2.tmp0" "$out/$2.tmp1" | tr '\n' ' ' | sed 's/ $//'
}

fmt() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }

run_mode() {
  m=$1
  root=$base/ocgc-fresh-root-$m.$$
  ROOTS="$root"
  say "mode $m: a fresh root in $root"
  mkdir -m 0755 "$root"
  run_logged "unpacking the fresh root" tar -C "$root" --numeric-owner -xpzf "$tarball"
  # tar -p gives $root the mode "." has in the tarball (0700 in one cached
  # by an older version of this script): / of a real machine is 0755, and
  # without it no other user resolves any path (tests run as nobody).
  chmod 0755 "$root"
  [ "$(stat -c %a "$root")" = 755 ] || die "cannot make $root mode 0755"
  make_dev "$root"
  cat /etc/resolv.conf >"$root/etc/resolv.conf"
  mnt proc nosuid,nodev,noexec proc "$root/proc"
  # This machine's network settings go in, as resolv.conf does: the CAs its
  # administrator added (/usr/local/share/ca-certificates), such as a
  # TLS-intercepting proxy's, without which npm cannot reach its registry
  # from inside and make check-4.14 skips.  update-ca-certificates (from
  # ca-certificates, which git brings) keeps them through later installs.
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1 &&
      [ -x "$root/usr/sbin/update-ca-certificates" ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    run_logged "this machine's own CAs ($(ls /usr/local/share/ca-certificates/*.crt | wc -l)) into the root's trust" \
      in_root "$root" update-ca-certificates
  fi
  if [ "$m" = A ]; then
    mnt devpts newinstance,ptmxmode=0666,mode=0620,gid=5,nosuid,noexec devpts "$root/dev/pts"
    ln -s pts/ptmx "$root/dev/ptmx"
    mnt tmpfs nosuid,nodev,mode=1777 tmpfs "$root/dev/shm"
    mounted="/proc, /dev/pts, /dev/shm"
  else
    mounted="/proc only (no /dev/pts, no /dev/shm)"
  fi
  confine=
  if [ "$m" = C ]; then
    command -v setpriv >/dev/null 2>&1 || die "mode C needs setpriv (util-linux)"
    confine="setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin --"
    in_root "$root" sh -c 'unshare -m true' 2>/dev/null &&
      die "mode C: unshare still works with CAP_SYS_ADMIN dropped"
    mounted="$mounted; no namespaces (unshare denied: no CAP_SYS_ADMIN)"
  fi
  in_root "$root" sh -c ': >/dev/null' 2>/dev/null ||
    die "device nodes do not work under $base (mounted nodev?): set OCGC_FRESH_WORK"
  say "mounted: $mounted"

  case $repo in
    *://*|*@*:*) src=$repo ;;
    *)
      git clone -q --bare "$repo" "$root/srv/ocgc.git" >>"$log" 2>&1 ||
        die "git clone --bare $repo failed (see $log)"
      src=/srv/ocgc.git ;;
  esac
  run_logged "git clone $src /root/ocgc (in the root, as root; / is mode $(stat -c %a "$root"), /root $(stat -c %a "$root/root"))" \
    in_root "$root" git clone -q "$src" /root/ocgc

  ls -A "$root/tmp" | sort >"$out/$m-demo.tmp0"
  say "mode $m: scripts/dev.sh demo"
  timed "$root" "$m-demo" "scripts/dev.sh demo"
  demo_rc=$RC; demo_s=$SECS
  demo_left=$(new_in_tmp "$root" "$m-demo")
  demo_procs=$(kill_inside "$root")
  say "mode $m: scripts/dev.sh demo: exit status $demo_rc after $(fmt "$demo_s")"
  [ -z "$demo_left" ] || say "mode $m: the demo left in /tmp: $demo_left"
  [ -z "$demo_procs" ] || say "mode $m: the demo left processes running:$demo_procs"
  if [ "$demo_rc" -ne 0 ] || [ -n "$demo_left" ] || [ -n "$demo_procs" ]; then failed=1; fi

  ls -A "$root/tmp" | sort >"$out/$m-check.tmp0"
  say "mode $m: scripts/dev.sh check"
  timed "$root" "$m-check" "scripts/dev.sh check"
  check_rc=$RC; check_s=$SECS
  check_line=$(tail -n 1 "$out/$m-check.out")
  check_left=$(new_in_tmp "$root" "$m-check")
  check_procs=$(kill_inside "$root")
  say "mode $m: scripts/dev.sh check: exit status $check_rc after $(fmt "$check_s") ($check_line)"
  [ -z "$check_left" ] || say "mode $m: the check left in /tmp: $check_left"
  [ -z "$check_procs" ] || say "mode $m: the check left processes running:$check_procs"
  if [ "$check_rc" -ne 0 ] || [ -n "$check_left" ] || [ -n "$check_procs" ]; then failed=1; fi

  # dev.sh's own step times, for the README
  grep -h '^==> .*(\(done\|[0-9]\)' "$out/$m-demo.out" "$out/$m-check.out" >"$out/$m-steps.txt" || :
  printf '| %s | %s | exit %s, %s | exit %s, %s (%s) |\n' "$m" "$mounted" \
    "$demo_rc" "$(fmt "$demo_s")" "$check_rc" "$(fmt "$check_s")" "$check_line" >>"$summary"

  cp -a "$root/root/ocgc/_build/logs" "$out/$m-demo-logs" 2>/dev/null || :
  cp -a "$root/root/ocgc/_build-check/logs" "$out/$m-check-logs" 2>/dev/null || :
  cp "$root/root/ocgc/_build-check/test-suite.log" "$out/$m-test-suite.log" 2>/dev/null || :
  cleanup
  ROOTS=
  confine=
}

say "cloning $repo; results in $out"
for m in $modes; do run_mode "$m"; done

say "summary ($summary):"
cat "$summary"
if [ "$failed" -ne 0 ]; then
  say "FAILED: see the outputs in $out"
  exit 1
fi
say "both commands exited 0 in every mode"
