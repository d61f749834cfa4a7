# cmd_lib.sh - shared by cmd_ls.sh and cmd_stat.sh (sourced after lib.sh
# and attach_lib.sh): the target program they attach to, running the
# `ocgc` command, and checks of its output.
#
#   . "$OCGC_SRCDIR/tests/lib/lib.sh"
#   . "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
#   . "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
#   cmd_init
#   target_start t1 5; pid=$BGPID     # waits for its "before.*" lines
#   ocgc_cmd s1 stat --json "$pid" 0.2 5
#   check_json_lines s1
#   target_go t1; target_stop t1 "$pid"
#
# tests/ocaml/cmd_target.ml prints "pid N" and its Gc.quick_stat as
# before.* lines, runs its workload once $WORK/TAG.go exists, prints gc.*
# lines, and exits once $WORK/TAG.stop exists; it neither allocates nor
# collects while it waits.

# cmd_init: attach_init, python3 (to parse JSON and CSV), and the target
# compiled as $WORK/cmd_target.
cmd_init() {
  attach_init
  command -v python3 >/dev/null 2>&1 || hard_error "python3 is needed to read JSON and CSV"
  compile_native cmd_target ocgc_test.ml cmd_target.ml
}

# target_start TAG SECONDS: run the target in the background (ring in
# $EVDIR, kept at exit) and wait until it printed its before.* lines;
# BGPID is its pid.  TARGET_BIN (default cmd_target) names the binary in
# $WORK, and so the program its ring names.
target_start() {
  start_bg "$1" "./${TARGET_BIN:-cmd_target}" "$2" "$WORK/$1.go" "$WORK/$1.stop"
  wait_key "$1" before.heap_chunks "$BGPID"
  check_eq "$1: the program's pid" "$BGPID" "`outkey "$1" pid`"
}

# target_go TAG: let the target run its workload
target_go() { : >"$WORK/$1.go"; }

# target_stop TAG PID: let the target exit; its status goes to TAG.rc
target_stop() { : >"$WORK/$1.go"; stop_bg "$1" "$2"; }

# ocgc_cmd TAG ARGS...: run "$OCGC ARGS"; stdout, stderr and exit status
# in $WORK/TAG.out, TAG.err, TAG.rc.
ocgc_cmd() {
  _tag=$1; shift
  "$OCGC" "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err"
  echo $? >"$WORK/$_tag.rc"
}

# ocgc_bg TAG ARGS...: as ocgc_cmd, in the background; OCGC_BGPID is the
# pid of ocgc itself (for kill); ocgc_wait TAG then puts its exit status
# in TAG.rc.
ocgc_bg() {
  _tag=$1; shift
  # Emptied here, before the background job starts: its own redirections
  # run in the child, whenever it is scheduled, and a tag used a second
  # time let the caller read the first run's lines as this one's (a
  # second serve "listening" before it was started: serve_hup.sh).
  : >"$WORK/$_tag.out"; : >"$WORK/$_tag.err"
  "$OCGC" "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err" &
  OCGC_BGPID=$!
  BG_PIDS="$BG_PIDS $OCGC_BGPID"
}
ocgc_wait() {
  wait "$OCGC_BGPID"
  echo $? >"$WORK/$1.rc"
}

# wait_lines TAG N [SECONDS]: wait until TAG.out has N lines (at most
# SECONDS, default 30)
wait_lines() {
  _n=0
  while test "`lines_of $1.out`" -lt "$2"; do
    _n=$((_n + 1))
    test $_n -le $(( ${3:-30} * 20 )) || hard_error "$1 printed no $2 lines in ${3:-30} s"
    sleep 0.05
  done
}

rc_of() { cat "$WORK/$1.rc" 2>/dev/null; }
# lines_of FILE: lines in $WORK/FILE; 0 while it does not exist (a command
# started in the background opens its output a moment later)
lines_of() {
  if test -e "$WORK/$1"; then wc -l <"$WORK/$1" | tr -d ' '; else echo 0; fi
}

# check_error TAG CODE TEXT: the command failed with exit status CODE and
# one line on stderr that holds TEXT, and printed nothing on stdout
check_error() {
  check_eq "$1: exit status" "$2" "`rc_of $1`"
  check_eq "$1: lines on stderr" 1 "`lines_of $1.err`"
  check_true "$1: stderr says '$3' (`head -n 1 "$WORK/$1.err"`)" \
    grep -q -F -- "$3" "$WORK/$1.err"
  check_eq "$1: lines on stdout" 0 "`lines_of $1.out`"
}

# check_json_lines TAG: every line of TAG.out is one JSON object
check_json_lines() {
  _bad=`python3 -c '
import json, sys
bad = 0
for n, line in enumerate(open(sys.argv[1]), 1):
    try:
        if not isinstance(json.loads(line), dict): raise ValueError("not an object")
    except ValueError as e:
        print("line %d: %s" % (n, e)); bad += 1
print("none" if bad == 0 else "")' "$WORK/$1.out" | tr '\n' ' ' | sed 's/ $//'`
  check_eq "$1: lines that are not a JSON object" none "$_bad"
}

# jq_py TAG EXPR: evaluate the python expression EXPR with `rows` bound to
# the list of JSON objects of TAG.out
jq_py() {
  python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(eval(sys.argv[2]))' "$WORK/$1.out" "$2"
}
