#!/bin/sh
# serve_slowloris.sh - clients that trickle their requests cannot lock the
# others out of `ocgc serve`.  512 connections from
# 127.0.0.1 each send a request line, then a header line every 2 s, never
# ending the head (slowloris).  Meanwhile a scrape from another address
# (127.0.0.2) is answered 200 within 5 s, with the real program's figures;
# one address holds at most 128 connections (PER_ADDRESS in tools/serve.c:
# past it, its oldest unfinished head gives way to the newcomer, which
# serve_scraper_first.sh tests from the scraper's own address);
# every trickling connection is cut about 10 s after it began
# (SERVE_HEAD_DEADLINE_S), counted in ocgc_serve_slow_clients_total; and
# once they stop, 127.0.0.1 is served again.  The exporter used to hold all
# 512 for as long as they trickled (each line reset its idle timeout), and
# every other client waited in the listen backlog.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
N=512
PER_ADDRESS=128
DEADLINE_S=10
RUN_S=30

compile_native target ocgc_test.ml attach_target.ml
start_bg target ./target 0.3 "$WORK/target.stop"
tpid=$BGPID
wait_key target gc.heap_chunks "$tpid"
serve srv --listen 127.0.0.1:0 "$tpid"
port=${url##*:}; port=${port%/}
check_eq "a scrape before" 200 "`get m0 /metrics`"

# The slow clients: "ready C" once C are connected, then at the end
# "held H refused R cut C maxlife L": H connections the server kept for
# more than a second, R it closed within one (the per-address cap: the
# older ones gave way as newer ones came), C it ended later, L the longest
# any of them lived (s).
python3 - "$port" "$N" "$RUN_S" >"$WORK/slow.out" 2>"$WORK/slow.err" <<'EOF' &
import socket, sys, time, select
port, n, run_s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
conns = []
for i in range(n):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        s.close()
        continue
    s.setblocking(False)
    conns.append({"s": s, "t0": time.time(), "end": None})
print("ready", len(conns), flush=True)
end = time.time() + run_s
next_line = time.time() + 2
while time.time() < end:
    live = [c for c in conns if c["end"] is None]
    if not live:
        break
    r, _, _ = select.select([c["s"] for c in live], [], [], 0.2)
    now = time.time()
    for c in live:
        if c["s"] in r:
            try:
                data = c["s"].recv(65536)
            except OSError:
                data = b""
            if not data:
                c["end"] = now
    if now >= next_line:
        for c in conns:
            if c["end"] is None:
                try:
                    c["s"].send(b"X-a: b\r\n")
                except OSError:
                    c["end"] = now
        next_line = now + 2
life = [c["end"] - c["t0"] for c in conns if c["end"] is not None]
refused = sum(1 for x in life if x < 1)
cut = sum(1 for x in life if x >= 1)
held = len(conns) - refused
print("held", held, "refused", refused, "cut", cut, "maxlife", int(max(life) if life else run_s), flush=True)
EOF
slow=$!
BG_PIDS="$BG_PIDS $slow"
_n=0
while ! grep -q '^ready' "$WORK/slow.out"; do
  _n=$((_n + 1)); test $_n -le 600 || hard_error "the slow clients never connected: `cat "$WORK/slow.err"`"
  sleep 0.1
done
say "slow clients: `cat "$WORK/slow.out"`"
sleep 2

# Another address, while they trickle.
bad=0 slow_ms=0 i=1
while test $i -le 3; do
  set -- `get o$i /metrics --interface 127.0.0.2 -w '%{http_code} %{time_total}'`
  ms=`awk -v t="$2" 'BEGIN { printf "%d", t * 1000 }'`
  say "  scrape from 127.0.0.2: $1 in $ms ms"
  test "$1" = 200 || bad=$((bad + 1))
  test "$ms" -le 5000 || slow_ms=$((slow_ms + 1))
  i=$((i + 1))
  sleep 1
done
check_eq "scrapes from another address during the trickle that did not answer 200" 0 "$bad"
check_eq "scrapes from another address slower than 5 s" 0 "$slow_ms"
check_eq "their figures: the program's minor collections" "`outkey target gc.minor_collections`" \
  "`val o3 ocaml_gc_collections_total "$tpid" 'kind="minor"'`"

wait "$slow"
say "slow clients: `tail -n 1 "$WORK/slow.out"`"
set -- `tail -n 1 "$WORK/slow.out"`
check_true "one address held at most $PER_ADDRESS connections ($2)" test "$2" -le $PER_ADDRESS
check_true "the others of its $N were turned away ($4)" test "$4" -ge $((N - PER_ADDRESS))
check_eq "every connection held was cut" "$2" "$6"
check_true "none lived much past the ${DEADLINE_S} s deadline (longest $8 s)" \
  test "$8" -le $((DEADLINE_S + 5))
check_eq "a scrape from 127.0.0.1 after them" 200 "`get m1 /metrics`"
# The count is in the next figures rendered: a scrape answered late (the
# poll thread slow on a loaded machine) carries the ones before the cut.
_n=0
while cut=`sed -n 's/^ocgc_serve_slow_clients_total //p' "$WORK/m1"` &&
      test "${cut:-0}" -lt "$2" && test $_n -lt 100; do
  _n=$((_n + 1)); sleep 0.2; get m1 /metrics >/dev/null
done
check_true "they are counted in ocgc_serve_slow_clients_total ($cut)" test "${cut:-0}" -ge "$2"

: >"$WORK/target.stop"
kill "$srv" 2>/dev/null
finish
