#!/bin/sh
# serve_pprof_access.sh - who gets `ocgc serve`'s allocation profiles
# (docs/threat-model.md C3), what a profile holds, and how long a profile
# job lives, with a program of known allocations (profile_live.ml,
# sampling from the start):
# 1. over TCP with no web config, a profile asked by user nobody (uid
#    65534) for root's program is refused 403 with a line naming
#    --web.enable-pprof (heap, and addresses=1, too), /metrics still
#    answers; with --web.enable-pprof the same request gets the profile;
# 2. over a unix socket (mode 0666): nobody gets 403 for root's program,
#    root gets it, nobody gets his own program's;
# 3. a default profile holds no address of the process (decoded here:
#    gzip and protobuf varints; no location address nor mapping start or
#    limit within a range of /proc/PID/maps), with its functions' names
#    (and go tool pprof still names them, where go is); with addresses=1,
#    its locations are the process's own addresses;
# 4. eight windows (seconds=300) of eight clients (127.0.0.2 to .9) that
#    leave: a ninth request is answered 200 within a few seconds (the time
#    printed), ocgc_serve_pprof_abandoned_total says 8;
# 5. one client (one address) has at most 4 requests at once: a fifth is
#    answered 429, another address's request 200;
# 6. a window across an exec of its process (exec_watch.ml: same pid, a
#    new image) is answered 409 with a line saying so.
# The parts as nobody are skipped, saying why, where uid 65534 cannot run.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init
command -v python3 >/dev/null 2>&1 || hard_error "python3 is needed to read the profiles"

N=200000 K=2000 RATE=4096
OCAMLFLAGS=-g compile_native pl memprof_funs.ml profile_live.ml
compile_native ew ocgc_test.ml exec_watch.ml

NOBODY_WHY=`nobody_why`
if test -z "$NOBODY_WHY"; then
  nobody_ocgc "$WORK/pub" # $WORK searchable by all, the program where nobody may run it
  cp "$WORK/pl" "$WORK/pub/" && chmod a+rx "$WORK/pub/pl" || hard_error "cannot copy the program"
  mkdir -m 0700 "$WORK/nev" && chown 65534 "$WORK/nev" || hard_error "cannot make nobody's folder"
  mkdir -m 0777 "$WORK/np" || hard_error "cannot make nobody's go folder"
fi
# what nobody's curl writes (the answers' bodies)
mkdir -m 0777 "$WORK/o" || hard_error "cannot make $WORK/o"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# root's program, its allocations made
mkdir -p "$WORK/p"
start_bg p env OCGC_MEMPROF=$RATE ./pl "$WORK/p" $N $K
pid=$BGPID
wait_key p ready "$pid"
: >"$WORK/p/go"
wait_key p allocated "$pid"

# code TAG PATH [CURL ARGS]: the status of a TCP request (body in TAG)
code() { get "$@"; }
# ucode SOCKET TAG PATH [PREFIX...]: the same over a unix socket, run
# after PREFIX (as_nobody), the body in $WORK/o/TAG
ucode() {
  _s=$1 _f=$2 _p=$3; shift 3
  "$@" curl -s --max-time 30 --unix-socket "$_s" -o "$WORK/o/$_f" -w '%{http_code}' "http://localhost$_p"
}
# gauge FILE NAME: the value of ocgc's own metric NAME in FILE
gauge() { awk -v n="$2" '$1 == n { print $2 }' "$WORK/$1"; }

say "== 1. TCP, no web config"
serve t1 --listen 127.0.0.1:0 "$pid"
if test -z "$NOBODY_WHY"; then who=as_nobody; else
  who=; say "SKIP part: user nobody's request (as root instead; TCP tells no user): $NOBODY_WHY"
fi
check_eq "allocs: 403" 403 "`$who curl -s --max-time 30 -o "$WORK/o/r1" -w '%{http_code}' "${url%/}/debug/pprof/allocs?pid=$pid"`"
check_true "allocs: 403 names --web.enable-pprof" grep -q -- "--web.enable-pprof" "$WORK/o/r1"
check_eq "heap?seconds=1: 403" 403 "`code r2 "/debug/pprof/heap?pid=$pid&seconds=1"`"
check_eq "allocs&addresses=1: 403" 403 "`code r3 "/debug/pprof/allocs?pid=$pid&addresses=1"`"
check_eq "metrics: 200" 200 "`code r4 /metrics`"
kill -TERM "$srv"
ocgc_wait t1
serve t2 --listen 127.0.0.1:0 --web.enable-pprof "$pid"
check_eq "--web.enable-pprof: allocs 200" 200 \
  "`$who curl -s --max-time 30 -o "$WORK/o/e1.pb.gz" -w '%{http_code}' "${url%/}/debug/pprof/allocs?pid=$pid"`"

