#!/bin/sh
# cause_row.sh TEST - the test of one row of causes.tab: TEST is
# tests/producer/cause/CAUSE.cause (an empty file that make writes, so
# that each row is a test of its own and the rows run in parallel), and
# the checks are those the table's header lists.  Every row also checks
# that the table and producer.am's CAUSE_TESTS name the same causes,
# so that no row is left out of `make check`.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init

TABLE=$OCGC_SRCDIR/tests/producer/causes.tab

# ---- the rows' own checks (the table's HOOK column) ---------------------------

# weak: the hook in ocgc_stubs.c changed the key 8 times during
# Weak.get_copy, then the copy succeeded (see tests/ocaml/cause_weak.ml).
hook_weak_copy() {
  check_eq "key changes during Weak.get_copy" 8 "`outkey weak swaps`"
  check_eq "length of the copy" 40000 "`outkey weak copy`"
}

# shutdown: its collections come after everything the program printed, so
# the totals are ahead of its Gc.quick_stat.
hook_after_report() {
  check_gt "totals.major_collections (after the report)" \
    "`outkey shutdown gc.major_collections`" "`dkey shutdown totals.major_collections`"
}

# ---- the row ------------------------------------------------------------------

table_names() { awk '$1 !~ /^#/ && NF { print $1 }' "$TABLE" | sort | tr '\n' ' '; }

cause=`basename "${1:-}" .cause`
test -n "$cause" || hard_error "usage: cause_row.sh tests/producer/cause/CAUSE.cause"
row=`awk -v c="$cause" '$1 == c { print; exit }' "$TABLE"`
test -n "$row" || hard_error "$TABLE has no row '$cause'"
set -- $row
test $# -eq 5 || hard_error "$TABLE: the row '$cause' has $# columns, not 5"
kinds=`echo "$2" | tr , ' '`
envs=
test "x$3" = x- || envs=`echo "$3" | tr , ' '`
CAUSE_NO_STAT=1
test "x$4" = xyes && CAUSE_NO_STAT=0
hook=$5

if test -n "${OCGC_CAUSE_TESTS:-}"; then
  listed=`for t in $OCGC_CAUSE_TESTS; do basename "$t" .cause; done | sort | tr '\n' ' '`
  check_eq "causes.tab rows = producer.am's CAUSE_TESTS" "`table_names`" "$listed"
fi

# shellcheck disable=SC2086
cause_test "$cause" $kinds -- $envs
say "== every collection of cause_$cause.ml${envs:+ ($envs)} has a known cause"
check_all_caused "$cause"
check_spans_paired "$cause"
if test "x$hook" != x-; then
  command -v "hook_$hook" >/dev/null || hard_error "causes.tab: no hook '$hook' in cause_row.sh"
  say "== $hook"
  "hook_$hook"
fi
finish
