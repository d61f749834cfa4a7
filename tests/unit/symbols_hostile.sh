#!/bin/sh
# symbols_hostile.sh - the symbolizer's memory is bounded whatever an ELF
# file claims: each hostile shape of elfgen.c (a header claiming 4 Mi
# sections, 16 Mi compressed line rows in one table and in 256, 8000 note
# sections over one region, 512 Ki symbols sharing a 1 KiB name) is named
# by `elfgen_cli read` (libocgc's ocgc_symbols_open_elf with its
# defaults) with a peak RSS under 256 MiB and the answer the shape allows.
# Before the bounds were checked ahead of libelf and libdw, these peaked at
# 1.1 GB, 1.7 GB, 0.5 GB, 0.5 GB and 1.1 GB.  The files are sparse or
# compressed: a few MiB of disk.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
cli=$OCGC_BUILDDIR/tests/unit/elfgen_cli
test -x "$cli" || hard_error "$cli is missing (make check builds it)"
# ASan keeps freed memory in a quarantine (256 MiB by default), which is
# not the symbolizer's: none here, so that the peak is what it allocates.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:detect_leaks=1"
export ASAN_OPTIONS
limit_kib=262144

# shape N TABLES EXPECTED-FUNCTION EXPECTED-ERR
one() {
  f="$WORK/$1-$2-$3.elf"
  check_true "$1 $2 $3: generated" "$cli" write "$1" "$2" "$3" "$f"
  out=`"$cli" read "$f"` || out=
  say "$1 $2 $3: $out"
  peak=`printf '%s\n' "$out" | sed -n 's/.* peak_kib=\([0-9]*\).*/\1/p'`
  ms=`printf '%s\n' "$out" | sed -n 's/.* ms=\([0-9]*\).*/\1/p'`
  check_lt "$1 $2 $3: peak KiB under $limit_kib" "${peak:-x}" "$limit_kib"
  check_eq "$1 $2 $3: function" "$4" "`printf '%s\n' "$out" | sed -n 's/.* function=\([^ ]*\) .*/\1/p'`"
  check_eq "$1 $2 $3: err" "$5" "`printf '%s\n' "$out" | sed -n 's/^err=\([-0-9]*\) .*/\1/p'`"
  say "$1 $2 $3: read in ${ms:-?} ms"
  rm -f "$f"
}

check_lt() { # check_lt WHAT ACTUAL LIMIT (integers)
  CHECKS=$((CHECKS + 1))
  if is_uint "$2" && test "$2" -lt "$3"; then pass "$1 = $2"; else fail "$1: got '$2'"; fi
}

long=Hostile.`printf '%1008s' '' | tr ' ' f`
# A section count past 8192: refused before libelf allocates for it.
one sections 4194304 0 '(none)' -4001
one lines 16777216 1 Hostile.f 0
one lines 16777216 256 Hostile.f 0
one notes 8000 0 Hostile.f 0
one notes 16384 0 '(none)' -4001
one names 524288 0 "$long" 0
finish
