#!/bin/sh
# dump_agree.sh - `ocgc dump`'s cause lines and its agg.* lines agree on
# every file: both come from libocgc's collection stream, so
# each cause.KIND.CAUSE equals agg.cause.KIND.CAUSE.count, and
# cause.KIND.none (no cause claimed) equals agg.cause.KIND.unknown.count,
# with a key missing on one side counted as 0.  Over the stock OCaml 5.2
# fixtures (tests/fixtures/ocaml5.2), the hostile corpus
# (tests/fixtures/hostile: most are refused at open, which passes when no
# cause line is printed) and the ring an ocgc program leaves at its exit
# (one whose collections have causes of several kinds: explicit Gc calls
# and full minor heaps).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
command -v xz >/dev/null 2>&1 || hard_error "xz is needed to unpack the fixtures"

# agree TAG FILE: dump FILE into TAG.dump; if dump read it, its cause lines
# and its agg.* cause counts must be equal.  READ: 1 if compared, else 0.
agree() {
  READ=0
  "$OCGC" dump "$2" >"$WORK/$1.dump" 2>"$WORK/$1.err"
  _rc=$?
  if test $_rc -ne 0; then
    check_false "$1: no cause lines from a dump that failed ($_rc)" \
      grep -q '^cause\.' "$WORK/$1.dump"
    return
  fi
  READ=1
  _bad=`awk '
    $1 ~ /^cause\./ { k = substr($1, 7); sub(/\.none$/, ".unknown", k); d[k] = $2 }
    $1 ~ /^agg\.cause\..*\.count$/ { k = substr($1, 11); sub(/\.count$/, "", k); a[k] = $2 }
    END { for (k in d) if (d[k] + 0 != a[k] + 0) printf "%s=%s/agg=%s ", k, d[k], a[k] + 0
          for (k in a) if (!(k in d) && a[k] + 0 != 0) printf "%s=0/agg=%s ", k, a[k] }
  ' "$WORK/$1.dump"`
  check_eq "$1: cause.* = agg.cause.*.count" none "${_bad:-none}"
}

for f in "$OCGC_SRCDIR"/tests/fixtures/ocaml5.2/*.events.xz; do
  t=`basename "$f" .events.xz`
  xz -dc "$f" >"$WORK/$t.events" || hard_error "cannot unpack $f"
  agree "stock-$t" "$WORK/$t.events"
  check_eq "stock $t: read" 1 "$READ"
  # no stop marks in a stock file: the rule says so
  check_eq "stock $t: pause rule" nesting "`dkey stock-$t agg.pause_rule`"
  rm -f "$WORK/$t.events"
done
check_gt "stock fixtures with collections" 0 \
  "`cat "$WORK"/stock-*.dump | grep -c '^cause\..*\.none [1-9]'`"

hostile=0
for f in "$OCGC_SRCDIR"/tests/fixtures/hostile/*.events.xz; do
  t=`basename "$f" .events.xz`
  xz -dc "$f" >"$WORK/h.events" || hard_error "cannot unpack $f"
  agree "h-$t" "$WORK/h.events"
  hostile=$((hostile + READ))
done
rm -f "$WORK/h.events"
say "hostile files read: $hostile"
check_gt "hostile files read and compared" 0 "$hostile"

if test "${OCGC_RUNTIME:-yes}" = yes; then
  compile_native causes ocgc_stubs.c ocgc_test.ml cause_explicit.ml
  run_ok live ./causes
  ring_of live
  agree live "$RING"
  check_eq "live: read" 1 "$READ"
  check_gt "live: caused minor collections" 0 \
    "`grep -c '^cause\.minor\.[a-z_]* [1-9]' "$WORK/live.dump"`"
  check_dkey live cause.minor.none 0
fi
finish
