#!/bin/sh
# cpucost.sh - what sampling a program's CPU from outside costs it (issue
# 44 item 6; `make bench`): the target's CPU and wall-clock time for a
# fixed amount of work with no sampler (the baseline), with ocgc's sampler
# at the default frequency (100 Hz, as Go's profile) and at ten times it
# (1000 Hz), and with `perf record --call-graph dwarf` at the same two
# frequencies (the cpu-clock event, as ours: no hardware PMU is needed).
# The five configurations run in rounds, interleaved (baseline, ocgc 100,
# perf 100, ocgc 1000, perf 1000, then again), so that drift in the
# machine's load hits all alike; each figure is the per-round ratio to that
# round's baseline, median (interquartile range over the rounds).  Beside
# it, the sampler's own CPU (user+sys of the driver process, from its
# start to its exit) per second of the target's CPU time, and the samples
# it got per second of the target's CPU (the frequency, less what was
# lost).  Each round also runs each sampler once on a target that does no
# work: its fixed cost, from which its CPU is split into once, per second
# and per sample (a fit to the medians at the two frequencies).
#
# Each workload (benchmarks/bintree.ml, threads.ml, alloc.ml) is linked
# after cpugate.ml, which holds the work until the sampler runs and
# measures the work alone (see there): both samplers attach to a running
# PID, as an operator would, and the start-up is in no figure.
#
# What differs between the two samplers, and is not hidden by the figures:
# ocgc's driver unwinds and names every sample as it comes (its CPU
# includes that, and its start: reading the files' symbols and CFI); perf
# only copies each sample's stack (8 KiB, its default; ocgc copies 16 KiB)
# to a file and unwinds later, in `perf report`, whose CPU is the last
# column (once a frequency, the last round's file).  perf samples kernel
# time too where allowed (ocgc: user only).  ocgc's driver here
# (tests/attach/cpu_sample) reads each thread's 256 KiB ring every 20 ms,
# which holds some 15 samples: at 1000 Hz some are lost (counted in the
# samples column), and a lost sample costs the target no stack copy.
#
# Set by bench.am: OCGC_STAGE OCAMLFIND BENCH_SRCDIR CPUTIME OCGC_BUILDDIR
#   CPU_SAMPLE (the driver binary) and CPU_SAMPLE_LIBDIR (its libocgc)
# Knobs: BENCH_CPU_ROUNDS=5 (rounds), BENCH_CPU_SCALE=1 (work per run),
#   BENCH_CPU_WORKLOADS="bintree threads" (or alloc), BENCH_CPU_PERF=perf,
#   BENCH_CPU_REPORT=1 (0: no perf report column), BENCH_CPU_KEEP (set:
#   the work folder is kept, its path printed), BENCH_CPU_DRIVER and
#   BENCH_CPU_READY (below).
# Prints figures; never fails.

ROUNDS=${BENCH_CPU_ROUNDS:-5}
SCALE=${BENCH_CPU_SCALE:-1}
WORKLOADS=${BENCH_CPU_WORKLOADS:-bintree threads}
PERF=${BENCH_CPU_PERF:-perf}
DO_REPORT=${BENCH_CPU_REPORT:-1}
case $ROUNDS in '' | 0 | *[!0-9]*) ROUNDS=5 ;; esac
HZ_DEFAULT=100
HZ_TEN=1000
CONFIGS="base ocgc$HZ_DEFAULT perf$HZ_DEFAULT ocgc$HZ_TEN perf$HZ_TEN"

# The sampler driver: the one thing to change once `ocgc profile PID --cpu`
# exists (issue 44 item 4).  A command line, evaluated with $PID and $HZ
# set, that samples PID at HZ until PID exits, and prints on its stdout a
# line matching CPU_READY (grep) once its sampling runs: the work starts
# then.  Today tests/attach/cpu_sample (libocgc's public API: it reads,
# unwinds and names each sample, for at most 60 s; "threads_at_open N"
# once its events are open).  With the profile command, something like
#   BENCH_CPU_DRIVER='"$OCGC" profile $PID --cpu --frequency $HZ --duration 60s -o "$RUN/p.pb"'
#   BENCH_CPU_READY='<the line it prints once sampling>'
# (BENCH_CPU_READY='' for a driver that prints no such line: the work
# then starts 2 s after the driver).
CPU_DRIVER=${BENCH_CPU_DRIVER:-'"$CPU_SAMPLE" $PID 60 $HZ 0'}
CPU_READY=${BENCH_CPU_READY-'^threads_at_open '}

