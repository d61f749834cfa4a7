# ocaml5_lib.sh - a stock OCaml 5 compiler for the tests (sourced, POSIX sh,
# after lib.sh and ocgc_init).  Sourcing it finds one, in this order:
#   (a) $OCGC_OCAML5_BIN, a folder holding ocamlfind and ocamlopt, else
#       ocamlfind and ocamlopt on PATH, if `ocamlopt -version` says 5.x;
#   (b) a ready Debian trixie root (scripts/ocaml5-root.sh, `make
#       ocaml5-root`) at $OCGC_OCAML5_ROOT, else $OCGC_BUILDDIR/ocaml5-root,
#       used through chroot (so only as root);
# else the test is skipped (exit 77) with one line saying what is missing.
#
#   . "$OCGC_SRCDIR/tests/lib/lib.sh"
#   ocgc_init
#   . "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"
#   ocaml5_compile "$OCAML_SRC/prog5.ml" "$WORK/prog5" unix threads.posix
#   say "OCaml `ocaml5_version`"
#
# ocaml5_compile SRC.ml OUT [PACKAGE...] makes a native executable that runs
# on this host: from the root it is linked statically (-ccopt -static), as
# the root's glibc is newer than the host's; threads, domains and Unix.fork
# work in it.  It compiles in a private folder (two test runs at once share
# the root), copies OUT out and removes the folder.  Default packages: unix
# and threads.posix.

OCAML5_MODE=
OCAML5_FIND=
OCAML5_ROOT=
OCAML5_VERSION=

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

ocaml5_find() {
  if test -n "${OCGC_OCAML5_BIN:-}"; then
    _ocaml5_try_bin "$OCGC_OCAML5_BIN/ocamlfind" "$OCGC_OCAML5_BIN/ocamlopt" && return 0
    say "skipped: OCGC_OCAML5_BIN=$OCGC_OCAML5_BIN holds no OCaml 5 ocamlfind and ocamlopt"
    exit 77
  fi
  _opt=`command -v ocamlopt 2>/dev/null`
  _find=`command -v ocamlfind 2>/dev/null`
  if test -n "$_opt" && test -n "$_find" && _ocaml5_try_bin "$_find" "$_opt"; then return 0; fi
  _root=${OCGC_OCAML5_ROOT:-${OCGC_BUILDDIR:-.}/ocaml5-root}
  if _ocaml5_try_root "$_root"; then
    if test "`id -u`" != 0 || ! command -v chroot >/dev/null 2>&1; then
      say "skipped: the OCaml 5 root $_root is used through chroot, which needs root (uid `id -u`)"
      exit 77
    fi
    return 0
  fi
  _onpath=none
  test -n "$_opt" && _onpath="`$_opt -version 2>/dev/null`"
  say "skipped: no OCaml 5 compiler: ocamlopt on PATH is ${_onpath}, and $_root is no ready" \
    "root; run 'make ocaml5-root' (as root, with debootstrap) or put OCaml 5's ocamlfind" \
    "and ocamlopt on PATH (or in OCGC_OCAML5_BIN)"
  exit 77
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
