# serve_hostile_lib.sh - what the tests of `ocgc serve` against hostile
# producers begin with (sourced first): the integration libraries, the
# background programs killed at exit, and $HBIN, where hostile_producer is.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
attach_init
HBIN="$OCGC_BUILDDIR/tests/hostile"
test -x "$HBIN/hostile_producer" || hard_error "$HBIN/hostile_producer is missing (run 'make check')"

# need_open_files N: skip the test (a limit of this machine, which the
# test cannot raise) if the hard limit of open files is below N.
need_open_files() {
  _hard=`ulimit -Hn`
  if test "$_hard" != unlimited && test "$_hard" -lt "$1"; then
    echo "SKIP: the hard limit of open files here is $_hard, below the $1 this test needs"
    exit 77
  fi
}
