#!/bin/sh
# report_names.sh - the names of `ocgc report`'s allocation profile (issue
# 43, "Names a person recognises"), on names_target.ml sampled at 16 KiB:
# its allocations come from Memprof_funs.alloc_c, from an anonymous
# function given to List.iter (the line marked ANON) and from List.filter
# (cons cells made by List.find_all's local function "find").
# - `ocgc report PID --duration 12s --json --html`: a window longer than the
#   symbolizer's 10 s: the HTML's top allocating functions are named
#   (Memprof_funs.alloc_c, no row an address, no note of missing names);
#   the JSON validates against docs/report.schema.json (version 3) and
#   carries the profile: the anonymous function as
#   Names_target.fun@names_target.ml:LINE (one whose first code is
#   Names_inline.pair's, inlined: the line of the fun, not of names_inline.ml),
#   the local function by its own
#   symbol (Stdlib.List.find@list.ml:LINE of "let rec find accu" in the
#   build's Stdlib, never the plain "Stdlib.List.find");
# - `ocgc report PID --duration 2s`: the text report's allocation profile;
# - the program built without -g (no line rows): its anonymous functions
#   named by their symbols' stamps (Names_target.fun_639), never all
#   "Names_target.fun";
# - a window the program ends (it exits 3 s into a 30 s window): still
#   named (the names were read as the window began).
# The time each report took is printed; no bound is asserted on it.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_report_lib.sh"
cmd_report_init

RATE=16384
# -g: the line rows an anonymous function is named by (dune builds so too)
OCAMLFLAGS=-g compile_native nt memprof_funs.ml names_inline.ml names_target.ml
ANON_LINE=`grep -n '(\* ANON \*)' "$OCAML_SRC/names_target.ml" | cut -d: -f1`
INLINED_LINE=`grep -n '(\* INLINED \*)' "$OCAML_SRC/names_target.ml" | cut -d: -f1`
test -n "$ANON_LINE" && test -n "$INLINED_LINE" ||
  hard_error "names_target.ml has no ANON or INLINED line"
# The line of List.find_all's local "find" in the Stdlib the program is
# built with, if its source is installed (it is in Debian's ocaml).
STDLIB=`"$OCAMLFIND" ocamlc -where 2>/dev/null`
FIND_LINE=
test -f "$STDLIB/list.ml" &&
  FIND_LINE=`grep -n '^ *let rec find accu' "$STDLIB/list.ml" | head -n 1 | cut -d: -f1`

# top TAG KEY: "function bytes" lines of TAG.json's profile.KEY
top() {
  python3 - "$WORK/$1.json" "$2" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1])).get("profile")
for r in (p or {}).get(sys.argv[2], []):
    print(r["function"], r["bytes"])
EOF
}
# html_rows TAG: the data-fn of each row of TAG.html's top allocating table
html_rows() {
  sed -n '/id="ocgc-top-alloc"/,/<\/table>/ s/^<tr data-fn="\([^"]*\)".*/\1/p' "$WORK/$1.html"
}

start_bg nt env OCGC_MEMPROF=$RATE ./nt "$WORK/nt.stop"
pid=$BGPID
wait_key nt pid "$pid"

say "== report PID --duration 12s --json --html: longer than the names' 10 s"
t0=`date +%s`
report_cmd win report "$pid" --duration 12s --json --html "$WORK/win.html"
say "  the 12 s report took $((`date +%s` - t0)) s"
check_eq "win: exit status" 0 "`cat "$WORK/win.rc"`"
report_json win
check_jkey win schema_valid 1
check_jkey win schema_version 4
check_jkey win profile.rate_bytes $RATE
check_jkey win profile.named true
check_gt "win: profile.samples" 0 "`jkey win profile.samples`"
top win top_allocating >"$WORK/win.alloc"
top win top_promoting >"$WORK/win.promo"
sed 's/^/  top allocating: /' "$WORK/win.alloc"
check_eq "win json: the top allocating function" Memprof_funs.alloc_c \
  "`head -n 1 "$WORK/win.alloc" | cut -d' ' -f1`"
check_true "win json: the anonymous function by its file and line" \
  grep -q "^Names_target.fun@names_target.ml:$ANON_LINE " "$WORK/win.alloc"
check_true "win json: one that begins with inlined code by its own line, not the inlined one's" \
  grep -q "^Names_target.fun@names_target.ml:$INLINED_LINE " "$WORK/win.alloc"