say "== 3. what a profile holds"
check_eq "allocs&addresses=1: 200" 200 "`code abs.pb.gz "/debug/pprof/allocs?pid=$pid&addresses=1"`"
check_eq "allocs&addresses=2: 400" 400 "`code r5 "/debug/pprof/allocs?pid=$pid&addresses=2"`"
cp "/proc/$pid/maps" "$WORK/maps" || hard_error "cannot read the program's maps"
# addrs TAG: "locations L addressed A in_maps I mappings M mapped X
# named_alloc_a F" of TAG.pb.gz against $WORK/maps (a mapping is mapped
# when its start or limit - 1 is in a range of the maps)
addrs() {
  python3 - "$WORK/$1.pb.gz" "$WORK/maps" <<'EOF' >"$WORK/$1.addrs" || hard_error "cannot decode $1"
import gzip, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        n, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            l, i = varint(b, i); v = b[i:i + l]; i += l
        else:
            raise SystemExit("wire type %d" % w)
        yield n, v
data = gzip.decompress(open(sys.argv[1], 'rb').read())
ranges = []
for line in open(sys.argv[2]):
    lo, hi = line.split()[0].split('-')
    ranges.append((int(lo, 16), int(hi, 16)))
inmaps = lambda a: any(lo <= a < hi for lo, hi in ranges)
locs, maps, strings, fns = [], [], [], {}
for n, v in fields(data):
    if n == 3: maps.append(dict(fields(v)))
    elif n == 4: locs.append(dict(fields(v)))
    elif n == 5:
        f = dict(fields(v)); fns[f.get(1, 0)] = f.get(2, 0)
    elif n == 6: strings.append(v.decode('utf-8', 'replace'))
addressed = [l.get(3, 0) for l in locs if l.get(3, 0) != 0]
mapped = [m for m in maps if inmaps(m.get(2, 0)) or inmaps(m.get(3, 1) - 1)]
named = [s for s in (strings[i] for i in fns.values()) if s.startswith('Memprof_funs.alloc_a')]
print("locations %d addressed %d in_maps %d mappings %d mapped %d named_alloc_a %d" % (
    len(locs), len(addressed), sum(1 for a in addressed if inmaps(a)), len(maps), len(mapped),
    len(named)))
EOF
  cat "$WORK/$1.addrs"
}
# field TAG NAME: that figure of addrs' line
field() { awk -v n="$2" '{ for (i = 1; i < NF; i += 2) if ($i == n) print $(i + 1) }' "$WORK/$1.addrs"; }
cp "$WORK/o/e1.pb.gz" "$WORK/e1.pb.gz"
addrs e1
check_gt "default: locations" 0 "`field e1 addressed`"
check_eq "default: no location at an address of the process" 0 "`field e1 in_maps`"
check_gt "default: mappings" 0 "`field e1 mappings`"
check_eq "default: no mapping at an address of the process" 0 "`field e1 mapped`"
check_eq "default: Memprof_funs.alloc_a named" 1 "`field e1 named_alloc_a`"
addrs abs
check_gt "addresses=1: locations in the maps" 0 "`field abs in_maps`"
check_eq "addresses=1: every location addressed is in the maps" "`field abs addressed`" "`field abs in_maps`"
check_eq "addresses=1: every mapping is in the maps" "`field abs mappings`" "`field abs mapped`"
if command -v go >/dev/null 2>&1 && HOME=$WORK GOCACHE=$WORK/gocache go tool pprof -h >/dev/null 2>&1; then
  HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS= go tool pprof -top -nodecount=100000 "$WORK/e1.pb.gz" \
    >"$WORK/e1.top" 2>"$WORK/e1.top.err"
  check_true "default: go tool pprof names Memprof_funs.alloc_a (`head -n 1 "$WORK/e1.top.err"`)" \
    grep -q 'Memprof_funs.alloc_a$' "$WORK/e1.top"
else
  say "SKIP part: go tool pprof is missing (golang-go): the names read by python only"
fi

say "== 4. eight clients that leave"
i=2
while test $i -le 9; do
  curl -s --max-time 600 --interface 127.0.0.$i -o /dev/null \
    "${url%/}/debug/pprof/allocs?pid=$pid&seconds=300" &
  eval "c$i=\$!"
  i=$((i + 1))
done
n=0
until test "`code wm /metrics`" = 200 && test "`gauge wm ocgc_serve_pprof_windows`" = 8; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the eight windows never began: `gauge wm ocgc_serve_pprof_windows`"
  sleep 0.05
done
check_eq "eight windows: a ninth request 503" 503 "`code busy "/debug/pprof/allocs?pid=$pid"`"
i=2
while test $i -le 9; do
  eval "kill \$c$i; wait \$c$i"
  i=$((i + 1))
done
t0=`date +%s%N`
n=0
while test "`code ninth "/debug/pprof/allocs?pid=$pid"`" != 200; do
  n=$((n + 1)); test $n -le 300 || break
  sleep 0.2
