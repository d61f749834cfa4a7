#!/bin/sh
# ocaml5_live.sh - live stock OCaml 5 programs with two domains, one of
# them forking, followed by PID, on each OCaml 5 release ocaml5_lib.sh
# finds (the trixie root's 5.3 and the forky root's 5.4 when both are made;
# each part says which it ran on).
# multidomain (tests/ocaml5/, built with that stock OCaml by ocaml5_lib.sh)
# forks, then parent and child each churn on two domains (a second domain
# spawned, joined, Gc.full_major, Gc.compact, a domain again) between two
# Gc.quick_stat, at a handshake: each writes ROLE.pid, waits for ROLE.go,
# writes the differences to ROLE.stat, waits for ROLE.exit.  The readers
# are started first, and ROLE.go made once each said on stderr which
# numbering it reads with, which it says after its window began.  Then:
# - ocgc report --json (parent and child) and ocgc stat --json (rows
#   summed): minor collections, major cycles, compactions and forced majors
#   equal to Gc.quick_stat's (a collection of both domains counted once),
#   nothing lost, numbering the release's own (5.4 for 5.4.1) "from the
#   executable";
# - ocgc trace: the main domain's minor, compact and major_gc_cycle_domains
#   slices are as many (it takes part in every collection), and the second
#   domain's own slices are in it (tid 1: per-domain durations);
# - ocgc ls --json lists both processes, stock ("ocaml": "5"), running;
# - ocgc profile says in one line that a stock runtime keeps no
#   allocation profile (exit 9);
# - ocgc report PID --duration 3s on programs that keep churning: a window
#   of about 3 s from the attach (not the clock's origin), GC share < 1;
#   ocgc dump says the numbering and where it came from (the executable,
#   --ids, assumed for a bare file); ocgc serve --textfile exports the
#   process's minor collections;
# - the same program with its OCaml version made one newer than every
#   table (its bytes "5.4.1" made "5.9.1"): ocgc report refuses it (exit 4)
#   in one line naming the releases known and --ids, and reads it with
#   --ids;
# - minors (one domain, OCAML_RUNTIME_EVENTS_PRESERVE): its preserved ring
#   read with `ocgc report --file --ids X.Y --json` counts as many minor
#   collections as its own Gc.quick_stat at exit.
# Rings of e=20: OCaml 5.3 writes a dozen events per major slice.  Skipped
# (77) without an OCaml 5 compiler.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
. "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"
command -v python3 >/dev/null 2>&1 || { say "skipped: python3 is needed to read the JSON"; exit 77; }

PIDS=
trap 'for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; ocgc_cleanup' EXIT

# wait_file FILE [WHAT]: until FILE exists (60 s at most)
wait_file() {
  _n=0
  while ! test -e "$1"; do
    _n=$((_n + 1))
    test $_n -le 1200 || hard_error "no ${2:-$1} after 60 s"
    sleep 0.05
  done
}

# wait_said FILE: until a reader's stderr says its numbering (its window began)
wait_said() {
  _n=0
  while ! grep -q 'a stock OCaml 5 ring, read with' "$1" 2>/dev/null; do
    _n=$((_n + 1))
    test $_n -le 1200 || { cat "$1"; hard_error "`basename "$1"`: the reader said nothing in 60 s"; }
    sleep 0.05
  done
}

# start ROUNDS [PROGRAM]: multidomain (or PROGRAM) in $RUN, its ring in
# $RUN too; PARENT and CHILD
start() {
  rm -rf "$RUN"
  mkdir "$RUN" || hard_error "cannot make $RUN"
  (cd "$RUN" && exec env OCAMLRUNPARAM=e=20 OCAML_RUNTIME_EVENTS_START=1 \
     "${2:-$WORK/multidomain}" "$RUN" "$1" >"$RUN/md.out" 2>"$RUN/md.err") &
  PIDS="$PIDS $!"
  wait_file "$RUN/parent.pid" "parent.pid"
  wait_file "$RUN/child.pid" "child.pid"
  PARENT=`cat "$RUN/parent.pid"`
  CHILD=`cat "$RUN/child.pid"`
  PIDS="$PIDS $PARENT $CHILD"
}

