#!/bin/sh
# replay.sh - every fuzz target's corpus (tests/fuzz/corpus/NAME/: inputs
# libFuzzer found interesting) through that target's standalone build
# (tests/fuzz/fuzz_NAME_replay, sanitizers on in CI): no crash, no
# sanitizer report, no broken invariant.  The ring target also gets the
# hostile corpus and the OCaml 5.2 fixtures (cut to their first 64 KiB,
# which holds their header).  A corpus without its program, or a program
# without its corpus, is an error of the build, not a skip.
set -u
fuzzdir="$OCGC_SRCDIR/tests/fuzz"
# (Not `exec` at the end: the trap must run to remove the folder.)
work=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-replay.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
trap 'exit 98' HUP INT TERM

for bin in "$OCGC_BUILDDIR"/tests/fuzz/fuzz_*_replay; do
  test -x "$bin" || continue
  t=${bin##*/fuzz_}
  t=${t%_replay}
  test -d "$fuzzdir/corpus/$t" || { echo "fuzz_$t has no corpus ($fuzzdir/corpus/$t)"; exit 99; }
done

status=0
targets=0
for dir in "$fuzzdir"/corpus/*/; do
  t=${dir%/}
  t=${t##*/}
  bin="$OCGC_BUILDDIR/tests/fuzz/fuzz_${t}_replay"
  test -x "$bin" || { echo "missing $bin"; exit 99; }
  targets=$((targets + 1))
  set --
  for f in "$dir"*; do
    test -f "$f" && set -- "$@" "$f"
  done
  test $# -gt 0 || { echo "$t: empty corpus $dir"; exit 99; }
  if test "$t" = ring; then
    n=0
    for f in "$OCGC_SRCDIR"/tests/fixtures/hostile/*.xz; do
      n=$((n + 1))
      xz -dc "$f" > "$work/$n.events" || exit 99
      set -- "$@" "$work/$n.events"
    done
    for f in "$OCGC_SRCDIR"/tests/fixtures/ocaml5.2/*.xz; do
      n=$((n + 1))
      xz -dc "$f" | head -c 65536 > "$work/$n.events"
      set -- "$@" "$work/$n.events"
    done
  fi
  echo "fuzz_$t: replaying $# inputs"
  "$bin" "$@" || { echo "fuzz_$t: FAILED (exit $?)"; status=1; }
done
test "$targets" -gt 0 || { echo "no corpus in $fuzzdir/corpus"; exit 99; }
exit $status
