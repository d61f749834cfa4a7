#!/bin/sh
# profile_pprof.sh - `ocgc profile` of a live program of known allocations
# (tests/ocaml/profile_live.ml, built with -g: alloc_a, alloc_b and alloc_c
# allocate 1:2:4, retain keeps K arrays), read back by Debian's `go tool
# pprof`:
# 1. sampled from the start (OCGC_MEMPROF), the whole profile, its
#    executable replaced on disk before the profile is taken: each known
#    function by its OCaml name within 5 standard deviations of its known
#    bytes (pprof -top), the retained arrays in use within the bound,
#    file and line of each (pprof -lines: memprof_funs.ml and the line of
#    its definition), each sample's stack its callers (pprof -traces);
#    folded and JSON forms equal to pprof's figures exactly for the
#    functions whose allocations are done (each form is its own copy);
# 2. started without sampling, a window with --rate: the rate switched on
#    for the window only (the ring says on during it, off after), SIGINT
#    ending it early and the profile still written, the known functions
#    within the bound;
# 3. a program running its own Gc.Memprof: --rate stands aside, one line,
#    exit 9, the rate put back;
# 4. as user nobody, root's program: one line, exit 8, its rate untouched;
# 5. one line and exit 9 for a program that does not sample.
# Without go (golang-go) it is skipped with one line.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
. "$OCGC_SRCDIR/tests/lib/pprof_lib.sh"
attach_init
pprof_init

N=500000 K=20000 RATE=4096
W=$((RATE / 8))
OCAMLFLAGS=-g compile_native pl memprof_funs.ml profile_live.ml

# top TAG SAMPLE: pprof -top of TAG.pb.gz by SAMPLE, into TAG.SAMPLE.top
top() { cp "$WORK/$1.pb.gz" "$WORK/$1.$2.pb.gz" && pprof_top "$1.$2" -sample_index="$2"; }
within() { pprof_within "$1" "$2" "$3" $W; }
# settled TAG PID: `ocgc dump --pid PID` into TAG.dump once the program
# samples no more (ocgc profile wrote the old rate, 0, on its way out, and
# waits a while for the answer; the program reads the word at its next
# minor collection, every 5 ms, however loaded the machine): a hard error
# if it never does
settled() {
  _n=0
  until "$OCGC" dump --pid "$2" >"$WORK/$1.dump" 2>&1 &&
      grep -q '^memprof.rate_bytes 0$' "$WORK/$1.dump"; do
    _n=$((_n + 1)); test $_n -le 1200 || hard_error "$1: the rate was not put back after 60 s"
    sleep 0.05
  done
}

# 1. The whole profile, of a copy of the program whose file is replaced
# once it runs: the frames are named from the file the process maps.
cp "$WORK/pl" "$WORK/pl1" || hard_error "cannot copy pl"
start_bg whole env OCGC_MEMPROF=$RATE ./pl1 "$WORK/whole" $N $K
pid=$BGPID
mkdir -p "$WORK/whole"
wait_key whole ready "$pid"
: >"$WORK/whole/go"
wait_key whole allocated "$pid"
cp /bin/true "$WORK/pl1.new" && mv -f "$WORK/pl1.new" "$WORK/pl1" || hard_error "cannot replace pl1"
for f in pprof folded json; do
  "$OCGC" profile "$pid" --format $f -o "$WORK/whole.$f" 2>"$WORK/whole.$f.err"
  check_eq "profile --format $f: exit 0" 0 $?
  check_eq "profile --format $f: nothing on stderr" "" "`cat "$WORK/whole.$f.err"`"
