#!/bin/sh
# dev.sh - the two quick-start commands (README.md), for a fresh Debian 12.
#
#   scripts/dev.sh demo    install what is missing, build into _build/, run
#                          the bundled workload on the patched runtime and
#                          attach ocgc to it
#   scripts/dev.sh check   install what is missing, build into _build-check/
#                          (ASan/UBSan), run every test suite, then
#                          `make distcheck`, then build, test and install a
#                          reader-only tree (--disable-runtime, no OCaml on
#                          PATH) in _build-reader/; the last line is
#                          "N passed, N failed, N skipped" (.ci/run)
#   scripts/dev.sh deps    only install the Debian packages
#   scripts/dev.sh demo-run BUILDDIR
#                          only the demo's last part (compile the workload,
#                          run it, attach ocgc), against a build that exists;
#                          tests/integration/quickstart_demo.sh runs it
#
# Output: one line per step with the time it took, and the figures the demo
# shows.  What the tools say goes into log files (BUILDDIR/logs/*.log, or
# $OCGC_DEV_LOGS/*.log if set); when a step fails, the end of its log and
# the log's path are printed.
# Builds go to _build/ and _build-check/, never into the source tree itself.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
cmd=${1:-}
logs=${OCGC_DEV_LOGS:-}

say() { printf '==> %s\n' "$*"; }

now() { date +%s; }
# took T0: the time since T0 (seconds since the epoch), for people
took() {
  _s=$(( $(now) - $1 ))
  if [ "$_s" -ge 60 ]; then printf '%d min %02d s' $((_s / 60)) $((_s % 60))
  else printf '%d s' "$_s"; fi
}

# A step failed: stop (`check` still ends with its count line).
failed_step() {
  if [ "$cmd" = check ]; then echo "0 passed, 1 failed, 0 skipped"; fi
  exit 1
}

# step TITLE LOG COMMAND...: run COMMAND (an external command: the shell's
# `set -e` does not reach into functions called here) with its output in
# LOG, and print TITLE with the time it took.  On failure print the end of
# LOG and its path, and return 1.
step() {
  _title=$1; _log=$2; shift 2
  printf '==> %s ... ' "$_title"
  _t0=$(now)
  _rc=0
  "$@" >"$_log" 2>&1 </dev/null || _rc=$?
  if [ "$_rc" -eq 0 ]; then
    printf 'done (%s)\n' "$(took "$_t0")"
    return 0
  fi
  printf 'FAILED (exit status %s, after %s)\n' "$_rc" "$(took "$_t0")"
  tail -n 30 "$_log" | sed 's/^/    /'
  say "the whole log: $_log"
  return 1
}

# ---- Debian packages ------------------------------------------------------------

deps() {
  missing=
  n=0
  for p in $(grep -v '^#' "$top/scripts/debian-packages.txt"); do
    n=$((n + 1))
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
  done
  if [ -z "$missing" ]; then say "Debian packages: all $n present"; return 0; fi
  sudo=
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      say "missing Debian packages:$missing"
      say "run this as root, or install sudo, or install them yourself (apt-get install$missing)"
      failed_step
    fi
    sudo=sudo
    sudo -v || failed_step   # asks for the password here, not inside a log
  fi
  step "apt-get update" "$logs/apt-update.log" $sudo apt-get update || failed_step
  # shellcheck disable=SC2086
  step "apt-get install: $(echo $missing | wc -w) of the $n packages of scripts/debian-packages.txt" \
    "$logs/apt-install.log" \
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing \
    || failed_step
}

# ---- building ------------------------------------------------------------------------

