#!/bin/sh
# serve_pprof_byprog.sh - `ocgc serve`'s profiles by program (issue 43,
# item 6): /debug/pprof/allocs?program=NAME merges the profiles of the
# program's processes, living and gone, and /debug/pprof/targets lists one
# target per program for Prometheus-style HTTP service discovery.  The
# program (profile_live.ml, sampling at 4 KiB, allocating 1:2:4 at
# Memprof_funs.alloc_a, alloc_b and alloc_c) is run under a name made for
# this run with a quote, a newline and UTF-8 in it (argv[0], a symlink),
# so that the host's other programs and other runs are never merged:
# 1. two processes: the merged profile, read by `go tool pprof -top`,
#    names the three functions, each with exactly the sum of the two
#    processes' own profiles (?pid=), and its total between the sums of
#    their totals just before and just after (their idle loops allocate);
#    heap?program= is inuse_space by default;
# 2. /debug/pprof/targets is well-formed JSON, lists the program once with
#    its name as it is (the quote and newline escaped), __param_program,
#    and the profile's path percent-encoded; fetching that path gives the
#    same profile;
# 3. one process exits: once serve no longer watches it, the merged
#    profile still holds its part (each function as before; its comment
#    says one of the two is gone);
# 4. a window (seconds=S) across a third process that starts, allocates
#    and exits within it: the window holds the third's allocations
#    (within 5 sd) and none of the first two's;
# 5. over a unix socket, user nobody with a process of that program of
#    his own gets 403 (root's are not his to read), naming the rule, and
#    /debug/pprof/targets does not list the program to him; root gets 200.
# Without go (golang-go) the parts that read profiles with it are skipped,
# saying so; part 5 is skipped where uid 65534 cannot run.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
attach_init
command -v python3 >/dev/null 2>&1 || hard_error "python3 is needed to read the JSON"
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1; then
  HAVE_GO=1
  HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS= export HOME GOCACHE GOFLAGS
else
  HAVE_GO=0
fi

N=200000 K=2000 RATE=4096
W=$((RATE / 8))
OCAMLFLAGS=-g compile_native pl memprof_funs.ml profile_live.ml
# The program's name for this run: a quote, a newline, a u-umlaut (UTF-8).
NAME=`printf 'pm%s"q\nx\303\274' $$`
mkdir -p "$WORK/bin" && ln -s "$WORK/pl" "$WORK/bin/$NAME" || hard_error "cannot name the program"

# top TAG: go tool pprof -top of $WORK/TAG.pb.gz, in bytes
top() {
  go tool pprof -top -unit=B -nodefraction=0 -nodecount=100000 -sample_index=alloc_space \
    "$WORK/$1.pb.gz" >"$WORK/$1.top" 2>"$WORK/$1.top.err" ||
    hard_error "go tool pprof -top $1: `cat "$WORK/$1.top.err"`"
}
fn() {
  awk -v f="$2" '$NF == f { v = $1; sub(/B$/, "", v); t += v } END { printf "%d\n", t }' \
    "$WORK/$1.top"
}
total() { awk '/ total$/ { v = $(NF - 1); sub(/B$/, "", v); print v; exit }' "$WORK/$1.top"; }
# pget TAG PATH-WITHOUT-QUERY [CURL ARGS]: ?program=NAME, percent-encoded by curl
pget() {
  _f=$1 _p=$2; shift 2
  curl -s --max-time 120 -G --data-urlencode "program=$NAME" -o "$WORK/$_f" -w '%{http_code}' \
    "$@" "${url%/}$_p"
}
# watched PID: / lists PID; gone PID: it no longer does (60 s at most)
listed() { get idx / >/dev/null && grep -q "^$1	" "$WORK/idx"; }
watched() {
  _n=0
  until listed "$1"; do
    _n=$((_n + 1)); test $_n -le 600 || hard_error "ocgc serve did not watch $1 in 60 s"
    sleep 0.1
  done
}
unwatched() {
  _n=0
  while listed "$1"; do
    _n=$((_n + 1)); test $_n -le 600 || hard_error "ocgc serve still watches $1 after 60 s"
    sleep 0.1
  done
}
# says TAG TEXT: the profile TAG (gzipped protobuf) holds TEXT (a comment)
says() {
  python3 -c 'import gzip, sys; sys.exit(sys.argv[2].encode() not in gzip.decompress(open(sys.argv[1], "rb").read()))' \
    "$WORK/$1" "$2"
}
# run_prog TAG: the program under its name, sampling, its allocations made
run_prog() {
  mkdir -p "$WORK/$1.d"
  start_bg "$1" env OCGC_MEMPROF=$RATE "$WORK/bin/$NAME" "$WORK/$1.d" $N $K
  eval "$1=\$BGPID"
}

