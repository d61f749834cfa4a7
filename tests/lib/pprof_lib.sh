# pprof_lib.sh - reading ocgc's pprof profiles with Debian's `go tool
# pprof` in the tests (sourced after lib.sh and memprof_lib.sh): skips the
# test when go is missing; go's cache and pprof's settings go in $WORK.
#
#   pprof_init                          # after ocgc_init / attach_init
#   pprof_top TAG [PPROF ARGS]          # -top of $WORK/TAG.pb.gz in bytes
#   pprof_fn TAG FUNCTION               # FUNCTION's flat bytes in it
#   pprof_total TAG                     # the total it shows
#   pprof_within WHAT BYTES WORDS W     # bytes, as words, within 5 sd

if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
  echo "skipped: go tool pprof is missing (apt-get install golang-go)"
  exit 77
fi

pprof_init() {
  HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS= export HOME GOCACHE GOFLAGS
}

pprof_top() {
  _t=$1; shift
  go tool pprof -top -unit=B -nodefraction=0 -nodecount=100000 "$@" "$WORK/$_t.pb.gz" \
    >"$WORK/$_t.top" 2>"$WORK/$_t.top.err" ||
    hard_error "go tool pprof -top $_t: `cat "$WORK/$_t.top.err"`"
}

pprof_fn() {
  awk -v f="$2" '$NF == f { v = $1; sub(/B$/, "", v); t += v } END { printf "%d\n", t }' \
    "$WORK/$1.top"
}

pprof_total() {
  awk '/ total$/ { v = $(NF - 1); sub(/B$/, "", v); print v; exit }' "$WORK/$1.top"
}

pprof_within() { mp_within "$1" $(($2 / 8)) "$3" "$4"; }