say() { printf '%s\n' "$*"; }
now_s() { date +%s; }
T_START=$(now_s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-cpubench.XXXXXX" 2>/dev/null) || { say "n/a: no work folder"; exit 0; }
trap 'test -n "${BENCH_CPU_KEEP:-}" || rm -rf "$WORK"' EXIT
mkdir -m 700 "$WORK/rings"
if test -n "${CPU_SAMPLE_LIBDIR:-}"; then
  LD_LIBRARY_PATH=$CPU_SAMPLE_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
fi

test -x "${CPUTIME:-}" || { say "n/a: no cputime helper"; exit 0; }

# ---- the workloads --------------------------------------------------------------------------
# workload -> program and argument: about 0.7 s of CPU at scale 1 on an
# idle core of this machine (a loaded one takes longer)
wl_cmd() {
  case $1 in
  bintree) echo "bintree `awk -v s="$SCALE" 'BEGIN { d = 18; while (s >= 2) { d++; s /= 2 } print d }'`" ;;
  threads) echo "threads `awk -v s="$SCALE" 'BEGIN { print int(150000 * s) }'`" ;;
  alloc) echo "alloc `awk -v s="$SCALE" 'BEGIN { print int(700000 * s) }'`" ;;
  esac
}
for w in $WORKLOADS; do
  case $w in bintree | threads | alloc) ;; *) say "n/a: unknown workload $w"; exit 0 ;; esac
  cp "$BENCH_SRCDIR/$w.ml" "$WORK/" 2>/dev/null || { say "n/a: $w.ml missing"; exit 0; }
done
cp "$BENCH_SRCDIR/cpugate.ml" "$WORK/" 2>/dev/null || { say "n/a: cpugate.ml missing"; exit 0; }
for w in $WORKLOADS; do
  case $w in threads) pk="-thread -package unix,threads.posix" ;; *) pk="-package unix" ;; esac
  # -g: the CFI and line tables a profile uses, as a user building for it
  (cd "$WORK" && "$OCAMLFIND" ocamlopt -g $pk -linkpkg -I "$OCGC_STAGE" \
     -runtime-variant _ocgc cpugate.ml "$w.ml" -o "$w") >"$WORK/$w.log" 2>&1 ||
    { say "n/a: $w did not build: `tail -n 3 "$WORK/$w.log"`"; exit 0; }
done

# ---- which samplers can run -------------------------------------------------------------------
HAVE_OCGC=1 WHY_OCGC=
# a build without shared libraries has no .libs: the program itself
if ! test -x "${CPU_SAMPLE:-}" && test -x "${OCGC_BUILDDIR:-}/tests/attach/cpu_sample"; then
  CPU_SAMPLE=$OCGC_BUILDDIR/tests/attach/cpu_sample
fi
HAVE_PERF=1 WHY_PERF=
if test -z "${CPU_SAMPLE:-}" || ! test -x "$CPU_SAMPLE"; then
  case $CPU_DRIVER in
  *'$CPU_SAMPLE'*) HAVE_OCGC=0 WHY_OCGC="the driver tests/attach/cpu_sample did not build" ;;
  esac
fi
if ! command -v "$PERF" >/dev/null 2>&1; then
  HAVE_PERF=0 WHY_PERF="$PERF is not installed"
elif ! "$PERF" record -e cpu-clock -F $HZ_DEFAULT --call-graph dwarf -N -o "$WORK/probe.data" \
       -- true >/dev/null 2>"$WORK/probe.err"; then
  HAVE_PERF=0
  WHY_PERF="perf record refused: `grep -v '^ *$' "$WORK/probe.err" | head -n 3 | tr '\n' ' '`"
