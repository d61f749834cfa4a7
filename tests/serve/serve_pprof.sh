#!/bin/sh
# serve_pprof.sh - `ocgc serve`'s allocation profiles and ocaml_memprof_*
# metrics, of a live program of known allocations (profile_live.ml,
# sampling at 4 KiB from the start), read by Debian's `go tool pprof`:
# - /debug/pprof/allocs?pid=N scraped before and after the program's
#   allocations: their difference (pprof -diff_base) holds alloc_a, alloc_b
#   and alloc_c within 5 standard deviations of their known bytes; a
#   seconds=S window around them does too; /debug/pprof/heap's default
#   sample type is inuse_space and holds the retained arrays;
# - /metrics: ocaml_memprof_rate_bytes 4096, samples, sampled bytes and
#   stacks between what the ring says (ocgc dump) just before and just
#   after the scrape;
# - refusals: no pid (400), a process not watched (404), seconds out of
#   bounds (400), a ninth request while eight (of eight clients) wait (503, counted in
#   ocgc_serve_pprof_busy_total); /metrics still answers while they wait;
#   SIGTERM answers the eight 503 and exits 0;
# - with basic auth (--web.config.file), no profile without the password,
#   and with it one (an authenticated client needs no --web.enable-pprof).
# (Who gets a profile, what it holds, and the jobs' lifetime:
# serve_pprof_access.sh.)
# Without go (golang-go) it is skipped with one line.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
. "$OCGC_SRCDIR/tests/lib/pprof_lib.sh"
attach_init
pprof_init

N=400000 K=20000 RATE=4096
W=$((RATE / 8))
OCAMLFLAGS=-g compile_native pl memprof_funs.ml profile_live.ml

within() { pprof_within "$1" "$2" "$3" $W; }

mkdir -p "$WORK/p"
start_bg p env OCGC_MEMPROF=$RATE ./pl "$WORK/p" $N $K
pid=$BGPID
wait_key p ready "$pid"
serve srv --listen 127.0.0.1:0 --web.enable-pprof "$pid"

# Two scrapes around the allocations, and a window of seconds around them.
check_eq "allocs, before: 200" 200 "`get before.pb.gz "/debug/pprof/allocs?pid=$pid"`"
test -s "$WORK/before.pb.gz" || { sed 's/^/srv: /' "$WORK/srv.err"; echo "url=$url"; }
check_true "allocs: pprof's content type" grep -qi '^content-type: application/octet-stream' "$WORK/before.pb.gz.h"
curl -s --max-time 120 -o "$WORK/win.pb.gz" -w '%{http_code}' \
  "${url%/}/debug/pprof/allocs?pid=$pid&seconds=8" >"$WORK/win.code" &
winc=$!
# the allocations begin once the window has (its first copy taken)
n=0
until test "`get wm /metrics`" = 200 && grep -q '^ocgc_serve_pprof_windows 1$' "$WORK/wm"; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the window never began"
  sleep 0.05