say "== 1. two processes merged"
run_prog pa
run_prog pb
wait_key pa ready "$pa"
wait_key pb ready "$pb"
: >"$WORK/pa.d/go"
: >"$WORK/pb.d/go"
wait_key pa allocated "$pa"
wait_key pb allocated "$pb"
serve srv --listen 127.0.0.1:0 --all --web.enable-pprof
watched "$pa"
watched "$pb"
check_eq "allocs?pid=A: 200" 200 "`get a1.pb.gz "/debug/pprof/allocs?pid=$pa"`"
check_eq "allocs?pid=B: 200" 200 "`get b1.pb.gz "/debug/pprof/allocs?pid=$pb"`"
check_eq "allocs?program=NAME: 200" 200 "`pget m1.pb.gz /debug/pprof/allocs`"
check_eq "allocs?pid=A again: 200" 200 "`get a2.pb.gz "/debug/pprof/allocs?pid=$pa"`"
check_eq "allocs?pid=B again: 200" 200 "`get b2.pb.gz "/debug/pprof/allocs?pid=$pb"`"
check_eq "heap?program=NAME: 200" 200 "`pget h1.pb.gz /debug/pprof/heap`"
if test $HAVE_GO = 1; then
  for t in a1 b1 m1 a2 b2; do top $t; done
  for f in a b c; do
    name=Memprof_funs.alloc_$f
    A=`fn a1 $name` B=`fn b1 $name` M=`fn m1 $name`
    check_gt "merged: $name named" 0 "$M"
    check_eq "merged: $name is A's ($A) + B's ($B)" $((A + B)) "$M"
    eval "M1_$f=\$M"
  done
  lo=$((`total a1` + `total b1`)) hi=$((`total a2` + `total b2`)) tot=`total m1`
  check_true "merged total $tot between the sums of the processes' totals ($lo .. $hi)" \
    test "$lo" -le "$tot" -a "$tot" -le "$hi"
  go tool pprof -top "$WORK/h1.pb.gz" >"$WORK/h1.top" 2>&1
  check_true "heap?program=: its default sample type is inuse_space" grep -q "^Type: inuse_space" "$WORK/h1.top"
else
  say "SKIP part: reading the merged profile with go tool pprof: go (golang-go) is missing"
fi
check_eq "program and pid together: 400" 400 "`pget e1 /debug/pprof/allocs --data-urlencode pid=$pa`"
check_eq "a program not watched: 404" 404 \
  "`curl -s --max-time 30 -o "$WORK/e2" -w '%{http_code}' "${url%/}/debug/pprof/allocs?program=no-such-$$"`"

