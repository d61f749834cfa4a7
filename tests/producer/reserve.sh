#!/bin/sh
# reserve.sh - the ring takes no address space the program could reserve.
# A program that reserves one big arena (mmap of PROT_NONE, the largest
# that succeeds: tests/ocaml/reserve_stubs.c) gets as much with the ring
# as on the stock runtime, less the ring's own size at most, as a PIE and
# as a non-PIE executable, with the ring off, on, and sampling (whose
# tables are a mapping too).  The ring placed halfway between the break
# and the stack split a non-PIE program's free space (the break is low,
# just above the executable): 64 TiB left of 128.  With address
# randomisation off (setarch -R) the runs are comparable.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime

command -v setarch >/dev/null 2>&1 || { say "skipped: setarch (util-linux) is not installed"; exit 77; }
setarch -R true 2>/dev/null ||
  { say "skipped: setarch -R cannot turn address randomisation off here (personality refused)"; exit 77; }

# gib TAG: the largest reservation of TAG's run, in GiB
gib() { awk -v b="`outkey "$1" reserve`" 'BEGIN { printf "%.3f", b / 1073741824 }'; }

# added_bytes TAG OFF: the bytes of the mappings of TAG's run that the run
# OFF of the same program without the ring does not have: the ring's, and
# the sampling tables'.
added_bytes() {
  sed -n 's/^map //p' "$WORK/$1.out" >"$WORK/$1.maps"
  sed -n 's/^map //p' "$WORK/$2.out" >"$WORK/$2.maps"
  _sum=0
  for _range in `grep -vxF -f "$WORK/$2.maps" "$WORK/$1.maps" | cut -d' ' -f1`; do
    _sum=$((_sum + 0x${_range#*-} - 0x${_range%-*}))
  done
  echo $_sum
}

# exe_low TAG: yes if the executable (the first mapping) lies below 4 GiB,
# as a non-PIE one does
exe_low() {
  _a=`sed -n 's/^map //p' "$WORK/$1.out" | head -n 1 | cut -d- -f1`
  test $((0x$_a < 0x100000000)) = 1 && echo yes || echo no
}

# The same variables, of the same length, in every run: the stack is the same.
rsv() {
  run_ok "$1" env OCGC_DISABLE=$3 OCGC_MEMPROF=$4 setarch -R "$WORK/$2"
  _r=`outkey "$1" reserve`
  is_uint "$_r" || hard_error "$1: the program printed no reserve line"
}

for pie in pie nopie; do
  # The compilers' default is PIE where the C compiler's is (Debian's).
  if test $pie = nopie; then OCAMLFLAGS="-ccopt -no-pie"; else OCAMLFLAGS=; fi
  export OCAMLFLAGS
  compile_native_stock stock_$pie reserve_stubs.c reserve.ml
  compile_native ocgc_$pie reserve_stubs.c reserve.ml
  rsv $pie.stock stock_$pie 1 off
  rsv $pie.off ocgc_$pie 1 off
  rsv $pie.off2 ocgc_$pie 1 off
  # Without randomisation two runs without the ring are the same; if not,
  # nothing below would mean anything.
  if test "`added_bytes $pie.off $pie.off2`" != 0 ||
     test "`outkey $pie.off reserve`" != "`outkey $pie.off2 reserve`"; then
    say "skipped: two runs under setarch -R differ (address randomisation is still on)"
    exit 77
  fi
  rsv $pie.on ocgc_$pie 0 off
  rsv $pie.mp ocgc_$pie 0 on
  stock=`outkey $pie.stock reserve`
  if test $pie = nopie; then low=yes; else low=no; fi
  if test "`exe_low $pie.stock`" != $low; then
    say "SKIP $pie: the compilers do not make that kind of executable here"
    continue
  fi
  check_eq "$pie: the program on ocgc's runtime is of the same kind" $low "`exe_low $pie.on`"
  say "$pie: largest reservation (GiB): stock `gib $pie.stock`, off `gib $pie.off`," \
    "on `gib $pie.on`, sampling `gib $pie.mp`"
  for r in on mp; do
    ring=`added_bytes $pie.$r $pie.off`
    check_gt "$pie.$r: ocgc's mappings (bytes)" 0 "$ring"
    check_ge "$pie.$r: largest reservation >= stock's less ocgc's $ring bytes" \
      $((stock - ring)) "`outkey $pie.$r reserve`"
    check_ge "$pie.$r: largest reservation >= the same program's without the ring, less $ring" \
      $((`outkey $pie.off reserve` - ring)) "`outkey $pie.$r reserve`"
  done
done
finish