done
: >"$WORK/p/go"
wait_key p allocated "$pid"
check_eq "allocs, after: 200" 200 "`get after.pb.gz "/debug/pprof/allocs?pid=$pid"`"
wait $winc
check_eq "allocs?seconds=8: 200" 200 "`cat "$WORK/win.code"`"
pprof_top after -sample_index=alloc_space -diff_base="$WORK/before.pb.gz"
pprof_top win -sample_index=alloc_space
for f in a:1 b:2 c:4; do
  name=Memprof_funs.alloc_${f%:*}
  within "two scrapes' difference: $name" "`pprof_fn after $name`" $((${f#*:} * N * 11))
  within "seconds=8: $name" "`pprof_fn win $name`" $((${f#*:} * N * 11))
done
check_true "seconds=8: a window of 8 s (pprof's Duration)" grep -q "^Duration: 8s" "$WORK/win.top"

# heap: in use by default
check_eq "heap: 200" 200 "`get heap.pb.gz "/debug/pprof/heap?pid=$pid"`"
pprof_top heap
check_true "heap: its default sample type is inuse_space" grep -q "^Type: inuse_space" "$WORK/heap.top"
within "heap: Memprof_funs.retain in use" "`pprof_fn heap Memprof_funs.retain`" $((K * 104))

# /metrics against the ring, read just before and just after the scrape:
# the program still samples its waiting loop's few allocations, and the
# counts only grow, so the scrape's lie between the two.
# between WHAT LOW VALUE HIGH
between() {
  check_true "$1: $3 (ring: $2 before, $4 after)" test "$2" -le "$3" -a "$3" -le "$4"
}
"$OCGC" dump --pid "$pid" >"$WORK/d0.dump" 2>&1 || hard_error "ocgc dump --pid failed"
check_eq "metrics: 200" 200 "`get m1 /metrics`"
"$OCGC" dump --pid "$pid" >"$WORK/d1.dump" 2>&1 || hard_error "ocgc dump --pid failed"
check_eq "ocaml_memprof_rate_bytes" $RATE "`val m1 ocaml_memprof_rate_bytes $pid`"
between "ocaml_memprof_samples_total is the ring's samples" \
  "`dkey d0 memprof.samples`" "`val m1 ocaml_memprof_samples_total $pid`" "`dkey d1 memprof.samples`"
between "ocaml_memprof_sampled_bytes_total is the ring's words x 8" \
  $((`dkey d0 memprof.words` * 8)) "`val m1 ocaml_memprof_sampled_bytes_total $pid`" \
  $((`dkey d1 memprof.words` * 8))
between "ocaml_memprof_stacks" "`dkey d0 memprof.stacks`" "`val m1 ocaml_memprof_stacks $pid`" \
  "`dkey d1 memprof.stacks`"
check_eq "ocaml_memprof_table_rows" 8192 "`val m1 ocaml_memprof_table_rows $pid`"
check_eq "ocgc_serve_pprof_profiles_total" 4 \
  "`awk '$1 == "ocgc_serve_pprof_profiles_total" { print $2 }' "$WORK/m1"`"

# Refusals
check_eq "no pid: 400" 400 "`get e1 /debug/pprof/allocs`"
check_eq "a process not watched: 404" 404 "`get e2 /debug/pprof/allocs?pid=1`"
check_eq "seconds=0: 400" 400 "`get e3 "/debug/pprof/heap?pid=$pid&seconds=0"`"
check_eq "seconds=301: 400" 400 "`get e4 "/debug/pprof/heap?pid=$pid&seconds=301"`"
check_eq "another profile (goroutine): 404" 404 "`get e5 "/debug/pprof/goroutine?pid=$pid"`"
i=0
while test $i -lt 8; do
  # from eight addresses: one client has at most four at once
  curl -s --max-time 120 --interface 127.0.0.$((i + 2)) -o /dev/null -w '%{http_code}' \
    "${url%/}/debug/pprof/allocs?pid=$pid&seconds=300" >"$WORK/wait$i.code" &
  eval "w$i=\$!"
  i=$((i + 1))
done
# the eight windows under way (their first copies taken), a ninth is
# refused: the eight hold every place
n=0
until test "`get wm /metrics`" = 200 && grep -q '^ocgc_serve_pprof_windows 8$' "$WORK/wm"; do
  n=$((n + 1)); test $n -le 1200 || hard_error "the eight windows never began: `cat "$WORK"/wait*.code`"
  sleep 0.05
done
check_eq "a ninth request: 503" 503 "`get busy "/debug/pprof/allocs?pid=$pid"`"
check_true "a ninth request: 503, saying why" grep -q "busy" "$WORK/busy"
check_eq "metrics answer while eight profiles wait" 200 "`get m2 /metrics`"
check_eq "ocgc_serve_pprof_busy_total: the one refused" 1 \
  "`awk '$1 == "ocgc_serve_pprof_busy_total" { print $2 }' "$WORK/m2"`"
kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM with eight waiting: exit 0" 0 "`cat "$WORK/srv.rc"`"
i=0
while test $i -lt 8; do
  eval "wait \$w$i"
  check_eq "waiting request $i: answered 503 at the stop" 503 "`cat "$WORK/wait$i.code"`"
  i=$((i + 1))
done

# Basic auth
HASH=`python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))'`
case "$HASH" in '$2'*) ;; *) hard_error "python3 made no bcrypt hash ($HASH)" ;; esac
printf 'basic_auth_users:\n  alice: %s\n' "'$HASH'" >"$WORK/auth.yml"
serve auth --listen 127.0.0.1:0 --web.config.file "$WORK/auth.yml" "$pid"
check_eq "basic auth, no password: 401" 401 "`get a1 "/debug/pprof/allocs?pid=$pid"`"
check_eq "basic auth, the password: 200" 200 "`get a2 "/debug/pprof/allocs?pid=$pid" -u alice:s3cret`"
kill -TERM "$srv"
ocgc_wait auth

: >"$WORK/p/end"
wait "$pid"
check_eq "the program ran on" "$K" "`outkey p kept`"
finish
