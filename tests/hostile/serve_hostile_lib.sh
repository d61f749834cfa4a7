# serve_hostile_lib.sh - what the tests of `ocgc serve` against hostile
# producers begin with (sourced first): the integration libraries, the
# background programs killed at exit, and $HBIN, where hostile_producer is.
. "$OCGC_SRCDIR/tests/integration/lib.sh"
. "$OCGC_SRCDIR/tests/integration/attach_lib.sh"
. "$OCGC_SRCDIR/tests/integration/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/integration/serve_lib.sh"
attach_init
HBIN="$OCGC_BUILDDIR/tests/hostile"
test -x "$HBIN/hostile_producer" || hard_error "$HBIN/hostile_producer is missing (run 'make check')"