fi
rm -f "$WORK/probe.data"

# alive PID: running and not a zombie (a zombie child answers kill -0)
alive() {
  st=`cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null`
  test -n "$st" && test "$st" != Z
}
# wait_for TEST... : poll TEST every 10 ms, at most 30 s; false on timeout
wait_for() {
  n=0
  while ! "$@"; do
    n=$((n + 1))
    test $n -le 3000 || return 1
    sleep 0.01
  done
}
ready_or_dead() { test -f "$RUN/ready" || ! alive "$TPID"; }
driver_ready() { grep -q "$2" "$1" 2>/dev/null || ! alive "$DPID"; }
# stop_driver: the driver should end with the target; past 60 s more it is
# ended (the process cputime runs, then cputime)
stop_driver() {
  n=0
  while alive "$DPID" && test $n -lt 3000; do n=$((n + 1)); sleep 0.02; done
  if alive "$DPID"; then
    for c in `cat "/proc/$DPID/task/$DPID/children" 2>/dev/null`; do kill "$c" 2>/dev/null; done
    say "warning: the $1 driver did not end with its target: stopped"
  fi
  wait "$DPID"
}

# one_run WORKLOAD CONFIG ROUND: one run of the target under CONFIG
# (base; ocgcHZ or perfHZ; ocgcHZ.idle or perfHZ.idle: the same with a
# target that does no work, the sampler's fixed cost); appends
# "ROUND CONFIG WALL_US CPU_US DRIVER_US SAMPLES LOST SYS_US" to
# $WORK/fig.WORKLOAD (x where not measured)
one_run() {
  w=$1 cfg=$2 r=$3
  RUN=$WORK/run
  rm -rf "$RUN"
  mkdir "$RUN" && mkfifo "$RUN/go" || return
  set -- `wl_cmd "$w"`
  prog=$1
  shift
  case $cfg in *.idle) set -- 0 ;; esac
  exec 5<>"$RUN/go"
  (cd "$WORK" && exec env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" BENCH_GATE="$RUN" \
     "./$prog" "$@" >/dev/null 2>"$RUN/target.err" 5>&-) &
  TPID=$!
  wait_for ready_or_dead
  DPID= drv=x samples=x lost=x ok=1
  case $cfg in
  ocgc*)
    PID=$TPID HZ=${cfg#ocgc} HZ=${HZ%.idle}
    eval "set -- $CPU_DRIVER"
    "$CPUTIME" "$@" >"$RUN/drv.out" 2>"$RUN/drv.err" 5>&- &
    DPID=$!
    if test -z "$CPU_READY"; then
      sleep 2
    elif ! wait_for driver_ready "$RUN/drv.out" "$CPU_READY"; then
      say "note: no line matching '$CPU_READY' from the driver in 30 s: the work starts anyway"
    fi
    ;;
  perf*)
    HZ=${cfg#perf} HZ=${HZ%.idle}
    mkfifo "$RUN/ctl"
    exec 3<>"$RUN/ctl"
    # -D -1 and enable on the control FIFO: "Events enabled" once sampling
    "$CPUTIME" "$PERF" record -e cpu-clock -F "$HZ" --call-graph dwarf -N -D -1 --control fd:3 \
      -o "$RUN/perf.data" -p "$TPID" >"$RUN/drv.out" 2>"$RUN/drv.err" 5>&- &
    DPID=$!
    echo enable >&3
    wait_for driver_ready "$RUN/drv.err" "Events enabled"
    ;;
  esac
  if test -n "$DPID" && ! alive "$DPID"; then
    ok=0
    why=`grep -v '^ *$' "$RUN/drv.err" | grep -v '^Events' | head -n 2 | tr '\n' ' '`
    case $cfg in
    ocgc*) HAVE_OCGC=0 WHY_OCGC="the driver failed: ${why:-no message}" ;;
    perf*) HAVE_PERF=0 WHY_PERF="perf record failed: ${why:-no message}" ;;
    esac
  fi
  echo go >&5
  exec 5>&-
  wait "$TPID"
  trc=$?
  test -n "$DPID" && stop_driver "$cfg"
  exec 3>&-
  test "$trc" = 0 && test -s "$RUN/times" || ok=0
  if test -n "$DPID"; then
    # cputime's line is the last of its stdout
    drv=`tail -n 1 "$RUN/drv.out" | awk 'NF == 5 { print $1 + $2 }'`
    case $cfg in
    ocgc*)
      samples=`awk '$1 == "samples" { print $2 }' "$RUN/drv.out"`
      lost=`awk '$1 == "lost" { print $2 }' "$RUN/drv.out"`
      ;;
    perf*)
      samples=`sed -n 's/.*perf.data (\([0-9]*\) samples).*/\1/p' "$RUN/drv.err"`
      lost=`sed -n 's/.*[Ll]ost \([0-9]*\) samples.*/\1/p' "$RUN/drv.err" | head -n 1`
      lost=${lost:-0}
      test "$r" = "$ROUNDS" && test $ok = 1 && mv "$RUN/perf.data" "$WORK/keep.$w.$cfg.data" 2>/dev/null
      ;;
    esac
  fi
  if test $ok = 1; then
    read wall user sys <"$RUN/times"
    echo "$r $cfg $wall $((user + sys)) ${drv:-x} ${samples:-x} ${lost:-x} $sys" >>"$WORK/fig.$w"
  elif test "$trc" != 0; then
    say "note: $w under $cfg, round $r: the target exited $trc: `head -n 2 "$RUN/target.err" | tr '\n' ' '`"
  fi
  rm -f "$WORK/rings"/* 2>/dev/null
  rm -rf "$RUN"
}

# ---- the runs ---------------------------------------------------------------------------------
for w in $WORKLOADS; do
  : >"$WORK/fig.$w"
  r=1
  while test $r -le "$ROUNDS"; do
    for cfg in $CONFIGS ocgc$HZ_DEFAULT.idle perf$HZ_DEFAULT.idle; do
      case $cfg in
      ocgc*) test $HAVE_OCGC = 1 || continue ;;
      perf*) test $HAVE_PERF = 1 || continue ;;
      esac
      one_run "$w" "$cfg" "$r"
    done
    r=$((r + 1))
  done
  # perf's deferred unwinding and naming: `perf report` of the last
  # round's file, its CPU beside that run's target CPU and samples
  for cfg in perf$HZ_DEFAULT perf$HZ_TEN; do
    f=$WORK/keep.$w.$cfg.data
    test "$DO_REPORT" = 1 && test -s "$f" || continue
    rep=`"$CPUTIME" -q "$PERF" report -i "$f" --stdio 2>/dev/null | awk 'NF == 5 && $4 == 0 { print $1 + $2 }'`
    tcpu=`awk -v c="$cfg" -v r="$ROUNDS" '$1 == r && $2 == c { print $4, $6 }' "$WORK/fig.$w"`
    test -n "$rep" && test -n "$tcpu" && echo "$cfg $rep $tcpu" >>"$WORK/report.$w"
    rm -f "$f"
  done
done

# ---- the table --------------------------------------------------------------------------------
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
say "Machine: `nproc 2>/dev/null || echo '?'` CPUs, load average $LOAD0 at start, $LOAD1 at end; $ROUNDS rounds; $(($(now_s) - T_START)) s."
say ""
say "| workload | sampler | Hz | target CPU / baseline | target wall / baseline | samples per target CPU-s (lost) | sampler CPU, ms per target CPU-s | perf report CPU, ms per target CPU-s |"
say "|---|---|---|---|---|---|---|---|"
: >"$WORK/models"
for w in $WORKLOADS; do
  touch "$WORK/report.$w"
  awk -v w="$w" -v cfgs="$CONFIGS" -v lo=$HZ_DEFAULT -v hi=$HZ_TEN -v models="$WORK/models" '
    FILENAME ~ /report/ { rep[$1] = $2; repcpu[$1] = $3; repsmp[$1] = $4; next }
    { wall[$1, $2] = $3; cpu[$1, $2] = $4; drv[$1, $2] = $5; smp[$1, $2] = $6; lst[$1, $2] = $7; sys[$1, $2] = $8; rounds[$1] = 1 }
    function sort(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x } }
    # quantile p of the sorted a[1..n], interpolated
    function qt(p, n,   x, i) { x = 1 + (n - 1) * p; i = int(x); return i >= n ? a[n] : a[i] + (x - i) * (a[i + 1] - a[i]) }
    # fig(kind, cfg, fmt): median (interquartile range) over the rounds
    function fig(kind, c, fmt,   n) {
      n = collect(kind, c)
      if (n == 0) return "n/a"
      return sprintf(fmt " (" fmt ".." fmt ")", qt(0.5, n), qt(0.25, n), qt(0.75, n))
    }
    function median(kind, c,   n) { n = collect(kind, c); return n == 0 ? "" : qt(0.5, n) }
    # collect(kind, cfg): into a[1..n], sorted, the values of the rounds
    # where cfg and the baseline were both measured: the ratio to the
    # baseline (cpu, wall), the time itself in s (abscpu, abswall), the
    # system share of the CPU (sys), ms of driver CPU per target CPU-s
    # (drv; net: less the median fixed cost), samples per target CPU-s
    # (smp), the fixed cost in ms (idle: no baseline needed); returns n
    function collect(kind, c,   r, n, v) {
      n = 0
      delete a
      for (r in rounds) {
        if (!((r, c) in cpu)) continue
        if (kind == "idle") { if (drv[r, c] == "x") continue; a[++n] = drv[r, c] / 1e3; continue }
        if (!((r, "base") in cpu) || cpu[r, "base"] <= 0 || wall[r, "base"] <= 0 || cpu[r, c] <= 0) continue
        if (kind == "cpu") v = cpu[r, c] / cpu[r, "base"]
        else if (kind == "wall") v = wall[r, c] / wall[r, "base"]
        else if (kind == "abscpu") v = cpu[r, c] / 1e6
        else if (kind == "abswall") v = wall[r, c] / 1e6
        else if (kind == "sys") v = 100 * sys[r, c] / cpu[r, c]
        else if (kind == "drv") { if (drv[r, c] == "x") continue; v = drv[r, c] / cpu[r, c] * 1e3 }
        else if (kind == "net") { if (drv[r, c] == "x" || fx[c] == "") continue; v = (drv[r, c] - fx[c] * 1e3) / cpu[r, c] * 1e3 }
        else if (kind == "smp") { if (smp[r, c] == "x") continue; v = smp[r, c] / (cpu[r, c] / 1e6) }
        a[++n] = v
      }
      sort(a, n)
      return n
    }
    function lost(c,   r, t, any) {
      t = 0; any = 0
      for (r in rounds) if ((r, c) in lst && lst[r, c] != "x") { t += lst[r, c]; any = 1 }
      return any ? t : "n/a"
    }
    # model(sampler): its CPU = F once + T per target CPU-s + S per
    # sample; F from the idle runs, T and S from the medians at the two
    # frequencies (ms per target CPU-s less F, against samples per CPU-s)
    function model(sm,   d0, d1, n0, n1, S, T) {
      if (fx[sm] == "") return ""
      fx[sm lo] = fx[sm]; fx[sm hi] = fx[sm]
      d0 = median("net", sm lo); d1 = median("net", sm hi); n0 = median("smp", sm lo); n1 = median("smp", sm hi)
      if (d0 == "" || d1 == "" || n0 == "" || n1 == "" || n1 <= n0) return ""
      S = (d1 - d0) / (n1 - n0); T = d0 - S * n0
      return sprintf("%.1f ms once + %.1f ms per target CPU-s + %.1f us per sample", fx[sm], T, S * 1e3)
    }
    END {
      fx["ocgc"] = median("idle", "ocgc" lo ".idle"); fx["perf"] = median("idle", "perf" lo ".idle")
      n = split(cfgs, cf, " ")
      for (i = 1; i <= n; i++) {
        c = cf[i]
        if (c == "base") {
          printf "| %s | none (baseline) | - | %s s, %s%% sys | %s s | - | - | - |\n", w, fig("abscpu", c, "%.3f"), fig("sys", c, "%.0f"), fig("abswall", c, "%.3f")
          continue
        }
        sm = c ~ /^ocgc/ ? "ocgc" : "perf"
        s = sm == "ocgc" ? "ocgc" : "perf record --call-graph dwarf"
        hz = c; sub(/^[a-z]*/, "", hz)
        smp_ = fig("smp", c, "%.0f")
        if (smp_ != "n/a") smp_ = smp_ " (" lost(c) " lost in all)"
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", w, s, hz, fig("cpu", c, "%.4f"), fig("wall", c, "%.4f"),
          smp_, fig("drv", c, "%.1f"),
          ((c in rep) && repcpu[c] > 0 ? sprintf("%.1f (one run)", rep[c] / repcpu[c] * 1e3) : (sm == "perf" ? "n/a" : "- (online: in the sampler)"))
      }
      line = ""
      if ((m = model("ocgc")) != "") line = line "; ocgc: " m
      if ((m = model("perf")) != "") line = line "; perf record: " m
      if (("perf" lo) in rep && ("perf" hi) in rep && repsmp["perf" hi] > repsmp["perf" lo]) {
        S = (rep["perf" hi] - rep["perf" lo]) / (repsmp["perf" hi] - repsmp["perf" lo])
        line = line sprintf("; perf report: %.1f ms once + %.1f us per sample", (rep["perf" lo] - S * repsmp["perf" lo]) / 1e3, S)
      }
      if (line != "") print "- " w ": " substr(line, 3) >> models
    }' "$WORK/report.$w" "$WORK/fig.$w"
