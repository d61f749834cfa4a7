#!/bin/sh
# circles.sh BUILDDIR [--edges] - the circles of use between the files of
# libocgc (libconsumer/), of the ocgc command (tools/) and of the producer
# (runtime_patch/src/), read from a build's objects.
#
# A file uses another when its object has an undefined symbol (nm's U) that
# the other's object defines (T, D, B, R); a circle is a set of files each
# of which uses every other one, directly or through others (a strongly
# connected set of more than one file).  docs/architecture.md's layers are
# this relation; tests/layers.sh holds the tree to it.
#
# Prints one line per circle, "circle: a.c b.c ...", or nothing, and exits
# 1 when there is one (0 else, 2 on a usage error or a build without the
# objects).  With --edges it prints every use, "a.c -> b.c", instead.
# Static inline functions of a header are no use of a file: only calls and
# data between objects count.
set -u
LC_ALL=C
export LC_ALL

test $# -ge 1 || { echo "usage: $0 BUILDDIR [--edges]" >&2; exit 2; }
B=$1
EDGES=${2:-}
command -v nm >/dev/null 2>&1 || { echo "circles.sh: no nm" >&2; exit 2; }

# objects GROUP: "GROUP FILE.c OBJECT" lines for one group's objects
objects() {
  case $1 in
    lib)
      for o in "$B"/libconsumer/.libs/libocgc_core_la-*.o; do
        test -f "$o" || continue
        f=${o##*/libocgc_core_la-}
        echo "lib ${f%.o}.c $o"
      done ;;
    tools)
      for o in "$B"/tools/ocgc-*.o; do
        test -f "$o" || continue
        f=${o##*/ocgc-}
        echo "tools ${f%.o}.c $o"
      done ;;
    runtime)
      # one variant of each producer file (the bytecode runtime's)
      for o in "$B"/runtime_patch/build/ocaml-*/runtime/ocgc_*.b.o; do
        test -f "$o" || continue
        f=${o##*/}
        echo "runtime ${f%.b.o}.c $o"
      done ;;
  esac
}

list=`{ objects lib; objects tools; objects runtime; }`
test -n "$list" || { echo "circles.sh: no objects under $B (build it first)" >&2; exit 2; }

# "GROUP/FILE D SYM" and "GROUP/FILE U SYM" lines, one per symbol
found=`echo "$list" | while read -r g f o; do
  nm "$o" 2>/dev/null | awk -v n="$g/$f" '
    NF == 3 && $2 ~ /^[TDBRVW]$/ { print n, "D", $3 }
    NF == 2 && $1 == "U" { print n, "U", $2 }'
done | awk -v edges="$EDGES" '
  $2 == "D" { split($1, p, "/"); def[p[1] SUBSEP $3] = $1; next }
  { u[++nu] = $1; s[nu] = $3 }
  END {
    for (i = 1; i <= nu; i++) {
      split(u[i], p, "/")
      k = p[1] SUBSEP s[i]
      if (!(k in def) || def[k] == u[i]) continue
      e = u[i] SUBSEP def[k]
      if (e in edge) continue
      edge[e] = 1
      out[u[i]] = out[u[i]] " " def[k]
      node[u[i]] = 1; node[def[k]] = 1
    }
    if (edges != "") {
      for (e in edge) { split(e, q, SUBSEP); print q[1], "->", q[2] }
      exit 0
    }
    # reach[a,b]: b is reachable from a (a depth-first walk from each file)
    for (a in node) {
      delete seen; top = 0; stack[++top] = a
      while (top > 0) {
        x = stack[top--]
        n = split(out[x], nx, " ")
        for (j = 1; j <= n; j++) if (!(nx[j] in seen)) {
          seen[nx[j]] = 1; reach[a, nx[j]] = 1; stack[++top] = nx[j]
        }
      }
    }
    found = 0
    for (a in node) {
      if (a in done) continue
      c = ""
      for (b in node)
        if (b != a && ((a, b) in reach) && ((b, a) in reach)) { c = c " " b; done[b] = 1 }
      if (c != "") print "circle: " a c
    }
  }' | sort`
test -n "$found" || exit 0
if test -n "$EDGES"; then echo "$found"; exit 0; fi
# each circle's files in order
echo "$found" | while read -r w rest; do
  printf '%s %s\n' "$w" "`printf '%s\n' $rest | sort | tr '\n' ' ' | sed 's/ $//'`"
done | sort
exit 1
