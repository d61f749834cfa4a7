/* test_cursor_loss.c - a cursor's accounting when the writer overwrites
 * what it has not read: for ocgc files every event written is seen, lost
 * or skipped exactly once, and the loss is exact (head_events); for stock
 * files it is estimated, and said so, while the lost words are exact; the
 * loss of what was in the ring when the cursor was made is told apart
 * (lost_before).
 * The rings are written by ringgen with the pattern of ringfix.h. */

#include <check.h>
#include <stdlib.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

/* Overwrite before the first poll: ocgc files count the loss exactly. */
START_TEST(overwrite_exact_loss)
{
  struct tf *t = rf_file(1, 1, 64);
  struct rec *r;
  struct ocgc_cursor *c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  int64_t n;

  pat_write_range(&t->f, 0, 0, 1000);
  n = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(n, 0);
  st = rf_stats(c);
  ck_assert_int_eq(st.lost_exact, 1);
  ck_assert_uint_eq(st.lost, t->f.rings[0].head_events);
  ck_assert_uint_eq(st.lost_words, t->f.rings[0].head);
  ck_assert_uint_eq(st.seen + st.lost + st.skipped, 1000);
  ck_assert_uint_eq(st.skipped, 0);
  /* what is left is the newest events, consecutive */
  rec_expect(r, 0, (size_t)n, 1000 - (uint64_t)n);
  ck_assert_uint_eq(rec_missing(r, 1000), st.lost);
  ck_assert_uint_eq(r->lost_sum, st.lost);
  ck_assert_int_eq(r->lost_inexact, 0);
}
END_TEST

/* The reader falls behind between polls, again and again (fixed seed):
 * after each poll, seen + lost + skipped == written and every missing index
 * is counted once. */
START_TEST(overwrite_behind_between_polls)
{
  struct tf *t = rf_file(1, 1, 128);
  struct rec *r;
  struct ocgc_cursor *c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t written = 0, x = 88172645463325252u;
  unsigned round;

  for (round = 0; round < 400; round++) {
    uint64_t k;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    k = x % (round % 3 == 0 ? 200 : 15); /* mostly a little, sometimes laps */
    pat_write_range(&t->f, 0, written, k);
    written += k;
    ck_assert_int_ge(ocgc_cursor_poll(c, 0), 0);
    st = rf_stats(c);
    ck_assert_uint_eq(st.seen + st.lost + st.skipped, written);
    ck_assert_uint_eq(st.seen, r->n);
    ck_assert_uint_eq(rec_missing(r, written), st.lost);
    ck_assert_uint_le(st.lost, t->f.rings[0].head_events);
  }
  ck_assert_uint_gt(st.lost, 0);     /* the test did lap the reader */
  ck_assert_uint_gt(st.seen, 1000);  /* and it did read */
  ck_assert_uint_eq(r->lost_sum, st.lost);
  ck_assert_int_eq(st.lost_exact, 1);
}
END_TEST

/* A cursor made after the overwrite: what was gone is skipped, not lost. */
START_TEST(overwritten_before_cursor_is_skipped)
{
  struct tf *t = rf_file(1, 1, 64);
  struct rec *r;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  int64_t n;

  pat_write_range(&t->f, 0, 0, 1000);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_uint_eq(rf_stats(c).skipped, t->f.rings[0].head_events);
  n = ocgc_cursor_poll(c, 0);
  st = rf_stats(c);
  ck_assert_uint_eq((uint64_t)n, 1000 - t->f.rings[0].head_events);
  ck_assert_uint_eq(st.lost, 0);
  ck_assert_uint_eq(st.seen + st.lost + st.skipped, 1000);
  rec_expect(r, 0, (size_t)n, t->f.rings[0].head_events);
}
END_TEST

