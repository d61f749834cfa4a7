# ocaml5_lib.sh - stock OCaml 5 compilers for the tests (sourced, POSIX sh,
# after lib.sh and ocgc_init).  Sourcing it finds them:
#   (a) $OCGC_OCAML5_BIN, a folder holding ocamlfind and ocamlopt (then
#       only it), else ocamlfind and ocamlopt on PATH, if `ocamlopt
#       -version` says 5.x;
#   (b) the ready Debian roots (scripts/ocaml5-root.sh): trixie's OCaml 5.3
#       (`make ocaml5-root`) at $OCGC_OCAML5_ROOT, else
#       $OCGC_BUILDDIR/ocaml5-root, and forky's OCaml 5.4 (`make
#       ocaml54-root`) at $OCGC_OCAML54_ROOT, else
#       $OCGC_BUILDDIR/ocaml54-root, used through chroot (so only as root);
# and uses the first; with none the test is skipped (exit 77) with one
# line saying what is missing.  OCAML5_ALL lists every one found, one
# release each ("root:DIR" or "bin:OCAMLFIND"), for tests that run on each:
#
#   . "$OCGC_SRCDIR/tests/lib/lib.sh"
#   ocgc_init
#   . "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"
#   for o5 in $OCAML5_ALL; do
#     ocaml5_use "$o5"
#     ocaml5_compile "$OCAML_SRC/prog5.ml" "$WORK/prog5" unix threads.posix
#     say "OCaml `ocaml5_version` (ids `ocaml5_ids`)"
#   done
#
# ocaml5_compile SRC.ml OUT [PACKAGE...] makes a native executable that runs
# on this host: from a root it is linked statically (-ccopt -static), as
# the root's glibc is newer than the host's; threads, domains and Unix.fork
# work in it.  It compiles in a private folder (two test runs at once share
# the root), copies OUT out and removes the folder.  Default packages: unix
# and threads.posix.

OCAML5_MODE=
OCAML5_FIND=
OCAML5_ROOT=
OCAML5_VERSION=
OCAML5_ALL=

# _ocaml5_version_of OCAMLOPT: its -version if it is 5.x, else fails
_ocaml5_version_of() {
  _v5=`"$@" -version 2>/dev/null` || return 1
  case $_v5 in 5.*) printf '%s\n' "$_v5" ;; *) return 1 ;; esac
}

# _ocaml5_try_bin OCAMLFIND OCAMLOPT: use them if they are OCaml 5's
_ocaml5_try_bin() {
  test -x "$1" && test -x "$2" || return 1
  OCAML5_VERSION=`_ocaml5_version_of "$2"` || return 1
  # ocamlfind must drive the same compiler
  test "`_ocaml5_version_of "$1" ocamlopt`" = "$OCAML5_VERSION" || return 1
  OCAML5_MODE=bin
  OCAML5_FIND=$1
}

# _ocaml5_try_root DIR: a root scripts/ocaml5-root.sh finished
_ocaml5_try_root() {
  test -s "$1/.ocgc-ready" || return 1
  OCAML5_VERSION=`cat "$1/.ocgc-ready"`
  OCAML5_MODE=root
  OCAML5_ROOT=$1
}

# _ocaml5_add ENTRY VERSION: ENTRY into OCAML5_ALL unless its release
# (major.minor) is there already
_ocaml5_add() {
  _rel=`echo "$2" | cut -d. -f1,2`
  case " $_O5_RELS " in *" $_rel "*) return 0 ;; esac
  _O5_RELS="$_O5_RELS $_rel"
  OCAML5_ALL="${OCAML5_ALL:+$OCAML5_ALL }$1"
}

