#!/bin/sh
# example_pkgconfig.sh - the README's example monitor (examples/gcwatch.c),
# built the way a monitoring author would: against the *installed* headers
# and library, found through pkg-config, then run against a real OCaml
# program on the patched runtime.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime

command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config missing"; exit 77; }
dest=$WORK/dest
say "make install DESTDIR=$dest"
make -s -C "$OCGC_BUILDDIR" install DESTDIR="$dest" >"$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log"; hard_error "make install failed"; }
pc=$(find "$dest" -name ocgc.pc | head -n 1)
test -n "$pc" || hard_error "ocgc.pc was not installed"
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags ocgc)
libs=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --libs ocgc)
say "cc gcwatch.c $cflags $libs"
# A library built with sanitizers (configure --enable-sanitizers) needs
# them in the program too, as it would for any user.  Warnings are errors
# unless configure had --disable-werror.
${CC:-cc} -std=c11 -Wall -Wextra ${OCGC_WERROR_CFLAGS--Werror} ${OCGC_SAN_CFLAGS:-} \
  "$OCGC_SRCDIR/examples/gcwatch.c" $cflags $libs \
  -o "$WORK/gcwatch" || hard_error "the example does not build against the installed headers"
libdir=$(dirname "$(find "$dest" -name 'libocgc.so.0' | head -n 1)")

# The bundled demo workload runs for as long as it is told.
cp "$OCGC_SRCDIR/examples/workload.ml" "$WORK/demo.ml" || hard_error "no examples/workload.ml"
(cd "$WORK" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
   -runtime-variant _ocgc demo.ml -o prog) >"$WORK/compile.log" 2>&1 \
  || { cat "$WORK/compile.log"; hard_error "compiling the demo workload failed"; }
"$WORK/prog" 4 >"$WORK/prog.out" 2>"$WORK/prog.err" &
ppid=$!  # the program itself, not a subshell: gcwatch attaches to this pid
sleep 0.5
LD_LIBRARY_PATH=$libdir "$WORK/gcwatch" "$ppid" 2 >"$WORK/watch.out" 2>"$WORK/watch.err"
rc=$?
wait "$ppid"
cat "$WORK/watch.out" "$WORK/watch.err"
check_eq "gcwatch exit code" 0 "$rc"
check_eq "rows of figures (one a second, 2 asked)" 2 "`wc -l <"$WORK/watch.out" | tr -d ' '`"
check_ge "rows with minor collections" 1 "`python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["minor_collections"] > 0))' \
  "$WORK/watch.out"`"
finish
