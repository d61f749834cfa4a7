# lib.sh - shared helpers of the integration tests (sourced, POSIX sh).
#
# A test sources this file, calls ocgc_init, compiles OCaml programs from
# tests/ocaml with the system compilers, runs them on the patched runtime
# with the ring in a private folder, decodes the ring with `ocgc dump` and
# compares figures with check_* functions, then calls finish.
#
#   . "$OCGC_SRCDIR/tests/lib/lib.sh"
#   ocgc_init
#   compile_native prog ocgc_test.ml workload.ml
#   run_ok run1 ./prog
#   ring_of run1; dump_ring "$RING" run1
#   check_dkey run1 phase.minor.begin "`outkey run1 gc.minor_collections`"
#   finish
#
# Files of a run TAG live in $WORK: TAG.out, TAG.err, TAG.rc, TAG.dump.
# Programs print "key value" lines (tests/ocaml/ocgc_test.ml): "pid N",
# then their Gc.quick_stat as "gc.minor_collections N" and so on.
# Every check prints "ok: ..." or "FAIL: WHAT: expected 'X', got 'Y'", and
# the test goes on; finish exits 1 if any failed.  Exit codes: 0 pass,
# 1 a check failed, 99 the test could not run (hard_error).

# ---- messages and checks -----------------------------------------------------

FAILS=0
CHECKS=0

say() { printf '%s\n' "$*"; }

# A problem that makes the rest of the test meaningless.
# (On stderr, so that it shows even from inside a command substitution.)
hard_error() {
  printf 'ERROR: %s\n' "$*" >&2
  exit 99
}

# Under tests/tap.sh (OCGC_TAP=1, as make check runs every test) each
# result is a line it turns into a named TAP result; by hand, plain words.
fail() {
  FAILS=$((FAILS + 1))
  if test "${OCGC_TAP:-}" = 1; then printf '@@TAP not ok - %s\n' "$*"
  else printf 'FAIL: %s\n' "$*"; fi
}

pass() {
  if test "${OCGC_TAP:-}" = 1; then printf '@@TAP ok - %s\n' "$*"
  else printf 'ok:   %s\n' "$*"; fi
}

is_uint() {
  case "$1" in
    ''|*[!0-9]*) return 1 ;;
    *) return 0 ;;
  esac
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
  CHECKS=$((CHECKS + 1))
  if test "$2" = "$3"; then
    pass "$1 = $3"
  else
    fail "$1: expected '$2', got '$3'"
  fi
}

# check_ge WHAT MIN ACTUAL (integers)
check_ge() {
  CHECKS=$((CHECKS + 1))
  if is_uint "$3" && is_uint "$2" && test "$3" -ge "$2"; then
    pass "$1 = $3 (>= $2)"
  else
    fail "$1: expected >= $2, got '$3'"
  fi
}

# check_gt WHAT MIN ACTUAL (integers)
check_gt() {
  CHECKS=$((CHECKS + 1))
  if is_uint "$3" && is_uint "$2" && test "$3" -gt "$2"; then
    pass "$1 = $3 (> $2)"
  else
    fail "$1: expected > $2, got '$3'"
  fi
}

# check_true WHAT COMMAND...: the command must succeed
check_true() {
  _what=$1; shift
  CHECKS=$((CHECKS + 1))
  if "$@"; then pass "$_what"; else fail "$_what"; fi
}

# check_false WHAT COMMAND...: the command must fail
check_false() {
  _what=$1; shift
  CHECKS=$((CHECKS + 1))
  if "$@"; then fail "$_what"; else pass "$_what"; fi
}

finish() {
  if test "$FAILS" -ne 0; then
    say "$FAILS of $CHECKS checks FAILED"
    exit 1
  fi
  say "all $CHECKS checks passed"
  exit 0
}

# ---- another user ----------------------------------------------------------------

# nobody_why: nothing when checks run as uid/gid 65534 can be tried here,
# else why not, for a "SKIP part:" line.  Trying means root, setpriv, and a
# program run as 65534 that starts: it must resolve / and load libc, which
# it cannot in a root whose / is not searchable by others (one unpacked into
# a 0700 folder).  Such a check would fail there for the machine's sake, not
# ocgc's: it is skipped, saying so, never failed with exit 127.
nobody_why() {
  if test "`id -u`" != 0; then
    echo "not root"
  elif ! command -v setpriv >/dev/null 2>&1; then
    echo "setpriv (util-linux) is missing"
  elif ! _nw=`setpriv --reuid=65534 --regid=65534 --clear-groups env true 2>&1`; then
    echo "uid 65534 cannot start a program here (`printf '%s\n' "$_nw" | head -n 1`): is / searchable by all?"
  fi
}