check_false "win json: no function named by names_inline.ml" grep -q '@names_inline' "$WORK/win.alloc"
if test -n "$FIND_LINE"; then
  check_true "win json: List.find_all's local find by its own symbol (list.ml:$FIND_LINE)" \
    grep -q "^Stdlib.List.find@list.ml:$FIND_LINE " "$WORK/win.alloc"
else
  say "  (no list.ml in '$STDLIB': its line not checked)"
  check_true "win json: List.find_all's local find by its own symbol" \
    grep -q '^Stdlib.List.find@list.ml:[0-9]* ' "$WORK/win.alloc"
fi
check_false "win json: no function named plain Stdlib.List.find" \
  grep -q '^Stdlib.List.find ' "$WORK/win.alloc"
check_false "win json: no function an address" grep -q '^0x' "$WORK/win.alloc"
check_gt "win json: top promoting functions" 0 "`wc -l <"$WORK/win.promo"`"
html_rows win >"$WORK/win.rows"
check_eq "win html: its top allocating function" Memprof_funs.alloc_c \
  "`head -n 1 "$WORK/win.rows"`"
check_true "win html: the anonymous function by its file and line" \
  grep -q -x -F "Names_target.fun@names_target.ml:$ANON_LINE" "$WORK/win.rows"
check_false "win html: no row an address" grep -q '^0x' "$WORK/win.rows"
check_false "win html: no note of missing names" grep -q 'ocgc-names-missing' "$WORK/win.html"

say "== report PID --duration 2s: the text form"
report_cmd text report "$pid" --duration 2s
check_eq "text: exit status" 0 "`cat "$WORK/text.rc"`"
for t in "Allocation profile" "top allocating functions" "top promoting functions" \
    "Memprof_funs.alloc_c" "Names_target.fun@names_target.ml:$ANON_LINE"; do
  check_true "text: has '$t'" grep -q -F -- "$t" "$WORK/text.json"
done
: >"$WORK/nt.stop"
wait "$pid"

say "== built without -g: an anonymous function by its symbol's stamp"
OCAMLFLAGS= compile_native ntnog memprof_funs.ml names_inline.ml names_target.ml
start_bg ntnog env OCGC_MEMPROF=$RATE ./ntnog "$WORK/ntnog.stop"
pid=$BGPID
wait_key ntnog pid "$pid"
report_cmd nog report "$pid" --duration 2s --json
: >"$WORK/ntnog.stop"
wait "$pid"
check_eq "nog: exit status" 0 "`cat "$WORK/nog.rc"`"
top nog top_allocating >"$WORK/nog.alloc"
sed 's/^/  top allocating: /' "$WORK/nog.alloc"
_stamps=`LC_ALL=C nm "$WORK/ntnog" | sed -n 's/.* camlNames_target__fun_\([0-9]*\)$/\1/p' | tr '\n' ' '`
_got=`sed -n 's/^Names_target\.fun_\([0-9]*\) .*/\1/p' "$WORK/nog.alloc" | tr '\n' ' '`
check_true "nog: anonymous functions by their symbols' stamps ($_got of $_stamps)" \
  test -n "$_got"
for _s in $_got; do
  check_true "nog: Names_target.fun_$_s is a symbol of the program" \
    sh -c "echo ' $_stamps' | grep -q ' $_s '"
done
check_false "nog: no function named plain Names_target.fun" grep -q '^Names_target.fun ' "$WORK/nog.alloc"

say "== a window the program ends: named all the same"
start_bg nt2 env OCGC_MEMPROF=$RATE ./nt "$WORK/nt2.stop"
pid=$BGPID
wait_key nt2 pid "$pid"
(sleep 3; : >"$WORK/nt2.stop") &
BG_PIDS="$BG_PIDS $!"
t0=`date +%s`
report_cmd gone report "$pid" --duration 30s --json --html "$WORK/gone.html"
say "  the report of a program that ended took $((`date +%s` - t0)) s"
wait "$pid"
check_eq "gone: exit status" 0 "`cat "$WORK/gone.rc"`"
report_json gone
check_jkey gone window.end_reason "the process exited"
html_rows gone >"$WORK/gone.rows"
check_eq "gone html: its top allocating function" Memprof_funs.alloc_c \
  "`head -n 1 "$WORK/gone.rows"`"
check_false "gone html: no row an address" grep -q '^0x' "$WORK/gone.rows"
finish