say "== 2. /debug/pprof/targets"
check_eq "targets: 200" 200 "`get sd /debug/pprof/targets`"
check_true "targets: application/json" grep -qi '^content-type: application/json' "$WORK/sd.h"
python3 - "$WORK/sd" "$NAME" "${url#http://}" >"$WORK/sd.check" 2>&1 <<'EOF'
import json, sys, urllib.parse
raw = open(sys.argv[1], 'rb').read()
name = sys.argv[2].encode('utf-8', 'surrogateescape').decode('utf-8')
host = sys.argv[3].rstrip('/')
groups = json.loads(raw.decode('utf-8'))   # well-formed JSON in UTF-8, or this fails
mine = [g for g in groups if g.get('labels', {}).get('program') == name]
print("listed", len(mine))
g = mine[0]
print("targets_ok", int(g['targets'] == [host]))
print("param_ok", int(g['labels'].get('__param_program') == name))
want = '/debug/pprof/allocs?program=' + urllib.parse.quote(name.encode('utf-8'), safe='')
print("path_ok", int(g['labels'].get('__meta_ocgc_profile_path') == want))
print("raw_newline_escaped", int(b'"q\\n' in raw))
print("path", g['labels'].get('__meta_ocgc_profile_path'))
EOF
cat "$WORK/sd.check"
check_eq "targets: the program listed once" 1 "`getkey "$WORK/sd.check" listed`"
check_eq "targets: HOST:PORT of serve" 1 "`getkey "$WORK/sd.check" targets_ok`"
check_eq "targets: __param_program is the name" 1 "`getkey "$WORK/sd.check" param_ok`"
check_eq "targets: the path, percent-encoded" 1 "`getkey "$WORK/sd.check" path_ok`"
check_eq "targets: the newline escaped in JSON" 1 "`getkey "$WORK/sd.check" raw_newline_escaped`"
check_eq "targets: its path answers 200" 200 "`get sdp.pb.gz "\`getkey "$WORK/sd.check" path\`"`"

say "== 3. a process that exits stays merged"
: >"$WORK/pb.d/end"
wait "$pb"
unwatched "$pb"
check_eq "allocs?program=NAME, B gone: 200" 200 "`pget m2.pb.gz /debug/pprof/allocs`"
if test $HAVE_GO = 1; then
  top m2
  for f in a b c; do
    eval "want=\$M1_$f"
    check_eq "B gone: Memprof_funs.alloc_$f as before" "$want" "`fn m2 Memprof_funs.alloc_$f`"
  done
  go tool pprof -comments "$WORK/m2.pb.gz" >"$WORK/m2.comments" 2>&1
  check_true "B gone: the comment says 2 merged, 1 gone" grep -q "2 processes merged, 1 of them gone" "$WORK/m2.comments"
else
  say "SKIP part: reading the merged profile with go tool pprof: go (golang-go) is missing"
fi

say "== 4. a window across a process that starts and ends in it"
SECS=40
t0=`date +%s`
curl -s --max-time 120 -G --data-urlencode "program=$NAME" -o "$WORK/w.pb.gz" -w '%{http_code}' \
  "${url%/}/debug/pprof/allocs?seconds=$SECS" >"$WORK/w.code" &
wc=$!
n=0
until test "`get wm /metrics`" = 200 && grep -q '^ocgc_serve_pprof_windows 1$' "$WORK/wm"; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the window never began"
  sleep 0.05
done
run_prog pc
wait_key pc ready "$pc"
watched "$pc"
: >"$WORK/pc.d/go"
wait_key pc allocated "$pc"
# a scrape while it lives (as a profiler's, every few seconds): its frames
# named, which a process that goes within a second of its first
# allocations would not have (the rule of names, README)
# (asked until it holds the third: serve learns of a new process from its
# poll thread, a quarter of a second after / lists it)
n=0
until test "`pget m3.pb.gz /debug/pprof/allocs`" = 200 && says m3.pb.gz "3 processes merged"; do
  n=$((n + 1)); test $n -le 600 || hard_error "the merged profile never held the third process"
  sleep 0.1