# nobody_ocgc DIR: copies of this build's ocgc (and libocgc) in DIR, made
# with $WORK searchable by all, which uid 65534 can run: the build may be
# in a folder others cannot enter (/root).  Run it with
# LD_LIBRARY_PATH=DIR.
nobody_ocgc() {
  chmod 0711 "$WORK" && mkdir -p -m 0755 "$1" || hard_error "cannot make $1"
  if test -x "$OCGC_BUILDDIR/tools/.libs/ocgc"; then
    cp "$OCGC_BUILDDIR/tools/.libs/ocgc" "$1/" &&
      cp -P "$OCGC_BUILDDIR"/.libs/libocgc.so* "$1/"
  else
    cp "$OCGC" "$1/"
  fi || hard_error "cannot copy ocgc"
  chmod -R a+rX "$1"
}

# ---- setup ------------------------------------------------------------------------

# ocgc_init: check the environment the harness gives, make the private
# work folder $WORK (removed at exit) and the ring folder $EVDIR (0700).
# The runtime variant is checked for only by what runs OCaml programs
# (need_runtime), so that tests of rings written in C also run in a build
# configured with --disable-runtime.
ocgc_init() {
  for v in OCGC OCGC_SRCDIR; do
    eval "_val=\${$v:-}"
    test -n "$_val" || hard_error "$v is not set: run the tests with 'make check'"
  done
  test -x "$OCGC" || hard_error "OCGC=$OCGC is not an executable (run 'make' first)"
  OCAML_SRC="$OCGC_SRCDIR/tests/ocaml"
  test -d "$OCAML_SRC" || hard_error "$OCAML_SRC is missing"
  WORK=`mktemp -d "${TMPDIR:-/tmp}/ocgc-integ.XXXXXX"` ||
    hard_error "mktemp -d failed"
  trap 'ocgc_cleanup' EXIT
  trap 'exit 98' HUP INT TERM
  EVDIR="$WORK/ev"
  mkdir -m 0700 "$EVDIR" || hard_error "cannot make $EVDIR"
  # Nothing from the caller's environment may steer the runtime.
  unset OCAML_RUNTIME_EVENTS_DIR OCAML_RUNTIME_EVENTS_PRESERVE OCGC_DISABLE \
    OCAMLRUNPARAM CAMLRUNPARAM 2>/dev/null || :
  # Default ring folder of runs that do not name one: private, inside $WORK.
  XDG_RUNTIME_DIR="$WORK/xdg"
  mkdir -m 0700 "$XDG_RUNTIME_DIR" || hard_error "cannot make $XDG_RUNTIME_DIR"
  export XDG_RUNTIME_DIR
  say "work folder $WORK"
}

ocgc_cleanup() {
  if test -n "${WORK:-}" && test -d "$WORK"; then
    # A test that mounted something in $WORK (serve_textfile.sh's small
    # tmpfs) and died before it unmounted it.
    awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts 2>/dev/null |
      while read -r _m; do umount "$_m" 2>/dev/null; done
    # A test may leave a folder unwritable or owned by somebody else.
    chmod -R u+rwx "$WORK" 2>/dev/null
    rm -rf "$WORK"
  fi
}

# ---- compiling ---------------------------------------------------------------------

# need_runtime: the staged runtime variant and the OCaml tools are there;
# in a build configured with --disable-runtime the test is skipped (77).
need_runtime() {
  if test "${OCGC_RUNTIME:-yes}" = no; then
    say "skipped: this test runs OCaml programs, and configure had --disable-runtime"
    exit 77
  fi
  for v in OCGC_STAGE OCAMLFIND; do
    eval "_val=\${$v:-}"
    test -n "$_val" || hard_error "$v is not set: run the tests with 'make check'"
  done
  test -x "$OCGC_STAGE/ocamlrun_ocgc" ||
    hard_error "$OCGC_STAGE/ocamlrun_ocgc is missing (run 'make' first)"
  test -f "$OCGC_STAGE/libasmrun_ocgc.a" ||
    hard_error "$OCGC_STAGE/libasmrun_ocgc.a is missing (run 'make' first)"
}