/* Stock files: loss is estimated (and said so), lost words are exact. */
START_TEST(stock_loss_estimated)
{
  struct tf *t = rf_file(0, 1, 64);
  struct rec *r;
  struct ocgc_cursor *c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t pos, head;
  int64_t n;

  ck_assert_int_eq(rf_stats(c).lost_exact, 0);
  pat_write_range(&t->f, 0, 0, 1000);
  n = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(n, 0);
  st = rf_stats(c);
  ck_assert_int_eq(st.lost_exact, 0);
  ck_assert_uint_eq(st.lost_words, t->f.rings[0].head);
  ck_assert_uint_ge(st.lost, 1);
  ck_assert_uint_le(st.lost, st.lost_words);
  ck_assert_uint_eq(st.skipped, 0);
  rec_expect(r, 0, (size_t)n, 1000 - (uint64_t)n);
  ck_assert_int_eq(r->lost_inexact, 1);
  ck_assert_uint_eq(r->lost_sum, st.lost);

  /* behind between polls: the words lost are exactly head - position */
  pos = t->f.rings[0].tail;
  pat_write_range(&t->f, 0, 1000, 500);
  head = t->f.rings[0].head;
  ck_assert_uint_gt(head, pos);
  n = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(n, 0);
  ck_assert_uint_eq(rf_stats(c).lost_words, st.lost_words + (head - pos));
  ck_assert_uint_gt(rf_stats(c).lost, st.lost);
  ck_assert_uint_eq(r->ts[r->n - 1], 1499);
}
END_TEST

/* Loss of what was in the ring when the cursor was made (a busy full ring
 * read from its oldest event) is told apart in lost_before; loss after
 * that is not, and a lap across the tail of then is split by words. */
START_TEST(lost_before_the_cursor)
{
  struct tf *t = rf_file(1, 1, 64);
  struct rec *r;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t in_ring, lost1;

  pat_write_range(&t->f, 0, 0, 1000);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  in_ring = 1000 - t->f.rings[0].head_events;
  ck_assert_uint_eq(rf_stats(c).lost_before, 0);
  /* A few more: the oldest of those there at the cursor's making go. */
  pat_write_range(&t->f, 0, 1000, 3);
  ck_assert_int_gt(ocgc_cursor_poll(c, 0), 0);
  st = rf_stats(c);
  ck_assert_uint_gt(st.lost, 0);
  ck_assert_uint_eq(st.lost_before, st.lost);
  ck_assert_uint_le(st.lost_before, in_ring);
  lost1 = st.lost;
  /* Caught up: a lap now is the cursor's own loss. */
  pat_write_range(&t->f, 0, 1003, 500);
  ck_assert_int_gt(ocgc_cursor_poll(c, 0), 0);
  st = rf_stats(c);
  ck_assert_uint_gt(st.lost, lost1);
  ck_assert_uint_eq(st.lost_before, lost1);
  ck_assert_uint_eq(st.seen + st.lost + st.skipped, 1503);

  /* A lap across the tail of the making, before any poll: part before. */
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  in_ring = 1503 - t->f.rings[0].head_events;
  pat_write_range(&t->f, 0, 1503, 500);
  ck_assert_int_gt(ocgc_cursor_poll(c, 0), 0);
  st = rf_stats(c);
  ck_assert_uint_gt(st.lost_before, 0);
  ck_assert_uint_lt(st.lost_before, st.lost);
  ck_assert_uint_le(st.lost_before, in_ring);
  ck_assert_uint_eq(st.seen + st.lost + st.skipped, 2003);
}
END_TEST

static Suite *cursor_loss_suite(void)
{
  Suite *s = suite_create("cursor_loss");
  TCase *tc = rf_tcase(s, "overwrite", 120);
  tcase_add_test(tc, overwrite_exact_loss);
  tcase_add_test(tc, overwrite_behind_between_polls);
  tcase_add_test(tc, overwritten_before_cursor_is_skipped);
  tcase_add_test(tc, stock_loss_estimated);
  tcase_add_test(tc, lost_before_the_cursor);
  return s;
}

TU_SUITE(cursor_loss_suite);
