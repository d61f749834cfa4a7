#!/bin/sh
# replay.sh - every input of the fuzz corpus (inputs libFuzzer found
# interesting; see fuzz_ring.c for their two forms), the hostile corpus and the
# OCaml 5.2 fixtures (cut to their first 64 KiB, which holds their header)
# through the fuzz target (standalone build, sanitizers on in CI): no
# crash, no sanitizer report.
set -u
bin="$OCGC_BUILDDIR/tests/fuzz/fuzz_replay"
test -x "$bin" || { echo "missing $bin"; exit 99; }
# (Not `exec` at the end: the trap must run to remove the folder.)
work=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-replay.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
trap 'exit 98' HUP INT TERM
n=0
for f in "$OCGC_SRCDIR"/tests/fixtures/hostile/*.xz; do
  n=$((n + 1))
  xz -dc "$f" > "$work/$n.events" || exit 99
done
for f in "$OCGC_SRCDIR"/tests/fuzz/corpus/*; do
  n=$((n + 1))
  cp "$f" "$work/$n.events" || exit 99
done
for f in "$OCGC_SRCDIR"/tests/fixtures/ocaml5.2/*.xz; do
  n=$((n + 1))
  xz -dc "$f" | head -c 65536 > "$work/$n.events"
done
echo "replaying $n files"
"$bin" "$work"/*.events
exit $?