# Sources are copied into $WORK/src-OUT so that the compilers never write
# into the source tree.  _copy_sources OUT FILE... prints the copied names.
_copy_sources() {
  _dir="$WORK/src-$1"; shift
  mkdir -p "$_dir" || hard_error "cannot make $_dir"
  _list=
  for _f in "$@"; do
    cp "$OCAML_SRC/$_f" "$_dir/" || hard_error "cannot copy $OCAML_SRC/$_f"
    _list="$_list $_f"
  done
  echo "$_list"
}

# _compile OUT FLAVOUR FILE...: FLAVOUR is native, native_stock (the
# system's own runtime, no ring), byte or byte_ocgc;
# the findlib packages are $PACKAGES (default: unix), more compiler flags
# $OCAMLFLAGS ("-g").
_compile() {
  _out=$1; _flavour=$2; shift 2
  need_runtime
  _files=`_copy_sources "$_out" "$@"` || exit 99
  _log="$WORK/$_out.compile.log"
  _pkgs=${PACKAGES:-unix}
  _thr=
  case $_pkgs in *threads*) _thr=-thread ;; esac
  case $_flavour in
    native)
      set -- "$OCAMLFIND" ocamlopt $_thr -package "$_pkgs" -linkpkg \
        -I "$OCGC_STAGE" -runtime-variant _ocgc ;;
    native_stock)
      set -- "$OCAMLFIND" ocamlopt $_thr -package "$_pkgs" -linkpkg ;;
    byte)
      set -- "$OCAMLFIND" ocamlc $_thr -package "$_pkgs" -linkpkg ;;
    byte_ocgc)
      set -- "$OCAMLFIND" ocamlc $_thr -package "$_pkgs" -linkpkg \
        -I "$OCGC_STAGE" -runtime-variant _ocgc ;;
  esac
  say "compile ($_flavour) $_out:$_files"
  if ! (cd "$WORK/src-$_out" && "$@" ${OCAMLFLAGS:-} $_files -o "$WORK/$_out") >"$_log" 2>&1; then
    cat "$_log"
    hard_error "compiling $_out ($_flavour) failed"
  fi
}

# compile_native OUT FILE...   native code, linked with the _ocgc variant
compile_native() { _o=$1; shift; _compile "$_o" native "$@"; }
# compile_native_stock OUT FILE...  native code on the system's runtime
compile_native_stock() { _o=$1; shift; _compile "$_o" native_stock "$@"; }
# compile_byte OUT FILE...     plain bytecode, to run with ocamlrun_ocgc
compile_byte() { _o=$1; shift; _compile "$_o" byte "$@"; }
# compile_byte_ocgc OUT FILE... bytecode whose #! names ocamlrun_ocgc
compile_byte_ocgc() { _o=$1; shift; _compile "$_o" byte_ocgc "$@"; }

# ---- running ------------------------------------------------------------------------

# run TAG COMMAND...: run with the ring kept in $EVDIR (the caller may
# override with `env`); stdout, stderr and the exit status go to
# $WORK/TAG.out, TAG.err and TAG.rc.  Runs in $WORK.
run() {
  _tag=$1; shift
  (cd "$WORK" &&
   OCAML_RUNTIME_EVENTS_DIR="$EVDIR" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
     "$@" >"$WORK/$_tag.out" 2>"$WORK/$_tag.err")
  echo $? >"$WORK/$_tag.rc"
}

# run_ok TAG COMMAND...: as run, and the program must exit 0 with an empty
# stderr (else the test stops).
run_ok() {
  _tag=$1
  run "$@"
  _rc=`cat "$WORK/$_tag.rc"`
  if test "$_rc" != 0 || test -s "$WORK/$_tag.err"; then
    say "--- stdout of $_tag:"; cat "$WORK/$_tag.out"
    say "--- stderr of $_tag:"; cat "$WORK/$_tag.err"
    hard_error "$_tag: exit status $_rc (expected 0 and an empty stderr)"
  fi
}

