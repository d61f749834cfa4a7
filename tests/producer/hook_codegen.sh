#!/bin/sh
# hook_codegen.sh - the machine code of the producer's hooks:
# - a hook's timestamp is one TSC read, inline (ocgc_clock.h): every hook
#   that writes has exactly one rdtsc, and none calls clock_gettime itself
#   (only the cold caml_ocgc_reanchor in ocgc_clock.c does);
# - no hook carries a stack-protector canary check, which Debian's
#   -fstack-protector-strong adds to any function with an address-taken
#   local (the clock read's struct timespec was one).
# Checked on ocgc_hooks.n.o of the staged libasmrun_ocgc.a with binutils.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime

for t in ar nm objdump; do
  command -v $t >/dev/null 2>&1 || { say "skipped: $t is not installed"; exit 77; }
done
(cd "$WORK" && ar x "$OCGC_STAGE/libasmrun_ocgc.a" ocgc_hooks.n.o) ||
  hard_error "no ocgc_hooks.n.o in $OCGC_STAGE/libasmrun_ocgc.a"
OBJ="$WORK/ocgc_hooks.n.o"
objdump -d --no-show-raw-insn "$OBJ" >"$WORK/hooks.dis" || hard_error "objdump failed"

# rdtsc_in FUNCTION: rdtsc instructions in the function's own body.
rdtsc_in() {
  awk -v f="<$1>:" '/^[0-9a-f]+ <.*>:$/ { on = ($2 == f) } on && /\trdtsc/ { n++ }
    END { print n + 0 }' "$WORK/hooks.dis"
}

if test "`uname -m`" = x86_64; then
  for f in caml_ocgc_minor_begin caml_ocgc_minor_end caml_ocgc_slice_begin caml_ocgc_slice_end \
      caml_ocgc_finish_begin caml_ocgc_finish_end caml_ocgc_phase_begin caml_ocgc_phase_end \
      caml_ocgc_heap_change; do
    check_eq "rdtsc in $f (its one timestamp)" 1 "`rdtsc_in $f`"
  done
else
  say "not x86-64: no TSC, the rdtsc checks do not apply"
fi
check_eq "hooks calling clock_gettime themselves" 0 \
  "`nm -u "$OBJ" | awk '$NF ~ /^clock_gettime/ { n++ } END { print n + 0 }'`"
check_gt "hooks that may re-read the clock (caml_ocgc_reanchor)" 0 \
  "`nm -u "$OBJ" | awk '$NF == "caml_ocgc_reanchor" { n++ } END { print n + 0 }'`"
# A runtime built with -fstack-protector-all protects every function,
# whatever its locals: the check below is about -strong's choice.
if grep -q 'stack-protector-all' "$OCGC_BUILDDIR"/runtime_patch/build/ocaml-*/Makefile.config \
    2>/dev/null; then
  say "the runtime is built with -fstack-protector-all: canary check skipped"
else
  check_eq "hooks calling __stack_chk_fail" 0 \
    "`nm -u "$OBJ" | awk '$NF == "__stack_chk_fail" { n++ } END { print n + 0 }'`"
fi
finish
