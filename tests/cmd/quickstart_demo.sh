#!/bin/sh
# quickstart_demo.sh - the part of the README's first quick-start command
# (`scripts/dev.sh demo`) that runs after the build, against this build
# (`scripts/dev.sh demo-run BUILDDIR`): it exits 0 and shows what the
# README promises (`ocgc ls` with the workload's ring and nothing else,
# six rows of `ocgc stat`, a report with the cause table, the program's
# own words); it leaves no temporary folder and no process behind, neither
# when it ends nor when it is stopped with SIGTERM halfway (exit 143).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime

dev=$OCGC_SRCDIR/scripts/dev.sh
test -f "$dev" || hard_error "$dev is missing"
DEMO_PID=
trap 'test -z "$DEMO_PID" || kill "$DEMO_PID" 2>/dev/null; ocgc_cleanup' EXIT

# section TAG TITLE: the lines of TAG.out after the line "==> TITLE..."
# up to the next "==> " line
section() {
  awk -v t="==> $2" 'index($0, "==> ") == 1 { on = index($0, t) == 1; next } on' \
    "$WORK/$1.out"
}
# shown_pid TAG: the workload's pid, from the "==> ocgc stat PID ..." line
shown_pid() { sed -n 's/^==> ocgc stat \([0-9][0-9]*\) .*/\1/p' "$WORK/$1.out"; }

say "== scripts/dev.sh demo-run"
mkdir "$WORK/tmp" || hard_error "mkdir"
TMPDIR="$WORK/tmp" OCGC_DEV_LOGS="$WORK/logs" sh "$dev" demo-run "$OCGC_BUILDDIR" >"$WORK/demo.out" 2>"$WORK/demo.err"
echo $? >"$WORK/demo.rc"
cat "$WORK/demo.out" "$WORK/demo.err"
check_eq "exit status" 0 "`cat "$WORK/demo.rc"`"
check_eq "stderr" "" "`cat "$WORK/demo.err"`"
check_eq "temporary folders left behind" none "`ls_dir "$WORK/tmp"`"
check_eq "its log folder (OCGC_DEV_LOGS, not the build folder)" demo-compile.log \
  "`ls_dir "$WORK/logs"`"
pid=`shown_pid demo`
check_true "the workload's pid is shown ($pid)" is_uint "$pid"
check_false "the workload is gone" kill -0 "${pid:-0}"
section demo "ocgc ls" >"$WORK/ls.rows"
check_eq "ocgc ls: the header and one row" 2 "`wc -l <"$WORK/ls.rows" | tr -d ' '`"
check_eq "ocgc ls: the row is the workload's, running" "$pid workload running" \
  "`awk 'NR == 2 { print $1, $2, $7 }' "$WORK/ls.rows"`"
section demo "ocgc stat" >"$WORK/stat.rows"
check_true "ocgc stat: a header" grep -q "MINOR/s" "$WORK/stat.rows"
check_eq "ocgc stat: six rows of figures" 6 \
  "`grep -c '^ *[0-9][0-9.]* ' "$WORK/stat.rows"`"
section demo "ocgc report" >"$WORK/report.rows"
check_true "ocgc report: the workload's" grep -q "GC report: process $pid (program workload" \
  "$WORK/report.rows"
check_true "ocgc report: the cause table" grep -Eq '^ +minor +minor_heap_full +[1-9]' \
  "$WORK/report.rows"
check_true "the program's own words" grep -q '^==> the program said: served=[0-9]' \
  "$WORK/demo.out"

say "== SIGTERM halfway"
mkdir "$WORK/tmp2" || hard_error "mkdir"
TMPDIR="$WORK/tmp2" OCGC_DEV_LOGS="$WORK/logs" sh "$dev" demo-run "$OCGC_BUILDDIR" >"$WORK/term.out" 2>&1 &
DEMO_PID=$!
n=0
until grep -q '^==> ocgc stat' "$WORK/term.out"; do
  n=$((n + 1))
  test $n -le 1200 || hard_error "the demo did not reach 'ocgc stat' in 60 s"
  kill -0 "$DEMO_PID" 2>/dev/null || { cat "$WORK/term.out"; hard_error "the demo ended early"; }
  sleep 0.05
done
tpid=`shown_pid term`
kill -TERM "$DEMO_PID"
wait "$DEMO_PID"
echo $? >"$WORK/term.rc"
DEMO_PID=
cat "$WORK/term.out"
check_eq "exit status after SIGTERM" 143 "`cat "$WORK/term.rc"`"
check_eq "temporary folders left behind" none "`ls_dir "$WORK/tmp2"`"
check_true "the workload's pid is shown ($tpid)" is_uint "$tpid"
check_false "the workload is gone" kill -0 "${tpid:-0}"
finish
