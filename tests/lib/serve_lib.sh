# serve_lib.sh - shared by the tests of `ocgc serve` (sourced after lib.sh,
# attach_lib.sh and cmd_lib.sh): start it, scrape it, read its samples.
# Skips the test when curl is missing.
#
#   serve srv --listen 127.0.0.1:0 --all      # $srv its pid, $url its address
#   get m1 /metrics                           # prints the status; body in $WORK/m1
#   val m1 ocaml_gc_heap_size_bytes "$pid"    # the sum of that pid's samples

command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing (apt-get install curl)"; exit 77; }

# serve_try TAG ARGS...: start `ocgc serve ARGS` in the background and wait
# until it says where it listens; its pid in $srv, its address in $url.
# Returns 1 if it exited first (its status in TAG.rc).
serve_try() {
  _tag=$1; shift
  ocgc_bg $_tag serve "$@"
  srv=$OCGC_BGPID
  _n=0
  while ! grep -q 'listening on' "$WORK/$_tag.err" 2>/dev/null; do
    if ! kill -0 "$srv" 2>/dev/null; then ocgc_wait $_tag; return 1; fi
    _n=$((_n + 1)); test $_n -le 600 || hard_error "ocgc serve said nowhere it listens"
    sleep 0.05
  done
  url=`sed -n 's/^ocgc serve: listening on \(https*:[^ ]*\)$/\1/p' "$WORK/$_tag.err"`
}

# serve TAG ARGS...: serve_try, and a hard error if it exits
serve() {
  serve_try "$@" || { cat "$WORK/$1.err"; hard_error "ocgc serve died"; }
}

# get FILE PATH [CURL ARGS]: the body in $WORK/FILE, headers in FILE.h; prints the status
get() {
  _f=$1; _p=$2; shift 2
  curl -s --max-time 30 -D "$WORK/$_f.h" -o "$WORK/$_f" -w '%{http_code}' "$@" "${url%/}$_p"
}
# watched PID: wait until / lists PID (60 s at most)
watched() {
  _n=0
  while ! get idx / >/dev/null || ! grep -q "^$1	" "$WORK/idx"; do
    _n=$((_n + 1)); test $_n -le 600 || hard_error "ocgc serve did not watch $1 in 60 s"
    sleep 0.1
  done
}
# series FILE PID [NAME]: the samples of PID (of NAME only) in $WORK/FILE
series() { grep -c -F "${3:-}{pid=\"$2\"," "$WORK/$1"; }
# val FILE NAME PID [MATCH [SCALE]]: the sum of NAME's samples of PID (whose
# line holds MATCH), times SCALE
val() {
  grep -F "$2{pid=\"$3\"," "$WORK/$1" | grep -F -- "${4:-}" |
    awk -v m="${5:-1}" '{ s += $NF } END { printf "%.0f\n", s * m }'
}