# outkey TAG KEY: the value printed by the program as "KEY VALUE"
outkey() { getkey "$WORK/$1.out" "$2"; }

# getkey FILE KEY [DEFAULT]: value of the first "KEY VALUE" line of FILE,
# else DEFAULT (else the empty string).
getkey() {
  _v=`awk -v k="$2" '$1 == k { print $2; exit }' "$1"`
  if test -z "$_v"; then _v=${3:-}; fi
  printf '%s\n' "$_v"
}

# dkey TAG KEY [DEFAULT]: a key of TAG's dump.  Counts that `ocgc dump`
# leaves out when they are zero should be read with DEFAULT 0.
dkey() { getkey "$WORK/$1.dump" "$2" "${3:-}"; }

# ring_of TAG [PID]: set RING to the ring file of the run TAG (pid from
# "pid N" in its stdout, unless given); stops the test if it is missing.
ring_of() {
  _pid=${2:-`outkey "$1" pid`}
  is_uint "$_pid" || hard_error "$1: the program printed no 'pid N' line"
  RING="$EVDIR/$_pid.events"
  test -e "$RING" || test -L "$RING" || hard_error "$1: no ring file $RING (folder holds: `ls -A "$EVDIR"`)"
}

# dump_ring FILE TAG: `ocgc dump FILE` into $WORK/TAG.dump; stops the test
# if the decoder fails.  Every ring decoded must pass check_causes_valid.
dump_ring() {
  if ! "$OCGC" dump "$1" >"$WORK/$2.dump" 2>"$WORK/$2.dump.err"; then
    cat "$WORK/$2.dump.err"
    hard_error "ocgc dump $1 failed"
  fi
  check_causes_valid "$2"
}

# check_causes_valid TAG: the invariant of every ring ocgc writes: no
# collection has the cause "unknown", in the events or in the totals, and
# none lacks its cause event (unless the ring dropped old events, which may
# take a cause and leave its collection).
check_causes_valid() {
  _unk=`grep -E '^(totals\.)?cause\.[a-z_]+\.unknown ' "$WORK/$1.dump" | tr '\n' ' '`
  check_eq "$1: invariant: cause.*.unknown lines" none "${_unk:-none}"
  if test "`dkey $1 events.lost 0`" = 0 && test "`dkey $1 events.skipped 0`" = 0; then
    _none=`grep -E '^cause\.[a-z_]+\.none [1-9]' "$WORK/$1.dump" | tr '\n' ' '`
    check_eq "$1: invariant: collections without a cause event" none "${_none:-none}"
  fi
}

# check_dkey TAG KEY EXPECTED [DEFAULT]: a dump key equals EXPECTED
check_dkey() { check_eq "$2" "$3" "`dkey "$1" "$2" "${4:-}"`"; }

# ---- the checks most tests share ----------------------------------------------------

# check_stat_agrees TAG: the dump of TAG against the Gc.quick_stat that the
# program printed (gc.* lines, see ocgc_test.ml), by events and by totals.
# Needs a ring that did not overflow for the event counts.
check_stat_agrees() {
  _t=$1
  _minor=`outkey $_t gc.minor_collections`
  _major=`outkey $_t gc.major_collections`
  _compact=`outkey $_t gc.compactions`
  _forced=`outkey $_t gc.forced_major_collections`
  _mw=`outkey $_t gc.minor_words`
  _pw=`outkey $_t gc.promoted_words`
  for _x in "$_minor" "$_major" "$_compact" "$_forced" "$_mw" "$_pw"; do
    is_uint "$_x" || hard_error "$_t: the program did not print its Gc.quick_stat"
  done
  say "  quick_stat: minor $_minor major $_major compactions $_compact forced $_forced minor_words $_mw promoted_words $_pw"
  check_dkey $_t phase.minor.begin "$_minor" 0
  check_dkey $_t user.ocgc.major_cycle.end.count "$_major" 0
  check_dkey $_t phase.compact.begin "$_compact" 0
  check_dkey $_t user.ocgc.forced_major.count "$_forced" 0
  _a=`dkey $_t counter.minor_allocated.sum 0`
  check_eq "counter.minor_allocated.sum/8" "$_mw" "$((_a / 8))"
  check_eq "counter.minor_allocated.sum%8" 0 "$((_a % 8))"
  _p=`dkey $_t counter.minor_promoted.sum 0`
  check_eq "counter.minor_promoted.sum/8" "$_pw" "$((_p / 8))"
  check_eq "counter.minor_promoted.sum%8" 0 "$((_p % 8))"
  check_dkey $_t totals.major_slices "`dkey $_t phase.major_slice.begin 0`"
  check_totals_agree $_t
  check_cause_sums $_t
}

