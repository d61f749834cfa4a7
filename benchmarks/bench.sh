# bench.sh - what the ocgc producer costs: stock vs patched-off vs
# patched-on runtime, on the same OCaml programs.  Run by `make bench`
# (benchmarks/bench.am), which sets the paths below.  Prints figures and a
# markdown table; always exits 0 (a figure it cannot measure is "n/a", with
# the reason).
#
# Configurations (same .cmx, two links):
#   stock  linked by `ocamlfind ocamlopt` against the system runtime
#   off    linked with -runtime-variant _ocgc, run with OCGC_DISABLE=1
#   on     the same binary, ring enabled in a private tmpfs folder
#   o5off  the same sources compiled with stock OCaml 5, runtime events off
#   o5on   that binary with OCAML_RUNTIME_EVENTS_START=1 (benchmarks/ocaml5.sh
#          finds OCaml 5 as the tests do; absent, its figures are skipped)
# All three runs get the same environment variables with values of the same
# length (the stock runtime ignores ours), so the process layout does not
# differ between configurations.
#
# Set by bench.am:   OCGC OCGC_STAGE OCAMLFIND BENCH_SRCDIR
#                    CPUTIME CC OCGC_BUILDDIR
# Knobs (environment):
#   BENCH_ROUNDS=15      alternating rounds of timed runs (stock, off, on)
#   BENCH_SCALE=1        multiplies the timed inputs (runs of ~0.5 s at 1)
#   BENCH_WORKLOADS="alloc promote stress"
#   BENCH_CALLGRIND=1    0: skip the valgrind instruction counts
#   BENCH_CG_SCALE=1     multiplies the (shorter) callgrind inputs
#   BENCH_KEEP=0         1: keep the work folder (binaries, callgrind files)
#   BENCH_OCAML5=1       0: skip stock OCaml 5 (else found as the tests find
#                        it: OCGC_OCAML5_BIN, PATH, OCGC_OCAML5_ROOT,
#                        $OCGC_BUILDDIR/ocaml5-root)

ROUNDS=${BENCH_ROUNDS:-15}
SCALE=${BENCH_SCALE:-1}
WORKLOADS=${BENCH_WORKLOADS:-alloc promote stress}
DO_CG=${BENCH_CALLGRIND:-1}
CG_SCALE=${BENCH_CG_SCALE:-1}
KEEP=${BENCH_KEEP:-0}
OCAMLFIND=${OCAMLFIND:-ocamlfind}
CC=${CC:-cc}

case $ROUNDS in ''|*[!0-9]*) ROUNDS=15 ;; esac
test "$ROUNDS" -ge 1 || ROUNDS=1
known=
for w in $WORKLOADS; do
  case $w in
  alloc | promote | stress) known="$known $w" ;;
  *) printf 'bench: unknown workload "%s" ignored (alloc, promote, stress)\n' "$w" ;;
  esac
done
WORKLOADS=${known# }

# workload -> program, timed steps, callgrind steps, OCAMLRUNPARAM, label
wl_prog() { case $1 in stress) echo alloc ;; *) echo "$1" ;; esac; }
wl_steps() {
  case $1 in alloc) n=500000 ;; promote) n=800000 ;; stress) n=500000 ;; *) n=0 ;; esac
  awk -v n="$n" -v s="$SCALE" 'BEGIN { v = int(n * s); print (v < 1 ? 1 : v) }'
}
wl_cg_steps() {
  case $1 in alloc) n=25000 ;; promote) n=300000 ;; stress) n=25000 ;; *) n=0 ;; esac
  awk -v n="$n" -v s="$CG_SCALE" 'BEGIN { v = int(n * s); print (v < 1 ? 1 : v) }'
}
wl_param() { case $1 in stress) echo "s=4k" ;; *) echo "" ;; esac; }
wl_label() {
  case $1 in
  alloc) echo "short-lived small blocks, default minor heap" ;;
  promote) echo "medium-lived data, promoted then swept in the major heap" ;;
  stress) echo "alloc with OCAMLRUNPARAM=s=4k (minor GC every few us)" ;;
  esac
}

say() { printf '%s\n' "$*"; }
now_s() { date +%s; }

T_START=$(now_s)
say "== ocgc benchmarks: stock vs patched-off vs patched-on runtime, and stock OCaml 5 off vs on =="

# ---- work folders -----------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-bench.XXXXXX" 2>/dev/null)
if test -z "$WORK" || ! test -d "$WORK"; then
  say "n/a: cannot make a work folder under ${TMPDIR:-/tmp}; no figures"
  exit 0
