# memprof.sh - what ocgc's allocation sampling costs (make bench): the same
# binaries with sampling off (the ring on, as in production), at Go's
# default rate (512 KiB, OCGC_MEMPROF=on), at ten times it (51 KiB), and
# with the program's own Gc.Memprof at 512 KiB with OCaml callbacks that
# keep each sample's call stack until it dies (memtrace's approach;
# benchmarks/memprof_cb.ml, linked into every binary and idle unless
# asked).  Workloads: allocation (alloc, promote, binary_trees), an I/O
# loop of one-byte writes (io: a blocking section each, nothing
# allocated), a mutex ping-pong of two threads (pingpong) and four threads
# allocating (threads: benchmarks/threads.ml).  CPU time: BENCH_MP_ROUNDS
# alternating rounds, each configuration's median over off's and the range
# of the per-round ratios; instructions: BENCH_MP_CG_RUNS callgrind runs per
# configuration, the same statistics, and on - off per sample ocgc took;
# memory: what each run holds at exit (benchmarks/memuse.ml), on - off:
# the ring file's resident pages, the process's private dirty pages and
# its Pss.  Prints figures, never fails.
#
# Set by bench.am: OCGC_STAGE OCAMLFIND BENCH_SRCDIR CPUTIME OCGC_BUILDDIR
# Knobs: BENCH_MP_ROUNDS=7, BENCH_MP_SCALE=1, BENCH_CALLGRIND=1,
#        BENCH_MP_CG_RUNS=3, BENCH_MP_WORKLOADS (all six)

ROUNDS=${BENCH_MP_ROUNDS:-7}
SCALE=${BENCH_MP_SCALE:-1}
DO_CG=${BENCH_CALLGRIND:-1}
CG_RUNS=${BENCH_MP_CG_RUNS:-3}
WORKLOADS=${BENCH_MP_WORKLOADS:-alloc promote binary_trees io pingpong threads}
case $ROUNDS in ''|*[!0-9]*) ROUNDS=7 ;; esac
case $CG_RUNS in ''|0|*[!0-9]*) CG_RUNS=3 ;; esac
say() { printf '%s\n' "$*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-mpbench.XXXXXX" 2>/dev/null) || { say "n/a: no work folder"; exit 0; }
trap 'rm -rf "$WORK"' EXIT
mkdir -m 700 "$WORK/rings"
TESTS_OCAML=$BENCH_SRCDIR/../tests/ocaml
cp "$BENCH_SRCDIR/memprof_cb.ml" "$BENCH_SRCDIR/memuse.ml" "$BENCH_SRCDIR/alloc.ml" \
  "$BENCH_SRCDIR/promote.ml" "$BENCH_SRCDIR/threads.ml" "$TESTS_OCAML/ocgc_test.ml" \
  "$TESTS_OCAML/binary_trees.ml" "$TESTS_OCAML/memprof_switches.ml" "$WORK/" 2>/dev/null ||
  { say "n/a: sources missing"; exit 0; }
for p in alloc promote binary_trees threads memprof_switches; do
  case $p in threads|memprof_switches) pk="-thread -package unix,threads.posix" ;; *) pk="-package unix" ;; esac
  (cd "$WORK" && "$OCAMLFIND" ocamlopt $pk -linkpkg -I "$OCGC_STAGE" \
     -runtime-variant _ocgc memprof_cb.ml memuse.ml ocgc_test.ml "$p.ml" -o "$p") >"$WORK/$p.log" 2>&1 ||
    { say "n/a: $p did not build: `tail -n 3 "$WORK/$p.log"`"; exit 0; }
done

