#!/bin/sh
# ocaml5_slicework.sh - the major slices' work of a live stock OCaml 5.3+
# program, exported by ocgc serve and shown by ocgc report, equal to what
# its ring holds.
# slicework (tests/ocaml5/, built with each stock OCaml 5.3+ ocaml5_lib.sh finds)
# allocates, makes Bigarrays, asks for Gc.major_slice n and a full major,
# then waits (writing nothing) while:
# - ocgc serve PID is scraped: the four ocaml_gc_major_* families of the
#   slices' work are there; the histogram's count, the drivers' sum and
#   the slices equal the number of slices whose nine counters the ring
#   holds (ocgc dump --events --ids 5.X of the same file), its sum the
#   slices' work max(target - work counter, budget) summed from those
#   events, the runtime's work done and asked the largest values of its
#   work and alloc counters; slices set by an explicit budget and by extra
#   resources are seen; nothing lost;
# - ocgc report --json and text of the same file have the same figures
#   (major_slice_work, schema version 5, valid against the schema), and a
#   report of an OCaml 5.2 numbering has none (schema version 4);
# - ocgc top PID (in tmux, when tmux can make a terminal here) shows the
#   line of the slices' work, its longest slice the report's.
# Skipped (77) without an OCaml 5 compiler.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
. "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
command -v python3 >/dev/null 2>&1 || { say "skipped: python3 is needed to read the JSON"; exit 77; }

PROG=
trap 'test -n "$PROG" && kill -9 "$PROG" 2>/dev/null; tmux -S "$WORK/tmux.sock" kill-server >/dev/null 2>&1; ocgc_cleanup' EXIT

# on_release: every check below, with the OCaml 5 compiler in use (IDS its
# numbering, 5.3 or 5.4: the nine counters have the same ids in both)
on_release() {
case `ocaml5_version` in
  5.0*|5.1*|5.2*) say "SKIP $IDS: OCaml `ocaml5_version` writes no major-slice work counters (5.3+)"; return ;;
esac
ocaml5_compile "$OCGC_SRCDIR/tests/ocaml5/slicework.ml" "$WORK/slicework" unix
RUN=$WORK/run-$IDS
mkdir "$RUN" || hard_error "cannot make $RUN"
PROG=

(cd "$RUN" && exec env OCAMLRUNPARAM=e=20 OCAML_RUNTIME_EVENTS_START=1 \
   "$WORK/slicework" "$RUN" >"$RUN/sw.out" 2>"$RUN/sw.err") &
PROG=$!
n=0
while ! test -e "$RUN/done"; do
  n=$((n + 1))
  test $n -le 1200 || { cat "$RUN/sw.err"; hard_error "slicework did not finish in 120 s"; }
  kill -0 "$PROG" 2>/dev/null || { cat "$RUN/sw.err"; hard_error "slicework died"; }
  sleep 0.1
done
RING=$RUN/$PROG.events
check_true "the program's ring" test -s "$RING"

# What the ring holds: its events, and from them each slice's nine
# counters (read whole, in order, per ring) summed as the runtime means them.
"$OCGC" dump --events --ids $IDS "$RING" >"$RUN/dump.out" 2>"$RUN/dump.err"
check_eq "dump: exit status" 0 $?
python3 - "$RUN/dump.out" >"$RUN/expect" <<'PY'
import sys
names = ["major_heap_words", "major_allocated_words", "major_allocated_work",
         "major_dependent_work", "major_extra_work", "major_work_counter",
         "major_alloc_counter", "major_slice_target", "major_slice_budget"]
