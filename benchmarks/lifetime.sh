# lifetime.sh - a process's start-to-exit (wall) time on each runtime: what
# the producer adds to a short program's life (the ring made at start, taken
# over and removed at exit) and to a forking one's (each child makes its own
# ring at its first collection and removes it at exit).  Run by `make bench`
# (bench.am sets the paths); prints figures, always exits 0.
#
# Workloads: "start" (benchmarks/lifetime.ml with no fork: start, allocate a
# little, exit) and "forks" (the same, forking LIFE_FORKS children one after
# the other, each collecting once).  Configurations, as in bench.sh: stock
# (the system runtime), off (-runtime-variant _ocgc with OCGC_DISABLE=1), on
# (the ring in a tmpfs folder), and stock OCaml 5 with runtime events off
# (o5off) and on (o5on), found as the tests find it.  Rounds alternate the
# configurations; each figure is the wall time of one run (cputime's
# wait4), and the ratios are paired per round.
#
# Set by bench.am:  OCAMLFIND OCGC_STAGE BENCH_SRCDIR CPUTIME OCGC_BUILDDIR
# Knobs:  LIFE_ROUNDS=40  LIFE_FORKS=20  BENCH_OCAML5=1 (0: no OCaml 5)

ROUNDS=${LIFE_ROUNDS:-40}
FORKS=${LIFE_FORKS:-20}
OCAMLFIND=${OCAMLFIND:-ocamlfind}
case $ROUNDS in ''|*[!0-9]*) ROUNDS=40 ;; esac
case $FORKS in ''|*[!0-9]*) FORKS=20 ;; esac
say() { printf '%s\n' "$*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-life.XXXXXX" 2>/dev/null) || { say "n/a: no work folder"; exit 0; }
EVBASE=/dev/shm
test -d /dev/shm && test -w /dev/shm || EVBASE=$WORK
EVDIR=$(mktemp -d "$EVBASE/ocgc-life-ev.XXXXXX" 2>/dev/null) || { EVDIR=$WORK/ev; mkdir -p "$EVDIR"; }
trap 'rm -rf "$WORK" "$EVDIR"' EXIT
trap 'exit 0' INT TERM HUP

test -x "${CPUTIME:-}" || { say "n/a: the cputime helper is missing"; exit 0; }
cp "$BENCH_SRCDIR/lifetime.ml" "$WORK/" || exit 0
if ! (cd "$WORK" && $OCAMLFIND ocamlopt -package unix -linkpkg lifetime.ml -o life.stock &&
      $OCAMLFIND ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" -runtime-variant _ocgc \
        lifetime.cmx -o life.ocgc) >"$WORK/build.log" 2>&1; then
  say "n/a: lifetime.ml did not build: $(tail -n 2 "$WORK/build.log" | tr '\n' ' ')"
  exit 0
fi
CONFIGS="stock off on"
o5lib=${BENCH_SRCDIR%/benchmarks}/tests/lib/ocaml5_lib.sh
if test "${BENCH_OCAML5:-1}" != 0 && test -f "$o5lib" && (
     say() { printf '%s\n' "$*"; }
     hard_error() { say "error: $*"; exit 1; }
     . "$o5lib"
     say "version $OCAML5_VERSION"
     ocaml5_compile "$WORK/lifetime.ml" "$WORK/life.o5" unix
   ) >"$WORK/o5.log" 2>&1 && test -x "$WORK/life.o5"; then
  CONFIGS="$CONFIGS o5off o5on"
  say "stock OCaml $(sed -n 's/^version //p' "$WORK/o5.log" | head -n 1) beside it"
else
  say "OCaml 5 figures skipped: $(grep -v '^compile ' "$WORK/o5.log" 2>/dev/null | tail -n 1)"
fi

# run CFG FORKS: one run under cputime; prints its wall time in us, or x.
# Every configuration sets variables of the same lengths.
run() {
  case $1 in
  stock) set -- "$2" life.stock OCGC_DISABLE=1 OCAML_RUNTIME_EVENTS_STARX=1 ;;
  off) set -- "$2" life.ocgc OCGC_DISABLE=1 OCAML_RUNTIME_EVENTS_STARX=1 ;;
  on) set -- "$2" life.ocgc OCGC_DISABLE=0 OCAML_RUNTIME_EVENTS_STARX=1 ;;
  o5off) set -- "$2" life.o5 OCGC_DISABLE=1 OCAML_RUNTIME_EVENTS_STARX=1 ;;
  o5on) set -- "$2" life.o5 OCGC_DISABLE=1 OCAML_RUNTIME_EVENTS_START=1 ;;
  esac
  r=$(cd "$WORK" && env -u OCAMLRUNPARAM -u CAMLRUNPARAM -u OCAML_RUNTIME_EVENTS_PRESERVE \
        OCAML_RUNTIME_EVENTS_DIR="$EVDIR" "$3" "$4" "$CPUTIME" -q "./$2" "$1" 2>/dev/null)
  set -- $r
  if test $# -ge 4 && test "$4" = 0; then echo "$3"; else echo x; fi
}

