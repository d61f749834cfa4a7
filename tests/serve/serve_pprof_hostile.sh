#!/bin/sh
# serve_pprof_hostile.sh - root's `ocgc serve` names the frames of user
# nobody's programs whose executables nobody crafted (elf_hostile.py: a
# real program, run as it is, its section headers claiming 4 Mi sections,
# a 16 Mi-row compressed line table, 8000 note sections, or 512 Ki symbols
# sharing a 1 KiB name), and asked /debug/pprof/allocs?pid=N of each:
# - each answer is 200, a profile, within 60 s (the time is printed;
#   the bound serve is meant to keep is 15 s);
# - serve's peak RSS (VmHWM) stays under 256 MiB through the four, with
#   its cache of symbolizers (before: 1 to 1.7 GB a request, and 1.2 GB
#   kept after four);
# - the names shape's frames are named (its one long name), the others'
#   profiles answered whether named or not.
# ASan's quarantine (freed memory kept, 256 MiB) is off for serve here:
# the peak measured is what serve allocates.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init
why=`nobody_why`
test -z "$why" || { say "SKIP: $why"; exit 77; }
command -v python3 >/dev/null 2>&1 || { say "SKIP: python3 is missing"; exit 77; }
OCAMLFLAGS=-g compile_native pl memprof_funs.ml profile_live.ml

chmod 0711 "$WORK"
mkdir -m 0755 "$WORK/pub" "$WORK/nd" && mkdir -m 0700 "$WORK/nev" &&
  chown 65534:65534 "$WORK/nev" || hard_error "mkdir failed"
pids=
for shape in sections lines notes names; do
  python3 "$OCGC_SRCDIR/tests/serve/elf_hostile.py" $shape "$WORK/pl" "$WORK/pub/pl-$shape" ||
    hard_error "elf_hostile.py $shape failed"
  (cd "$WORK/pub" && exec setpriv --reuid=65534 --regid=65534 --clear-groups env \
     OCAML_RUNTIME_EVENTS_DIR="$WORK/nev" OCGC_MEMPROF=4096 "./pl-$shape" "$WORK/nd" 20000 100 \
     >"$WORK/$shape.out" 2>"$WORK/$shape.err") &
  eval "pid_$shape=$!"
  BG_PIDS="$BG_PIDS $!"
  pids="$pids $!"
done
: >"$WORK/nd/go"
for shape in sections lines notes names; do
  eval "p=\$pid_$shape"
  wait_key $shape allocated "$p"
done
ls -ls "$WORK/pub" | sed 's/^/files: /'

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
serve srv --listen 127.0.0.1:0 --web.enable-pprof $pids
hwm() { awk '/^VmHWM:/ { print $2 }' /proc/$srv/status; }
say "serve's peak before the profiles: `hwm` KiB"
for shape in sections lines notes names; do
  eval "p=\$pid_$shape"
  t0=`date +%s%N`
  code=`curl -s --max-time 120 -o "$WORK/$shape.pb.gz" -w '%{http_code}' \
    "${url%/}/debug/pprof/allocs?pid=$p"`
  t1=`date +%s%N`
  ms=$(((t1 - t0) / 1000000))
  say "$shape: answered $code in $ms ms; serve's peak now `hwm` KiB"
  check_eq "$shape: allocs answered" 200 "$code"
  check_true "$shape: a gzipped profile" gzip -t "$WORK/$shape.pb.gz"
  check_true "$shape: within 60 s ($ms ms)" test "$ms" -lt 60000
done
long=Hostile.`printf '%1008s' '' | tr ' ' f`
check_true "names: frames named by the shared name" \
  sh -c "gzip -dc '$WORK/names.pb.gz' | grep -a -q -F '$long'"
peak=`hwm`
check_true "serve's peak RSS under 256 MiB ($peak KiB)" test "$peak" -lt 262144
# serve still answers
check_eq "metrics after the four" 200 "`get m /metrics`"
kill -TERM "$srv"
ocgc_wait srv
for p in $pids; do kill "$p" 2>/dev/null; done
finish