done
if test -s "$WORK/models"; then
  say ""
  say "Where the sampler's CPU goes, F once + T per target CPU-s + S per sample: F is the median of runs whose target does no work (attaching, reading the files, ending; for perf its header and build-ids), T and S are fitted to the medians at $HZ_DEFAULT and $HZ_TEN Hz (T: reading on a timer, whatever comes, and one-time costs the idle run does not meet, as ocgc reading the symbol tables at its first name; S: each sample's copy, and for ocgc its unwinding and naming).  A rough fit: where F dwarfs the rest (perf, in runs this short) T and S are within the noise, even negative.  perf report: from the last round's two files."
  cat "$WORK/models"
fi
say ""
say "Per configuration: the per-round ratio to that round's baseline (for the baseline its own time and the system share of it), median (interquartile range) over the rounds; target times are the work's alone (cpugate.ml: from the go line to exit), CPU = user+sys of all its threads.  Samples per target CPU-s fall short of the frequency by what was lost and, for ocgc (user space only), by the target's time in the kernel.  Sampler CPU: the driver process's user+sys from its start to its exit (its set-up included), per second of the target's CPU time.  perf report: its CPU to read, unwind and name the last round's file (one run: perf's deferred share of what ocgc's driver does as it reads)."
PID=PID HZ=HZ
eval "set -- $CPU_DRIVER"
say "ocgc's driver: `printf '%s' "$*" | sed "s|${OCGC_BUILDDIR:-//}/||g"` (cpu-clock, user space, 16 KiB of stack a sample; it unwinds and names each sample as it reads).  perf: $PERF record -e cpu-clock -F HZ --call-graph dwarf -N -D -1 --control fd:N -o TMPDIR/perf.data -p PID (8 KiB of stack a sample, kernel samples too where allowed)."
test $HAVE_OCGC = 1 || say "n/a (ocgc): $WHY_OCGC"
test $HAVE_PERF = 1 || say "n/a (perf): $WHY_PERF"
say ""
test -n "${BENCH_CPU_KEEP:-}" && say "kept: $WORK"
say "Reproduce: make bench (this part: BENCH_CPU_ROUNDS=$ROUNDS BENCH_CPU_SCALE=$SCALE BENCH_CPU_WORKLOADS=\"$WORKLOADS\")"
exit 0
