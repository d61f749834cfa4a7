#!/bin/sh
# hostile_strings.sh - strings a ring file controls never reach the
# terminal raw: a real ring (a program's, kept at exit)
# is given a program name, an OCaml version and a user-event name holding
# terminal escape sequences, a bell and a newline followed by a forged
# "events.lost 0", and bytes that are no UTF-8 (a lone 0xff, a C1 CSI
# 0x9b) next to a valid UTF-8 e-acute; then `ocgc dump` (summary and
# --events), `ocgc ls` and `ocgc report --file` must print none of those
# bytes (they are written as \xHH), and dump's key/value output must hold
# exactly one events.lost line.  The JSON of `ocgc ls --json`, `ocgc report
# --json` and `ocgc trace` must be valid UTF-8 and valid JSON with no raw
# control character, and give the program's name back: each byte that is
# no UTF-8 as U+00XX, the rest as it is.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
command -v python3 >/dev/null 2>&1 || hard_error "python3 is needed to edit the ring"

compile_native lifecycle ocgc_test.ml lifecycle.ml
run_ok life ./lifecycle
ring_of life
cp "$RING" "$WORK/hostile.events" || hard_error "cp"
rm -f "${EVDIR:?}"/*
python3 - "$WORK/hostile.events" <<'PY' || hard_error "could not edit the ring"
import struct, sys
path = sys.argv[1]
with open(path, "r+b") as f:
    b = bytearray(f.read())
    ext = 64
    def put(off, size, s):
        assert len(s) < size
        b[off:off + size] = s + bytes(size - len(s))
    put(ext + 152, 64, b"\x1b[2J\x1b[H\x07evil\nevents.lost 0\xff\xc3\xa9")
    put(ext + 120, 16, b"\x1b]0;t\x07")
    names = struct.unpack_from("<Q", b, 56)[0]
    want = b"ocgc.major_cycle.start\0"
    i = b.find(want, names)
    assert i >= 0 and (i - names) % 128 == 0, "no ocgc.major_cycle.start slot"
    put(i, 128, b"x\x1b[31m\nevents.lost 0\r\x9b2J")
    f.seek(0)
    f.write(b)
PY
mkdir -m 0700 "$WORK/hd" && cp "$WORK/hostile.events" "$WORK/hd/`outkey life pid`.events" ||
  hard_error "cp"

# clean TAG: TAG.out holds no ESC, BEL, CR nor C1 CSI byte
clean() {
  _n=`LC_ALL=C tr -cd '\033\007\015\233' <"$WORK/$1.out" | wc -c | tr -d ' '`
  check_eq "$1: control bytes in the output" 0 "$_n"
}
# ocgc_out TAG ARGS...: ocgc ARGS into TAG.out (stderr TAG.err)
ocgc_out() {
  _t=$1; shift
  "$OCGC" "$@" >"$WORK/$_t.out" 2>"$WORK/$_t.err"
  check_eq "$_t: ocgc $1: exit status" 0 $?
}

ocgc_out sum dump "$WORK/hostile.events"
clean sum
check_eq "sum: events.lost lines" 1 "`grep -c '^events.lost ' "$WORK/sum.out"`"
check_true "sum: the program name, escaped" \
  grep -qF 'producer.program \x1b[2J\x1b[H\x07evil\x0aevents.lost 0\xff\xc3\xa9' "$WORK/sum.out"
check_true "sum: the OCaml version, escaped" grep -qF 'producer.ocaml \x1b]0;t\x07' "$WORK/sum.out"
check_true "sum: the user-event name, escaped (its space too: a key is one field)" \
  grep -qF 'user.x\x1b[31m\x0aevents.lost\x200\x0d\x9b2J.count ' "$WORK/sum.out"
check_eq "sum: lines that are not one key and one value" 0 \
  "`awk 'NF != 2 && !/^producer\.program / && !/^producer\.ocaml /' "$WORK/sum.out" | wc -l | tr -d ' '`"
ocgc_out evs dump --events "$WORK/hostile.events"
clean evs
check_eq "evs: events.lost lines" 1 "`grep -c '^events.lost ' "$WORK/evs.out"`"
check_gt "evs: user events named, escaped" 0 "`grep -c ' user x\\\\x1b\[31m' "$WORK/evs.out"`"
check_eq "evs: event lines that are not five fields" 0 \
  "`awk '$1 ~ /^[0-9]+$/ && NF != 5' "$WORK/evs.out" | wc -l | tr -d ' '`"
ocgc_out ls ls --no-default-dirs --dir "$WORK/hd"
clean ls
check_eq "ls: one row (header + 1)" 2 "`wc -l <"$WORK/ls.out" | tr -d ' '`"
ocgc_out rep report --file "$WORK/hostile.events"
clean rep

# JSON: every output valid UTF-8 and JSON, the program's name given back
ocgc_out lsj ls --json --no-default-dirs --dir "$WORK/hd"
ocgc_out repj report --json --file "$WORK/hostile.events"
ocgc_out trj trace --file "$WORK/hostile.events" -o "$WORK/trj.json"
check_eq "JSON outputs: valid, no raw control character, the name given back" ok "`python3 - \
  "$WORK/lsj.out" "$WORK/repj.out" "$WORK/trj.json" <<'PY' 2>&1
import json, re, sys
want = "\x1b[2J\x1b[H\x07evil\nevents.lost 0\u00ff\u00e9"
raw = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
def names(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from names(x)
    elif isinstance(v, list):
        for x in v:
            yield from names(x)
    elif isinstance(v, str):
        yield v
for i, path in enumerate(sys.argv[1:]):
    text = open(path, "rb").read().decode("utf-8")  # strict: fails on bad UTF-8
    if raw.search(text):
        sys.exit("%s: a raw control character" % path)
    docs = [json.loads(l) for l in text.splitlines()] if i == 0 else [json.loads(text)]
    found = [s for d in docs for s in names(d)]
    if i < 2 and want not in found:
        sys.exit("%s: no program name %r in %r" % (path, want, found[:20]))
    if i == 2 and not any(s.startswith("x\x1b[31m\nevents.lost 0\r\u009b") for s in found):
        sys.exit("%s: no user event name" % path)
print("ok")
PY
`"
finish