say "machine: $(nproc 2>/dev/null || echo '?') CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
for w in start forks; do
  n=0; test $w = forks && n=$FORKS
  : >"$WORK/$w.wall"
  for c in $CONFIGS; do run $c $n >/dev/null; done # warm the page cache
  r=1
  while test $r -le "$ROUNDS"; do
    line=
    for c in stock off on o5off o5on; do
      v=x
      case " $CONFIGS " in *" $c "*) v=$(run $c $n) ;; esac
      line="$line $v"
    done
    echo "$line" >>"$WORK/$w.wall"
    r=$((r + 1))
  done
  left=$(ls -A "$EVDIR" | wc -l)
  say ""
  if test $w = start; then say "-- start to exit, no fork: $ROUNDS alternating rounds (wall time of each run) --"
  else say "-- start to exit, $FORKS forked children that each collect: $ROUNDS alternating rounds --"; fi
  awk -v left="$left" '
    function q(a, n, p,  h, i, f) { h = (n - 1) * p + 1; i = int(h); f = h - i
      return i < n ? a[i] + f * (a[i + 1] - a[i]) : a[i] }
    function sortn(a, n,  i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; j = i - 1
      while (j >= 1 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x } }
    function col(c,  i, n, a) { n = 0; for (i = 1; i <= NR; i++) if (v[i, c] != "x") a[++n] = v[i, c]
      if (n == 0) { printf "  %-6s n/a\n", name[c]; return }
      sortn(a, n); med[c] = q(a, n, 0.5)
      printf "  %-6s median %7.2f ms  IQR %7.2f..%7.2f ms\n", name[c], med[c] / 1e3, q(a, n, 0.25) / 1e3, q(a, n, 0.75) / 1e3 }
    function ratio(x, y, label,  i, n, a) { n = 0
      for (i = 1; i <= NR; i++) if (v[i, x] != "x" && v[i, y] != "x" && v[i, y] > 0) a[++n] = v[i, x] / v[i, y]
      if (n == 0) return
      sortn(a, n)
      printf "  %-12s median %.3f  IQR %.3f..%.3f  (%d rounds)\n", label, q(a, n, 0.5), q(a, n, 0.25), q(a, n, 0.75), n }
    function diff(x, y, label,  i, n, a) { n = 0
      for (i = 1; i <= NR; i++) if (v[i, x] != "x" && v[i, y] != "x") a[++n] = v[i, x] - v[i, y]
      if (n == 0) return
      sortn(a, n)
      printf "  %-12s median %+.3f ms  IQR %+.3f..%+.3f ms\n", label, q(a, n, 0.5) / 1e3, q(a, n, 0.25) / 1e3, q(a, n, 0.75) / 1e3 }
    { for (c = 1; c <= 5; c++) v[NR, c] = $c }
    END {
      split("stock off on o5off o5on", name, " ")
      for (c = 1; c <= 5; c++) col(c)
      ratio(3, 1, "on/stock"); ratio(2, 1, "off/stock"); ratio(3, 2, "on/off"); ratio(5, 4, "o5on/o5off")
      diff(3, 1, "on - stock"); diff(5, 4, "o5on - o5off")
      if (left > 0) printf "  (%d entries left in the ring folder: rings not removed at exit!)\n", left
    }' "$WORK/$w.wall"
done
exit 0