part, slices, work, done, asked, budget, extra = {}, 0, 0, 0, 0, 0, 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 5 or f[2] != "counter" or f[3] not in names:
        continue
    ring, i, v = f[1], names.index(f[3]), int(f[4])
    got = part.setdefault(ring, [])
    if i != len(got):
        got.clear()
        if i != 0:
            continue
    got.append(v)
    if len(got) < 9:
        continue
    heap, alloc, aw, dw, ew, wc, ac, tgt, bud = got
    got.clear()
    s64 = lambda x: x - (1 << 64) if x >= 1 << 63 else x
    lag, b = s64((tgt - wc) % (1 << 64)), s64(bud)
    w = max(lag, b)
    slices += 1
    work += max(w, 0)
    done, asked = max(done, wc), max(asked, ac)
    budget += 1 if b > 0 and b >= lag else 0
    extra += 1 if not (b > 0 and b >= lag) and ew > aw and ew > dw else 0
print(slices, work, done, asked, budget, extra)
PY
set -- `cat "$RUN/expect"`
SLICES=$1 WORK_SUM=$2 DONE=$3 ASKED=$4 BUDGET=$5 EXTRA=$6
say "the ring: $SLICES slices, work $WORK_SUM units, done $DONE, asked $ASKED, $BUDGET by budget, $EXTRA by extra resources"
check_gt "the ring: slices with their counters" 10 "$SLICES"
check_gt "the ring: slices set by an explicit budget" 0 "$BUDGET"
check_gt "the ring: slices set by extra resources" 0 "$EXTRA"

say "== serve"
serve srv --listen 127.0.0.1:0 "$PROG"
watched "$PROG"
# the program writes nothing more: a scrape once serve read the ring whole
n=0
while :; do
  test "`get m /metrics`" = 200 || hard_error "serve answered /metrics `cat "$WORK/m.h" | head -1`"
  got=`val m ocaml_gc_major_slice_work_units_count "$PROG"`
  test "$got" = "$SLICES" && break
  n=$((n + 1)); test $n -le 300 || break
  sleep 0.1
done
check_eq "serve: histogram count = the ring's slices" "$SLICES" "$got"
check_eq "serve: histogram +Inf = the ring's slices" "$SLICES" \
  "`val m ocaml_gc_major_slice_work_units_bucket "$PROG" 'le="+Inf"'`"
check_eq "serve: histogram sum = the ring's work" "$WORK_SUM" "`val m ocaml_gc_major_slice_work_units_sum "$PROG"`"
check_eq "serve: work done = the largest work counter" "$DONE" "`val m ocaml_gc_major_work_done_units_total "$PROG"`"
check_eq "serve: work asked = the largest alloc counter" "$ASKED" "`val m ocaml_gc_major_work_asked_units_total "$PROG"`"
check_eq "serve: drivers summed = the ring's slices" "$SLICES" "`val m ocaml_gc_major_slice_drivers_total "$PROG"`"
check_eq "serve: slices set by a budget" "$BUDGET" "`val m ocaml_gc_major_slice_drivers_total "$PROG" 'driver="budget"'`"
check_eq "serve: slices set by extra resources" "$EXTRA" "`val m ocaml_gc_major_slice_drivers_total "$PROG" 'driver="extra"'`"
check_eq "serve: nothing lost" 0 "`val m ocgc_ring_events_lost_total "$PROG"`"
check_true "serve: the histogram's HELP says its unit" grep -q '^# HELP ocaml_gc_major_slice_work_units .*GC work units' "$WORK/m"
# buckets cumulative, in work units
check_true "serve: buckets cumulative" python3 -c '
import re, sys
v = [int(l.split()[-1]) for l in open(sys.argv[1]) if l.startswith("ocaml_gc_major_slice_work_units_bucket{pid=\"%s\"," % sys.argv[2])]
sys.exit(not (len(v) == 8 and v == sorted(v)))' "$WORK/m" "$PROG"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$WORK/m" >"$RUN/promtool.out" 2>&1
  check_eq "promtool check metrics: status (`head -n 3 "$RUN/promtool.out"`)" 0 $?
  # the OpenMetrics form of the same
  check_eq "scrape (OpenMetrics): status" 200 \
    "`get om /metrics -H 'Accept: application/openmetrics-text; version=1.0.0'`"
  check_true "scrape (OpenMetrics): the histogram's family" \
    grep -q '^# TYPE ocaml_gc_major_slice_work_units histogram' "$WORK/om"
  check_true "scrape (OpenMetrics): a counter's family without _total" \
    grep -q '^# TYPE ocaml_gc_major_work_done_units counter' "$WORK/om"
