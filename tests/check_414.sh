#!/bin/sh
# check_414.sh SRCDIR BUILDDIR [CONFIGURE-ARGS...] - `make check-4.14`: the
# integration suite (native and bytecode programs) on OCaml 4.14.1, built
# from source the way an opam user's compiler is:
#
#   BUILDDIR/ocaml-4.14.1/  the cache, kept between runs (make distclean
#                           removes it):
#     ocaml-4.14.1000.tgz   npm's `ocaml` package, OCaml 4.14.1's source,
#                           checked against the checksum below
#     prefix/               a stock 4.14.1 compiler (scripts/ocgc-compiler.sh
#                           --stock) and findlib 1.9.6 from Debian's source
#                           archive, configured to run that compiler by
#                           absolute path (the tests put /usr/bin first)
#     prefix-ocgc/          a whole 4.14.1 compiler built from patched
#                           sources (scripts/ocgc-compiler.sh), which
#                           tests/producer/whole_compiler.sh tests
#                           (OCGC_WHOLE_COMPILER)
#   BUILDDIR/check-4.14/    ocgc configured against that compiler (its
#                           ocamlfind first in PATH, --with-ocaml-source=
#                           the npm tarball), built, and `make
#                           check-integration` run
#
# Exit status: 0 when every test passed, 77 with one line saying why when a
# registry is unreachable (nothing was tested), 1 otherwise.  Each part
# prints the time it took.
set -eu
[ $# -ge 2 ] || { echo "usage: check_414.sh SRCDIR BUILDDIR [CONFIGURE-ARGS...]" >&2; exit 2; }
src=$1; b=$2; shift 2

V=4.14.1
NPM_SPEC=ocaml@4.14.1000
TGZ_NAME=ocaml-4.14.1000.tgz
TGZ_SHA256=a238effbd1de2b4af1dd7708b8a56598bec6b4000d360a999c35352f7cdede2d
FINDLIB_URL=http://deb.debian.org/debian/pool/main/f/findlib/findlib_1.9.6.orig.tar.gz
FINDLIB_SHA256=2df996279ae16b606db5ff5879f93dbfade0898db9f1a3e82f7f845faa2930a2

cache=$b/ocaml-$V
prefix=$cache/prefix
tgz=$cache/$TGZ_NAME
nested=$b/check-4.14
mkdir -p "$cache"
# The 4.14 compiler is built on ocgc's runtime, so its programs (ocamlfind,
# ocamlopt, the programs the configure checks link) write rings: into a
# folder of this build, by the default folder's first rule, not into the
# user's /dev/shm/ocgc-UID or /tmp/ocgc-UID.  The tests set their own.
mkdir -p "$b/check-4.14-xdg" && chmod 0700 "$b/check-4.14-xdg"
XDG_RUNTIME_DIR=$b/check-4.14-xdg
export XDG_RUNTIME_DIR

. "$src/scripts/steps.sh"
skip() { say "check-4.14: SKIP: $*"; exit 77; }
fail() { say "check-4.14: FAILED: $*"; exit 1; }
# timed TITLE LOG COMMAND...: a step; its failure ends the check
timed() { step "$@" || fail "$1"; }
sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# ---- OCaml 4.14.1's source, from the npm registry ------------------------------
if ! sha_ok "$tgz" "$TGZ_SHA256"; then
  command -v npm >/dev/null 2>&1 ||
    skip "npm is not installed (apt-get install npm), so OCaml $V's source cannot be fetched"
  rm -rf "$cache/npm" && mkdir "$cache/npm"
  _t0=$(now)
  if ! (cd "$cache/npm" && timeout 300 npm pack --silent "$NPM_SPEC") \
       >"$cache/npm.log" 2>&1; then
    skip "the npm registry is unreachable: npm pack $NPM_SPEC failed ($(tail -n 1 "$cache/npm.log"))"
  fi
  sha_ok "$cache/npm/$TGZ_NAME" "$TGZ_SHA256" ||
    fail "npm's $TGZ_NAME is not the one this test knows (sha256 differs): refusing to build it"
  mv "$cache/npm/$TGZ_NAME" "$tgz"
  rm -rf "$cache/npm"
  say "OCaml $V's source from npm ($NPM_SPEC): done ($(took "$_t0"))"
else
  say "OCaml $V's source: cached ($tgz)"
fi

# ---- a stock compiler, and one whose default runtime is ocgc's ------------------------
# compiler PREFIX MARK TITLE [--stock]: build it unless PREFIX/.ocgc-ready
# says MARK (what it was built from: a new tarball, or new ocgc runtime
# sources for the patched one, rebuilds it).
compiler() {
  _p=$1; _mark=$2; _title=$3; shift 3
  if [ "$(cat "$_p/.ocgc-ready" 2>/dev/null)" = "$_mark" ]; then
    say "$_title: cached ($_p)"
    return
  fi
  rm -rf "$_p" "$cache/build"
  _t0=$(now)
  "$src/scripts/ocgc-compiler.sh" "$@" --prefix "$_p" --build "$cache/build" "$tgz" |
    sed -u 's/^==> /    /'
  [ -x "$_p/bin/ocamlopt.opt" ] || fail "scripts/ocgc-compiler.sh built no compiler in $_p"
  rm -rf "$cache/build"
  echo "$_mark" >"$_p/.ocgc-ready"
  say "$_title: done ($(took "$_t0"))"
}
compiler "$prefix" "$TGZ_SHA256" "a stock OCaml $V compiler" --stock
ocgc_sources=$( (cd "$src" && cat runtime_patch/series runtime_patch/apply.sh \
  runtime_patch/patches/* runtime_patch/src/*.[ch] runtime_patch/src/caml/*.h \
  include/ocgc/wire.h configure.ac) | sha256sum | cut -d' ' -f1)
compiler "$cache/prefix-ocgc" "$TGZ_SHA256 $ocgc_sources" \
  "a whole OCaml $V compiler with ocgc (scripts/ocgc-compiler.sh)"

# ---- findlib for it, from Debian's source archive ----------------------------------
if [ "$(cat "$prefix/.findlib-ready" 2>/dev/null)" != "$FINDLIB_SHA256" ]; then
  _fl=$cache/findlib.tar.gz
  if ! sha_ok "$_fl" "$FINDLIB_SHA256"; then
    command -v curl >/dev/null 2>&1 || skip "curl is not installed (apt-get install curl)"
    curl -fsS --max-time 120 -o "$_fl.tmp" "$FINDLIB_URL" 2>"$cache/findlib-fetch.log" ||
      skip "Debian's archive is unreachable: $FINDLIB_URL ($(tail -n 1 "$cache/findlib-fetch.log"))"
    sha_ok "$_fl.tmp" "$FINDLIB_SHA256" || fail "$FINDLIB_URL is not the file this test knows (sha256)"
    mv "$_fl.tmp" "$_fl"
  fi
  rm -rf "$cache/findlib" && mkdir "$cache/findlib"
  tar xzf "$_fl" -C "$cache/findlib" --strip-components=1
  timed "findlib 1.9.6 for it" "$cache/findlib.log" env -C "$cache/findlib" \
    PATH="$prefix/bin:$PATH" sh -c "./configure -bindir '$prefix/bin' -mandir '$prefix/man' \
      -sitelib '$prefix/lib/ocaml' -config '$prefix/etc/findlib.conf' -no-custom &&
      make all && make opt && make install"
  rm -rf "$cache/findlib"
  # The compilers by absolute path: `make check` puts /usr/bin first, where
  # Debian's OCaml may be.
  for t in ocamlc ocamlopt ocamldep ocamldoc; do
    sed -i "s|^$t=\"$t.opt\"|$t=\"$prefix/bin/$t.opt\"|" "$prefix/etc/findlib.conf"
  done
  echo "$FINDLIB_SHA256" >"$prefix/.findlib-ready"
else
  say "findlib for it: cached"
fi

# ---- ocgc against it, and the integration suite -------------------------------------
export PATH="$prefix/bin:$PATH"
_v=$(ocamlfind ocamlopt -version 2>/dev/null || :)
[ "$_v" = "$V" ] || fail "$prefix/bin/ocamlfind ocamlopt says '$_v', not $V"
mkdir -p "$nested"
# A new configure when the source tree's configure is newer (a pull).
if [ ! -f "$nested/Makefile" ] || [ "$src/configure" -nt "$nested/config.status" ]; then
  timed "configure ocgc with OCaml $V ($*)" "$nested/configure-4.14.log" \
    env -C "$nested" "$src/configure" --with-ocaml-source="$tgz" "$@"
fi
grep -q "^OCAML_VERSION = $V\$" "$nested/Makefile" ||
  fail "$nested was configured for another OCaml (its Makefile has no OCAML_VERSION = $V)"
timed "make: libocgc, ocgc and the _ocgc variant of $V" "$nested/make-4.14.log" \
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$nested" -j"$(nproc 2>/dev/null || echo 2)"
say "make check-integration on OCaml $V (each test's log in $nested)"
_t0=$(now)
_rc=0
# The OCaml 5 tests read rings of the 4.14.1 runtime too, with this build's
# root (make ocaml5-root) unless one is named already.
if [ -z "${OCGC_OCAML5_ROOT:-}" ] && [ -f "$b/ocaml5-root/.ocgc-ready" ]; then
  OCGC_OCAML5_ROOT=$b/ocaml5-root; export OCGC_OCAML5_ROOT
fi
OCGC_WHOLE_COMPILER=$cache/prefix-ocgc \
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$nested" -j"$(nproc 2>/dev/null || echo 2)" \
  check-integration || _rc=$?
say "the integration suite on OCaml $V: $( [ "$_rc" -eq 0 ] && echo passed || echo FAILED ) ($(took "$_t0"))"
exit "$([ "$_rc" -eq 0 ] && echo 0 || echo 1)"