fi
# The ring goes on tmpfs, as the runtime's default folder does.
EVBASE=/dev/shm
test -d /dev/shm && test -w /dev/shm || EVBASE=$WORK
EVDIR=$(mktemp -d "$EVBASE/ocgc-bench-ev.XXXXXX" 2>/dev/null)
test -n "$EVDIR" && test -d "$EVDIR" || { EVDIR=$WORK/ev; mkdir -p "$EVDIR"; }
cleanup() {
  rm -rf "$EVDIR"
  if test "$KEEP" = 1; then say "(work folder kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 0' INT TERM HUP

# ---- machine --------------------------------------------------------------------
NPROC=$(nproc 2>/dev/null || echo '?')
CPU=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
test -n "$CPU" || CPU=unknown
CLOCKSRC=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
say "machine: $NPROC CPUs, $CPU, clocksource $CLOCKSRC, kernel $(uname -r 2>/dev/null)"
say "load average at start: $LOAD0"

# ---- tools --------------------------------------------------------------------
HAVE_CPU=1 HAVE_STOCK=1 HAVE_OCGC=1 HAVE_CG=1 HAVE_DUMP=1
WHY_CPU= WHY_STOCK= WHY_OCGC= WHY_CG= WHY_DUMP=
if test -z "${CPUTIME:-}" || ! test -x "$CPUTIME"; then
  # bench.am builds it; fall back to compiling it here.
  CPUTIME=$WORK/cputime
  if ! $CC -O2 -o "$CPUTIME" "$BENCH_SRCDIR/cputime.c" >"$WORK/cputime.log" 2>&1; then
    HAVE_CPU=0 WHY_CPU="the cputime helper did not build ($CC)"
  fi
fi
if test "$DO_CG" = 0; then
  HAVE_CG=0 WHY_CG="skipped (BENCH_CALLGRIND=0)"
elif ! command -v valgrind >/dev/null 2>&1; then
  HAVE_CG=0 WHY_CG="valgrind is not installed"
fi
if test -z "${OCGC:-}" || ! test -x "$OCGC"; then
  HAVE_DUMP=0 WHY_DUMP="tools/ocgc is missing"
fi
if ! test -f "${OCGC_STAGE:-/nonexistent}/libasmrun_ocgc.a"; then
  HAVE_OCGC=0 WHY_OCGC="no patched runtime staged in ${OCGC_STAGE:-?}"
fi

# ---- build the workloads -----------------------------------------------------------
# One .cmx per program, linked twice, so both binaries run the same code.
for p in alloc promote; do
  cp "$BENCH_SRCDIR/$p.ml" "$WORK/$p.ml" 2>/dev/null || continue
  if (cd "$WORK" && $OCAMLFIND ocamlopt -c $p.ml) >"$WORK/$p.build.log" 2>&1; then
    (cd "$WORK" && $OCAMLFIND ocamlopt $p.cmx -o $p.stock) >>"$WORK/$p.build.log" 2>&1
    if test $HAVE_OCGC = 1; then
      (cd "$WORK" && $OCAMLFIND ocamlopt -I "$OCGC_STAGE" -runtime-variant _ocgc \
        $p.cmx -o $p.ocgc) >>"$WORK/$p.build.log" 2>&1
    fi
  fi
  test -x "$WORK/$p.stock" || { HAVE_STOCK=0 WHY_STOCK="$p did not build: $(tail -n 3 "$WORK/$p.build.log" | tr '\n' ' ')"; }
  if test $HAVE_OCGC = 1 && ! test -x "$WORK/$p.ocgc"; then
    HAVE_OCGC=0 WHY_OCGC="$p did not link with -runtime-variant _ocgc: $(tail -n 3 "$WORK/$p.build.log" | tr '\n' ' ')"
  fi
done
test $HAVE_STOCK = 1 || say "n/a: $WHY_STOCK"
test $HAVE_OCGC = 1 || say "n/a (off, on): $WHY_OCGC"
test $HAVE_CPU = 1 || say "n/a (CPU times): $WHY_CPU"
. "$BENCH_SRCDIR/ocaml5.sh"
test $HAVE_STOCK = 1 && o5_setup
if test $HAVE_O5 = 1; then say "stock OCaml $O5_VERSION: the same workloads, runtime events off and on"
else say "OCaml 5 figures skipped: ${WHY_O5:-the OCaml 4 workloads did not build}"; fi
CLOCK_NS=n/a
if test $HAVE_CPU = 1; then
  CLOCK_NS=$("$CPUTIME" -c 2>/dev/null) || CLOCK_NS=n/a
  test -n "$CLOCK_NS" || CLOCK_NS=n/a
fi
say "one clock_gettime(CLOCK_MONOTONIC), the producer's timestamp: $CLOCK_NS$(test "$CLOCK_NS" = n/a || echo ' ns')"
test $HAVE_CG = 1 || say "n/a (instruction counts): $WHY_CG"
test $HAVE_DUMP = 1 || say "n/a (events per run): $WHY_DUMP"

# ---- running one configuration ----------------------------------------------------
# run CFG WORKLOAD STEPS PREFIX...: run the workload under PREFIX (cputime -q,
# valgrind ...) with the configuration's environment.  Every configuration
# sets the same variables with values of the same length.
run() {
  case $1 in o5*) o5_run "$@"; return ;; esac
  cfg=$1 w=$2 n=$3
  shift 3
  p=$(wl_prog "$w")
  case $cfg in
  stock) bin=$WORK/$p.stock dis=1 ;;
  off) bin=$WORK/$p.ocgc dis=1 ;;
  on) bin=$WORK/$p.ocgc dis=0 ;;
  esac
  param=$(wl_param "$w")
  if test -n "$param"; then
    env -u CAMLRUNPARAM -u OCAML_RUNTIME_EVENTS_PRESERVE OCGC_DISABLE=$dis \
      OCAML_RUNTIME_EVENTS_DIR="$EVDIR" OCAMLRUNPARAM="$param" "$@" "$bin" "$n"
  else
    env -u OCAMLRUNPARAM -u CAMLRUNPARAM -u OCAML_RUNTIME_EVENTS_PRESERVE \
      OCGC_DISABLE=$dis OCAML_RUNTIME_EVENTS_DIR="$EVDIR" "$@" "$bin" "$n"
  fi
}

