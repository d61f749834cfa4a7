#!/bin/sh
# cmd.sh - `make bench`: the ocgc command itself.  Attach latency (from a
# PID to the first figures on screen: `ocgc stat PID 1ms 1`, exec included,
# minus its 1 ms interval; median of 21), and the command's CPU time and
# peak memory while `ocgc stat PID 1s` follows a busy program for about 8
# seconds.  Prints figures; never fails.
set -u
work=$(mktemp -d) || exit 0
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
cp "$BENCH_SRCDIR/alloc.ml" "$work/" || exit 0
if ! (cd "$work" && "$OCAMLFIND" ocamlopt -package unix -linkpkg -I "$OCGC_STAGE" \
        -runtime-variant _ocgc alloc.ml -o alloc) >"$work/log" 2>&1; then
  echo "cmd: cannot compile alloc.ml: n/a"; exit 0
fi
# Time the real program, not libtool's wrapper script for uninstalled
# programs (which spawns a shell first): as an installed ocgc runs.
if test -x "${OCGC_BIN:-}"; then
  LD_LIBRARY_PATH=$OCGC_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
  OCGC=$OCGC_BIN
fi
mkdir -m 700 "$work/rings"
OCAML_RUNTIME_EVENTS_DIR="$work/rings" "$work/alloc" 100000000 >/dev/null &
pid=$!
sleep 0.3
i=0
: > "$work/lat"
while [ $i -lt 21 ]; do
  "$CPUTIME" -q "$OCGC" stat "$pid" 1ms 1 | awk '{ print ($3 - 1000) / 1000 }' >> "$work/lat"
  i=$((i + 1))
done
lat=$(sort -n "$work/lat" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
echo "attach latency (PID to first row of ocgc stat, exec included): median ${lat} ms over 21 runs (target: under 10 ms)"
line=$("$CPUTIME" -q "$OCGC" stat "$pid" 1s 8)
echo "$line" | awk '{ cpu = ($1 + $2) / 1e6; wall = $3 / 1e6;
  printf "ocgc stat PID 1s following a busy program (%.1f s): CPU %.3f s = %.2f%% of a core, peak RSS %.1f MiB (targets: under 2%%, under 4 MiB)\n", wall, cpu, 100 * cpu / wall, $5 / 1024 }'
