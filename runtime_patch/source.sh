#!/bin/sh
# source.sh - what an OCaml source is, and how it becomes a source tree.
# The one place that knows the three kinds of source ocgc builds from
# (configure, runtime.am and scripts/ocgc-compiler.sh call it):
#
#   debian  Debian's ocaml-source tarball (/usr/src/ocaml-source-V.tar):
#           an *.orig.tar.gz and debian-patches/, applied in the order of
#           their series file: Debian's compiler was built from that tree
#   tar     an upstream release tarball (ocaml-4.14.1.tar.gz from
#           github.com/ocaml/ocaml, or npm's ocaml package, whose top folder
#           is package/): one top folder holding VERSION
#   dir     an unpacked source folder (a git checkout, an opam build
#           folder), copied: ocgc never writes into it
#
#   source.sh info SOURCE        prints "KIND VERSION" (VERSION: the first
#                                line of the source's VERSION file)
#   source.sh unpack SOURCE DEST makes DEST (which must not exist) the
#                                source tree, Debian's patches applied
#
# Only the members named here are read from a tarball: the listing, then
# VERSION; unpacking extracts into a private folder beside DEST and moves
# the one top folder into place, so a tarball's own paths never decide
# where files land.
set -eu

die() { echo "source.sh: $*" >&2; exit 1; }

# kind SOURCE: debian, tar or dir
kind() {
  if [ -d "$1" ]; then echo dir; return; fi
  [ -f "$1" ] && [ -r "$1" ] || die "$1: no such file or folder"
  if tar tf "$1" 2>/dev/null | grep -q '\.orig\.tar\.gz$'; then echo debian; else echo tar; fi
}

# top TARBALL: its one top folder that holds VERSION
top() {
  _t=$(tar tf "$1" 2>/dev/null | sed -n 's|^\./||; s|^\([^/]*\)/VERSION$|\1|p' | head -n 1)
  [ -n "$_t" ] || die "$1: not an OCaml source tarball (no TOP/VERSION in it)"
  echo "$_t"
}

# first_line: the version, VERSION's first line, checked for its shape
first_line() {
  _v=$(head -n 1 | tr -d '\r')
  case "$_v" in
    [0-9]*.[0-9]*.[0-9]*) echo "$_v" ;;
    *) die "the VERSION file starts with '$_v', not a version" ;;
  esac
}

info() {
  _k=$(kind "$1")
  case "$_k" in
    dir)
      [ -f "$1/VERSION" ] && [ -d "$1/runtime" ] ||
        die "$1: not an OCaml source folder (no VERSION or runtime/)"
      # A configured folder's objects and Makefile.config would be taken
      # for ours; its owner knows whether `make distclean` is safe, we do not.
      [ ! -e "$1/Makefile.config" ] ||
        die "$1 is configured (Makefile.config): give a clean source folder (make distclean)"
      _v=$(first_line <"$1/VERSION") ;;
    debian)
      _m=$(tar tf "$1" | grep '\.orig\.tar\.gz$' | head -n 1)
      _v=$(basename "$_m" | sed -n 's/^ocaml_\(.*\)\.orig\.tar\.gz$/\1/p')
      [ -n "$_v" ] || die "$1: its $_m is not named ocaml_VERSION.orig.tar.gz" ;;
    tar)
      _t=$(top "$1")
      _v=$(tar xf "$1" -O "$_t/VERSION" | first_line) ;;
  esac
  echo "$_k $_v"
}

unpack() {
  src=$1; dest=$2
  [ ! -e "$dest" ] || die "$dest exists"
  _k=$(kind "$src")
  if [ "$_k" = dir ]; then
    info "$src" >/dev/null
    cp -R "$src" "$dest"
    return
  fi
  tmp=$dest.unpack
  rm -rf "$tmp"
  mkdir -p "$tmp"
  case "$_k" in
    tar)
      _t=$(top "$src")
      tar xf "$src" -C "$tmp" "$_t"
      mv "$tmp/$_t" "$dest" ;;
    debian)
      tar xf "$src" -C "$tmp"
      orig=$(find "$tmp" -name '*.orig.tar.gz' | head -n 1)
      mkdir "$tmp/orig"
      tar xzf "$orig" -C "$tmp/orig"
      _n=$(ls "$tmp/orig" | wc -l)
      [ "$_n" -eq 1 ] || die "$orig holds $_n top folders, not one"
      mv "$tmp/orig/"* "$dest"
      series=$(dirname "$orig")/debian-patches/series
      if [ -f "$series" ]; then
        for p in $(grep -v '^#' "$series"); do
          patch -s -p1 -d "$dest" <"$(dirname "$series")/$p" ||
            die "Debian's $p does not apply"
        done
      fi ;;
  esac
  rm -rf "$tmp"
}

case "${1:-}" in
  info) [ $# -eq 2 ] || die "usage: source.sh info SOURCE"; info "$2" ;;
  unpack) [ $# -eq 3 ] || die "usage: source.sh unpack SOURCE DEST"; unpack "$2" "$3" ;;
  *) die "usage: source.sh info SOURCE | source.sh unpack SOURCE DEST" ;;
esac
