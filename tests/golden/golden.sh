#!/bin/sh
# golden.sh - what each reading command prints on a recorded ring, byte
# for byte: a change to the code that does not mean to change an output
# (a refactoring) must leave every record below as it is.
#
# Inputs: the stock OCaml 5.2 rings of tests/fixtures/ocaml5.2, the ring a
# real program wrote on the patched 4.13 runtime (tests/fixtures/ocgc4.13,
# which says how it was recorded) and a few hostile files, unpacked into a
# private folder; each case of tests/golden/cases runs one command there.
# A case's record (tests/golden/expected/CASE) is its standard output (an
# output over 64 KiB, and each written file, as its SHA-256 and size), its
# standard error and its exit status.
#
#   sh tests/golden/golden.sh            compare (run by make check)
#   sh tests/golden/golden.sh --write    remake the records; review the
#                                        diff (git diff tests/golden) and
#                                        say in the commit why it changed
# To see what an old build printed where a hash differs, run this script
# with OCGC set to the old build's tools/ocgc and --write into a copy.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

write=no
test "${1:-}" = --write && write=yes
GOLD="$OCGC_SRCDIR/tests/golden"
IN="$WORK/in"
mkdir -p "$IN" || hard_error "cannot make $IN"

# xz -d into a file keeps the fixtures sparse (up to 269 MB each).
unpack() {
  cp "$1" "$IN/$2.xz" && xz -d "$IN/$2.xz" || hard_error "cannot unpack $1"
}
for f in "$OCGC_SRCDIR"/tests/fixtures/ocaml5.2/*.events.xz \
         "$OCGC_SRCDIR"/tests/fixtures/ocgc4.13/*.events.xz; do
  b=${f##*/}; unpack "$f" "${b%.xz}"
done
for h in ocgc-all-zero ocgc-garbage-64 ocgc-ring-head-beyond-tail ocgc-ext-seq-odd; do
  unpack "$OCGC_SRCDIR/tests/fixtures/hostile/$h.events.xz" "$h.events"
done

# record NAME FILE...: the record of case NAME from $WORK/NAME.{out,err,rc}
# and the files it wrote.
hashed() { printf 'sha256 %s bytes %s\n' "`sha256sum <"$1" | cut -d' ' -f1`" "`wc -c <"$1" | tr -d ' '`"; }
record() {
  _n=$1; shift
  if test "`wc -c <"$WORK/$_n.out"`" -le 65536; then cat "$WORK/$_n.out"; else hashed "$WORK/$_n.out"; fi
  for _f in "$@"; do
    printf '## file %s: ' "$_f"
    if test -f "$IN/$_f"; then hashed "$IN/$_f"; else echo missing; fi
  done
  echo "## stderr"
  cat "$WORK/$_n.err"
  echo "## exit `cat "$WORK/$_n.rc"`"
}

# Each line of the cases file: NAME WRITTEN ARGS...  (WRITTEN: a file the
# command writes, or -; ARGS split at blanks, run in $IN).
n=0
while read -r name written args; do
  case $name in ''|'#'*) continue ;; esac
  n=$((n + 1))
  rm -f "$IN/$written"
  # shellcheck disable=SC2086
  (cd "$IN" && exec "$OCGC" $args >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null)
  echo $? >"$WORK/$name.rc"
  if test "$written" = -; then set --; else set -- "$written"; fi
  record "$name" "$@" >"$WORK/$name.rec"
  if test "$write" = yes; then
    cp "$WORK/$name.rec" "$GOLD/expected/$name" || hard_error "cannot write $GOLD/expected/$name"
    say "wrote expected/$name"
  elif cmp -s "$GOLD/expected/$name" "$WORK/$name.rec"; then
    check_true "ocgc $args prints what it printed" true
  else
    check_true "ocgc $args prints what it printed" false
    diff -u "$GOLD/expected/$name" "$WORK/$name.rec" | head -n 40
  fi
done <"$GOLD/cases"

# Every record has its case, so that a case dropped from the list is seen.
for e in "$GOLD"/expected/*; do
  b=${e##*/}
  check_true "expected/$b has a case" grep -q "^$b " "$GOLD/cases"
done
check_gt "cases run" 20 "$n"
finish