ocaml5_find() {
  _O5_RELS=
  if test -n "${OCGC_OCAML5_BIN:-}"; then
    _ocaml5_try_bin "$OCGC_OCAML5_BIN/ocamlfind" "$OCGC_OCAML5_BIN/ocamlopt" || {
      say "skipped: OCGC_OCAML5_BIN=$OCGC_OCAML5_BIN holds no OCaml 5 ocamlfind and ocamlopt"
      exit 77
    }
    OCAML5_ALL=bin:$OCAML5_FIND
    return 0
  fi
  _opt=`command -v ocamlopt 2>/dev/null`
  _find=`command -v ocamlfind 2>/dev/null`
  if test -n "$_opt" && test -n "$_find" && _ocaml5_try_bin "$_find" "$_opt"; then
    _ocaml5_add "bin:$_find" "$OCAML5_VERSION"
  fi
  _root=${OCGC_OCAML5_ROOT:-${OCGC_BUILDDIR:-.}/ocaml5-root}
  _root54=${OCGC_OCAML54_ROOT:-${OCGC_BUILDDIR:-.}/ocaml54-root}
  _roots=
  for _r in "$_root" "$_root54"; do
    _ocaml5_try_root "$_r" || continue
    if test "`id -u`" != 0 || ! command -v chroot >/dev/null 2>&1; then
      _roots="$_roots $_r"
      continue
    fi
    _ocaml5_add "root:$_r" "$OCAML5_VERSION"
  done
  if test -n "$OCAML5_ALL"; then
    ocaml5_use "${OCAML5_ALL%% *}"
    return 0
  fi
  if test -n "$_roots"; then
    say "skipped: the OCaml 5 roots$_roots are used through chroot, which needs root (uid `id -u`)"
    exit 77
  fi
  _onpath=none
  test -n "$_opt" && _onpath="`$_opt -version 2>/dev/null`"
  say "skipped: no OCaml 5 compiler: ocamlopt on PATH is ${_onpath}, and neither $_root nor" \
    "$_root54 is a ready root; run 'make ocaml5-root' (or 'make ocaml54-root'; as root, with" \
    "debootstrap) or put OCaml 5's ocamlfind and ocamlopt on PATH (or in OCGC_OCAML5_BIN)"
  exit 77
}

# ocaml5_use ENTRY: compile with this entry of OCAML5_ALL from now on
ocaml5_use() {
  case $1 in
    root:*) _ocaml5_try_root "${1#root:}" ;;
    bin:*)
      _f=${1#bin:}
      _o=`dirname "$_f"`/ocamlopt
      test -x "$_o" || _o=`command -v ocamlopt`
      _ocaml5_try_bin "$_f" "$_o" ;;
    *) false ;;
  esac || hard_error "ocaml5_use: $1 is no OCaml 5"
}

# ocaml5_ids: the --ids name of the release in use ("5.4" for 5.4.1)
ocaml5_ids() { echo "$OCAML5_VERSION" | cut -d. -f1,2; }

# ocaml5_header: the caml/runtime_events.h of the release in use
ocaml5_header() {
  if test "$OCAML5_MODE" = root; then
    for _h in "$OCAML5_ROOT"/usr/lib/*/ocaml/*/caml/runtime_events.h \
        "$OCAML5_ROOT"/usr/lib/ocaml/caml/runtime_events.h; do
      test -f "$_h" && { printf '%s\n' "$_h"; return 0; }
    done
    return 1
  fi
  _w=`"$OCAML5_FIND" ocamlopt -where 2>/dev/null` && test -f "$_w/caml/runtime_events.h" &&
    printf '%s\n' "$_w/caml/runtime_events.h"
}

ocaml5_version() { printf '%s\n' "$OCAML5_VERSION"; }

# _ocaml5_args PACKAGE...: the ocamlfind arguments for these packages
_ocaml5_args() {
  _pk=`echo "${*:-unix threads.posix}" | tr ' ' ','`
  _th=
  case ,$_pk, in *,threads*) _th=-thread ;; esac
  printf '%s\n' "$_th -package $_pk -linkpkg"
}

ocaml5_compile() {
  _src=$1; _out=$2; shift 2
  _args=`_ocaml5_args "$@"`
  _base=`basename "$_src"`
  _log=${WORK:-${TMPDIR:-/tmp}}/`basename "$_out"`.ocaml5.log
  if test "$OCAML5_MODE" = root; then
    _d=`mktemp -d "$OCAML5_ROOT/tmp/ocgc5.XXXXXX"` || hard_error "mktemp in $OCAML5_ROOT/tmp failed"
    _in=/tmp/`basename "$_d"`
    _cmd="cd $_in && ocamlfind ocamlopt $_args -ccopt -static $_base -o prog"
    set -- chroot "$OCAML5_ROOT" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root \
      LC_ALL=C.UTF-8 /bin/sh -c "$_cmd"
  else
    _d=`mktemp -d "${WORK:-${TMPDIR:-/tmp}}/ocgc5.XXXXXX"` || hard_error "mktemp failed"
    set -- /bin/sh -c "cd '$_d' && '$OCAML5_FIND' ocamlopt $_args $_base -o prog"
  fi
  cp "$_src" "$_d/" || { rm -rf "$_d"; hard_error "cannot copy $_src"; }
  say "compile (OCaml $OCAML5_VERSION, $OCAML5_MODE) `basename "$_out"`: $_base"
  if ! "$@" >"$_log" 2>&1 || ! cp "$_d/prog" "$_out"; then
    cat "$_log"
    rm -rf "$_d"
    hard_error "compiling $_base with OCaml $OCAML5_VERSION failed"
  fi
  rm -rf "$_d"
}

ocaml5_find
