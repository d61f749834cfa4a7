# ocaml5.sh - stock OCaml 5 beside the ocgc runtime in `make bench`
# (sourced by bench.sh after its work folders, wl_* helpers, prog_pkgs and
# $PROGS exist).
#
# The same workload sources (alloc.ml, promote.ml, bintree.ml, threads.ml:
# those of the chosen workloads, $PROGS) are compiled with stock
# OCaml 5, found and compiled exactly as the tests do it
# (tests/lib/ocaml5_lib.sh: $OCGC_OCAML5_BIN or OCaml 5 on PATH,
# else the trixie root at $OCGC_OCAML5_ROOT, else $OCGC_BUILDDIR/ocaml5-root,
# whose static binaries run here).  The library exits the shell when it
# finds nothing, so it runs in a subshell whose output says why.
#
# Two configurations of one binary:
#   o5off  OCAML_RUNTIME_EVENTS_STARX=1 (a variable of the same length that
#          OCaml 5 ignores, so the process layout is the same as o5on's)
#   o5on   OCAML_RUNTIME_EVENTS_START=1: runtime events on from the start,
#          OCaml 5's default ring (2^16 words per domain), overwritten when
#          full as in any real use
# Events per run are counted in a separate run of the same program and
# input with the ring preserved and large enough to hold them all
# (OCAMLRUNPARAM d=1,e=24: one domain's ring of 2^24 words; with the default
# 128 domains, OCaml 5.3 computes the file size in 32 bits and e=22 already
# gives a corrupt file); the count is deterministic (the same with any d and
# e that hold it), so it is that of the timed and callgrind runs too, for
# the single-threaded workloads (threads' collections depend a little on how
# its threads interleave).  The same dump gives the run's collections.
#
# Sets HAVE_O5 (1 or 0), WHY_O5 (why not) and O5_VERSION.

HAVE_O5=0
WHY_O5=
O5_VERSION=
O5_XPARAM=

# o5_setup: find OCaml 5 and build $WORK/PROG.o5 for each of $PROGS (with
# unix, and the packages prog_pkgs names: threads.posix for threads.ml)
o5_setup() {
  if test "${BENCH_OCAML5:-1}" = 0; then WHY_O5="skipped (BENCH_OCAML5=0)"; return; fi
  o5lib=${BENCH_SRCDIR%/benchmarks}/tests/lib/ocaml5_lib.sh
  if ! test -f "$o5lib"; then WHY_O5="$o5lib is missing"; return; fi
  (
    say() { printf '%s\n' "$*"; }
    hard_error() { say "error: $*"; exit 1; }
    . "$o5lib"
    say "version $OCAML5_VERSION ($OCAML5_MODE${OCAML5_ROOT:+ $OCAML5_ROOT})"
    # one program that does not build leaves the others' figures (its own
    # runs then fail the check and are n/a)
    for p in $PROGS; do
      (ocaml5_compile "$BENCH_SRCDIR/$p.ml" "$WORK/$p.o5" unix $(prog_pkgs "$p")) ||
        say "not built: $p"
    done
  ) >"$WORK/ocaml5.log" 2>&1
  o5st=$?
  O5_VERSION=$(sed -n 's/^version //p' "$WORK/ocaml5.log" | head -n 1)
  o5any=0
  for p in $PROGS; do
    if test -x "$WORK/$p.o5"; then o5any=1
    elif test $o5st = 0; then
      say "n/a (OCaml ${O5_VERSION:-5}, $p): $(grep -v '^compile ' "$WORK/ocaml5.log" | grep -v '^version ' | tail -n 3 | tr '\n' ' ')"
    fi
  done
  if test $o5st = 0 && test $o5any = 1; then
    HAVE_O5=1
  elif test $o5st = 77; then
    WHY_O5=$(sed -n 's/^skipped: //p' "$WORK/ocaml5.log" | head -n 1)
  else
    WHY_O5="building the workloads with OCaml ${O5_VERSION:-5} failed (exit $o5st):"
    WHY_O5="$WHY_O5 $(grep -v '^compile ' "$WORK/ocaml5.log" | tail -n 3 | tr '\n' ' ')"
  fi
}

# o5_run CFG WORKLOAD STEPS PREFIX...: like bench.sh's run, for o5off/o5on;
# O5_XPARAM is appended to OCAMLRUNPARAM (set for the counting runs only).
o5_run() {
  o5c=$1 o5w=$2 o5n=$3
  shift 3
  o5v=OCAML_RUNTIME_EVENTS_STARX
  test "$o5c" = o5on && o5v=OCAML_RUNTIME_EVENTS_START
  o5p=$(wl_param "$o5w")
  test -n "$O5_XPARAM" && o5p=${o5p:+$o5p,}$O5_XPARAM
  env -u CAMLRUNPARAM -u OCAML_RUNTIME_EVENTS_START -u OCAML_RUNTIME_EVENTS_PRESERVE \
    "$o5v=1" OCAML_RUNTIME_EVENTS_DIR="$EVDIR" OCAMLRUNPARAM="$o5p" \
    "$@" "$WORK/$(wl_prog "$o5w").o5" "$o5n"
}

# o5_count WORKLOAD STEPS TAG: events OCaml 5 writes in that run (read back
# from its preserved ring with `ocgc dump --ids 5.3`), or nothing (the
# reason in $WORK/WORKLOAD.o5count.err).  The dump is left in
# $WORK/WORKLOAD.o5dump.TAG only if the ring held the whole run.
o5_count() {
  rm -f "$EVDIR"/*.events "$WORK/$1.o5dump.$3"
  O5_XPARAM=d=1,e=24
  o5_run o5on "$1" "$2" env OCAML_RUNTIME_EVENTS_PRESERVE=1 >/dev/null 2>"$WORK/$1.o5count.err"
  O5_XPARAM=
  o5f=$(ls "$EVDIR"/*.events 2>/dev/null | head -n 1)
  if test -z "$o5f"; then echo "no ring file preserved" >>"$WORK/$1.o5count.err"; return; fi
  "$OCGC" dump --ids 5.3 "$o5f" >"$WORK/$1.o5dump" 2>>"$WORK/$1.o5count.err"
  rm -f "$EVDIR"/*.events
  o5lost=$(sed -n 's/^events\.lost_words //p' "$WORK/$1.o5dump")
  if test "${o5lost:-1}" != 0; then
    echo "the ring lost ${o5lost:-?} words: too small for this input" >>"$WORK/$1.o5count.err"
    return
  fi
  mv "$WORK/$1.o5dump" "$WORK/$1.o5dump.$3"
  sed -n 's/^events\.seen //p' "$WORK/$1.o5dump.$3" | head -n 1
}