# workload -> program and argument (runs of about half a second at scale 1)
wl_cmd() {
  case $1 in
  alloc) echo "alloc `awk -v s="$SCALE" 'BEGIN { print int(500000 * s) }'`" ;;
  promote) echo "promote `awk -v s="$SCALE" 'BEGIN { print int(800000 * s) }'`" ;;
  binary_trees) echo "binary_trees 18" ;;
  io) echo "memprof_switches writes `awk -v s="$SCALE" 'BEGIN { print int(500000 * s) }'`" ;;
  pingpong) echo "memprof_switches pingpong `awk -v s="$SCALE" 'BEGIN { print int(50000 * s) }'`" ;;
  threads) echo "threads `awk -v s="$SCALE" 'BEGIN { print int(100000 * s) }'`" ;;
  esac
}
wl_cg_cmd() {
  case $1 in
  alloc) echo "alloc 25000" ;; promote) echo "promote 300000" ;; binary_trees) echo "binary_trees 14" ;;
  io) echo "memprof_switches writes 100000" ;; pingpong) echo "memprof_switches pingpong 20000" ;;
  threads) echo "threads 10000" ;;
  esac
}
# median (min - max) of the ratios to off of config $2 in FILE $1 ("RUN CONFIG VALUE" lines)
ratios() {
  awk -v cfg="$2" '
    { t[$1, $2] = $3; runs[$1] = 1 }
    END {
      m = 0; lo = 1e18; hi = -1e18
      for (r in runs) { if (t[r, "off"] <= 0) continue; q = t[r, cfg] / t[r, "off"]; m++; b[m] = q; if (q < lo) lo = q; if (q > hi) hi = q }
      if (m == 0) { printf "n/a"; exit }
      for (i = 2; i <= m; i++) { x = b[i]; for (j = i - 1; j >= 1 && b[j] > x; j--) b[j + 1] = b[j]; b[j + 1] = x }
      printf "%.4f (%.4f - %.4f)", m % 2 ? b[(m + 1) / 2] : (b[m / 2] + b[m / 2 + 1]) / 2, lo, hi
    }' "$1"
}
# median (min - max) of on - off of config $2 in FILE $1 ("RUN CONFIG KIB" lines), in KiB
deltas() {
  awk -v cfg="$2" '
    { t[$1, $2] = $3; runs[$1] = 1 }
    END {
      m = 0; lo = 1e18; hi = -1e18
      for (r in runs) { if (!((r, "off") in t) || !((r, cfg) in t)) continue; q = t[r, cfg] - t[r, "off"]; m++; b[m] = q; if (q < lo) lo = q; if (q > hi) hi = q }
      if (m == 0) { printf "n/a"; exit }
      for (i = 2; i <= m; i++) { x = b[i]; for (j = i - 1; j >= 1 && b[j] > x; j--) b[j + 1] = b[j]; b[j + 1] = x }
      printf "%d (%d - %d)", m % 2 ? b[(m + 1) / 2] : (b[m / 2] + b[m / 2 + 1]) / 2, lo, hi
    }' "$1"
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
for w in $WORKLOADS; do
  set -- `wl_cmd $w`
  prog=$1; shift
  arg=$*
  r=1
  while test $r -le $ROUNDS; do
    for c in $CONFIGS; do
      t=`cd "$WORK" && env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" $(cfg_env $c) BENCH_SMAPS="$WORK/sm.$w.$c.$r" \
        "$CPUTIME" -q "./$prog" $arg 2>>"$WORK/$w.err" | awk '{ print $1 + $2 }'`
      echo "$r $c ${t:-0}" >>"$WORK/$w.cpu"
      f="$WORK/sm.$w.$c.$r"
      if test -s "$f"; then
        awk -v r=$r -v c=$c '$1 == "Ring_Rss:" { print r, c, $2 }' "$f" >>"$WORK/$w.ring"
        awk -v r=$r -v c=$c '$1 == "Private_Dirty:" { print r, c, $2 }' "$f" >>"$WORK/$w.priv"
        awk -v r=$r -v c=$c '$1 == "Pss:" { print r, c, $2 }' "$f" >>"$WORK/$w.pss"
      fi
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

say ""
say "Memory held at exit, on - off in KiB: median (min - max) over the rounds; stacks: rows"
say "of the table at 512 KiB (one more run).  Ring: the ring file's resident pages (its"
say "shared table); private: the process's private dirty pages (ocgc's private tables,"
say "and any difference of the program's own); Pss: the process's proportional set."
say ""
say "| workload | stacks | followed | ring (512 KiB) | private (512 KiB) | Pss (512 KiB) | ring (51 KiB) | private (51 KiB) | Pss (51 KiB) |"
say "|---|---|---|---|---|---|---|---|---|"
for w in $WORKLOADS; do
  set -- `wl_cmd $w`
  prog=$1; shift
  rm -f "$WORK/rings/"*
  (cd "$WORK" && env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" OCAML_RUNTIME_EVENTS_PRESERVE=1 $(cfg_env go) \
    "./$prog" "$@" >/dev/null 2>&1)
  "$OCGC_BUILDDIR/tools/ocgc" dump "$WORK/rings/"*.events >"$WORK/$w.mpdump" 2>/dev/null
  st=`awk '$1 == "memprof.stacks" { print $2 }' "$WORK/$w.mpdump"`
  fo=`awk '$1 == "memprof.followed" { print $2 }' "$WORK/$w.mpdump"`
  line="| $w | ${st:-n/a} | ${fo:-n/a}"
  for c in go x10; do
    for k in ring priv pss; do
      if test -s "$WORK/$w.$k"; then line="$line | `deltas "$WORK/$w.$k" $c`"; else line="$line | n/a"; fi
    done
  done
  say "$line |"
done

if test "$DO_CG" = 1 && command -v valgrind >/dev/null 2>&1; then
  say ""
  say "Instructions (callgrind, $CG_RUNS runs of each, shorter inputs): ratio to off, median"
  say "(min - max over runs); on - off per sample taken (medians); own: the share of ocgc's"
  say "sampling functions (caml_ocgc_mp_*, inclusive) at 512 KiB, in %, median (min - max)"
  say ""
  say "| workload | off | ocgc 512 KiB | own % | samples | per sample | ocgc 51 KiB | samples | per sample | Gc.Memprof 512 KiB |"
  say "|---|---|---|---|---|---|---|---|---|---|"
  for w in $WORKLOADS; do
    set -- `wl_cg_cmd $w`
    prog=$1; shift
    arg=$*
    r=1
    while test $r -le $CG_RUNS; do
      for c in off go x10 gcmp; do
        rm -f "$WORK/rings/"*
        rm -f "$WORK/cg.out"
        ins=`cd "$WORK" && env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" OCAML_RUNTIME_EVENTS_PRESERVE=1 $(cfg_env $c) \
          valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "./$prog" $arg 2>&1 >/dev/null |
          awk '/Collected :/ { print $NF }'`
        # the share of ocgc's sampling functions (inclusive): where the
        # whole count varies from run to run (threads: the major GC's work
        # depends on how the threads interleave), the cost itself
        if test $c = go; then
          callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$WORK/cg.out" 2>/dev/null |
            awk -v r=$r '/PROGRAM TOTALS/ { gsub(",", "", $1); tot = $1 }
              /caml_ocgc_mp_(young|young_trigger|block|interned|minor_update|clean_phase|invert)[ []/ { gsub(",", "", $1); own += $1 }
              END { if (tot > 0) printf "%d %.4f\n", r, 100 * own / tot }' >>"$WORK/$w.own"
        fi
        samples=`"$OCGC_BUILDDIR/tools/ocgc" dump "$WORK/rings/"*.events 2>/dev/null | awk '$1 == "memprof.samples" { print $2 }'`
        echo "$r $c ${ins:-0}" >>"$WORK/$w.cg"
        echo "$r $c ${samples:-0}" >>"$WORK/$w.smp"
      done
      r=$((r + 1))
    done
    line="| $w | `awk '$2 == "off" { print $3 }' "$WORK/$w.cg" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'`"
    for c in go x10 gcmp; do
      line="$line | `ratios "$WORK/$w.cg" $c`"
      test $c = go && line="$line | `sort -k2,2n "$WORK/$w.own" 2>/dev/null |
        awk '{ a[NR] = $2 } END { if (NR) printf "%.3f (%.3f - %.3f)", a[int((NR + 1) / 2)], a[1], a[NR]; else printf "n/a" }'`"
      test $c = gcmp && continue
      line="$line | `awk -v c=$c '$2 == c { print $3 }' "$WORK/$w.smp" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'`"
      line="$line | `awk -v c=$c '
        FILENAME !~ /smp$/ { t[$1, $2] = $3; runs[$1] = 1 }
        FILENAME ~ /smp$/ { s[$1, $2] = $3 }
        END { m = 0; for (r in runs) if (s[r, c] > 0) { m++; b[m] = (t[r, c] - t[r, "off"]) / s[r, c] }
              if (m == 0) { print "n/a"; exit }
              for (i = 2; i <= m; i++) { x = b[i]; for (j = i - 1; j >= 1 && b[j] > x; j--) b[j + 1] = b[j]; b[j + 1] = x }
              printf "%.0f", b[int((m + 1) / 2)] }' "$WORK/$w.cg" "$WORK/$w.smp"`"
    done
    say "$line |"
  done
fi
