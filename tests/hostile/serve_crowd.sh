#!/bin/sh
# serve_crowd.sh - a crowd of hostile rings cannot crowd a real program out
# of `ocgc serve --all`, nor blow up its answer.
# 300 live rings (tests/hostile/hostile_producer crowd:300, of a user of
# their own when the test runs as root), each named with 63 bytes a label must not
# carry as they are; then a real OCaml program starts.  The exporter runs
# with a soft limit of 256 descriptors, which it must raise (the issue's
# host had 1,050 rings against the usual 1,024: scaled down so that the
# tests running beside this one, whose exporters see these rings too, are
# not slowed), and a per-user quota of 280 (--max-per-user), above that
# limit.  Checked: the real program is watched, its figures equal to its own Gc.quick_stat; the
# crowd's user has at most its quota of watched processes and the rest are
# counted as refused; every program label is cut to its bound (32 bytes of
# the name, then U+2026), so the answer is at most a stated size per
# process; gzip is what Prometheus is sent, and the text a client without
# it gets is the same; /metrics and /-/healthy answer 200 within 5 s (ten
# times the stated 0.5 s, for a loaded machine).  The exporter used to keep
# the soft limit (rings past it never watched: the real program never
# appeared), and to write each name whole.
. "$OCGC_SRCDIR/tests/lib/serve_hostile_lib.sh"
N=300
QUOTA=280
LABEL_MAX=32 # tools/serve.h SERVE_LABEL_MAX

need_open_files $((N + 600))
ulimit -Sn 256

compile_native target ocgc_test.ml attach_target.ml

# The crowd: another user's when we are root (the per-user quota is what
# keeps the real program's place), a user of its own (a uid no other run
# uses: a second run of this test at once has its own quota); ours
# otherwise (then no quota can tell them apart: the bound is raised past
# the crowd, and the descriptors are what is tested).
CROWD_DIR=`mktemp -d /tmp/ocgc-crowd.XXXXXX` || hard_error "mktemp -d failed"
trap 'attach_cleanup; rm -rf "$CROWD_DIR"' EXIT
as_nobody=
quota_args="--max-per-user 4096"
if test "`id -u`" = 0 && command -v setpriv >/dev/null 2>&1; then
  cuid=$((60000 + $$ % 5000))
  # The build folder may be in /root (0700): the crowd's copy is its own.
  mkdir -m 0755 "$CROWD_DIR/bin" && cp "$HBIN/hostile_producer" "$CROWD_DIR/bin/" &&
    chmod 0755 "$CROWD_DIR/bin/hostile_producer" && chown $cuid "$CROWD_DIR" ||
    hard_error "cannot set up $CROWD_DIR for uid $cuid"
  chmod 0755 "$CROWD_DIR"
  as_nobody="setpriv --reuid=$cuid --regid=$cuid --clear-groups"
  quota_args="--max-per-user $QUOTA"
  HBIN=$CROWD_DIR/bin
fi
t0=`date +%s`
start_bg crowd $as_nobody "$HBIN/hostile_producer" "$CROWD_DIR" crowd:$N 600 10
crowd=$BGPID
wait_key crowd ready "$crowd" 300
t_ready=`date +%s`
say "crowd ready in `expr $t_ready - $t0` s"
check_eq "crowd processes ready" "$N" "`grep -c '^child ' "$WORK/crowd.out"`"

serve srv --listen 127.0.0.1:0 --all $quota_args
# Every ring the listing will watch is watched: the crowd's quota filled.
want=$N
test -z "$as_nobody" || want=$QUOTA
_n=0
while :; do
  get w /metrics >/dev/null
  n=`grep -c '^ocaml_gc_heap_chunks{pid=' "$WORK/w"`
  test "$n" -ge $want && break
  if ! kill -0 "$srv" 2>/dev/null; then
    sed 's/^/srv: /' "$WORK/srv.err" | head -n 60
    hard_error "ocgc serve exited while the crowd was being watched"
  fi
  _n=$((_n + 1)); test $_n -le 300 || { say "watched: $n"; break; }
  sleep 0.5
done

say "the crowd watched `expr \`date +%s\` - $t_ready` s after it was ready ($n rings)"

# Then a real program.
start_bg target ./target 0.3 "$WORK/target.stop"
tpid=$BGPID
wait_key target gc.heap_chunks "$tpid"
_n=0
while test "`get m /metrics`" != 200 || test "`series m "$tpid" ocaml_gc_heap_chunks`" = 0; do
  _n=$((_n + 1)); test $_n -le 60 || break
  sleep 0.5
