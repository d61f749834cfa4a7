# memprof_lib.sh - reading a program's allocation profile in the
# memprof_*.sh tests (sourced after lib.sh): `ocgc dump --stacks` lines
# summed by the function of their innermost frame, named from the
# executable's symbols (nm), and the statistical bound the sums must meet.
#
# A test program prints "exe_base HEX": where its executable is mapped
# (the start of the mapping at file offset 0), so that a return address of
# a position-independent executable is found in nm's table.

# mp_dump TAG FILE: `ocgc dump --stacks FILE` into $WORK/TAG.dump.
mp_dump() {
  if ! "$OCGC" dump --stacks "$2" >"$WORK/$1.dump" 2>"$WORK/$1.dump.err"; then
    cat "$WORK/$1.dump.err"
    hard_error "ocgc dump --stacks $2 failed"
  fi
}

# mp_functions TAG EXE [BASE]: $WORK/TAG.fn, one line per function that
# holds an innermost frame: "NAME ALLOC_SAMPLES ALLOC_WORDS
# PROMOTED_SAMPLES PROMOTED_WORDS FREED_SAMPLES FREED_WORDS LIVE_SAMPLES
# LIVE_WORDS" (live: in use as of the last marking), from the rows
# of TAG's dump (custom rows, whose words are memory outside the heap, left
# out), the executable's base BASE, else the exe_base TAG's program printed.
mp_functions() {
  _base=${3:-`outkey "$1" exe_base`}
  test -n "$_base" || hard_error "$1: the program printed no exe_base"
  # A position-independent executable's symbols are offsets from its base.
  case `LC_ALL=C readelf -h "$2" | awk '$1 == "Type:" { print $2 }'` in
    DYN) ;;
    *) _base=0 ;;
  esac
  # (not the compilation units' markers, which share a function's address)
  LC_ALL=C nm --defined-only -n "$2" |
    awk '$2 ~ /^[Tt]$/ && $3 !~ /__code_(begin|end)$/ { print $1, $3 }' >"$WORK/$1.syms"
  awk -v base="$_base" '
    function hex(s,   i, c, v) {
      v = 0; s = tolower(s); sub(/^0x/, "", s)
      for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
      return v
    }
    FILENAME == ARGV[1] { n++; addr[n] = hex($1); name[n] = $2; next }
    $1 == "memprof.stack" && $3 != "custom" && $3 != "overflow" {
      split($0, kv, " "); fr = ""
      for (i in kv) {
        split(kv[i], p, "=")
        if (p[1] == "alloc" || p[1] == "promoted" || p[1] == "freed" || p[1] == "live") { split(p[2], c, ","); s[p[1]] = c[1]; w[p[1]] = c[2] }
        if (p[1] == "frames") fr = p[2]
      }
      split(fr, f, ","); pc = hex(f[1]) - hex(base) - 1
      lo = 1; hi = n; fn = "?"
      while (lo <= hi) { mid = int((lo + hi) / 2); if (addr[mid] <= pc) { fn = name[mid]; lo = mid + 1 } else hi = mid - 1 }
      A[fn] += s["alloc"]; AW[fn] += w["alloc"]; P[fn] += s["promoted"]; PW[fn] += w["promoted"]
      F[fn] += s["freed"]; FW[fn] += w["freed"]; L[fn] += s["live"]; LW[fn] += w["live"]
    }
    END { for (fn in A) printf "%s %d %d %d %d %d %d %d %d\n", fn, A[fn], AW[fn], P[fn], PW[fn], F[fn], FW[fn], L[fn], LW[fn] }
  ' "$WORK/$1.syms" "$WORK/$1.dump" >"$WORK/$1.fn"
}

# mp_rows TAG I [KINDS]: the I-th figure (1 samples, 2 words, 3 blocks
# x1024) of the allocated triples, summed over TAG's rows (every row, or
# those whose kind is not "custom" with KINDS=heap: memory in the heap).
mp_rows() {
  awk -v i="$2" -v heap="${3:-}" '
    $1 == "memprof.stack" && !(heap == "heap" && $3 == "custom") {
      for (f = 3; f <= NF; f++) if ($f ~ /^alloc=/) { split(substr($f, 7), c, ","); t += c[i] }
    }
    END { printf "%d\n", t }' "$WORK/$1.dump"
}

# mp_fn TAG PREFIX FIELD: FIELD (2..9, as mp_functions lists them) summed
# over the functions whose name starts with PREFIX (OCaml's names end in
# a stamp: camlMod__f_123).
mp_fn() {
  awk -v p="$2" -v f="$3" 'index($1, p) == 1 { t += $f } END { printf "%d\n", t }' "$WORK/$1.fn"
}

# mp_within WHAT ESTIMATE TRUE W: the estimate of TRUE words from samples
# taken with probability 1/W per word has a standard deviation of
# sqrt(TRUE * W) words; it must lie within 5 of them (a false failure once
# in 1.7 million checks).
mp_within() {
  CHECKS=$((CHECKS + 1))
  if awk -v e="$2" -v t="$3" -v w="$4" 'BEGIN { d = e - t; if (d < 0) d = -d; exit !(t > 0 && d <= 5 * sqrt(t * w)) }'; then
    pass "$1: $2 words estimated for $3 (5 sd = `awk -v t="$3" -v w="$4" 'BEGIN { printf "%d", 5 * sqrt(t * w) }'`)"
  else
    fail "$1: $2 words estimated for $3, more than 5 standard deviations (sqrt($3 x $4) each) away"
  fi
}

# mp_ratio WHAT MEASURED TRUE LO HI: MEASURED / TRUE within [LO, HI]
# (printed either way).
mp_ratio() {
  CHECKS=$((CHECKS + 1))
  _r=`awk -v m="$2" -v t="$3" 'BEGIN { if (t > 0) printf "%.3f", m / t; else print "inf" }'`
  if awk -v r="$_r" -v lo="$4" -v hi="$5" 'BEGIN { exit !(r != "inf" && r + 0 >= lo && r + 0 <= hi) }'; then
    pass "$1: $2 for $3, ratio $_r (within $4..$5)"
  else
    fail "$1: $2 for $3, ratio $_r (not within $4..$5)"
  fi
}