# check_exit_minor WHAT REPORT ACTUAL [UNIT [MINOR_HEAP]]: a figure that
# counts an exited program's minor words at its exit (ACTUAL, in UNIT: 1
# for words, the default, 8 for bytes), against REPORT, the minor words of
# the Gc.quick_stat it printed last: Gc.quick_stat at the exit counts what
# the minor heap holds then, so also what the program allocated
# after its report, and nothing collected after it: REPORT or more, and
# less than REPORT plus a minor heap's worth (MINOR_HEAP words, default
# 256 Ki, the default minor heap).  totals_exit.sh checks the figure at
# exit exactly.
check_exit_minor() {
  _u=${4:-1}
  check_ge "$1 at exit >= the report's" "$(($2 * _u))" "$3"
  check_gt "$1 at exit < the report's + a minor heap" "${3:-0}" "$((($2 + ${5:-262144}) * _u))"
}

# check_totals_agree TAG [PREFIX]: the extension block's totals against
# quick_stat (PREFIX.* lines, default gc), exact even when the ring
# overflowed.  (The totals are refreshed at the end of each collection and
# heap change; the report's Gc.minor () is the last of them.)  One
# exception: an exited ring's minor_words is Gc.quick_stat's at the exit,
# which counts what the minor heap holds then, so it also counts
# what the program allocated after its report (printing it): that much
# more, and less than a minor heap's worth, since nothing collected after
# the report (check_exit_minor).
check_totals_agree() {
  _t=$1; _p=${2:-gc}
  for _k in minor_collections major_collections compactions \
      forced_major_collections minor_words promoted_words major_words \
      heap_words top_heap_words heap_chunks; do
    _x=`outkey $_t $_p.$_k`
    is_uint "$_x" || hard_error "$_t: the program printed no '$_p.$_k'"
    if test $_k = minor_words && test "`dkey $_t producer.state`" = exited; then
      check_exit_minor "$_t: totals.minor_words" "$_x" "`dkey $_t totals.minor_words`" 1 \
        "`dkey $_t config.minor_heap_size 262144`"
      continue
    fi
    check_dkey $_t totals.$_k "$_x"
  done
  # The GC settings, from programs that print them (Ocgc_test.report).
  for _k in minor_heap_size space_overhead max_overhead allocation_policy; do
    _x=`outkey $_t $_p.config.$_k`
    is_uint "$_x" && check_dkey $_t config.$_k "$_x"
  done
}

# check_spans_paired TAG: every phase.X.begin has as many phase.X.end
check_spans_paired() {
  _d="$WORK/$1.dump"
  _bad=`awk '
    $1 ~ /^phase\..*\.begin$/ { n = substr($1, 1, length($1) - 6); b[n] = $2 }
    $1 ~ /^phase\..*\.end$/   { n = substr($1, 1, length($1) - 4); e[n] = $2 }
    END { for (n in b) if (b[n] != e[n]) printf "%s.begin=%s/end=%s ", n, b[n], e[n]
          for (n in e) if (!(n in b)) printf "%s.begin=0/end=%s ", n, e[n] }' "$_d"`
  check_eq "$1: phase.*.begin != phase.*.end" none "${_bad:-none}"
  check_eq "$1: phase.unmatched_end" 0 "`dkey $1 phase.unmatched_end`"
}

# check_all_caused TAG: every collection has a cause event, none "unknown"
check_all_caused() {
  for _k in minor major_slice major_finish compaction; do
    check_eq "$1: cause.$_k.none" 0 "`dkey $1 cause.$_k.none`"
  done
  _unk=`grep -E '^(totals\.)?cause\.[a-z_]+\.unknown ' "$WORK/$1.dump" | tr '\n' ' '`
  check_eq "$1: cause.*.unknown lines" none "${_unk:-none}"
}

