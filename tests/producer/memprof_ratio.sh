#!/bin/sh
# memprof_ratio.sh - ocgc's allocation sampling against known allocations
# (tests/ocaml/memprof_ratio.ml): three functions allocating 1:2:4, one
# retaining a known size.  Sampled at 4 KiB, the profile's figures per
# function (by the innermost frame) must lie within 5 standard deviations
# of the known words (each word drawn with probability 1/W: sd sqrt(A x W)
# words), and the whole within 5 of Gc.quick_stat's words; what died must
# be counted freed exactly and what lives not at all, after a full major;
# every sample of the retained minor blocks promoted.  Off by default; a
# bytecode program is not sampled, and says so once.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/memprof_lib.sh"
ocgc_init

N=1000000 K=20000 RATE=4096
W=$((RATE / 8))
compile_native mpr ocgc_test.ml memprof_funs.ml memprof_ratio.ml
run_ok r env OCGC_MEMPROF=$RATE ./mpr $N $K
ring_of r
mp_dump r "$RING"
mp_functions r "$WORK/mpr"
check_dkey r memprof.state on
check_dkey r memprof.rate_bytes $RATE
check_dkey r memprof.overflow 0
check_dkey r memprof.unfollowed 0
check_dkey r memprof.cut 0
check_eq "memprof.samples is the rows' sum" "`dkey r memprof.samples`" \
  "`mp_rows r 1`"

for f in a:1 b:2 c:4; do
  fn=camlMemprof_funs__alloc_${f%:*}_
  m=${f#*:}
  mp_within "alloc_${f%:*} ($m x $N tuples of 11 words)" "`mp_fn r $fn 3`" $((m * N * 11)) $W
  check_eq "alloc_${f%:*}: every sampled block found dead" "`mp_fn r $fn 2`" "`mp_fn r $fn 6`"
  check_eq "alloc_${f%:*}: in use after the full major" 0 $((`mp_fn r $fn 3` - `mp_fn r $fn 7`))
done
say "alloc_b / alloc_a = `awk -v a="\`mp_fn r camlMemprof_funs__alloc_a_ 3\`" -v b="\`mp_fn r camlMemprof_funs__alloc_b_ 3\`" 'BEGIN { printf "%.3f", b / a }'`, alloc_c / alloc_a = `awk -v a="\`mp_fn r camlMemprof_funs__alloc_a_ 3\`" -v c="\`mp_fn r camlMemprof_funs__alloc_c_ 3\`" 'BEGIN { printf "%.3f", c / a }'` (known: 2 and 4)"

fn=camlMemprof_funs__retain_
mp_within "retain: in use ($K arrays of 101 words and their list cells)" \
  $((`mp_fn r $fn 3` - `mp_fn r $fn 7`)) $((K * 104)) $W
check_eq "retain: nothing freed" 0 "`mp_fn r $fn 6`"
check_eq "retain: every sample promoted" "`mp_fn r $fn 2`" "`mp_fn r $fn 4`"
check_eq "the program kept its list" $K "`outkey r kept`"

# All the words sampled in the heap, against the program's own count.
heap=`mp_rows r 2 heap`
mp_within "all heap samples against Gc.quick_stat" "$heap" \
  "`awk -v a="\`outkey r gc.minor_words\`" -v b="\`outkey r gc.major_words\`" -v c="\`outkey r gc.promoted_words\`" 'BEGIN { printf "%d", a + b - c }'`" $W

# Off unless asked.
run_ok off ./mpr 1000 10
ring_of off
mp_dump off "$RING"
check_dkey off memprof.state off
check_dkey off memprof.samples 0
check_dkey off memprof.stacks 0

# A bad setting: one line, sampling off, the program runs on.
run bad env OCGC_MEMPROF=12x ./mpr 1000 10
check_eq "OCGC_MEMPROF=12x: exit status" 0 "`cat "$WORK/bad.rc"`"
check_eq "OCGC_MEMPROF=12x: one line on stderr" 1 "`grep -c 'OCGC_MEMPROF=12x' "$WORK/bad.err"`"
ring_of bad
mp_dump bad "$RING"
check_dkey bad memprof.state off

# Bytecode: not sampled, said once.
compile_byte_ocgc mprb ocgc_test.ml memprof_funs.ml memprof_ratio.ml
run byte env OCGC_MEMPROF=on ./mprb 1000 10
check_eq "bytecode: exit status" 0 "`cat "$WORK/byte.rc"`"
check_eq "bytecode: one line on stderr" 1 "`grep -c 'bytecode programs are not sampled' "$WORK/byte.err"`"
ring_of byte
mp_dump byte "$RING"
check_dkey byte memprof.state unavailable
check_dkey byte memprof.samples 0
finish