done
mv "$WORK/whole.pprof" "$WORK/whole.pb.gz"
top whole alloc_space
top whole inuse_space
for f in a:1 b:2 c:4; do
  name=Memprof_funs.alloc_${f%:*}
  within "$name by its OCaml name (${f#*:} x $N tuples of 11 words)" \
    "`pprof_fn whole.alloc_space $name`" $((${f#*:} * N * 11))
  check_eq "$name: nothing in use after the full major" 0 "`pprof_fn whole.inuse_space $name`"
done
within "Memprof_funs.retain: in use ($K arrays of 101 words and their cells)" \
  "`pprof_fn whole.inuse_space Memprof_funs.retain`" $((K * 104))
# file and line of a -g build
go tool pprof -top -lines -nodefraction=0 -sample_index=alloc_space "$WORK/whole.pb.gz" \
  >"$WORK/whole.lines" 2>&1
for fn in alloc_a alloc_b alloc_c; do
  line=`grep -n "^let\[@inline never\] $fn " "$OCAML_SRC/memprof_funs.ml" | cut -d: -f1`
  check_true "pprof -lines: Memprof_funs.$fn at memprof_funs.ml:$line" \
    grep -q "Memprof_funs\.$fn .*memprof_funs\.ml:$line\$" "$WORK/whole.lines"
done
# each known function's samples are called from the program's entry
go tool pprof -traces -sample_index=alloc_space "$WORK/whole.pb.gz" >"$WORK/whole.traces" 2>&1
check_true "pprof -traces: alloc_c called by Profile_live.entry" \
  awk '/Memprof_funs.alloc_c$/ { getline; if ($1 == "Profile_live.entry") ok = 1 } END { exit !ok }' \
  "$WORK/whole.traces"
check_true "pprof: the build id of the executable (replaced on disk since)" \
  sh -c "go tool pprof -raw '$WORK/whole.pb.gz' 2>/dev/null | grep -q \"`LC_ALL=C readelf -n "$WORK/pl" | awk '/Build ID/ { print $3 }'`\""
# The other forms, each a copy of its own moment: the program still
# samples its waiting loop's few allocations, so they agree on what
# stopped growing, the stacks whose innermost frame is Memprof_funs's
# (their allocations done, the full major run).
total=`awk '$NF ~ /^Memprof_funs\./ { v = $1; sub(/B$/, "", v); t += v } END { printf "%d\n", t }' \
  "$WORK/whole.alloc_space.top"`
check_gt "pprof's alloc_space of Memprof_funs's functions" 0 "$total"
check_eq "folded lines of Memprof_funs's functions sum to pprof's" "$total" \
  "`awk '{ n = split($1, f, ";") } f[n] ~ /^Memprof_funs\./ { t += $NF } END { printf "%d\n", t }' "$WORK/whole.folded"`"
check_eq "JSON's stacks of Memprof_funs's functions sum to pprof's" "$total" \
  "`python3 -c 'import json,sys; print(sum(s["alloc_space"] for s in json.load(open(sys.argv[1]))["stacks"] if s["frames"] and (s["frames"][0]["function"] or "").startswith("Memprof_funs.")))' "$WORK/whole.json"`"
check_true "folded: frames outermost first (caml_program;...;Memprof_funs.alloc_a)" \
  grep -q "^caml_program;.*Profile_live\.entry;Memprof_funs\.alloc_a [0-9]*\$" "$WORK/whole.folded"
: >"$WORK/whole/end"
wait "$pid"
check_eq "the program ran on" "$K" "`outkey whole kept`"

# 2. A window with --rate, ended by SIGINT.
start_bg win ./pl "$WORK/win" $N $K
pid=$BGPID
mkdir -p "$WORK/win"
wait_key win ready "$pid"
"$OCGC" profile "$pid" --rate $RATE --duration 1h -o "$WORK/win.pb.gz" \
  >"$WORK/prof.out" 2>"$WORK/prof.err" &
prof=$!
# The window starts once the program has applied the rate.
n=0
until "$OCGC" dump --pid "$pid" 2>/dev/null | grep -q '^memprof.state on$'; do
  kill -0 $prof 2>/dev/null || hard_error "ocgc profile ended before the rate was on: `cat "$WORK/prof.err"`"
  n=$((n + 1)); test $n -le 1200 || hard_error "the rate was not on after 60 s"
  sleep 0.05
done
: >"$WORK/win/go"
wait_key win allocated "$pid"
kill -INT $prof
wait $prof
check_eq "profile --rate, SIGINT: exit 0" 0 $?
check_true "profile: says the window was cut short" grep -q "stopped: the window is" "$WORK/prof.err"
settled after "$pid"
check_dkey after memprof.state off
check_dkey after memprof.rate_bytes 0
check_dkey after memprof.rate_changes 2
top win alloc_space
for f in a:1 b:2 c:4; do
  name=Memprof_funs.alloc_${f%:*}
  within "window: $name" "`pprof_fn win.alloc_space $name`" $((${f#*:} * N * 11))
done
: >"$WORK/win/end"
wait "$pid"

# 3. Its own Gc.Memprof runs: --rate is applied but ocgc stands aside;
# one line, exit 9, and the rate put back.
mkdir -p "$WORK/own"
start_bg own ./pl "$WORK/own" 1000 10 own
pid=$BGPID
wait_key own ready "$pid"
"$OCGC" profile "$pid" --rate $RATE --duration 2s -o "$WORK/own.pb.gz" 2>"$WORK/own.prof.err"
check_eq "profile of a program running Gc.Memprof: exit 9" 9 $?
check_true "... it says so" grep -q "runs its own Gc.Memprof" "$WORK/own.prof.err"
check_false "... and no file" test -e "$WORK/own.pb.gz"
settled own "$pid"
check_dkey own memprof.rate_bytes 0
: >"$WORK/own/go"
wait_key own allocated "$pid"
: >"$WORK/own/end"
wait "$pid"

# 4. Another user may not look, let alone switch: one line, exit 8.
why=`nobody_why`
if test -n "$why"; then
  say "SKIP part: cannot run as another user: $why"
else
  nobody_ocgc "$WORK/pub"
  mkdir -p "$WORK/np"
  start_bg np ./pl "$WORK/np" 1000 10
  pid=$BGPID
  wait_key np ready "$pid"
  (cd "$WORK/pub" && setpriv --reuid=65534 --regid=65534 --clear-groups env \
     LD_LIBRARY_PATH="$WORK/pub" ./ocgc profile "$pid" --rate $RATE --duration 1s \
     -o /dev/null >/dev/null 2>"$WORK/np.prof.err")
  check_eq "nobody: profile of root's program: exit 8" 8 $?
  check_eq "nobody: one line" 1 "`wc -l <"$WORK/np.prof.err" | tr -d ' '`"
  "$OCGC" dump --pid "$pid" >"$WORK/np.dump" 2>&1
  check_dkey np memprof.rate_changes 0
  : >"$WORK/np/go"
  wait_key np allocated "$pid"
  : >"$WORK/np/end"
  wait "$pid"
fi

# 5. Not sampling, no --rate: one line, exit 9.
start_bg off ./pl "$WORK/off" 1000 10
pid=$BGPID
mkdir -p "$WORK/off"
wait_key off ready "$pid"
"$OCGC" profile "$pid" -o "$WORK/off.pb.gz" 2>"$WORK/off.prof.err"
check_eq "profile of a program that does not sample: exit 9" 9 $?
check_eq "... one line" 1 "`wc -l <"$WORK/off.prof.err" | tr -d ' '`"
check_false "... and no file" test -e "$WORK/off.pb.gz"
"$OCGC" profile "$pid" --rate 12 2>"$WORK/bad.err" >/dev/null
check_eq "--rate below 64 bytes: a usage error" 2 $?
"$OCGC" profile "$pid" --duration 1s -o "$WORK/off2.pb.gz" 2>"$WORK/off2.prof.err"
check_eq "a window of a program that does not sample, no --rate: exit 9" 9 $?
check_false "... and no file" test -e "$WORK/off2.pb.gz"
: >"$WORK/off/go"
wait_key off allocated "$pid"
: >"$WORK/off/end"
wait "$pid"
finish