# check_cause_totals TAG: every cause count in the events equals the
# producer's total (and the reverse), for a ring that lost nothing.
check_cause_totals() {
  _d="$WORK/$1.dump"
  _bad=`awk '
    $1 ~ /^cause\./ && $1 !~ /\.none$/ { ev[$1] = $2 }
    $1 ~ /^totals\.cause\./ { t[substr($1, 8)] = $2 }
    END { for (k in ev) if (ev[k] != t[k]) printf "%s=%s/totals=%s ", k, ev[k], t[k] + 0
          for (k in t) if (!(k in ev)) printf "%s=0/totals=%s ", k, t[k] }' "$_d"`
  check_eq "$1: cause.* event counts != totals.cause.*" none "${_bad:-none}"
}

# check_cause_sums TAG: in the producer's totals, every collection has
# exactly one cause: the totals by cause of the minor collections, major
# slices and compactions add up to totals.minor_collections,
# totals.major_slices and totals.compactions.
check_cause_sums() {
  for _k in minor:minor_collections major_slice:major_slices compaction:compactions; do
    _sum=`awk -v p="totals.cause.${_k%%:*}." \
      'index($1, p) == 1 { s += $2 } END { print s + 0 }' "$WORK/$1.dump"`
    check_eq "$1: sum of totals.cause.${_k%%:*}.* (totals.${_k#*:})" \
      "`dkey $1 totals.${_k#*:}`" "$_sum"
  done
}

# check_lifecycle TAG: a complete ring of a process that exited normally
check_lifecycle() {
  check_dkey $1 producer.state exited
  check_dkey $1 lifecycle.ring_start 1
  check_dkey $1 lifecycle.ring_stop 1
}

# check_no_loss TAG: the ring kept every event
check_no_loss() {
  check_dkey $1 events.lost 0
  check_dkey $1 events.skipped 0
  check_dkey $1 events.seen "`dkey $1 ring.0.written`"
}

# stderr_lines TAG: number of lines the run wrote on stderr
stderr_lines() { wc -l <"$WORK/$1.err" | tr -d ' '; }

# ---- the cause programs (tests/ocaml/cause_*.ml) ----------------------------------

# cause_program CAUSE [VAR=VALUE...]: compile tests/ocaml/cause_CAUSE.ml
# natively with ocgc_test.ml and ocgc_stubs.c, run it (with the given
# environment) and dump its ring into $WORK/CAUSE.dump.
cause_program() {
  _c=$1; shift
  compile_native "$_c" ocgc_stubs.c ocgc_test.ml "cause_$_c.ml"
  run_ok "$_c" env "$@" "./$_c"
  ring_of "$_c"
  dump_ring "$RING" "$_c"
}

# check_cause TAG KIND CAUSE: at least one KIND collection was caused by
# CAUSE, and the producer's total for it equals the events' count.
check_cause() {
  _n=`dkey $1 cause.$2.$3 0`
  check_ge "cause.$2.$3" 1 "$_n"
  check_dkey $1 totals.cause.$2.$3 "$_n" 0
}

# cause_test CAUSE KIND... [-- VAR=VALUE...]: the whole test of one cause
# program: its cause recorded for each KIND, totals equal to the events,
# a complete ring that lost nothing, and Gc.quick_stat agreeing (unless
# CAUSE_NO_STAT=1: the program collects after its report).
cause_test() {
  _cause=$1; shift
  _kinds=
  while test $# -gt 0 && test "x$1" != x--; do _kinds="$_kinds $1"; shift; done
  test $# -gt 0 && shift
  cause_program "$_cause" "$@"
  say "== cause $_cause ($_kinds )"
  check_lifecycle "$_cause"
  check_no_loss "$_cause"
  for _k in $_kinds; do check_cause "$_cause" "$_k" "$_cause"; done
  check_cause_totals "$_cause"
  if test "${CAUSE_NO_STAT:-0}" != 1; then check_stat_agrees "$_cause"; fi
}

# ---- folders ------------------------------------------------------------------------

# ls_dir DIR: the names in DIR (hidden ones too) on one line, or "none"
ls_dir() {
  _l=`ls -A "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'`
  printf '%s\n' "${_l:-none}"
}

# count_dir DIR: how many names DIR holds
count_dir() { ls -A "$1" 2>/dev/null | wc -l | tr -d ' '; }