configs() {
  if test $HAVE_OCGC = 1; then printf 'stock off on'; else printf 'stock'; fi
  if test $HAVE_O5 = 1; then echo " o5off o5on"; else echo; fi
}

# count_events WORKLOAD STEPS: one "on" run with the ring file preserved;
# prints its ring.0.written, or nothing.
count_events() {
  w=$1 n=$2
  shift 2
  rm -f "$EVDIR"/*.events
  run on "$w" "$n" env OCAML_RUNTIME_EVENTS_PRESERVE=1 "$@" >/dev/null 2>"$WORK/$w.events.err"
  f=$(ls "$EVDIR"/*.events 2>/dev/null | head -n 1)
  if test -n "$f"; then
    "$OCGC" dump "$f" 2>/dev/null | sed -n 's/^ring\.0\.written //p' | head -n 1
  fi
  rm -f "$EVDIR"/*.events
}

# stats FILE COLUMN: median q1 q3 (linear interpolation) of a column.
stats() {
  awk -v c="$2" '$c != "" && $c != "x" { print $c }' "$1" | sort -n | awk '
    { v[NR] = $1 }
    function q(p,  h, i, f) { h = (NR - 1) * p + 1; i = int(h); f = h - i
      return i < NR ? v[i] + f * (v[i + 1] - v[i]) : v[i] }
    END { if (NR == 0) print "x x x"; else printf "%.1f %.1f %.1f\n", q(0.5), q(0.25), q(0.75) }'
}
# pstats FILE A B: median q1 q3 of the per-round ratio column A / column B.
pstats() {
  awk -v a="$2" -v b="$3" '$a != "x" && $b != "x" && $b > 0 { printf "%.6f\n", $a / $b }' "$1" |
    sort -n | awk '
    { v[NR] = $1 }
    function q(p,  h, i, f) { h = (NR - 1) * p + 1; i = int(h); f = h - i
      return i < NR ? v[i] + f * (v[i + 1] - v[i]) : v[i] }
    END { if (NR == 0) print "x x x"; else printf "%.6f %.6f %.6f\n", q(0.5), q(0.25), q(0.75) }'
}
# ("x" stands for a figure not measured.)

# ---- sanity: every configuration runs and computes the same thing ---------------------
if test $HAVE_STOCK = 1; then
  say ""
  say "-- checking the workloads (one untimed run per configuration) --"
  for w in $WORKLOADS; do
    n=$(wl_steps "$w")
    ref=
    for c in $(configs); do
      out=$(run $c "$w" "$n" 2>"$WORK/$w.$c.err")
      st=$?
      if test $st -ne 0 || test -s "$WORK/$w.$c.err"; then
        say "  $w/$c: exit $st: $(head -n 2 "$WORK/$w.$c.err" | tr '\n' ' ')"
        eval "BAD_${w}_$c=1"
      elif test -z "$ref"; then ref=$out
      elif test "$out" != "$ref"; then
        say "  $w/$c: printed $out, stock printed $ref"
        eval "BAD_${w}_$c=1"
      fi
    done
    left=$(ls "$EVDIR" 2>/dev/null | wc -l)
    say "  $w: $n steps, result $ref$(test "$left" -eq 0 || echo ", $left ring file(s) left behind!")"
    rm -f "$EVDIR"/*.events
  done
fi
bad() { eval "test \"\${BAD_${1}_$2:-0}\" = 1"; }

# ---- a) CPU time, alternating rounds ------------------------------------------------
if test $HAVE_STOCK = 1 && test $HAVE_CPU = 1; then
  say ""
  say "-- CPU time (user+sys of the child, getrusage via wait4): $ROUNDS alternating rounds --"
  for w in $WORKLOADS; do : >"$WORK/$w.cpu"; done
  r=1
  while test $r -le "$ROUNDS"; do
    for w in $WORKLOADS; do
      n=$(wl_steps "$w")
      line=
      for c in stock off on o5off o5on; do
        v=x
        if echo " $(configs) " | grep -q " $c " && ! bad "$w" $c; then
          set -- $(run $c "$w" "$n" "$CPUTIME" -q 2>>"$WORK/$w.$c.err")
          if test $# -ge 4 && test "$4" = 0; then v=$(($1 + $2)); fi
        fi
        line="$line $v"
      done
      echo "$line" >>"$WORK/$w.cpu"
    done
    printf '  round %d/%d done (%ds)\n' "$r" "$ROUNDS" $(($(now_s) - T_START))
    r=$((r + 1))
  done
fi

# ---- c) events per run ----------------------------------------------------------------
if test $HAVE_OCGC = 1 && test $HAVE_DUMP = 1; then
  for w in $WORKLOADS; do
    e=$(count_events "$w" "$(wl_steps "$w")")
    eval "EV_$w=\${e:-x}"
  done
fi
if test $HAVE_O5 = 1 && test $HAVE_DUMP = 1; then
  for w in $WORKLOADS; do
    e=$(o5_count "$w" "$(wl_steps "$w")")
    eval "EV5_$w=\${e:-x}"
    test -n "$e" || say "  $w/o5on: events per timed run n/a: $(tr '\n' ' ' <"$WORK/$w.o5count.err")"
    if test $HAVE_CG = 1; then
      e=$(o5_count "$w" "$(wl_cg_steps "$w")")
      eval "CGEV5_$w=\${e:-x}"
      test -n "$e" || say "  $w/o5on: events per callgrind run n/a: $(tr '\n' ' ' <"$WORK/$w.o5count.err")"
    fi
  done
fi

# ---- b) callgrind instruction counts ---------------------------------------------------
cg_total() {
  sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n 1
}
if test $HAVE_STOCK = 1 && test $HAVE_CG = 1; then
  say ""
  say "-- instruction counts (valgrind --tool=callgrind, shorter inputs) --"
  for w in $WORKLOADS; do
    n=$(wl_cg_steps "$w")
    for c in $(configs); do
      out=$WORK/cg.$w.$c.out
      if test $c = on; then
        # Preserve the ring file to count the events of this very run.
        rm -f "$EVDIR"/*.events
        run on "$w" "$n" env OCAML_RUNTIME_EVENTS_PRESERVE=1 \
          valgrind --tool=callgrind --callgrind-out-file="$out" \
          >/dev/null 2>"$WORK/cg.$w.$c.log"
        f=$(ls "$EVDIR"/*.events 2>/dev/null | head -n 1)
        e=
        if test -n "$f" && test $HAVE_DUMP = 1; then
          e=$("$OCGC" dump "$f" 2>/dev/null | sed -n 's/^ring\.0\.written //p' | head -n 1)
        fi
        eval "CGEV_$w=\${e:-x}"
        rm -f "$EVDIR"/*.events
      else
        run $c "$w" "$n" valgrind --tool=callgrind --callgrind-out-file="$out" \
          >/dev/null 2>"$WORK/cg.$w.$c.log"
      fi
      ir=$(cg_total "$out")
      eval "IR_${w}_$c=\${ir:-x}"
      say "  $w/$c ($n steps): Ir $(test -n "$ir" && echo "$ir" || echo "n/a: $(tail -n 1 "$WORK/cg.$w.$c.log")")"
    done
  done
  printf '  (%ds)\n' $(($(now_s) - T_START))
fi

# ---- per workload figures -------------------------------------------------------------------
# Collected as "key value" lines in $WORK/fig.<w> for the table.
getv() { eval "echo \"\${$1:-x}\""; }
for w in $WORKLOADS; do
  f=$WORK/fig.$w
  : >"$f"
  if test -s "$WORK/$w.cpu"; then
    # columns: stock off on o5off o5on
    for kc in stock:1 off:2 on:3 o5off:4 o5on:5; do
      set -- $(stats "$WORK/$w.cpu" "${kc#*:}"); echo "${kc%:*} $1 $2 $3" >>"$f"
    done
    # paired per-round ratios and on - off differences (in us)
    for kc in p_off:2:1 p_on:3:1 p_onoff:3:2 p_o5:5:4; do
      set -- $(echo "$kc" | tr : ' ')
      set -- "$1" $(pstats "$WORK/$w.cpu" "$2" "$3"); echo "$*" >>"$f"
    done
    for kc in p_diff:3:2 p_o5diff:5:4; do
      set -- $(echo "$kc" | tr : ' ')
      awk -v a="$2" -v b="$3" '$a != "x" && $b != "x" { print $a - $b }' "$WORK/$w.cpu" >"$WORK/$w.$1"
      set -- "$1" $(stats "$WORK/$w.$1" 1); echo "$*" >>"$f"
    done
    awk '{ for (i = 1; i <= 3; i++) if ($i != "x" && (m[i] == "" || $i < m[i])) m[i] = $i }
      END { print "min", (m[1] == "" ? "x" : m[1]), (m[2] == "" ? "x" : m[2]), (m[3] == "" ? "x" : m[3]) }' \
      "$WORK/$w.cpu" >>"$f"
  fi
  echo "events $(getv EV_$w)" >>"$f"
  echo "cgevents $(getv CGEV_$w)" >>"$f"
  echo "ir_stock $(getv IR_${w}_stock)" >>"$f"
  echo "ir_off $(getv IR_${w}_off)" >>"$f"
  echo "ir_on $(getv IR_${w}_on)" >>"$f"
  echo "ev5 $(getv EV5_$w)" >>"$f"
  echo "cgev5 $(getv CGEV5_$w)" >>"$f"
  echo "ir_o5off $(getv IR_${w}_o5off)" >>"$f"
  echo "ir_o5on $(getv IR_${w}_o5on)" >>"$f"
done

# ---- details ------------------------------------------------------------------------------------
say ""
say "-- details per workload --"
for w in $WORKLOADS; do
  say "$w: $(wl_label "$w"); timed run $(wl_steps "$w") steps, callgrind run $(wl_cg_steps "$w") steps"
  awk '
    { k[$1] = $2; q1[$1] = $3; q3[$1] = $4 }
    $1 == "min" { mn["stock"] = $2; mn["off"] = $3; mn["on"] = $4 }
    function sp(c) { return (k[c] == "x" || k[c] == "" || k[c] == 0) ? "n/a" : sprintf("%.1f%%", 100 * (q3[c] - q1[c]) / k[c]) }
    END {
      if ("stock" in k) {
        for (i = 1; i <= 3; i++) {
          c = i == 1 ? "stock" : i == 2 ? "off" : "on"
          if (k[c] == "x") printf "  CPU %-5s n/a\n", c
          else printf "  CPU %-5s median %.4f s, IQR %.4f..%.4f s (IQR/median %s)\n", c, k[c] / 1e6, q1[c] / 1e6, q3[c] / 1e6, sp(c)
        }
        if (mn["stock"] != "x" && mn["stock"] > 0 && mn["off"] != "x" && mn["on"] != "x")
          printf "  fastest runs: stock %.4f s, off/stock %.4f, on/stock %.4f\n", mn["stock"] / 1e6, mn["off"] / mn["stock"], mn["on"] / mn["stock"]
        if (k["p_off"] != "x") printf "  paired per-round ratio off/stock: median %.4f (IQR %.4f..%.4f)\n", k["p_off"], q1["p_off"], q3["p_off"]
        if (k["p_on"] != "x") printf "  paired per-round ratio on/stock:  median %.4f (IQR %.4f..%.4f)\n", k["p_on"], q1["p_on"], q3["p_on"]
        if (k["p_diff"] != "x" && k["events"] != "x" && k["events"] > 0)
          printf "  paired per-round on - off: median %.2f ms = %.1f ns/event (IQR %.1f..%.1f ns/event)\n", k["p_diff"] / 1e3, k["p_diff"] * 1e3 / k["events"], q1["p_diff"] * 1e3 / k["events"], q3["p_diff"] * 1e3 / k["events"]
      }
      if (k["events"] != "x") printf "  events written per timed run: %s\n", k["events"]
      if (k["cgevents"] != "x") printf "  events written per callgrind run: %s\n", k["cgevents"]
      for (i = 1; i <= 2; i++) {
        c = i == 1 ? "o5off" : "o5on"
        if ((c in k) && k[c] != "x") printf "  CPU %-5s median %.4f s, IQR %.4f..%.4f s (IQR/median %s)\n", c, k[c] / 1e6, q1[c] / 1e6, q3[c] / 1e6, sp(c)
      }
      if (("p_o5" in k) && k["p_o5"] != "x") printf "  paired per-round ratio o5on/o5off: median %.4f (IQR %.4f..%.4f)\n", k["p_o5"], q1["p_o5"], q3["p_o5"]
      if (("p_o5diff" in k) && k["p_o5diff"] != "x") printf "  paired per-round o5on - o5off: median %.2f ms\n", k["p_o5diff"] / 1e3
      if (k["ev5"] != "x") printf "  OCaml 5 events per timed run: %s, per callgrind run: %s\n", k["ev5"], k["cgev5"] == "x" ? "n/a" : k["cgev5"]
    }' "$WORK/fig.$w"
done

# Where the producer's instructions go: the per-function difference of self
# Ir between the "on" and "off" callgrind runs (the stress run if there is
# one), and how many clock reads the producer makes per event.
# flat FILE: "file:function Ir" lines, the file without its folders.
flat() {
  callgrind_annotate --inclusive=no --auto=no --threshold=100 "$1" 2>/dev/null |
    awk '$1 ~ /^[0-9,]+$/ && NF >= 3 {
      ir = $1; gsub(",", "", ir); name = ""
      for (i = 2; i <= NF; i++) if ($i ~ /:/ && $i !~ /^\[/) { name = $i; break }
      sub(/^.*\//, "", name)
      if (name != "") print name, ir
    }'
}
# clock_calls FILE: calls to clock_gettime recorded in a callgrind file.
clock_calls() {
  awk '
    /^c?fn=/ {
      isc = ($0 ~ /^cfn=/); s = $0; sub(/^c?fn=/, "", s)
      if (match(s, /^\([0-9]+\)/)) {
        id = substr(s, RSTART, RLENGTH); rest = substr(s, RLENGTH + 2)
        if (rest != "") nm[id] = rest
        s = nm[id]
      }
      if (isc) cur = s
      next
    }
    /^calls=/ { if (cur ~ /clock_gettime/) { split(substr($0, 7), a, " "); n += a[1] } next }
    END { print n + 0 }' "$1" 2>/dev/null
}
PROF=
for w in stress $WORKLOADS; do
  case " $WORKLOADS " in *" $w "*) ;; *) continue ;; esac
  if test -s "$WORK/cg.$w.on.out" && test -s "$WORK/cg.$w.off.out"; then PROF=$w; break; fi
done
if test -n "$PROF" && command -v callgrind_annotate >/dev/null 2>&1; then
  say ""
  say "-- producer profile: callgrind, $PROF, self Ir on - off per function --"
  say "   (ocgc_ring.h:F is the ring write inlined in F; /event = over the $(getv CGEV_$PROF) events of the run)"
  flat "$WORK/cg.$PROF.off.out" >"$WORK/flat.off"
  flat "$WORK/cg.$PROF.on.out" >"$WORK/flat.on"
  awk -v ev="$(getv CGEV_$PROF)" '
    FNR == NR { off[$1] += $2; next }
    { on[$1] += $2 }
    END {
      for (f in off) if (!(f in on)) on[f] = 0
      for (f in on) { d = on[f] - off[f]; if (f != "TOTALS" && d != 0) { n++; nm[n] = f; dd[n] = d } ; if (f != "TOTALS") tot += d
        # the producer own code: its files (and what they inline) and the clock
        if (f ~ /^(ocgc[_.]|wire\.h:|ia32intrin\.h:|x86intrin\.h:)/ || f ~ /clock_gettime|caml_ocgc_/) own += d }
      # sort by |delta|, largest first
      for (i = 2; i <= n; i++) { x = dd[i]; y = nm[i]; j = i - 1
        while (j >= 1 && (dd[j] < 0 ? -dd[j] : dd[j]) < (x < 0 ? -x : x)) { dd[j + 1] = dd[j]; nm[j + 1] = nm[j]; j-- }
        dd[j + 1] = x; nm[j + 1] = y }
      pe = (ev != "x" && ev > 0)
      if (n == 0) { print "  n/a: the profiles do not differ (or have no symbols)"; exit }
      for (i = 1; i <= n && i <= 18; i++)
        if (pe) printf "  %+12d Ir  %+7.1f /event  %s\n", dd[i], dd[i] / ev, nm[i]
        else printf "  %+12d Ir  %s\n", dd[i], nm[i]
      if (pe) printf "  %+12d Ir  %+7.1f /event  whole process (%d functions differ)\n", tot, tot / ev, n
      if (pe) printf "  %+12d Ir  %+7.1f /event  the producer own code (ocgc_* files, what they inline, the clock)\n", own, own / ev
    }' "$WORK/flat.off" "$WORK/flat.on"
  say "   (caml_page_table_lookup and other stock runtime functions can move either way: the ring's"
  say "    mapping shifts where the heap lands, which changes 4.13's page-table hash probes)"
  c_on=$(clock_calls "$WORK/cg.$PROF.on.out")
  c_off=$(clock_calls "$WORK/cg.$PROF.off.out")
  awk -v on="$c_on" -v off="$c_off" -v ev="$(getv CGEV_$PROF)" -v ns="$CLOCK_NS" 'BEGIN {
    if (ev == "x" || ev <= 0) exit
    r = (on - off) / ev
    if (ns ~ /^[0-9.]+$/) printf "  clock reads: %d in the run, %.2f per event; at %s ns each that is %.1f ns/event\n", on - off, r, ns, r * ns
    else printf "  clock reads: %d in the run, %.2f per event\n", on - off, r
  }'
fi

# FIGAWK: the start of an awk program over a fig.<w> file: k (median or
# value), q1, q3 by key, and has(KEY) for a figure that was measured.
FIGAWK='{ k[$1] = $2; q1[$1] = $3; q3[$1] = $4 }
  function has(c) { return (c in k) && k[c] != "x" && k[c] != "" }'

# side_by_side: the ocgc runtime and stock OCaml 5, each ring on vs off, in
# one table (issue 14): the same workloads, the same definitions.
side_by_side() {
  say ""
  v5=${O5_VERSION%% *}
  say "## side by side: the ocgc runtime (OCaml 4.13) and stock OCaml ${v5:-5}, ring on vs off"
  say ""
  if test $HAVE_O5 = 0; then
    say "OCaml 5 figures skipped: ${WHY_O5:-the OCaml 4 workloads did not build}"
  fi
  say "| workload | instr/event ocgc | instr/event OCaml 5 | ns/event ocgc | ns/event OCaml 5 | CPU on/off ocgc | CPU on/off OCaml 5 | Ir on/off ocgc | Ir on/off OCaml 5 | events/run ocgc | events/run OCaml 5 |"
  say "|---|---|---|---|---|---|---|---|---|---|---|"
  for w in $WORKLOADS; do
    awk -v w="$w" -v pr="$(wl_param "$w")" "$FIGAWK"'
      function ipe(on, off, ev) {
        return (has(on) && has(off) && has(ev) && k[ev] > 0) ? sprintf("%.0f", (k[on] - k[off]) / k[ev]) : "n/a" }
      function nspe(d, ev) {
        return (has(d) && has(ev) && k[ev] > 0) ? sprintf("%.1f (%.1f..%.1f)", k[d] * 1e3 / k[ev], q1[d] * 1e3 / k[ev], q3[d] * 1e3 / k[ev]) : "n/a" }
      function rat(p) { return has(p) ? sprintf("%.4f (%.4f..%.4f)", k[p], q1[p], q3[p]) : "n/a" }
      function irr(on, off) { return (has(on) && has(off) && k[off] > 0) ? sprintf("%.4f", k[on] / k[off]) : "n/a" }
      END {
        printf "| %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w, pr == "" ? "" : " (" pr ")",
          ipe("ir_on", "ir_off", "cgevents"), ipe("ir_o5on", "ir_o5off", "cgev5"),
          nspe("p_diff", "events"), nspe("p_o5diff", "ev5"), rat("p_onoff"), rat("p_o5"),
          irr("ir_on", "ir_off"), irr("ir_o5on", "ir_o5off"),
          has("events") ? k["events"] : "n/a", has("ev5") ? k["ev5"] : "n/a"
      }' "$WORK/fig.$w"
  done
  say ""
  say "Both sides run the same sources with the ring on and off in alternating rounds ($ROUNDS), ocgc's off = OCGC_DISABLE=1, OCaml 5's off = no OCAML_RUNTIME_EVENTS_START, its ring the default 2^16 words, overwritten when full.  instr/event = (Ir on - Ir off) / events of the callgrind run (deterministic: one run each).  ns/event = per-round CPU on - off, median (IQR), over the events of a timed run.  CPU on/off = per-round ratio, median (IQR).  OCaml 5's events are counted with ocgc dump --ids 5.3 from a preserved ring of another run of the same input (OCAMLRUNPARAM d=1,e=24; the count does not depend on the ring).  An event is one span begin, span end, counter or lifecycle record on both sides.  CPU figures carry the load: $LOAD0 at start, $LOAD1 at end."
}

# ---- the table ----------------------------------------------------------------------------------
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
ELAPSED=$(($(now_s) - T_START))
say ""
say "## ocgc producer overhead"
say ""
say "Machine: $NPROC CPUs, $CPU, clocksource $CLOCKSRC; load average $LOAD0 at start, $LOAD1 at end; $ROUNDS rounds; $ELAPSED s."
say ""
say "| workload | GC rate | stock CPU (IQR/med) | off/stock (IQR/med) | on/stock (IQR/med) | Ir off/stock | Ir on/stock | events/run | ns/event | instr/event |"
say "|---|---|---|---|---|---|---|---|---|---|"
for w in $WORKLOADS; do
  awk -v w="$w" -v pr="$(wl_param "$w")" "$FIGAWK"'
    function sp(c) { return k[c] > 0 ? sprintf("%.1f%%", 100 * (q3[c] - q1[c]) / k[c]) : "n/a" }
    function ratio(a, b) { return (has(a) && has(b) && k[b] > 0) ? sprintf("%.4f", k[a] / k[b]) : "n/a" }
    END {
      rate = "n/a"
      if (has("events") && has("on") && k["on"] > 0)
        rate = sprintf("%.0f k events/s", k["events"] / (k["on"] / 1e6) / 1e3)
      rate = (pr == "" ? "default" : pr) (rate == "n/a" ? "" : ", " rate)
      stock = has("stock") ? sprintf("%.3f s (%s)", k["stock"] / 1e6, sp("stock")) : "n/a"
      off = has("off") ? sprintf("%s (%s)", ratio("off", "stock"), sp("off")) : "n/a"
      on = has("on") ? sprintf("%s (%s)", ratio("on", "stock"), sp("on")) : "n/a"
      ns = (has("on") && has("off") && has("events") && k["events"] > 0) ? sprintf("%.1f", (k["on"] - k["off"]) * 1e3 / k["events"]) : "n/a"
      ipe = (has("ir_on") && has("ir_off") && has("cgevents") && k["cgevents"] > 0) ? sprintf("%.0f", (k["ir_on"] - k["ir_off"]) / k["cgevents"]) : "n/a"
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w, rate, stock, off, on,
        ratio("ir_off", "ir_stock"), ratio("ir_on", "ir_stock"), has("events") ? k["events"] : "n/a", ns, ipe
    }' "$WORK/fig.$w"
done
say ""
say "CPU = user+sys of the child, median of $ROUNDS alternating runs; ratios are ratios of medians; (IQR/med) is that configuration's interquartile range over its median.  Ir = instructions executed under callgrind on shorter inputs (deterministic).  ns/event = (median CPU on - median CPU off) / events written in a timed run; instr/event = (Ir on - Ir off) / events written in the callgrind run.  Per-event CPU figures are meaningful only where events are many (the stress run); elsewhere they are within the noise."
say ""
test "$CLOCK_NS" = n/a ||
  say "One clock_gettime(CLOCK_MONOTONIC) costs $CLOCK_NS ns on this machine; the producer reads the TSC once per hook and the clock about once a millisecond (the clock reads line of the profile above), not once per event."
say ""
say "Targets (not enforced): on vs stock within 0.3% at ordinary GC rates (alloc, promote); under 25 ns per event at the stress rate (stock OCaml 5: the side-by-side table below); off vs stock indistinguishable."
for w in $WORKLOADS; do
  awk -v w="$w" -v pr="$(wl_param "$w")" -v rounds="$ROUNDS" '
    { k[$1] = $2; q1[$1] = $3; q3[$1] = $4 }
    function has(c) { return (c in k) && k[c] != "x" && k[c] != "" }
    # With fewer than 5 rounds the spread means nothing: no CPU verdict.
    function sp(c) { return has(c) && k[c] > 0 && rounds >= 5 ? (q3[c] - q1[c]) / k[c] : 1 }
    function max(a, b) { return a > b ? a : b }
    function pct(r) { return sprintf("%+.2f%%", 100 * (r - 1)) }
    END {
      out = "- " w ":"
      if (pr == "") {
        if (has("on") && has("stock")) {
          r = k["on"] / k["stock"]; noise = max(sp("on"), sp("stock"))
          v = noise > 0.006 ? "inconclusive at this noise" : ((r - 1 <= 0.003) ? "met" : "not met")
          if (rounds < 5) out = out sprintf(" on vs stock CPU %s (too few rounds to judge);", pct(r))
          else out = out sprintf(" on vs stock CPU %s (noise IQR/med %.1f%%: %s);", pct(r), 100 * noise, v)
        } else out = out " on vs stock CPU n/a;"
        if (has("ir_on") && has("ir_stock")) {
          r = k["ir_on"] / k["ir_stock"]
          out = out sprintf(" Ir %s (%s);", pct(r), r - 1 <= 0.003 ? "met" : "not met")
        }
      } else {
        if (has("on") && has("off") && has("events") && k["events"] > 0) {
          ns = (k["on"] - k["off"]) * 1e3 / k["events"]
          out = out sprintf(" %.1f ns/event from medians", ns)
          if (has("p_diff")) {
            lo = q1["p_diff"] * 1e3 / k["events"]; hi = q3["p_diff"] * 1e3 / k["events"]
            v = rounds < 5 ? "too few rounds to judge" : hi < 25 ? "met" : lo > 25 ? "not met" : "inconclusive at this noise"
            out = out sprintf(", paired per-round IQR %.1f..%.1f ns/event (%s);", lo, hi, v)
          } else out = out ";"
        } else out = out " ns/event n/a;"
      }
      if (has("off") && has("stock")) {
        r = k["off"] / k["stock"]; noise = max(sp("off"), sp("stock"))
        out = out sprintf(" off vs stock CPU %s (%s)", pct(r), rounds < 5 ? "too few rounds to judge" : (r - 1 < noise && 1 - r < noise) ? "within the noise" : "outside the noise")
      } else out = out " off vs stock CPU n/a"
      if (has("ir_off") && has("ir_stock")) out = out sprintf(", Ir %s", pct(k["ir_off"] / k["ir_stock"]))
      print out "."
    }' "$WORK/fig.$w"
done
test $HAVE_STOCK = 1 || say "n/a: $WHY_STOCK"
test $HAVE_OCGC = 1 || say "n/a (off, on): $WHY_OCGC"
test $HAVE_CPU = 1 || say "n/a (CPU times): $WHY_CPU"
test $HAVE_CG = 1 || say "n/a (Ir): $WHY_CG"
test $HAVE_DUMP = 1 || say "n/a (events): $WHY_DUMP"
side_by_side
say ""
say "Reproduce: mkdir build && cd build && ${BENCH_SRCDIR%/benchmarks}/configure && make && BENCH_ROUNDS=$ROUNDS BENCH_SCALE=$SCALE BENCH_CALLGRIND=$DO_CG BENCH_CG_SCALE=$CG_SCALE BENCH_WORKLOADS=\"$WORKLOADS\" make bench"
exit 0