done
check_eq "the real program started after the crowd is watched" 1 \
  "`series m "$tpid" ocaml_gc_heap_chunks`"
check_eq "its minor collections are its quick_stat's" "`outkey target gc.minor_collections`" \
  "`val m ocaml_gc_collections_total "$tpid" 'kind="minor"'`"
say "exporter's open files: `ls /proc/$srv/fd | wc -l`"

# The crowd's share.
grep -o '^ocaml_gc_heap_chunks{pid="[0-9]*"' "$WORK/m" | sed 's/.*"\([0-9]*\)"/\1/' | sort >"$WORK/watched"
sed -n 's/^child //p' "$WORK/crowd.out" | sort >"$WORK/crowd"
mine=`comm -12 "$WORK/watched" "$WORK/crowd" | wc -l`
refused=`sed -n 's/^ocgc_serve_refused_processes //p' "$WORK/m"`
say "crowd processes watched: $mine of $N; refused: $refused"
if test -n "$as_nobody"; then
  check_true "the crowd's user has at most its quota ($QUOTA) watched ($mine)" test "$mine" -le $QUOTA
  check_true "the crowd's others are counted as refused ($refused >= $((N - mine)))" \
    test "$refused" -ge $((N - mine))
else
  check_eq "every crowd process watched" $N "$mine"
fi

# Labels: each crowd name cut at LABEL_MAX bytes with U+2026, so that a
# line holds at most the escaped 32 bytes (3 bytes each at worst, as
# U+FFFD) and the marker.
python3 - "$WORK/m" "$WORK/crowd" "$LABEL_MAX" >"$WORK/labels.out" 2>&1 <<'EOF'
import re, sys
body = open(sys.argv[1], encoding="utf-8").read()
crowd = set(open(sys.argv[2]).read().split())
lab = re.compile(r'\{pid="(\d+)",program="((?:[^"\\]|\\.)*)"')
seen = bad = longest = 0
for line in body.splitlines():
    m = lab.search(line)
    if not m or m.group(1) not in crowd:
        continue
    seen += 1
    v = m.group(2)
    raw = re.sub(r'\\(.)', r'\1', v)
    longest = max(longest, len(v.encode("utf-8")))
    # The name began with the pid and was 63 bytes: cut, and marked.
    if not raw.startswith(m.group(1)) or not raw.endswith("\u2026") or \
       len(v.encode("utf-8")) > 3 * int(sys.argv[3]) + 3:
        bad += 1
print("lines", seen, "bad", bad, "longest", longest)
EOF
say "crowd labels: `cat "$WORK/labels.out"`"
check_true "crowd series seen" awk '$1 == "lines" && $2 > 0 { ok = 1 } END { exit !ok }' "$WORK/labels.out"
check_true "every crowd label cut to its bound and marked" \
  awk '$1 == "lines" && $4 == 0 { ok = 1 } END { exit !ok }' "$WORK/labels.out"

# The answer: gzip for a client that takes it, the same text for one that
# does not; its size bounded per process.
check_eq "gzip asked: 200" 200 "`get z /metrics -H 'Accept-Encoding: gzip'`"
check_true "gzip asked: sent gzipped" grep -qi '^content-encoding: gzip' "$WORK/z.h"
gzip -dc <"$WORK/z" >"$WORK/z.txt" 2>/dev/null
check_true "gzip asked: a whole gzip stream of the exposition" \
  grep -q '^ocgc_serve_watched_processes ' "$WORK/z.txt"
bytes=`wc -c <"$WORK/m"`
procs=`sed -n 's/^ocgc_serve_watched_processes //p' "$WORK/m"`
say "/metrics: $bytes bytes of text for $procs processes (`wc -c <"$WORK/z"` gzipped)"
check_true "at most 64 KiB of text per watched process" test "$bytes" -le $((procs * 65536 + 65536))

# Scrapes and health checks in time.
slow=0 bad=0 i=1
while test $i -le 5; do
  for p in /metrics /-/healthy; do
    set -- `get s "$p" -w '%{http_code} %{time_total}'`
    ms=`awk -v t="$2" 'BEGIN { printf "%d", t * 1000 }'`
    test "$1" = 200 || bad=$((bad + 1))
    test "$ms" -le 5000 || slow=$((slow + 1))
  done
  i=$((i + 1))
done
check_eq "scrapes and health checks that did not answer 200" 0 "$bad"
check_eq "scrapes and health checks slower than 5 s" 0 "$slow"

: >"$WORK/target.stop"
kill "$crowd" 2>/dev/null
kill "$srv" 2>/dev/null
finish
