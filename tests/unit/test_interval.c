/* test_interval.c - interval recorders (libconsumer/interval.c,
 * ocgc/interval.h) over an aggregator: a pending pause counted once, the
 * growth of consecutive intervals adding up, rates, recorders of their
 * own, a recorder left by its aggregator; on rings written by ringgen
 * (aggfix.c). */

#include <check.h>
#include <errno.h>
#include <string.h>

#include "aggfix.h"
#include "testutil.h"

/* ---- intervals ---------------------------------------------------------------- */

static void next_interval(struct ocgc_interval *iv, struct tf *t, struct ocgc_interval_figures *f)
{
  ck_assert_int_ge(ocgc_agg_poll(t->agg), 0);
  memset(f, 0, sizeof *f);
  f->sz = sizeof *f;
  ck_assert_int_eq(ocgc_interval_next(iv, f), 0);
}

/* A pause that a later collection may still join counts at an interval's
 * end at its length so far, and not again when it grows and ends: the
 * intervals' pauses add up to the pause count.  (The difference of two
 * cumulative histograms, which stat took before, cannot be taken here:
 * the older one holds the pause at 100 ns, the newer at 295.) */
START_TEST(interval_counts_a_pending_pause_once)
{
  struct tf t;
  struct ocgc_interval *iv;
  struct ocgc_interval_figures f;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_snapshot *s;
  const struct ocgc_hist *h;
  tf_create(&t, 1, 4096);
  rg_set_name(&t.f, U_STOP_JOIN, OCGC_UEV_STOP_JOIN);
  tf_open(&t);
  ck_assert_int_eq(ocgc_interval_new(t.agg, &iv), 0);
  minor(&t, 1000, 1100, 800, 80);                 /* pending: a slice may join */
  next_interval(iv, &t, &f);
  h = ocgc_interval_pauses(iv);
  ck_assert_uint_eq(f.growth.pauses, 1);
  ck_assert_uint_eq(ocgc_hist_count(h), 1);
  ck_assert_uint_eq(ocgc_hist_max(h), 100);
  rg_write1(&t.f, 0, UNIT(U_STOP_JOIN), 1105, 0);
  slice(&t, 1105, 1300);                          /* it joins: 295 */
  minor(&t, 5000000, 5000050, 800, 8);            /* the first ends; this one pends */
  next_interval(iv, &t, &f);
  h = ocgc_interval_pauses(iv);
  ck_assert_uint_eq(f.growth.pauses, 1);
  ck_assert_uint_eq(ocgc_hist_count(h), 1);
  ck_assert_uint_eq(ocgc_hist_max(h), 50);
  ck_assert_int_eq(ocgc_agg_finish(t.agg), 0);    /* the second ends, as it was */
  next_interval(iv, &t, &f);
  ck_assert_uint_eq(f.growth.pauses, 0);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_interval_pauses(iv)), 0);
  s = snap(&t);
  ocgc_snapshot_counters(s, &c);
  ck_assert_uint_eq(c.pauses, 2);
  ocgc_snapshot_free(s);
  ocgc_interval_free(iv);
  tf_close(&t);
}
END_TEST

/* The growth of the counters over consecutive intervals adds up to the
 * last snapshot's counts; rates over an interval the producer's clock did
 * not advance through are unknown and zero, its counts still there; two
 * recorders over one aggregator keep their own intervals. */
START_TEST(interval_growth_adds_up)
{
  struct tf t;
  struct ocgc_interval *iv, *iv2;
  struct ocgc_interval_figures f;
  uint64_t minors = 0, alloc = 0;
  tf_create(&t, 0, 4096);
  minor(&t, 1000, 1100, 800, 80);
  tf_open(&t);
  ck_assert_int_eq(ocgc_interval_new(t.agg, &iv), 0);
  ck_assert_int_eq(ocgc_interval_new(t.agg, &iv2), 0);
  next_interval(iv, &t, &f);
  minors += f.growth.collections[OCGC_KIND_MINOR];
  alloc += f.growth.allocated_bytes;
  ck_assert_int_eq(f.rates_known, 0); /* before the first event: now; then 1100 */
  ck_assert(f.rates.allocated_bytes_per_s == 0);
  minor(&t, 2000, 2100, 1600, 80);
  minor(&t, 3000, 3100, 3200, 80);
  next_interval(iv, &t, &f);
  minors += f.growth.collections[OCGC_KIND_MINOR];
  alloc += f.growth.allocated_bytes;
  ck_assert_int_eq(f.rates_known, 1);
  ck_assert_uint_eq(f.start_ns, 1100);
  ck_assert_uint_eq(f.end_ns, 3100);
  ck_assert(f.rates.allocated_bytes_per_s == 4800 / 2e-6);
  ck_assert_uint_eq(minors, 3);
  ck_assert_uint_eq(alloc, 800 + 1600 + 3200);
  memset(&f, 0, sizeof f);
  f.sz = sizeof f;
  ck_assert_int_eq(ocgc_interval_next(iv2, &f), 0); /* one interval since its start */
  ck_assert_uint_eq(f.growth.collections[OCGC_KIND_MINOR], 3);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_interval_pauses(iv2)), 3);
  ocgc_interval_free(iv2);
  /* An aggregator freed first leaves its recorder detached. */
  ocgc_agg_free(t.agg);
  t.agg = NULL;
  ck_assert_int_eq(ocgc_interval_next(iv, &f), -EINVAL);
  ocgc_interval_free(iv);
  tf_close(&t);
}
END_TEST

static Suite *interval_suite(void)
{
  Suite *s = suite_create("interval");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, af_setup, af_teardown);
  tcase_add_test(tc, interval_counts_a_pending_pause_once);
  tcase_add_test(tc, interval_growth_adds_up);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(interval_suite);
