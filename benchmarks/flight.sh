#!/bin/sh
# flight.sh - what the flight recorder costs and how soon it writes (issue
# 45; `make bench`, alone `make bench-flight`):
#
# 1. A recording: `ocgc flight PID` of a busy program (serve_busy.ml),
#    rings of 2^16 words (the default, 512 KiB) and 2^20 (8 MiB), ROUNDS
#    times each: its wall time, median (IQR), the recording's size and
#    its blocks on disk (the ring's holes stay holes).  Beside it, the
#    anchor: `cp` of a file of the same size (the copy alone, its own
#    page cache), the same rounds.
# 2. A death: `ocgc serve --all --flight-dir` watching one busy program,
#    SIGKILLed, ROUNDS times: from the kill to the recording's name in
#    the folder, median (IQR) and the worst.  Beside it, the anchor: from
#    the same kill to the shell's `wait` returning (the parent's own
#    notice of the death, which nothing can beat).
#
# Set by bench.am: OCGC (or OCGC_BIN and OCGC_LIBDIR), OCGC_STAGE,
# OCAMLFIND, BENCH_SRCDIR.  Knobs: BENCH_FLIGHT_ROUNDS=9.  Prints figures;
# never fails.

ROUNDS=${BENCH_FLIGHT_ROUNDS:-9}
case $ROUNDS in '' | 0 | *[!0-9]*) ROUNDS=9 ;; esac
say() { printf '%s\n' "$*"; }
now_ns() { date +%s%N; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-flightbench.XXXXXX" 2>/dev/null) || { say "n/a: no work folder"; exit 0; }
PIDS=
cleanup() {
  for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -m 700 "$WORK/rings" "$WORK/rec"
if test -n "${OCGC_BIN:-}"; then
  OCGC=$OCGC_BIN
  LD_LIBRARY_PATH=$OCGC_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
fi
test -x "${OCGC:-}" || { say "n/a: no ocgc"; exit 0; }
cp "$BENCH_SRCDIR/serve_busy.ml" "$WORK/" 2>/dev/null || { say "n/a: serve_busy.ml missing"; exit 0; }
(cd "$WORK" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
   -runtime-variant _ocgc serve_busy.ml -o busy) >"$WORK/busy.log" 2>&1 ||
  { say "n/a: the busy program did not build: `tail -n 3 "$WORK/busy.log"`"; exit 0; }

# stats FILE: "median (IQR lo..hi), worst" of the numbers in FILE (one a line)
stats() {
  sort -n "$1" | awk '
    function at(p,   i) { i = int(p * (NR - 1)) + 1; return v[i] }
    { v[NR] = $1 }
    END { if (NR == 0) { print "n/a"; exit }
          printf "%.1f (IQR %.1f..%.1f), worst %.1f", at(0.5), at(0.25), at(0.75), v[NR] }'
}

# start_busy E: a busy program with a ring of 2^E words; its pid in BPID
start_busy() {
  rm -f "$WORK/stop"
  (cd "$WORK" && exec env OCAML_RUNTIME_EVENTS_DIR="$WORK/rings" OCAMLRUNPARAM="s=32k,e=$1" \
     ./busy 2000 20 "$WORK/stop" >/dev/null 2>&1) &
  BPID=$!
  PIDS="$PIDS $BPID"
  n=0
  while ! test -e "$WORK/rings/$BPID.events" && test $n -lt 500; do n=$((n + 1)); sleep 0.01; done
  sleep 0.5 # its ring full and wrapping
}

say "load at start: `cut -d' ' -f1-3 /proc/loadavg`; $ROUNDS rounds each"
say
say "| ring | ocgc flight PID, ms | recording: bytes, on disk | anchor: cp of as many bytes, ms |"
say "|---|---|---|---|"
for e in 16 20; do
  start_busy $e
  : >"$WORK/t.flight"; : >"$WORK/t.cp"
  r=0 size=? disk=?
  while test $r -lt "$ROUNDS"; do
    rm -f "$WORK/rec"/*
    t0=`now_ns`
    f=`"$OCGC" flight --dir "$WORK/rings" --flight-dir "$WORK/rec" "$BPID" 2>"$WORK/flight.err"` ||
      { say "| 2^$e | n/a: `head -n 1 "$WORK/flight.err"` | | |"; break; }
    t1=`now_ns`
    echo $(( (t1 - t0) / 1000 )) | awk '{ print $1 / 1000 }' >>"$WORK/t.flight"
    size=`stat -c %s "$f"`; disk=`du -k "$f" | cut -f1`
    test -e "$WORK/same" || head -c "$size" /dev/urandom >"$WORK/same"
    t0=`now_ns`; cp "$WORK/same" "$WORK/copy"; t1=`now_ns`
    echo $(( (t1 - t0) / 1000 )) | awk '{ print $1 / 1000 }' >>"$WORK/t.cp"
    rm -f "$WORK/copy"
    r=$((r + 1))
  done
  rm -f "$WORK/same"
  test $r -eq "$ROUNDS" &&
    say "| 2^$e words | `stats "$WORK/t.flight"` | $size, $disk KiB | `stats "$WORK/t.cp"` |"
  : >"$WORK/stop"; wait "$BPID" 2>/dev/null
done

say
say "| a SIGKILLed program under serve --flight-dir | ms |"
say "|---|---|"
: >"$WORK/serve.err"
"$OCGC" serve --listen 127.0.0.1:0 --all --dir "$WORK/rings" --program '^busy$' \
  --flight-dir "$WORK/rec" --flight-cooldown 0 2>"$WORK/serve.err" &
SPID=$!
PIDS="$PIDS $SPID"
n=0
while ! grep -q 'listening on' "$WORK/serve.err" && test $n -lt 1000; do n=$((n + 1)); sleep 0.01; done
: >"$WORK/t.rec"; : >"$WORK/t.wait"
r=0
while test $r -lt "$ROUNDS"; do
  rm -f "$WORK/rec"/*
  start_busy 16
  sleep 0.5 # watched (by inotify, at once) and recorded for a while
  t0=`now_ns`
  kill -9 "$BPID"
  wait "$BPID" 2>/dev/null
  t1=`now_ns`
  n=0
  while ! ls "$WORK/rec" | grep -q 'death\.ocgcrec$' && test $n -lt 3000; do
    n=$((n + 1)); sleep 0.001
  done
  t2=`now_ns`
  echo $(( (t2 - t0) / 1000 )) | awk '{ print $1 / 1000 }' >>"$WORK/t.rec"
  echo $(( (t1 - t0) / 1000 )) | awk '{ print $1 / 1000 }' >>"$WORK/t.wait"
  r=$((r + 1))
done
say "| kill to the recording in the folder | `stats "$WORK/t.rec"` |"
say "| anchor: kill to the parent's wait returning | `stats "$WORK/t.wait"` |"
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
say
say "load at end: `cut -d' ' -f1-3 /proc/loadavg`"
exit 0
