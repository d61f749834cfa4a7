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
#                          tests/cmd/quickstart_demo.sh runs it
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

. "$top/scripts/steps.sh"

# A step failed: stop (`check` still ends with its count line).
failed_step() {
  if [ "$cmd" = check ]; then echo "0 passed, 1 failed, 0 skipped"; fi
  exit 1
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
  # npm (make check-4.14 fetches OCaml 4.14.1's source with it) may come
  # from another package than Debian's, such as NodeSource's nodejs, which
  # Debian's npm would conflict with: any npm will do.
  n=$((n + 1))
  command -v npm >/dev/null 2>&1 || missing="$missing npm"
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
# variant, run it and attach BUILDDIR's ocgc to it, then stop it: it runs
# until told (a stop file), not for a fixed time, which a loaded machine
# outlasted before the report began ("no such process"); 120 s at most.
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
  say "running it while ocgc watches (its ring: $work/rings/<pid>.events)"
  OCAML_RUNTIME_EVENTS_DIR="$work/rings" "$work/workload" 120 "$work/stop" >"$work/out" 2>"$work/err" &
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
  : >"$work/stop"
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

# suite TITLE NAME DIR TARGET: make -C $b TARGET, printing each check's
# result by name as its test ends (TAP: tests/tap.sh); adds the counts of
# checks in DIR/test-suite.log's summary (suite_count) to pass, fail and
# skip (a target that exits 77 before any test, as check-4.14 does when a
# registry is unreachable, counts one skip).  Returns make's status.
suite() {
  _title=$1; _name=$2; _dir=$3; _target=$4
  say "$_title"
  _t0=$(now)
  _log=$logs/$(echo "$_target" | tr -c 'a-z0-9.\n' '-').log
  rm -f "$_log.rc" "$_dir/test-suite.log"
  { make -C "$b" -j"$jobs" "$_target" 2>&1 </dev/null; echo $? >"$_log.rc"; } |
    tee "$_log" |
    { grep --line-buffered -E '^((PASS|FAIL|SKIP|ERROR|XPASS|XFAIL): |==> )' || :; } |
    sed -u 's/^/    /'
  _st=$(cat "$_log.rc" 2>/dev/null || echo 1)
  _p=0; _f=0; _e=0; _s=0
  if [ -f "$_dir/test-suite.log" ]; then
    _p=$(suite_count "$_dir/test-suite.log" PASS)
    _f=$(suite_count "$_dir/test-suite.log" FAIL)
    _e=$(suite_count "$_dir/test-suite.log" ERROR)
    _s=$(suite_count "$_dir/test-suite.log" SKIP)
  elif grep -q '^==> .*: SKIP: ' "$_log"; then
    _s=1
  fi
  _f=$((${_f:-0} + ${_e:-0}))
  if [ "$_st" -ne 0 ]; then
    if [ "$_f" -eq 0 ]; then
      tail -n 30 "$_log" | sed 's/^/    /'
      _f=1
    fi
    for t in $(sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' "$_log" | sort -u); do
      say "the end of ${t%.*}.log:"
      tail -n 25 "$_dir/${t%.*}.log" 2>/dev/null | sed 's/^/    /'
    done
    say "the whole output: $_log; each test's log: $_dir/tests/.../NAME.log"
  fi
  _n=$(sed -n 's/^\(PASS\|FAIL\|SKIP\|ERROR\|XFAIL\|XPASS\): \([^ ]*\).*/\2/p' "$_log" |
    sort -u | wc -l)
  say "$_name: ${_p:-0} checks passed, $_f failed, ${_s:-0} skipped, in $_n tests ($(took "$_t0"))"
  pass=$((pass + ${_p:-0})); fail=$((fail + _f)); skip=$((skip + ${_s:-0}))
  return "$_st"
}

# distcheck_failures: after a failed `make distcheck`, the name and the end
# of the log of each test that failed in the tarball's own build (left in
# place by distcheck when it fails).
distcheck_failures() {
  _sub=$(ls -d "$b"/ocgc-*/_build/sub 2>/dev/null | head -n 1)
  [ -n "$_sub" ] || return 0
  for t in $(sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' "$logs/distcheck.log" | sort -u); do
    say "distcheck: ${t} failed; the end of its log:"
    tail -n 25 "$_sub/${t%.*}.log" 2>/dev/null | sed 's/^/    /'
  done
}

check() {
  b=$top/_build-check
  [ -n "$logs" ] || logs=$b/logs
  mkdir -p "$logs"
  t_all=$(now)
  deps
  build "$b" --enable-sanitizers

  # The OCaml 5 roots before the suite that uses them (tests/ocaml5/
  # ocaml5*.sh run on each); `make ocaml5-root` and `make ocaml54-root`
  # say in one line why when they cannot.
  step "a Debian trixie root with stock OCaml 5.3, for the OCaml 5 tests (make ocaml5-root)" \
    "$logs/ocaml5-root.log" make -C "$b" ocaml5-root || failed_step
  sed -n 's/^\(ocaml5-root: skipped.*\)/    \1/p; s/^\(.*SKIP.*\)/    \1/p' "$logs/ocaml5-root.log"
  step "a Debian forky root with stock OCaml 5.4, for the OCaml 5 tests (make ocaml54-root)" \
    "$logs/ocaml54-root.log" make -C "$b" ocaml54-root || failed_step
  sed -n 's/^\(ocaml5-root: skipped.*\)/    \1/p; s/^\(.*SKIP.*\)/    \1/p' "$logs/ocaml54-root.log"

  pass=0; fail=0; skip=0
  status=0
  suite "make check (ASan/UBSan; each test's result as it ends, its log beside it in $b)" \
    "make check" "$b" check || status=1
  if [ "$status" -eq 0 ]; then
    # 4.14.1 built from npm's source (cached in $b/ocaml-4.14.1), ocgc
    # configured against it, its integration suite; a skip when npm or
    # Debian's archive is unreachable
    suite "make check-4.14 (OCaml 4.14.1 from source, cached in $b/ocaml-4.14.1; the integration suite in $b/check-4.14)" \
      "make check-4.14" "$b/check-4.14" check-4.14 || status=1
  else
    say "make check-4.14: not run, because make check failed (counted as skipped below)"
    skip=$((skip + 1))
  fi

  if [ "$status" -eq 0 ]; then
    if step "make distcheck (the tarball builds, passes make check, installs and uninstalls)" \
        "$logs/distcheck.log" make -C "$b" -j"$jobs" distcheck; then
      pass=$((pass + 1))
    else
      status=1
      fail=$((fail + 1))
      distcheck_failures
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
