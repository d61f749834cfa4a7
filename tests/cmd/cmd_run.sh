#!/bin/sh
# cmd_run.sh - `ocgc run -- CMD`: the program runs with its ring on (even
# with OCGC_DISABLE=1 in the environment), its stdout stays its own, the
# report (stderr, or -o FILE; text or --json) has counts equal to the
# Gc.quick_stat the program printed, and ocgc exits with the program's
# status: 0 and 3; 137 and 139 for a program that dies of SIGKILL and of a
# real SIGSEGV, the report saying "killed by signal N (NAME)"; 143 for a
# SIGTERM sent to ocgc and passed on to the program.  Programs without a
# ring (/bin/true, sh, plain bytecode) run to completion with their status
# passed on and one line saying they have no ring.  The private ring folder
# is removed.  Errors: no command (2), a command not found (127).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_report_lib.sh"
cmd_report_init

compile_native prog ocgc_test.ml cmd_exit.ml
compile_byte plain ocgc_test.ml cmd_exit.ml
compile_native target ocgc_test.ml attach_target.ml

# run_cmd TAG ARGS...: `$OCGC run ARGS` in $WORK; the program's stdout in
# TAG.out (for outkey), ocgc's and the program's stderr in TAG.err, status
# in TAG.rc.
run_cmd() {
  _tag=$1; shift
  (cd "$WORK" && "$OCGC" run "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err")
  echo $? >"$WORK/$_tag.rc"
  say "  ocgc run $*: status `cat "$WORK/$_tag.rc"`"
}

for code in 0 3; do
  say "== exit $code, --json -o FILE"
  run_cmd exit$code --json -o "$WORK/exit$code.json" -- ./prog $code
  check_eq "exit $code: ocgc's exit status" $code "`cat "$WORK/exit$code.rc"`"
  check_eq "exit $code: stderr lines" 0 "`stderr_lines exit$code`"
  report_json exit$code
  check_report_sane exit$code
  check_report_quickstat exit$code exit$code
  check_jkey exit$code mode run
  check_jkey exit$code command "./prog $code"
  check_jkey exit$code exit.code $code
  check_jkey exit$code exit.signal null
  check_jkey exit$code exit.status $code
  check_jkey exit$code source.state exited
  check_jkey exit$code source.pid "`outkey exit$code pid`"
  check_jkey exit$code window.from process_start
done

say "== the text report goes to stderr, stdout is the program's"
run_cmd text -- ./prog 0
check_eq "text: exit status" 0 "`cat "$WORK/text.rc"`"
check_true "text: stderr has the report" grep -q "^GC report: ./prog 0 (program prog" "$WORK/text.err"
check_true "text: stderr says the exit status" grep -q "the program exited with status 0" "$WORK/text.err"
check_false "text: stdout has no report" grep -q "GC report" "$WORK/text.out"
check_true "text: stdout has the program's output" grep -q "^gc.minor_collections " "$WORK/text.out"
check_eq "text: minor collections" "`outkey text gc.minor_collections`" \
  "`awk '$1 == "minor" && $2 == "collections" { print $3 }' "$WORK/text.err"`"
check_true "text: percentiles" grep -q "p50 .* p99.99 .* max" "$WORK/text.err"

say "== OCGC_DISABLE=1 in the environment: the ring is on all the same"
OCGC_DISABLE=1 run_cmd disabled --json -o "$WORK/disabled.json" -- ./prog 0
check_eq "disabled: exit status" 0 "`cat "$WORK/disabled.rc"`"
report_json disabled
check_report_quickstat disabled disabled

say "== killed by SIGKILL"
run_cmd kill -- ./prog kill
check_eq "kill: ocgc's exit status" 137 "`cat "$WORK/kill.rc"`"
check_true "kill: the report says killed by signal 9 (SIGKILL)" \
  grep -q "killed by signal 9 (SIGKILL)" "$WORK/kill.err"
run_cmd killj --json -o "$WORK/killj.json" -- ./prog kill
check_eq "kill --json: ocgc's exit status" 137 "`cat "$WORK/killj.rc"`"
report_json killj
check_report_sane killj
check_report_quickstat killj killj
check_jkey killj exit.code null
check_jkey killj exit.signal 9
check_jkey killj exit.signal_name SIGKILL
check_jkey killj exit.status 137
check_jkey killj source.state killed

