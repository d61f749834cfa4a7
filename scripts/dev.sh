#!/bin/sh
# dev.sh - the two quick-start commands (README.md), for a fresh Debian 12.
#
#   scripts/dev.sh demo    install what is missing, build, run the bundled
#                          workload on the patched runtime and show its ring
#   scripts/dev.sh check   install what is missing, build (ASan/UBSan), run
#                          every test suite, then `make distcheck`
#   scripts/dev.sh deps    only install the Debian packages
#
# Builds go to _build/ (demo) and _build-check/ (check), never into the
# source tree itself.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*"; }

deps() {
  missing=
  for p in $(grep -v '^#' "$top/scripts/debian-packages.txt"); do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
  done
  if [ -z "$missing" ]; then say "Debian packages: all present"; return 0; fi
  say "installing:$missing"
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

# build DIR [configure args...]
build() {
  dir=$1; shift
  if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
    say "autoreconf"
    (cd "$top" && autoreconf -fi >/dev/null)
  fi
  mkdir -p "$dir"
  if [ ! -f "$dir/Makefile" ]; then
    say "configure $*"
    (cd "$dir" && "$top/configure" "$@" >/dev/null)
  fi
  say "make (libocgc, ocgc, patched OCaml runtime)"
  make -C "$dir" -j"$jobs" >/dev/null
}

demo() {
  deps
  build "$top/_build"
  b=$top/_build
  work=$(mktemp -d)
  trap 'kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
  say "compiling examples/workload.ml with the system ocamlopt, -runtime-variant _ocgc"
  cp "$top/examples/workload.ml" "$work/"
  (cd "$work" && ocamlfind ocamlopt -package unix -linkpkg -I "$b/runtime_patch/stage" \
     -runtime-variant _ocgc workload.ml -o workload 2>/dev/null)
  mkdir -m 700 "$work/rings"
  ocgc=$b/tools/ocgc
  say "running it for 12 s (its ring: $work/rings/<pid>.events)"
  OCAML_RUNTIME_EVENTS_DIR="$work/rings" "$work/workload" 12 > "$work/out" &
  pid=$!
  sleep 0.5
  say "ocgc ls"
  "$ocgc" ls --dir "$work/rings" --no-default-dirs
  say "ocgc stat $pid 1s 6   (a row per second, like jstat -gcutil)"
  "$ocgc" stat "$pid" 1s 6
  say "ocgc report $pid --duration 3s"
  "$ocgc" report "$pid" --duration 3s
  wait "$pid" || true
  say "the program said: $(cat "$work/out")"
  say "ocgc's counts equal the program's own Gc.quick_stat (make check proves it); see 'ocgc --help'"
}

check() {
  deps
  build "$top/_build-check" --enable-sanitizers
  say "make check"
  status=0
  make -C "$top/_build-check" -j"$jobs" check || status=$?
  log=$top/_build-check/test-suite.log
  if [ -f "$log" ]; then
    pass=$(sed -n 's/^# PASS: *//p' "$log"); fail=$(sed -n 's/^# FAIL: *//p' "$log")
    err=$(sed -n 's/^# ERROR: *//p' "$log"); skip=$(sed -n 's/^# SKIP: *//p' "$log")
    [ "$status" -eq 0 ] || cat "$log"
    if [ "$status" -eq 0 ]; then
      say "make distcheck"
      make -C "$top/_build-check" -j"$jobs" distcheck >"$top/_build-check/distcheck.log" 2>&1 \
        || { tail -n 60 "$top/_build-check/distcheck.log"; status=1; fail=$((${fail:-0} + 1)); }
    fi
    echo "${pass:-0} passed, $((${fail:-0} + ${err:-0})) failed, ${skip:-0} skipped"
  fi
  return "$status"
}

case "${1:-}" in
  deps) deps ;;
  demo) demo ;;
  check) check ;;
  *) echo "usage: scripts/dev.sh demo|check|deps" >&2; exit 2 ;;
esac
