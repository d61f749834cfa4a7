#!/bin/sh
# ocaml_source.sh - configure --with-ocaml-source=TAR|DIR and the script
# behind it (runtime_patch/source.sh), on small made-up sources beside the
# real Debian one: configure takes an upstream-style tarball (one top folder
# holding VERSION, like ocaml-4.14.1.tar.gz or npm's package/) and a clean
# source folder when their version is the compiler's, refuses another
# version, a configured folder and a file that is no OCaml source, each
# with a line naming the problem; unpacking takes only the top folder, and
# applies Debian's patches only to Debian's tarball.  The real builds from
# each kind are `make` (Debian's) and `make check-4.14` (npm's).
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime
src=$OCGC_SRCDIR/runtime_patch/source.sh
v=`$OCAMLFIND ocamlc -version` || hard_error "ocamlfind ocamlc -version"

# fake_tree DIR VERSION: the two things source.sh looks at
fake_tree() {
  mkdir -p "$1/runtime" && printf '%s\n\nmore lines\n' "$2" >"$1/VERSION" &&
    echo 'int x;' >"$1/runtime/x.c"
}
fake_tree "$WORK/t/ocaml-$v" "$v" || hard_error "fake tree"
# a member outside the top folder, which unpacking must not extract
echo stray >"$WORK/t/stray.txt"
tar czf "$WORK/up.tar.gz" -C "$WORK/t" "ocaml-$v" stray.txt || hard_error tar
fake_tree "$WORK/o/package" 4.99.0 && tar czf "$WORK/other.tgz" -C "$WORK/o" package ||
  hard_error tar
fake_tree "$WORK/clean" "$v" || hard_error "fake tree"
fake_tree "$WORK/configured" "$v" && : >"$WORK/configured/Makefile.config"

say "== source.sh info"
check_eq "an upstream tarball" "tar $v" "`sh "$src" info "$WORK/up.tar.gz"`"
check_eq "npm's layout (package/)" "tar 4.99.0" "`sh "$src" info "$WORK/other.tgz"`"
check_eq "a folder" "dir $v" "`sh "$src" info "$WORK/clean"`"
deb=/usr/src/ocaml-source-$v.tar
if [ -r "$deb" ]; then
  check_eq "Debian's tarball" "debian $v" "`sh "$src" info "$deb"`"
fi
check_false "a file that is no tarball" sh "$src" info "$OCGC_SRCDIR/README.md"
check_false "a folder without VERSION" sh "$src" info "$WORK/t"

say "== source.sh unpack"
sh "$src" unpack "$WORK/up.tar.gz" "$WORK/u1" >"$WORK/u1.out" 2>&1
check_eq "the top folder becomes DEST (VERSION)" "$v" "`head -n 1 "$WORK/u1/VERSION" 2>/dev/null`"
check_false "the member beside the top folder is not extracted" \
  test -e "$WORK/u1/stray.txt" -o -e "$WORK/stray.txt" -o -e "$WORK/u1.unpack"
check_false "DEST that exists is refused" sh "$src" unpack "$WORK/up.tar.gz" "$WORK/u1"
check_false "a configured folder is refused" sh "$src" unpack "$WORK/configured" "$WORK/u2"

say "== configure --with-ocaml-source"
# conf TAG SOURCE: configure in $WORK/TAG (exit status in TAG.rc), with
# the ocamlfind of this build first in PATH (make check puts /usr/bin first)
conf() {
  mkdir "$WORK/$1" || hard_error "mkdir $WORK/$1"
  (cd "$WORK/$1" && unset OCAMLC OCAMLOPT OCAMLFIND &&
   PATH=`dirname "$OCAMLFIND"`:$PATH "$OCGC_SRCDIR/configure" --with-ocaml-source="$2") >"$WORK/$1.out" 2>&1
  echo $? >"$WORK/$1.rc"
}
conf up "$WORK/up.tar.gz"
check_eq "an upstream tarball of OCaml $v: exit status" 0 "`cat "$WORK/up.rc"`"
check_eq "its kind in the Makefile" "OCAML_SOURCE_KIND = tar" \
  "`grep '^OCAML_SOURCE_KIND = ' "$WORK/up/Makefile"`"
conf dir "$WORK/clean"
check_eq "a source folder of OCaml $v: exit status" 0 "`cat "$WORK/dir.rc"`"
conf other "$WORK/other.tgz"
check_eq "OCaml 4.99.0's tarball: exit status" 1 "`cat "$WORK/other.rc"`"
check_true "  says both versions" grep -q "is OCaml 4.99.0, but ocamlfind ocamlc is $v" "$WORK/other.out"
conf cfgd "$WORK/configured"
check_eq "a configured folder: exit status" 1 "`cat "$WORK/cfgd.rc"`"
check_true "  says so" grep -q "is configured (Makefile.config)" "$WORK/cfgd.out"
conf none "$WORK/missing.tar.gz"
check_eq "a source that does not exist: exit status" 1 "`cat "$WORK/none.rc"`"
check_true "  names the option" grep -q "with-ocaml-source=TAR|DIR" "$WORK/none.out"
finish