# build DIR [configure args...]
build() {
  dir=$1; shift
  # aclocal wants m4/ (ACLOCAL_AMFLAGS = -I m4), which git does not keep empty.
  mkdir -p "$top/m4"
  if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
    step "autoreconf" "$logs/autoreconf.log" env -C "$top" autoreconf -fi || failed_step
  fi
  mkdir -p "$dir"
  if [ ! -f "$dir/Makefile" ]; then
    step "configure${*:+ $*}" "$logs/configure.log" env -C "$dir" "$top/configure" "$@" \
      || failed_step
  fi
  step "make: libocgc and the ocgc command" "$logs/make-ocgc.log" \
    make -C "$dir" -j"$jobs" libocgc.la tools/ocgc || failed_step
  step "make: the patched OCaml runtime (unpack, OCaml's configure, runtime/)" \
    "$logs/make-runtime.log" make -C "$dir" -j"$jobs" || failed_step
}

# ---- demo ---------------------------------------------------------------------------

demo_cleanup() {
  if [ -n "${pid:-}" ]; then
    kill "$pid" 2>/dev/null || :
    wait "$pid" 2>/dev/null || :
  fi
  if [ -n "${work:-}" ]; then rm -rf "$work"; fi
}

# demo_run BUILDDIR: compile the workload against BUILDDIR's runtime
# variant, run it for 12 s and attach BUILDDIR's ocgc to it.
demo_run() {
  b=$1
  ocgc=$b/tools/ocgc
  if [ ! -x "$ocgc" ] || [ ! -f "$b/runtime_patch/stage/libasmrun_ocgc.a" ]; then
    say "$b holds no build of ocgc: run 'scripts/dev.sh demo'"
    exit 1
  fi
  [ -n "$logs" ] || logs=$b/logs
  mkdir -p "$logs"
  t_run=$(now)
  pid=
  work=
  trap 'demo_cleanup' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  work=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-demo.XXXXXX")
  cp "$top/examples/workload.ml" "$work/"
  step "compiling examples/workload.ml with the system ocamlopt, -runtime-variant _ocgc" \
    "$logs/demo-compile.log" \
    env -C "$work" ocamlfind ocamlopt -package unix -linkpkg -I "$b/runtime_patch/stage" \
      -runtime-variant _ocgc workload.ml -o workload || exit 1
  mkdir -m 700 "$work/rings"
  say "running it for 12 s (its ring: $work/rings/<pid>.events)"
  OCAML_RUNTIME_EVENTS_DIR="$work/rings" "$work/workload" 12 >"$work/out" 2>"$work/err" &
  pid=$!
  # The ring appears at the program's first collection.
  n=0
  while [ ! -e "$work/rings/$pid.events" ] && [ "$n" -lt 100 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.05
    n=$((n + 1))
  done
  say "ocgc ls --no-default-dirs --dir $work/rings"
  "$ocgc" ls --no-default-dirs --dir "$work/rings"
  say "ocgc stat $pid 1s 6   (a row per second, like jstat -gcutil)"
  "$ocgc" stat "$pid" 1s 6
  say "ocgc report $pid --duration 3s"
  "$ocgc" report "$pid" --duration 3s
  rc=0
  wait "$pid" || rc=$?
  pid=
  if [ "$rc" -ne 0 ]; then
    say "the workload failed (exit status $rc): $(cat "$work/err")"
    exit 1
  fi
  say "the program said: $(cat "$work/out")"
  say "ocgc's counts equal the program's own Gc.quick_stat (make check proves it); see 'ocgc --help'"
  say "the run took $(took "$t_run")"
}

demo() {
  b=$top/_build
  [ -n "$logs" ] || logs=$b/logs
  mkdir -p "$logs"
  t_all=$(now)
  deps
  build "$b"
  demo_run "$b"
  say "demo: done in $(took "$t_all"); logs in $logs"
  say "to install ocgc, libocgc, the runtime variant and the man page: cd _build && sudo make install"
}

# ---- check ---------------------------------------------------------------------------

# check_reader DIR: a host that only reads rings builds, tests and installs
# libocgc and ocgc with configure --disable-runtime and no OCaml at all: the
# OCaml tools are shadowed by commands that fail, so that any use of them
# fails the step.
check_reader() {
  _d=$1
  _trap=$_d/no-ocaml
  rm -rf "$_d"
  mkdir -p "$_trap"
  for _t in ocaml ocamlc ocamlopt ocamlfind ocamlrun ocamldep ocamlmklib; do
    printf '#!/bin/sh\necho "%s: called in a --disable-runtime build" >&2\nexit 127\n' "$_t" \
      >"$_trap/$_t"
    chmod +x "$_trap/$_t"
  done
  step "reader-only build (configure --disable-runtime, no OCaml on PATH): make, make check, make install" \
    "$logs/reader.log" env PATH="$_trap:$PATH" sh -c '
      cd "$1" && "$2/configure" --disable-runtime && make -j"$3" && make -j"$3" check &&
      make install DESTDIR="$1/dest" && test -x "$1/dest/usr/local/bin/ocgc" &&
      ! test -e "$1/dest/usr/local/bin/ocamlrun_ocgc"' sh "$_d" "$top" "$jobs"
}

check() {
  b=$top/_build-check
  [ -n "$logs" ] || logs=$b/logs
  mkdir -p "$logs"
  t_all=$(now)
  deps
  build "$b" --enable-sanitizers

  say "make check (ASan/UBSan; each test's result as it ends, its log beside it in $b)"
  t0=$(now)
  rm -f "$logs/check.rc"
  { make -C "$b" -j"$jobs" check 2>&1 </dev/null; echo $? >"$logs/check.rc"; } |
    tee "$logs/check.log" |
    { grep --line-buffered -E '^(PASS|FAIL|SKIP|ERROR|XPASS|XFAIL): ' || :; } |
    sed -u 's/^/    /'
  status=$(cat "$logs/check.rc" 2>/dev/null || echo 1)
  suite=$b/test-suite.log
  pass=0; fail=0; err=0; skip=0
  if [ -f "$suite" ]; then
    pass=$(sed -n 's/^# PASS: *//p' "$suite"); fail=$(sed -n 's/^# FAIL: *//p' "$suite")
    err=$(sed -n 's/^# ERROR: *//p' "$suite"); skip=$(sed -n 's/^# SKIP: *//p' "$suite")
    pass=${pass:-0}; fail=${fail:-0}; err=${err:-0}; skip=${skip:-0}
  fi
  fail=$((fail + err))
  if [ "$status" -ne 0 ]; then
    if [ "$fail" -eq 0 ]; then
      # make check failed before running the tests (a build error)
      tail -n 30 "$logs/check.log" | sed 's/^/    /'
      fail=1
    fi
    for t in $(sed -n 's/^\(FAIL\|ERROR\): //p' "$logs/check.log"); do
      say "the end of ${t%.*}.log:"
      tail -n 25 "$b/${t%.*}.log" 2>/dev/null | sed 's/^/    /'
    done
    say "the whole output: $logs/check.log; each test's log: $b/tests/.../NAME.log"
  fi
  say "make check: $pass passed, $fail failed, $skip skipped ($(took "$t0"))"

  if [ "$status" -eq 0 ]; then
    if step "make distcheck (the tarball builds, passes make check, installs and uninstalls)" \
        "$logs/distcheck.log" make -C "$b" -j"$jobs" distcheck; then
      pass=$((pass + 1))
    else
      status=1
      fail=$((fail + 1))
    fi
  else
    say "make distcheck: not run, because make check failed (counted as skipped below)"
    skip=$((skip + 1))
  fi
  if check_reader "$top/_build-reader"; then
    pass=$((pass + 1))
  else
    status=1
    fail=$((fail + 1))
  fi
  say "check: done in $(took "$t_all"); logs in $logs"
  echo "$pass passed, $fail failed, $skip skipped"
  return "$status"
}

case "$cmd" in
  deps) [ -n "$logs" ] || logs=$top/_build/logs; mkdir -p "$logs"; deps ;;
  demo) demo ;;
  check) check ;;
  demo-run)
    [ $# -eq 2 ] || { echo "usage: scripts/dev.sh demo-run BUILDDIR" >&2; exit 2; }
    demo_run "$(cd "$2" && pwd)" ;;
  *) echo "usage: scripts/dev.sh demo|check|deps|demo-run BUILDDIR" >&2; exit 2 ;;
esac