done
: >"$WORK/pc.d/end"
wait "$pc"
unwatched "$pc"
t1=`date +%s`
say "the third process ran its course $((t1 - t0)) s into the window of $SECS s"
check_true "the third process ended within the window" test $((t1 - t0)) -lt $SECS
wait $wc
check_eq "allocs?program=NAME&seconds=$SECS: 200" 200 "`cat "$WORK/w.code"`"
if test $HAVE_GO = 1; then
  top w
  for f in a:1 b:2 c:4; do
    name=Memprof_funs.alloc_${f%:*}
    mp_within "window: $name is the third's" $((`fn w $name` / 8)) $((${f#*:} * N * 11)) $W
  done
else
  say "SKIP part: reading the window with go tool pprof: go (golang-go) is missing"
fi
kill -TERM "$srv"
ocgc_wait srv
check_eq "serve: SIGTERM, exit 0 (nothing a sanitizer found)" 0 "`cat "$WORK/srv.rc"`"

say "== 5. who gets a merged profile"
NOBODY_WHY=`nobody_why`
if test -n "$NOBODY_WHY"; then
  say "SKIP part: user nobody's process and request: $NOBODY_WHY"
else
  nobody_ocgc "$WORK/pub"
  cp "$WORK/pl" "$WORK/pub/pl" && chmod a+rx "$WORK/pub/pl" &&
    ln -s "$WORK/pub/pl" "$WORK/pub/$NAME" || hard_error "cannot copy the program"
  mkdir -m 0777 "$WORK/pn.d" "$WORK/o" || hard_error "cannot make nobody's folders"
  mkdir -m 0700 "$WORK/nev" && chown 65534 "$WORK/nev" || hard_error "cannot make nobody's ring folder"
  : >"$WORK/pn.out"
  (cd "$WORK/pn.d" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
     env OCAML_RUNTIME_EVENTS_DIR="$WORK/nev" OCGC_MEMPROF=$RATE "$WORK/pub/$NAME" "$WORK/pn.d" $N $K \
     >"$WORK/pn.out" 2>"$WORK/pn.err") &
  pn=$!
  BG_PIDS="$BG_PIDS $pn"
  wait_key pn ready "$pn"
  sock=$WORK/o/s.sock
  serve usrv --listen "unix:$sock" --all
  chmod 0666 "$sock"
  url=http://localhost
  n=0
  until curl -s --max-time 30 --unix-socket "$sock" -o "$WORK/uidx" http://localhost/ &&
        grep -q "^$pn	" "$WORK/uidx" && grep -q "^$pa	" "$WORK/uidx"; do
    n=$((n + 1)); test $n -le 600 || hard_error "ocgc serve did not watch $pn and $pa in 60 s"
    sleep 0.1
  done
  ucode() {
    _f=$1; shift
    "$@" curl -s --max-time 120 --unix-socket "$sock" -G --data-urlencode "program=$NAME" \
      -o "$WORK/o/$_f" -w '%{http_code}' http://localhost/debug/pprof/allocs
  }
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  check_eq "nobody, one process of the program his, one root's: 403" 403 "`ucode n1 as_nobody`"
  check_true "nobody's 403 names the rule" grep -q "each of the program's processes" "$WORK/o/n1"
  check_eq "root: 200" 200 "`ucode r1`"
  as_nobody curl -s --max-time 30 --unix-socket "$sock" -o "$WORK/o/nsd" http://localhost/debug/pprof/targets
  check_eq "nobody's targets: the program not listed" 0 "`python3 -c '
import json, sys
g = json.load(open(sys.argv[1], encoding="utf-8"))
print(sum(1 for t in g if t["labels"]["program"] == sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8")))
' "$WORK/o/nsd" "$NAME"`"
  kill -TERM "$srv"
  ocgc_wait usrv
  check_eq "serve on the unix socket: exit 0" 0 "`cat "$WORK/usrv.rc"`"
  : >"$WORK/pn.d/go"
  : >"$WORK/pn.d/end"
  wait "$pn"
fi

: >"$WORK/pa.d/end"
wait "$pa"
finish
