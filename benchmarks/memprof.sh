# memprof.sh - what ocgc's allocation sampling costs (make bench): the same
# binaries with sampling off (the ring on, as in production), at Go's
# default rate (512 KiB, OCGC_MEMPROF=on), at ten times it (51 KiB), and
# with the program's own Gc.Memprof at 512 KiB with OCaml callbacks that
# keep each sample's call stack until it dies (memtrace's approach;
# benchmarks/memprof_cb.ml, linked into every binary and idle unless
# asked).  CPU time: BENCH_MP_ROUNDS alternating rounds, each configuration's
# median over off's and the range of the per-round ratios; instructions:
# one callgrind run per configuration, on - off, and per sample ocgc took.  Prints
# figures, never fails.
#
# Set by bench.am: OCGC_STAGE OCAMLFIND BENCH_SRCDIR CPUTIME OCGC_BUILDDIR
# Knobs: BENCH_MP_ROUNDS=7, BENCH_MP_SCALE=1, BENCH_CALLGRIND=1

ROUNDS=${BENCH_MP_ROUNDS:-7}
SCALE=${BENCH_MP_SCALE:-1}
DO_CG=${BENCH_CALLGRIND:-1}
case $ROUNDS in ''|*[!0-9]*) ROUNDS=7 ;; esac
say() { printf '%s\n' "$*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-mpbench.XXXXXX" 2>/dev/null) || { say "n/a: no work folder"; exit 0; }
trap 'rm -rf "$WORK"' EXIT
mkdir -m 700 "$WORK/rings"
TESTS_OCAML=$BENCH_SRCDIR/../tests/ocaml
cp "$BENCH_SRCDIR/memprof_cb.ml" "$BENCH_SRCDIR/alloc.ml" "$BENCH_SRCDIR/promote.ml" \
  "$TESTS_OCAML/ocgc_test.ml" "$TESTS_OCAML/binary_trees.ml" "$WORK/" 2>/dev/null || { say "n/a: sources missing"; exit 0; }
for p in alloc promote binary_trees; do
  (cd "$WORK" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
     -runtime-variant _ocgc memprof_cb.ml ocgc_test.ml "$p.ml" -o "$p") >"$WORK/$p.log" 2>&1 ||
    { say "n/a: $p did not build: `tail -n 3 "$WORK/$p.log"`"; exit 0; }
done

# workload -> program and argument (runs of about half a second at scale 1)
wl_cmd() {
  case $1 in
  alloc) echo "alloc `awk -v s="$SCALE" 'BEGIN { print int(500000 * s) }'`" ;;
  promote) echo "promote `awk -v s="$SCALE" 'BEGIN { print int(800000 * s) }'`" ;;
  binary_trees) echo "binary_trees 18" ;;
  esac
}
wl_cg_cmd() {
  case $1 in alloc) echo "alloc 25000" ;; promote) echo "promote 300000" ;; binary_trees) echo "binary_trees 14" ;; esac
}
CONFIGS="off go x10 gcmp"
# the environment of a configuration: values of one length, so that the
# process layout is the same in all four
cfg_env() {
  case $1 in
  off) echo "BENCH_PAD1=000000 BENCH_PAD2=000000" ;;
  go) echo "OCGC_MEMPROF=524288 BENCH_PAD2=000000" ;;
  x10) echo "OCGC_MEMPROF=052428 BENCH_PAD2=000000" ;;
  gcmp) echo "BENCH_PAD1=000000 BENCH_GC_MEMPROF=524288" ;;
  esac
}
cfg_label() {
  case $1 in
  off) echo "sampling off (ring on)" ;;
  go) echo "ocgc at 512 KiB (Go's rate)" ;;
  x10) echo "ocgc at 51 KiB (10x)" ;;
  gcmp) echo "Gc.Memprof + callbacks at 512 KiB" ;;
  esac
}

if ! test -x "${CPUTIME:-}"; then say "n/a: no cputime helper"; exit 0; fi
say "CPU time, $ROUNDS alternating rounds; ratio to sampling off: median (min - max over rounds)"
say ""
say "| workload | `for c in $CONFIGS; do printf '%s | ' "$(cfg_label $c)"; done`"
say "|---|---|---|---|---|"
for w in alloc promote binary_trees; do
  set -- `wl_cmd $w`
  prog=$1 arg=$2
  r=1
  while test $r -le $ROUNDS; do
    for c in $CONFIGS; do
      t=`cd "$WORK" && env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" $(cfg_env $c) "$CPUTIME" -q "./$prog" $arg 2>>"$WORK/$w.err" | awk '{ print $1 + $2 }'`
      echo "$r $c ${t:-0}" >>"$WORK/$w.cpu"
    done
    r=$((r + 1))
  done
  row=`awk -v cfgs="$CONFIGS" '
    { t[$1, $2] = $3; rounds[$1] = 1 }
    function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END {
      n = split(cfgs, c, " ")
      for (k = 1; k <= n; k++) {
        m = 0; lo = 1e9; hi = 0; delete a; delete b
        for (r in rounds) { m++; a[m] = t[r, c[k]]; q = t[r, "off"] > 0 ? t[r, c[k]] / t[r, "off"] : 0; b[m] = q; if (q < lo) lo = q; if (q > hi) hi = q }
        for (i = 1; i <= m; i++) bb[i] = b[i]
        if (c[k] == "off") printf "%.3f s | ", med(a, m) / 1e6
        else printf "%.4f (%.4f - %.4f) | ", med(bb, m), lo, hi
      }
    }' "$WORK/$w.cpu"`
  say "| $w | $row"
done

if test "$DO_CG" = 1 && command -v valgrind >/dev/null 2>&1; then
  say ""
  say "Instructions (callgrind, one run each, shorter inputs): on - off per sample taken"
  say ""
  say "| workload | off | ocgc 512 KiB: extra | samples | per sample | ocgc 51 KiB: extra | samples | per sample | Gc.Memprof 512 KiB: extra |"
  say "|---|---|---|---|---|---|---|---|---|"
  for w in alloc promote binary_trees; do
    set -- `wl_cg_cmd $w`
    prog=$1 arg=$2
    line="| $w"
    for c in off go x10 gcmp; do
      rm -f "$WORK/rings/"*
      ins=`cd "$WORK" && env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" OCAML_RUNTIME_EVENTS_PRESERVE=1 $(cfg_env $c) \
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "./$prog" $arg 2>&1 >/dev/null |
        awk '/Collected :/ { print $NF }'`
      samples=`"$OCGC_BUILDDIR/tools/ocgc" dump "$WORK/rings/"*.events 2>/dev/null | awk '$1 == "memprof.samples" { print $2 }'`
      if test $c = off; then off=${ins:-0}; line="$line | $off"
      elif test $c = gcmp; then line="$line | $((${ins:-0} - off))"
      else
        line="$line | $((${ins:-0} - off)) | ${samples:-0} | `awk -v d=$((${ins:-0} - off)) -v s="${samples:-0}" 'BEGIN { if (s > 0) printf "%.0f", d / s; else print "n/a" }'`"
      fi
    done
    say "$line |"
  done
fi