# bg NAME COMMAND...: a reader in the background, out and err in $RUN
bg() {
  _name=$1; shift
  "$@" >"$RUN/$_name.out" 2>"$RUN/$_name.err" &
  PIDS="$PIDS $!"
  eval "BG_$_name=$!"
}

# qkey ROLE KEY: what the program's Gc.quick_stat said
qkey() { getkey "$RUN/$1.stat" "$2"; }

# json FILE EXPR: a figure of a JSON file (python3 expression over j)
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# live_on RELEASE: the parts above on programs built with that OCaml 5
live_on() {
  ocaml5_use "$1"
  V=`ocaml5_version`
  IDS=`ocaml5_ids`
  RUN=$WORK/run-$V
  ocaml5_compile "$OCGC_SRCDIR/tests/ocaml5/multidomain.ml" "$WORK/multidomain" unix
  ocaml5_compile "$OCGC_SRCDIR/tests/ocaml5/minors.ml" "$WORK/minors" unix
# (the body is not indented: it holds python programs)
say "== OCaml $V: two domains, one forking: report, stat, trace, ls against Gc.quick_stat"
start 120000
bg rep_parent "$OCGC" report --json "$PARENT" --duration 120s
bg rep_child "$OCGC" report --json "$CHILD" --duration 120s
bg stat "$OCGC" stat --json "$PARENT" 0.2
bg trace "$OCGC" trace "$PARENT" -o "$RUN/trace.json" --duration 120s
for r in rep_parent rep_child stat trace; do wait_said "$RUN/$r.err"; done
"$OCGC" ls --json >"$RUN/ls.out" 2>"$RUN/ls.err"
check_eq "ls: exit status" 0 $?
# A stock runtime keeps no allocation profile: ocgc profile says so, once.
"$OCGC" profile "$PARENT" --rate 64k -o "$RUN/p.pb.gz" >/dev/null 2>"$RUN/profile.err"
check_eq "profile of a stock program: exit 9" 9 $?
check_eq "profile of a stock program: one line" 1 "`wc -l <"$RUN/profile.err" | tr -d ' '`"
check_true "profile of a stock program: it says why" grep -q "no allocation profile" "$RUN/profile.err"
check_false "profile of a stock program: no file" test -e "$RUN/p.pb.gz"
: >"$RUN/parent.go"
: >"$RUN/child.go"
wait_file "$RUN/parent.stat"
wait_file "$RUN/child.stat"
: >"$RUN/child.exit"
: >"$RUN/parent.exit"
for r in rep_parent rep_child stat trace; do
  eval "wait \$BG_$r"
  check_eq "$r: exit status" 0 $?
done

for role in parent child; do
  f=$RUN/rep_$role.out
  check_eq "report $role: numbering" "$IDS executable $V" \
    "`json "$f" "j['source']['ids'], j['source']['ids_from'], j['source']['ids_ocaml']" | tr -d "(),'"`"
  check_eq "report $role: events lost" 0 "`json "$f" "j['events']['lost']"`"
  check_eq "report $role: minor collections = Gc.quick_stat" "`qkey $role minor_collections`" \
    "`json "$f" "j['counts']['collections']['minor']"`"
  check_eq "report $role: major cycles = Gc.quick_stat" "`qkey $role major_collections`" \
    "`json "$f" "j['counts']['major_cycles']"`"
  check_eq "report $role: compactions = Gc.quick_stat" "`qkey $role compactions`" \
    "`json "$f" "j['counts']['collections']['compaction']"`"
  check_eq "report $role: forced majors = Gc.quick_stat" "`qkey $role forced_major_collections`" \
    "`json "$f" "j['counts']['forced_majors']"`"
  check_true "report $role: a heap" test "`json "$f" "j['heap']['heap_bytes']"`" -gt 0
  check_true "report $role: compaction caused explicit" test \
    "`json "$f" "[c['count'] for c in j['causes'] if c['kind'] == 'compaction' and c['cause'] == 'explicit']"`" = "[1]"
done
say "Gc.quick_stat parent: `tr '\n' ' ' <"$RUN/parent.stat"`"
say "Gc.quick_stat child:  `tr '\n' ' ' <"$RUN/child.stat"`"

# stat: the rows summed
SUMS=`python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(*(sum(r[k] for r in rows) for k in ("minor_collections", "major_cycles", "compactions", "forced_majors", "events_lost")))
' "$RUN/stat.out"`
check_eq "stat parent: minor, major cycles, compactions, forced, lost" \
  "`qkey parent minor_collections` `qkey parent major_collections` `qkey parent compactions` `qkey parent forced_major_collections` 0" \
  "$SUMS"

# trace: the main domain's slices, and the second domain's own
SLICES=`python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
n = lambda name, tid: sum(1 for e in ev if e.get("ph") == "X" and e.get("name") == name and e.get("tid") == tid)
print(n("minor", 0), n("major_gc_cycle_domains", 0), n("compact", 0), n("minor", 1) > 0)
' "$RUN/trace.json"`
check_eq "trace parent: main domain's minor, cycle, compact slices; domain 1's minors" \
  "`qkey parent minor_collections` `qkey parent major_collections` `qkey parent compactions` True" \
  "$SLICES"
check_true "trace: nothing lost" grep -q ', 0 events lost' "$RUN/trace.err"

for p in "$PARENT" "$CHILD"; do
  check_eq "ls: process $p listed, stock, running" "5 running multidomain" "`python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["pid"] == int(sys.argv[2]): print(e["ocaml"], e["state"], e["program"])
' "$RUN/ls.out" "$p"`"
done

say "== OCaml $V: report --duration 3s: the window starts at the attach; serve"
start 0
"$OCGC" report --json "$PARENT" --duration 3s >"$RUN/win.out" 2>"$RUN/win.err"
check_eq "report 3s: exit status" 0 $?
# the numbering, and where it came from, in ocgc dump
"$OCGC" dump --pid "$CHILD" >"$RUN/d_pid.out" 2>&1
"$OCGC" dump "$RUN/$CHILD.events" >"$RUN/d_file.out" 2>&1
"$OCGC" dump --ids $IDS "$RUN/$CHILD.events" >"$RUN/d_ids.out" 2>&1
"$OCGC" report --ids $IDS --file "$RUN/$CHILD.events" >"$RUN/r_text.out" 2>&1
check_true "report (text): the numbering in the title" \
  grep -q "stock OCaml 5 ring, no producer totals; OCaml $IDS event ids, from --ids" "$RUN/r_text.out"
check_true "report (text): what OCaml 5 cannot tell, said" \
  grep -q '^  minor  *unknown (OCaml 5 does not record it)  *[0-9]' "$RUN/r_text.out"
"$OCGC" stat --ids 5.9 "$CHILD" >"$RUN/d_bad.out" 2>&1
check_eq "stat --ids 5.9: a usage error" 2 $?
check_true "stat --ids 5.9: the releases known said" grep -q "5.2, 5.3 or 5.4" "$RUN/d_bad.out"
check_eq "dump --pid: numbering" "$IDS executable $V" \
  "`getkey "$RUN/d_pid.out" file.ids` `getkey "$RUN/d_pid.out" file.ids_from` `getkey "$RUN/d_pid.out" file.ids_ocaml`"
check_eq "dump FILE: numbering" "5.2 assumed" \
  "`getkey "$RUN/d_file.out" file.ids` `getkey "$RUN/d_file.out" file.ids_from`"
check_eq "dump --ids $IDS FILE: numbering" "$IDS option" \
  "`getkey "$RUN/d_ids.out" file.ids` `getkey "$RUN/d_ids.out" file.ids_from`"
# serve: the series of the same process
"$OCGC" serve --textfile "$RUN/m.prom" --interval 100ms "$PARENT" >"$RUN/serve.out" 2>"$RUN/serve.err" &
SERVE=$!
PIDS="$PIDS $SERVE"
# minor_series: the minor collections serve exported for PARENT so far
minor_series() {
  test -f "$RUN/m.prom" || { echo 0; return; }
  awk -v p="pid=\"$PARENT\"" '/^ocaml_gc_collections_total[{]/ && index($0, p) && index($0, "kind=\"minor\"") { n += $NF }
    END { print n + 0 }' "$RUN/m.prom"
}
_n=0
while test "`minor_series`" -eq 0 && test $_n -lt 600; do _n=$((_n + 1)); sleep 0.1; done
M=`minor_series`
say "serve: $M minor collections of process $PARENT exported after $((_n / 10)) s"
kill -TERM $SERVE
wait $SERVE
check_eq "serve: exit status after SIGTERM" 0 $?
check_gt "serve: the process's minor collections exported" 0 "$M"
check_eq "serve: lines on stderr but the one naming its file" 0 "`grep -c -v '^ocgc serve: writing ' "$RUN/serve.err"`"
: >"$RUN/child.exit"
: >"$RUN/parent.exit"
W=`json "$RUN/win.out" "j['window']['wall_ns']"`
say "window ${W} ns, GC share `json "$RUN/win.out" "j['gc_time_share']"`"
check_true "report 3s: a window of 2 s to 10 s (not since the clock's origin)" \
  test "$W" -ge 2000000000 -a "$W" -le 10000000000
check_true "report 3s: GC share below 1" python3 -c "
import json, sys; j = json.load(open(sys.argv[1])); sys.exit(not (0 < j['gc_time_share'] < 1))" "$RUN/win.out"
check_true "report 3s: minor collections seen" test "`json "$RUN/win.out" "j['counts']['collections']['minor']"`" -gt 0

say "== OCaml $V: a release newer than every table: refused, read with --ids"
# The same program, its version bytes one release past the newest table:
# what a 5.9 program looks like to ocgc.
NEWV=`echo "$V" | sed 's/^5\.[0-9]*\./5.9./'`
python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(b.replace(sys.argv[3].encode(), sys.argv[4].encode()))
" "$WORK/multidomain" "$WORK/multidomain59" "$V" "$NEWV" || hard_error "cannot make multidomain59"
chmod +x "$WORK/multidomain59"
RUN=$WORK/run-$NEWV
start 0 "$WORK/multidomain59"
"$OCGC" report --json "$PARENT" --duration 1s >"$RUN/new.out" 2>"$RUN/new.err"
check_eq "OCaml $NEWV: report refuses it (exit 4)" 4 $?
cat "$RUN/new.err"
check_eq "OCaml $NEWV: in one line" 1 "`wc -l <"$RUN/new.err" | tr -d ' '`"
check_true "OCaml $NEWV: the line names the releases known and --ids" \
  grep -q "newer than the event ids known (OCaml 5.2, 5.3, 5.4).*--ids" "$RUN/new.err"
"$OCGC" report --json --ids "$IDS" "$PARENT" --duration 1s >"$RUN/new_ids.out" 2>"$RUN/new_ids.err"
check_eq "OCaml $NEWV: report --ids $IDS reads it" 0 $?
check_eq "OCaml $NEWV: numbering from --ids" "$IDS option" \
  "`json "$RUN/new_ids.out" "j['source']['ids'], j['source']['ids_from']" | tr -d "(),'"`"
check_true "OCaml $NEWV: minor collections seen with --ids" \
  test "`json "$RUN/new_ids.out" "j['counts']['collections']['minor']"`" -gt 0
# serve --all cannot read them either, and says so: a gauge, and one line
# per process on stderr, not one per listing (each second) that meets it.
"$OCGC" serve --textfile "$RUN/m59.prom" --interval 100ms --all --dir "$RUN" \
  >"$RUN/serve59.out" 2>"$RUN/serve59.err" &
SERVE=$!
PIDS="$PIDS $SERVE"
# own NAME: the exporter's own figure NAME in the last textfile ("" if none)
own() { test -f "$RUN/m59.prom" && awk -v n="$1" '$1 == n { print $2 }' "$RUN/m59.prom"; }
_n=0
while test "`own ocgc_serve_unknown_release_processes`" != 2 && test $_n -lt 300; do
  _n=$((_n + 1)); sleep 0.1
done
say "serve --all: ocgc_serve_unknown_release_processes `own ocgc_serve_unknown_release_processes` after $((_n / 10)) s"
# three listings more: a line per try would show
sleep 3
check_eq "OCaml $NEWV: serve --all: the parent and its child counted unknown" 2 \
  "`own ocgc_serve_unknown_release_processes`"
check_true "OCaml $NEWV: serve --all: counted refused too" \
  test "`own ocgc_serve_refused_processes`" -ge 2
check_true "OCaml $NEWV: serve --all: HELP names --ids" \
  grep -q '^# HELP ocgc_serve_unknown_release_processes .*--ids' "$RUN/m59.prom"
kill -TERM $SERVE
wait $SERVE
check_eq "OCaml $NEWV: serve --all: exit status after SIGTERM" 0 $?
cat "$RUN/serve59.err"
for _p in $PARENT $CHILD; do
  check_eq "OCaml $NEWV: serve --all: process $_p said once, with its version" 1 \
    "`grep -c "^ocgc serve: process $_p (OCaml $NEWV): .*newer than the event ids known (OCaml 5.2, 5.3, 5.4).*--ids" "$RUN/serve59.err"`"
done
check_eq "OCaml $NEWV: serve --all: no other line about them" 2 \
  "`grep -c 'ocgc_serve_unknown_release_processes' "$RUN/serve59.err"`"
: >"$RUN/child.exit"
: >"$RUN/parent.exit"

say "== OCaml $V: a preserved ring read with --file --ids $IDS"
RUN=$WORK/run-$V-file
mkdir "$RUN" || hard_error "cannot make $RUN"
(cd "$RUN" && env OCAMLRUNPARAM=e=20 OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
   "$WORK/minors" "$RUN" 200000 >"$RUN/minors.out" 2>"$RUN/minors.err")
check_eq "minors: exit status" 0 $?
F=`ls "$RUN"/*.events 2>/dev/null | head -n 1`
check_true "minors: its ring preserved" test -n "$F"
"$OCGC" report --file "$F" --ids "$IDS" --json >"$RUN/file.out" 2>"$RUN/file.err"
check_eq "report --file --ids $IDS: exit status" 0 $?
Q=`getkey "$RUN/minors.out" minor_collections`
say "minors: Gc.quick_stat minor_collections $Q; report --file: `json "$RUN/file.out" "j['counts']['collections']['minor']"`"
check_gt "minors: minor collections" 0 "$Q"
check_eq "report --file --ids $IDS: minor collections = Gc.quick_stat" "$Q" \
  "`json "$RUN/file.out" "j['counts']['collections']['minor']"`"
check_eq "report --file --ids $IDS: events lost" 0 "`json "$RUN/file.out" "j['events']['lost']"`"
check_eq "report --file --ids $IDS: numbering" "$IDS option" \
  "`json "$RUN/file.out" "j['source']['ids'], j['source']['ids_from']" | tr -d "(),'"`"
}

for o5 in $OCAML5_ALL; do live_on "$o5"; done
say "ran on OCaml: `for o5 in $OCAML5_ALL; do ocaml5_use "$o5"; ocaml5_version; done | tr '\n' ' '`"
finish
