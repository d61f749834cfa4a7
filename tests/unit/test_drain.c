/* test_drain.c - the bounded drain of the ocgc command (tools/drain.c):
 * how a drain ends against a producer that holds its seqlock.
 *
 * (Issue 25: a drain retried a ring held by a stopped producer until its
 * whole time budget ran out, poll after poll; `ocgc serve` following 100
 * such processes spent half a core on them.  A held seqlock now ends the
 * drain after the one poll it ended, as stuck, and the caller comes back
 * at the ring's next turn.) */
#include <check.h>

#include "common.h"
#include "ringfix.h"
#include "testutil.h"

/* A live producer (this process) whose ring's seqlock stays odd: one
 * drain with a whole minute of budget makes one poll, which the seqlock
 * ends, and says it is stuck; once the seq moves on, the next drain reads
 * every event. */
START_TEST(held_seqlock_ends_the_drain)
{
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_source *s;
  struct ocgc_agg *agg;
  struct ocgc_cursor_stats st;
  int stuck = -1;

  rf_identify_as_self(t); /* alive: its odd seq is a writer's, not a dead one's */
  pat_write_range(&t->f, 0, 0, 5);
  s = rf_open(t, OCGC_IDS_AUTO);
  o.start = OCGC_START_OLDEST;
  ck_assert_int_eq(ocgc_agg_new(s, &o, &agg), 0);
  t->f.rings[0].er->seq = 7;
  ck_assert_int_eq(tool_drain_agg_for(agg, 1000, UINT64_C(60000000000), &stuck), 0);
  ocgc_agg_cursor_stats(agg, &st);
  ck_assert_int_eq(stuck, 1);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.seen, 0);
  /* Before: polled again and again (100 idle polls, or the budget). */
  ck_assert_uint_eq(st.busy_polls, 1);

  t->f.rings[0].er->seq = 8;
  ck_assert_int_eq(tool_drain_agg_for(agg, 1000, UINT64_C(60000000000), &stuck), 0);
  ocgc_agg_cursor_stats(agg, &st);
  ck_assert_int_eq(stuck, 0);
  ck_assert_int_eq(st.behind, 0);
  ck_assert_uint_eq(st.seen, 5);
  ck_assert_uint_eq(st.busy_polls, 1);
  ocgc_agg_free(agg);
}
END_TEST

static Suite *drain_suite(void)
{
  Suite *s = suite_create("drain");
  TCase *tc = rf_tcase(s, "held", 0);
  tcase_add_test(tc, held_seqlock_ends_the_drain);
  return s;
}

TU_SUITE(drain_suite);
