/* test_drain.c - the bounded drain (ocgc_agg_drain, ocgc_cursor_drain):
 * it reads a whole ring and says so, it stops at its event bound, its
 * stop flag and a held seqlock, and it reads its options by the library's
 * one rule (an unknown nonzero tail is refused). */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "ringfix.h"
#include "testutil.h"

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static struct ocgc_agg *agg_over(struct ocgc_source *s)
{
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_agg *agg;
  o.start = OCGC_START_OLDEST;
  ck_assert_int_eq(ocgc_agg_new(s, &o, &agg), 0);
  return agg;
}

/* A live producer (this process) whose ring's seqlock stays odd: one drain
 * with a whole minute of budget makes one poll, which the seqlock ends,
 * and says it is stuck (before: polled again and again, 100 idle polls or
 * the whole budget, and an exporter following 100 stopped producers spent
 * half a core on them); once the seq moves on, the next drain reads every
 * event. */
START_TEST(held_seqlock_ends_the_drain)
{
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_drain_result r = {sizeof r, 0, 0, 0, 0};
  struct ocgc_source *s;
  struct ocgc_agg *agg;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);

  rf_identify_as_self(t); /* alive: its odd seq is a writer's, not a dead one's */
  pat_write_range(&t->f, 0, 0, 5);
  s = rf_open(t, OCGC_IDS_AUTO);
  agg = agg_over(s);
  t->f.rings[0].er->seq = 7;
  d.max_events = 1000;
  d.deadline_ns = now_ns() + UINT64_C(60000000000);
  ck_assert_int_eq(ocgc_agg_drain(agg, &d, &r), 0);
  ocgc_agg_cursor_stats(agg, &st);
  ck_assert_int_eq(r.stuck, 1);
  ck_assert_int_eq(r.caught_up, 0);
  ck_assert_uint_eq(r.polls, 1);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.seen, 0);
  ck_assert_uint_eq(st.busy_polls, 1);

  t->f.rings[0].er->seq = 8;
  ck_assert_int_eq(ocgc_agg_drain(agg, &d, &r), 0);
  ocgc_agg_cursor_stats(agg, &st);
  ck_assert_int_eq(r.stuck, 0);
  ck_assert_int_eq(r.caught_up, 1);
  ck_assert_uint_eq(r.passed, 5);
  ck_assert_int_eq(st.behind, 0);
  ck_assert_uint_eq(st.seen, 5);
  ck_assert_uint_eq(st.busy_polls, 1);
  ocgc_agg_free(agg);
}
END_TEST

/* With no options a drain reads a whole file, however small the cursor's
 * poll budget; with max_events it stops at the first poll past it. */
START_TEST(whole_file_and_event_bound)
{
  struct tf *t = rf_file(1, 1, 1u << 14);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_drain_result r = {sizeof r, 0, 0, 0, 0};
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source *s;
  struct ocgc_cursor *cur;

  ck_assert_uint_lt(pat_words(0, 1000), 1u << 14); /* nothing overwritten */
  pat_write_range(&t->f, 0, 0, 1000);
  s = rf_open(t, OCGC_IDS_AUTO);
  co.start = OCGC_START_OLDEST;
  co.poll_max_events = 100;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &cur), 0);
  d.max_events = 250;
  ck_assert_int_eq(ocgc_cursor_drain(cur, &d, &r), 0);
  ck_assert_uint_eq(r.passed, 300); /* three polls of 100: the third passes 250 */
  ck_assert_uint_eq(r.polls, 3);
  ck_assert_int_eq(r.caught_up, 0);
  ck_assert_int_eq(ocgc_cursor_drain(cur, NULL, &r), 0);
  ocgc_cursor_stats(cur, &st);
  ck_assert_uint_eq(r.passed, 700);
  ck_assert_int_eq(r.caught_up, 1);
  ck_assert_uint_eq(st.seen, 1000);
  ocgc_cursor_free(cur);
}
END_TEST

/* A stop flag already set ends the drain after one poll. */
START_TEST(stop_flag_ends_after_one_poll)
{
  static volatile sig_atomic_t stop = 1;
  struct tf *t = rf_file(1, 1, 1u << 14);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_drain_result r = {sizeof r, 0, 0, 0, 0};
  struct ocgc_source *s;
  struct ocgc_cursor *cur;

  pat_write_range(&t->f, 0, 0, 1000);
  s = rf_open(t, OCGC_IDS_AUTO);
  co.start = OCGC_START_OLDEST;
  co.poll_max_events = 100;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &cur), 0);
  d.stop = &stop;
  ck_assert_int_eq(ocgc_cursor_drain(cur, &d, &r), 0);
  ck_assert_uint_eq(r.polls, 1);
  ck_assert_uint_eq(r.passed, 100);
  ocgc_cursor_free(cur);
}
END_TEST

/* The options rule: a caller's struct larger than the library's is read
 * when its tail is zero, refused (-EINVAL, nothing read) when it is not;
 * an sz smaller than sz itself is refused; a result struct is filled only
 * as far as its sz says. */
START_TEST(options_rule)
{
  struct {
    struct ocgc_drain_opts o;
    uint64_t newer_field;
  } big;
  struct tf *t = rf_file(1, 1, 256);
  struct ocgc_drain_opts bad = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  struct ocgc_drain_result r;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source *s;
  struct ocgc_agg *agg;

  pat_write_range(&t->f, 0, 0, 5);
  s = rf_open(t, OCGC_IDS_AUTO);
  agg = agg_over(s);
  memset(&big, 0, sizeof big);
  big.o.sz = sizeof big;
  big.newer_field = 1;
  ck_assert_int_eq(ocgc_agg_drain(agg, &big.o, NULL), -EINVAL);
  ocgc_agg_cursor_stats(agg, &st);
  ck_assert_uint_eq(st.seen, 0);
  bad.sz = 1;
  ck_assert_int_eq(ocgc_agg_drain(agg, &bad, NULL), -EINVAL);
  r.sz = 0; /* a result that cannot be filled: refused, nothing read */
  ck_assert_int_eq(ocgc_agg_drain(agg, NULL, &r), -EINVAL);
  ocgc_agg_cursor_stats(agg, &st);
  ck_assert_uint_eq(st.seen, 0);
  big.newer_field = 0;
  memset(&r, 0xff, sizeof r);
  r.sz = offsetof(struct ocgc_drain_result, polls); /* an older caller's */
  ck_assert_int_eq(ocgc_agg_drain(agg, &big.o, &r), 0);
  ck_assert_uint_eq(r.passed, 5);
  ck_assert_uint_eq(r.polls, UINT64_MAX); /* past its sz: untouched */
  ocgc_agg_free(agg);
}
END_TEST

static Suite *drain_suite(void)
{
  Suite *s = suite_create("drain");
  TCase *tc = rf_tcase(s, "held", 0);
  tcase_add_test(tc, held_seqlock_ends_the_drain);
  tcase_add_test(tc, whole_file_and_event_bound);
  tcase_add_test(tc, stop_flag_ends_after_one_poll);
  tcase_add_test(tc, options_rule);
  return s;
}

TU_SUITE(drain_suite);