else
  say "SKIP promtool: not installed"
fi
kill "$srv" 2>/dev/null
ocgc_wait srv

say "== report of the same file"
"$OCGC" report --json --ids $IDS --file "$RING" >"$RUN/rep.json" 2>"$RUN/rep.err"
check_eq "report --json: exit status" 0 $?
check_eq "report --json: slices, work, done, asked" "$SLICES $WORK_SUM $DONE $ASKED" "`python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))["major_slice_work"]
print(w["slices"], w["work"], w["work_done"], w["work_asked"])' "$RUN/rep.json"`"
check_eq "report --json: schema version 5 (it has major_slice_work)" 5 \
  "`python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["schema_version"])' "$RUN/rep.json"`"
"$OCGC" report --ids $IDS --file "$RING" >"$RUN/rep.txt" 2>&1
check_true "report (text): the slices' work" grep -q "^Major slices' work ($SLICES slices" "$RUN/rep.txt"
sed -n "/^Major slices' work/,/^\$/p" "$RUN/rep.txt"
"$OCGC" report --json --ids 5.2 --file "$RING" >"$RUN/rep52.json" 2>&1
check_eq "report --json, 5.2 numbering: no major_slice_work, schema version 4" "False 4" \
  "`python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print("major_slice_work" in j, j["schema_version"])' "$RUN/rep52.json"`"
if python3 -c 'import jsonschema' 2>/dev/null; then
  for f in rep rep52; do
    check_true "report --json ($f): valid against docs/report.schema.json" python3 -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
errs = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errs: print("schema error: %s at %s" % (e.message, "/".join(map(str, e.absolute_path))))
sys.exit(1 if errs else 0)' "$OCGC_SRCDIR/docs/report.schema.json" "$RUN/$f.json"
  done
else
  say "SKIP schema: python3 has no jsonschema module"
fi
say "== top"
TMUX_SOCK=$WORK/tmux.sock
unset TMUX
tm() { tmux -S "$TMUX_SOCK" "$@"; }
if ! command -v tmux >/dev/null 2>&1; then
  say "SKIP top: tmux is missing"
elif ! tm new-session -d -s top -x 200 -y 50 "env LC_ALL=C '$OCGC' top $PROG" >"$RUN/tmux.err" 2>&1; then
  say "SKIP top: tmux cannot make a terminal here (`tr '\n' ' ' <"$RUN/tmux.err"`)"
else
  LONGEST=`python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["major_slice_work"]["longest"]
print("longest %s for %d, set by %s" % ("X", s["work"], s["driver"]))' "$RUN/rep.json" | sed 's/^longest X //'`
  n=0
  while :; do
    tm capture-pane -p -t top >"$RUN/top.screen" 2>/dev/null
    grep -q "^major slices' work (units): " "$RUN/top.screen" && break
    n=$((n + 1)); test $n -le 300 || break
    sleep 0.1
  done
  grep "^major slices' work" "$RUN/top.screen"
  check_true "top: the line of the slices' work" grep -q "^major slices' work (units): longest " "$RUN/top.screen"
  check_true "top: its longest slice is the report's ($LONGEST)" grep -q -F -- "$LONGEST;" "$RUN/top.screen"
  check_true "top: how far the GC is ahead or behind" grep -q "; GC \(ahead\|behind\) by [0-9]" "$RUN/top.screen"
  tm send-keys -t top q
  tm kill-server >/dev/null 2>&1
fi
: >"$RUN/exit"
wait "$PROG"
check_eq "slicework: exit status" 0 $?
PROG=
}

for o5 in $OCAML5_ALL; do
  ocaml5_use "$o5"
  IDS=`ocaml5_version | cut -d. -f1,2`
  say "== OCaml `ocaml5_version`"
  on_release
done
finish
