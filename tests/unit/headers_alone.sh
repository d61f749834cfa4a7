#!/bin/sh
# headers_alone.sh - each installed header of libocgc (include/ocgc/, one
# per concept) compiles on its own, first in a file, as C11 and as C++11
# where there is a C++ compiler, with -Wall -Wextra -Wpedantic: an agent
# may include only the headers it uses, in any order.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
cc=${CC:-cc}
cxx=
for c in "${CXX:-}" g++ c++ clang++; do
  test -n "$c" && command -v "$c" >/dev/null 2>&1 && { cxx=$c; break; }
done
n=0
for h in "$OCGC_SRCDIR"/include/ocgc/*.h; do
  b=${h##*/}
  n=$((n + 1))
  printf '#include <ocgc/%s>\n#include <ocgc/%s>\nint ocgc_header_test_;\n' "$b" "$b" >"$WORK/t.c"
  check_true "ocgc/$b alone, twice, as C11" "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror \
    -fsyntax-only -I"$OCGC_SRCDIR/include" -I"$OCGC_BUILDDIR/include" "$WORK/t.c"
  if test -n "$cxx"; then
    cp "$WORK/t.c" "$WORK/t.cc"
    check_true "ocgc/$b alone, twice, as C++11" "$cxx" -std=c++11 -Wall -Wextra -Wpedantic \
      -Werror -fsyntax-only -I"$OCGC_SRCDIR/include" -I"$OCGC_BUILDDIR/include" "$WORK/t.cc"
  else
    say "SKIP part: ocgc/$b as C++11: no C++ compiler (apt-get install g++)"
  fi
done
check_gt "headers found" 10 "$n"
finish
