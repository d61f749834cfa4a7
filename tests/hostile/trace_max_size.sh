#!/bin/sh
# trace_max_size.sh - `ocgc trace -o` of a flooding target has a size
# limit.  A producer that writes as fast as it can
# (hostile_producer flood) made `trace --duration 15s -o` write 235 MB.
# With --max-size 2M it stops following at 2 MiB, says so on stderr, exits
# 0, and the file is a whole, valid trace (the slices held back and the
# end follow the limit: a little over it, far below what the flood would
# have written); --max-size junk or 0 is a usage error.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }

: >"$WORK/prod.out"
start_bg prod "$HBIN/hostile_producer" "$EVDIR" flood 300
pid=$BGPID
wait_key prod ready "$pid" 30

# The duration is a backstop only: the size must end it.
ocgc_cmd tr trace --duration 120s --max-size 2M -o "$WORK/tr.json" "$pid"
check_eq "trace: exit status" 0 "`rc_of tr`"
check_true "trace: stderr says it stopped at --max-size (`head -n 1 "$WORK/tr.err"`)" \
  grep -q 'at --max-size' "$WORK/tr.err"
size=`wc -c <"$WORK/tr.json"`
say "trace: $size bytes"
check_true "trace: at least the 2 MiB asked ($size)" test "$size" -ge 2097152
check_true "trace: at most 2 MiB and 16 MiB of held slices and end ($size)" \
  test "$size" -le $((2097152 + 16777216))
check_eq "trace: a whole JSON trace" ok "`python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
print("ok" if isinstance(t.get("traceEvents"), list) and t["traceEvents"] else "empty")' \
  "$WORK/tr.json" 2>&1`"

ocgc_cmd junk trace --max-size 2X -o "$WORK/junk.json" "$pid"
check_error junk 2 "--max-size takes a size"
ocgc_cmd zero trace --max-size 0 -o "$WORK/zero.json" "$pid"
check_error zero 2 "--max-size takes a size"

kill "$pid" 2>/dev/null
finish
