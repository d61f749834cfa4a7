#!/bin/sh
# no_signals.sh - libocgc takes none of its host's signals (consumer.h,
# "Signals: none taken"): it reads another process's files without any
# load that can fault, so it has no handler to install, and the shared
# library must not even import a function that changes a disposition or a
# signal mask of the process.
set -u
lib="$OCGC_BUILDDIR/.libs/libocgc.so"
test -f "$lib" || { echo "missing $lib"; exit 99; }
command -v readelf >/dev/null || { echo "skipped: no readelf (binutils) here" >&2; exit 77; }
syms=`readelf -W --dyn-syms "$lib"` || exit 99
# Undefined (imported) functions only: field 7 is UND.
imports=`printf '%s\n' "$syms" | awk '$7 == "UND" { sub(/@.*/, "", $8); print $8 }'`
test -n "$imports" || { echo "FAIL: readelf listed no imports of $lib"; exit 99; }
bad=
for f in sigaction signal sigset bsd_signal sysv_signal __sysv_signal sigvec \
         sigprocmask pthread_sigmask sigaltstack; do
  if printf '%s\n' "$imports" | grep -qx "$f"; then bad="$bad $f"; fi
done
if test -n "$bad"; then
  echo "FAIL: libocgc imports$bad"
  exit 1
fi
# The check reads what it means to: pread, which every ring read needs.
printf '%s\n' "$imports" | grep -qx 'pread64\|pread' || { echo "FAIL: no pread among the imports"; exit 99; }
echo "ok: libocgc imports no signal function ($(printf '%s\n' "$imports" | wc -l) imports)"
