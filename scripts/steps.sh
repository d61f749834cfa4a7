# steps.sh - how ocgc's scripts run a long step and say what it took
# (sourced, POSIX sh: scripts/dev.sh, scripts/ocgc-compiler.sh,
# tests/check_414.sh).  A step's output goes to a log file; one line says
# its title and time, and on failure the end of the log and its path.

say() { printf '==> %s\n' "$*"; }

now() { date +%s; }
# took T0: the time since T0 (seconds since the epoch), for people
took() {
  _s=$(( $(now) - $1 ))
  if [ "$_s" -ge 60 ]; then printf '%d min %02d s' $((_s / 60)) $((_s % 60))
  else printf '%d s' "$_s"; fi
}

# step TITLE LOG COMMAND...: run COMMAND (an external command: the shell's
# `set -e` does not reach into functions called here) with its output in
# LOG, and print TITLE with the time it took.  On failure print the end of
# LOG and its path, and return 1.
step() {
  _title=$1; _log=$2; shift 2
  printf '==> %s ... ' "$_title"
  _t0=$(now)
  _rc=0
  "$@" >"$_log" 2>&1 </dev/null || _rc=$?
  if [ "$_rc" -eq 0 ]; then
    printf 'done (%s)\n' "$(took "$_t0")"
    return 0
  fi
  printf 'FAILED (exit status %s, after %s)\n' "$_rc" "$(took "$_t0")"
  tail -n 30 "$_log" | sed 's/^/    /'
  say "the whole log: $_log"
  return 1
}

# suite_count LOG KEY: the count automake's test-suite.log LOG gives KEY
# (PASS, FAIL, SKIP, ERROR...) in its summary: the "# KEY: N" lines at its
# head, before the ".. contents::" line or the first test's section.
# Below the summary come the logs of the tests that did not pass, whose
# lines can have the same shape: a test's output "SKIP: unshare -m is
# denied here" is logged as "# SKIP: unshare -m is denied here".  Those are
# text, never counts, and are never read.  Prints 0 when the summary has
# no such line (or LOG does not exist).
suite_count() {
  [ -f "$1" ] || { echo 0; return 0; }
  awk -v k="$2" '
    /^\.\. contents::/ || /^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS): / { exit }
    index($0, "# " k ":") == 1 {
      v = substr($0, length(k) + 4)
      gsub(/^[ \t]+|[ \t]+$/, "", v)
      if (v ~ /^[0-9]+$/) { n = v + 0; found = 1; exit }
    }
    END { print found ? n : 0 }' "$1"
}
