#!/bin/sh
# tls_model.sh - libocgc's SIGBUS handler reads thread-local state, so that
# state must be initial-exec TLS: the general-dynamic model goes through
# __tls_get_addr, which may allocate and is not async-signal-safe when the
# library was dlopen'ed (consumer.h, guard.h).  The shared library must
# have no dynamic TLS access at all.
set -u
lib="$OCGC_BUILDDIR/.libs/libocgc.so"
test -f "$lib" || { echo "missing $lib"; exit 99; }
command -v readelf >/dev/null || { echo "skipped: no readelf (binutils) here" >&2; exit 77; }
rel=`readelf -W -r "$lib"` || exit 99
syms=`readelf -W --dyn-syms "$lib"` || exit 99
if printf '%s\n' "$syms" | grep -q '__tls_get_addr'; then
  echo "FAIL: libocgc calls __tls_get_addr (general-dynamic TLS)"
  exit 1
fi
if printf '%s\n' "$rel" | grep -q 'R_X86_64_DTPMOD64\|R_AARCH64_TLS_DTPMOD'; then
  echo "FAIL: libocgc has dynamic-TLS module relocations"
  exit 1
fi
if ! printf '%s\n' "$rel" | grep -q 'TPOFF\|TPREL'; then
  echo "FAIL: no initial-exec TLS relocation found: where did the guard's TLS go?"
  exit 1
fi
echo "ok: libocgc's TLS is initial-exec only"
