#!/bin/sh
# ocgc-compiler.sh - build a whole OCaml 4.13/4.14 compiler whose default
# runtime writes the ocgc ring, and install it into a prefix: every program
# a switch builds, and the switch's own tools, then carry the ring (the
# `_ocgc` runtime variant does the same for the programs that ask for it).
#
#   scripts/ocgc-compiler.sh --prefix PREFIX [--stock] [--build DIR]
#                            [--jobs N] [--no-install] SOURCE
#                            [-- OCAML-CONFIGURE-ARGS...]
#
# SOURCE: an upstream release tarball (ocaml-4.14.1.tar.gz from
# github.com/ocaml/ocaml, npm's `ocaml` package), a clean source folder, or
# Debian's ocaml-source tarball (its patches applied first); see
# runtime_patch/source.sh.  --stock builds the same compiler without ocgc
# (what `make check-4.14` tests the runtime variant against).  --build DIR
# keeps the build folder there (default: a temporary folder, removed at the
# end).  --no-install stops after the build, for opam, which installs in a
# step of its own (`make -C DIR/ocaml-VERSION install`; see
# contrib/opam/ocaml-variants.opam).  Arguments after `--` go to OCaml's
# configure (--prefix is ours).
#
# For an opam switch, see README.md ("OCaml from opam"):
#   opam switch create 4.14.1+ocgc --empty
#   scripts/ocgc-compiler.sh --prefix "$(opam var prefix --switch 4.14.1+ocgc)" \
#       ocaml-4.14.1.tar.gz
#
# Prints one line per step with the time it took; the tools' output goes to
# BUILD/*.log, whose end is printed when a step fails.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  echo "usage: ocgc-compiler.sh --prefix PREFIX [--stock] [--build DIR] [--jobs N]" >&2
  echo "                        [--no-install] SOURCE [-- OCAML-CONFIGURE-ARGS...]" >&2
  exit 2
}

prefix= stock= build= noinstall= jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --stock) stock=yes; shift ;;
    --no-install) noinstall=yes; shift ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --) break ;;
    -*) echo "ocgc-compiler.sh: unknown option $1" >&2; usage ;;
    *) [ -z "${source:-}" ] || usage; source=$1; shift ;;
  esac
done
[ "${1:-}" != -- ] || shift
[ -n "$prefix" ] && [ -n "${source:-}" ] || usage
[ -z "$noinstall" ] || [ -n "$build" ] ||
  { echo "ocgc-compiler.sh: --no-install needs --build DIR (where the build stays)" >&2; exit 2; }
case "$prefix" in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
case "$source" in /*) ;; *) source=$(pwd)/$source ;; esac

. "$top/scripts/steps.sh"
t_all=$(now)

info=$(sh "$top/runtime_patch/source.sh" info "$source")
version=${info#* }
case "$version" in
  4.13.*|4.14.*) ;;
  *) echo "ocgc-compiler.sh: $source is OCaml $version; ocgc patches OCaml 4.13 and 4.14" >&2
     exit 1 ;;
esac

tmp_build=
if [ -z "$build" ]; then
  build=$(mktemp -d "${TMPDIR:-/tmp}/ocgc-compiler.XXXXXX")
  tmp_build=$build
  trap 'rm -rf "$tmp_build"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
fi
mkdir -p "$build"
build=$(cd "$build" && pwd)
tree=$build/ocaml-$version
rm -rf "$tree"
# Once patched, the compiler's own programs (boot/ocamlrun, ocamlc,
# ocamlopt ...) write rings like any program on the runtime: into a folder
# of this build, not the user's default one ($XDG_RUNTIME_DIR/ocgc,
# /dev/shm/ocgc-UID or /tmp/ocgc-UID).  Each removes its ring at exit.
mkdir -p "$build/rings" && chmod 0700 "$build/rings"
OCAML_RUNTIME_EVENTS_DIR=$build/rings
export OCAML_RUNTIME_EVENTS_DIR

step "unpack OCaml $version (${info% *}: $source)" "$build/unpack.log" \
  sh "$top/runtime_patch/source.sh" unpack "$source" "$tree"
if [ -z "$stock" ]; then
  ocgc_version=$(sed -n 's/^AC_INIT(\[ocgc\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
  step "apply ocgc $ocgc_version to its runtime" "$build/apply.log" \
    sh "$top/runtime_patch/apply.sh" "$tree" "$top" "$ocgc_version"
fi
step "configure --prefix=$prefix${*:+ $*}" "$build/configure.log" \
  env -C "$tree" ./configure --prefix="$prefix" "$@"
step "make world.opt (-j$jobs)" "$build/make.log" \
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$tree" -j"$jobs" world.opt
if [ -n "$noinstall" ]; then
  echo "==> built in $tree: make -C $tree install installs it into $prefix"
  exit 0
fi
step "make install" "$build/install.log" \
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$tree" install
what="OCaml $version with ocgc"
[ -z "$stock" ] || what="OCaml $version (stock)"
say "$what in $prefix ($(took "$t_all"))"