done
ms=$(( (`date +%s%N` - t0) / 1000000 ))
say "the ninth request answered 200 $ms ms after the eight clients left"
check_eq "the clients gone: a ninth request 200" 200 "`code ninth "/debug/pprof/allocs?pid=$pid"`"
check_true "within 30 s ($ms ms; the windows were of 300 s)" test $ms -le 30000
check_eq "metrics: 200" 200 "`code wm /metrics`"
check_eq "ocgc_serve_pprof_abandoned_total" 8 "`gauge wm ocgc_serve_pprof_abandoned_total`"
check_eq "ocgc_serve_pprof_windows" 0 "`gauge wm ocgc_serve_pprof_windows`"

say "== 5. one client's share"
i=0
while test $i -lt 4; do
  curl -s --max-time 600 -o /dev/null "${url%/}/debug/pprof/allocs?pid=$pid&seconds=300" &
  eval "d$i=\$!"
  i=$((i + 1))
done
n=0
until test "`code wm /metrics`" = 200 && test "`gauge wm ocgc_serve_pprof_windows`" = 4; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the four windows never began"
  sleep 0.05
done
check_eq "a fifth request of 127.0.0.1: 429" 429 "`code many "/debug/pprof/allocs?pid=$pid"`"
check_true "429 says why" grep -q "too many" "$WORK/many"
check_eq "a request of 127.0.0.2: 200" 200 "`code other "/debug/pprof/allocs?pid=$pid" --interface 127.0.0.2`"
i=0
while test $i -lt 4; do
  eval "kill \$d$i; wait \$d$i"
  i=$((i + 1))
done
kill -TERM "$srv"
ocgc_wait t2
check_eq "SIGTERM: exit 0" 0 "`rc_of t2`"

say "== 2. a unix socket"
S="$WORK/s.sock"
if test -z "$NOBODY_WHY"; then
  (cd "$WORK/pub" && exec setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR OCAML_RUNTIME_EVENTS_DIR="$WORK/nev" \
     OCGC_MEMPROF=$RATE ./pl "$WORK/np" $N $K >"$WORK/np.out" 2>"$WORK/np.err") &
  npid=$!
  BG_PIDS="$BG_PIDS $npid"
  wait_key np ready "$npid"
  : >"$WORK/np/go"
  wait_key np allocated "$npid"
  serve u1 --listen "unix:$S" --socket-mode 0666 "$pid" "$npid"
  check_eq "unix: nobody, root's program: 403" 403 "`ucode "$S" u1 "/debug/pprof/allocs?pid=$pid" as_nobody`"
  check_true "unix: 403 says who may" grep -q "own user" "$WORK/o/u1"
  check_eq "unix: nobody, root's program, addresses=1: 403" 403 \
    "`ucode "$S" u2 "/debug/pprof/allocs?pid=$pid&addresses=1" as_nobody`"
  check_eq "unix: nobody, his own program: 200" 200 "`ucode "$S" u3 "/debug/pprof/allocs?pid=$npid" as_nobody`"
  check_eq "unix: root, root's program: 200" 200 "`ucode "$S" u4 "/debug/pprof/allocs?pid=$pid"`"
  check_eq "unix: root, nobody's program: 200" 200 "`ucode "$S" u5 "/debug/pprof/allocs?pid=$npid"`"
  kill -TERM "$srv"
  ocgc_wait u1
  : >"$WORK/np/end"
  wait "$npid"
else
  say "SKIP part: user nobody on a unix socket: $NOBODY_WHY"
  serve u1 --listen "unix:$S" "$pid"
  check_eq "unix: root, root's program: 200" 200 "`ucode "$S" u4 "/debug/pprof/allocs?pid=$pid"`"
  kill -TERM "$srv"
  ocgc_wait u1
fi

say "== 6. a window across an exec"
start_bg ew env OCGC_MEMPROF=$RATE ./ew first "$WORK/ew.go" "$WORK/ew.stop"
epid=$BGPID
wait_key ew first.minor_collections "$epid"
serve t3 --listen 127.0.0.1:0 --web.enable-pprof "$epid"
curl -s --max-time 120 -o "$WORK/x.body" -w '%{http_code}' \
  "${url%/}/debug/pprof/allocs?pid=$epid&seconds=10" >"$WORK/x.code" &
xc=$!
n=0
until test "`code wm /metrics`" = 200 && test "`gauge wm ocgc_serve_pprof_windows`" = 1; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the window never began: `cat "$WORK/x.code" "$WORK/x.body"`"
  sleep 0.05
done
: >"$WORK/ew.go"
wait_key ew second.pid "$epid"
test -s "$WORK/x.code" && hard_error "the window ended before the exec (a machine this slow cannot tell)"
wait $xc
check_eq "a window across an exec: 409" 409 "`cat "$WORK/x.code"`"
check_true "409 says the process executed another program" grep -q "executed another program" "$WORK/x.body"
kill -TERM "$srv"
ocgc_wait t3
stop_bg ew "$epid"

: >"$WORK/p/end"
wait "$pid"
finish