say "== a segmentation fault"
run_cmd segv --json -o "$WORK/segv.json" -- ./prog segv
check_eq "segv: ocgc's exit status" 139 "`cat "$WORK/segv.rc"`"
report_json segv
check_report_quickstat segv segv
check_jkey segv exit.signal 11
check_jkey segv exit.signal_name SIGSEGV
check_jkey segv exit.status 139
run_cmd segvt -- ./prog segv
check_eq "segv text: ocgc's exit status" 139 "`cat "$WORK/segvt.rc"`"
check_true "segv text: the report says killed by signal 11 (SIGSEGV)" \
  grep -q "killed by signal 11 (SIGSEGV)" "$WORK/segvt.err"

say "== SIGTERM to ocgc is passed on to the program"
(cd "$WORK" && exec "$OCGC" run --json -o "$WORK/term.json" -- ./target 60 \
   >"$WORK/term.out" 2>"$WORK/term.err") &
ocgc_pid=$!
BG_PIDS="$BG_PIDS $ocgc_pid"
wait_key term pid "$ocgc_pid"
prog_pid=`outkey term pid`
sleep 0.3
kill -TERM "$ocgc_pid"
wait "$ocgc_pid"
check_eq "term: ocgc's exit status" 143 "$?"
check_false "term: the program is gone" kill -0 "$prog_pid"
report_json term
check_report_sane term
check_jkey term exit.signal 15
check_jkey term exit.signal_name SIGTERM
check_gt "term: minor collections" 0 "`jkey term counts.collections.minor`"

say "== programs without a ring"
run_cmd true -- /bin/true
check_eq "/bin/true: exit status" 0 "`cat "$WORK/true.rc"`"
check_eq "/bin/true: stderr lines" 1 "`stderr_lines true`"
check_true "/bin/true: says it has no ring" grep_err true "/bin/true has no GC ring"
run_cmd sh -- sh -c 'sleep 1.3; exit 4'
check_eq "sh: exit status" 4 "`cat "$WORK/sh.rc"`"
check_eq "sh: stderr lines" 1 "`stderr_lines sh`"
check_true "sh: says it has no ring" grep_err sh "sh has no GC ring after 1 s"
run_cmd crash -- sh -c 'kill -SEGV $$'
check_eq "sh killed at once: exit status" 139 "`cat "$WORK/crash.rc"`"
check_eq "sh killed at once: stderr lines" 1 "`stderr_lines crash`"
check_true "sh killed at once: says it has no ring" grep_err crash "sh has no GC ring"
check_true "sh killed at once: says how it ended" \
  grep_err crash "no report (it was killed by signal 11 (SIGSEGV))"
run_cmd plain --json -o "$WORK/plain.json" -- ./plain 3
check_eq "plain bytecode: exit status" 3 "`cat "$WORK/plain.rc"`"
check_true "plain bytecode: it ran" grep -q "^gc.minor_collections " "$WORK/plain.out"
check_true "plain bytecode: says it has no ring" grep_err plain "has no GC ring"
check_eq "plain bytecode: no report" 0 "`wc -c <"$WORK/plain.json" | tr -d ' '`"

say "== errors"
run_cmd none
check_eq "no command: exit status" 2 "`cat "$WORK/none.rc"`"
check_eq "no command: stderr lines" 1 "`stderr_lines none`"
run_cmd notfound -- "$WORK/no-such-program"
check_eq "not found: exit status" 127 "`cat "$WORK/notfound.rc"`"
check_eq "not found: stderr lines" 1 "`stderr_lines notfound`"
check_true "not found: says so" grep_err notfound "cannot run $WORK/no-such-program"

say "== a command line with escape sequences is written escaped"
# The report's title and ocgc's own lines name the command: its bytes are
# the caller's (or a script's, from a file name), never sent raw to the
# terminal.  They used to be.
esc=`printf '\033'`
ln -s prog "$WORK/p${esc}[2J" || hard_error "ln"
run_cmd escrun -- "./p${esc}[2J" 0
check_eq "escape: the program's status" 0 "`cat "$WORK/escrun.rc"`"
check_true "escape: the title names the command, escaped" grep -qF 'p\x1b[2J' "$WORK/escrun.err"
check_eq "escape: ESC bytes in ocgc's output" 0 "`LC_ALL=C tr -cd '\033' <"$WORK/escrun.err" | wc -c | tr -d ' '`"
run_cmd escmissing -- "./no${esc}]0;t such"
check_eq "escape: a command not found: status" 127 "`cat "$WORK/escmissing.rc"`"
check_eq "escape: ESC bytes in the error" 0 "`LC_ALL=C tr -cd '\033' <"$WORK/escmissing.err" | wc -c | tr -d ' '`"

say "== the private ring folders are gone"
check_eq "folders left in \$XDG_RUNTIME_DIR" none "`ls_dir "$XDG_RUNTIME_DIR"`"
finish
