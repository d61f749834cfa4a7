/* test_cursor.c - what a cursor delivers from a ring nobody overwrites
 * behind it: every event in order and intact, where it starts (oldest or
 * now), how its copy batches cut the ring, several cursors and rings at
 * once, its arguments, and the bounds of one poll.  Loss and overwrite
 * accounting: test_cursor_loss.c; hostile and truncated files:
 * test_cursor_corrupt.c; live writers: test_cursor_live.c.  The rings are
 * written by ringgen with the pattern of ringfix.h. */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

/* ---- reading ------------------------------------------------------------------------- */

/* All events, in order, fields intact; then nothing; then the new ones. */
START_TEST(read_all_in_order)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 1024);
  struct rec *r;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);

  pat_write_range(&t->f, 0, 0, 100);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 100);
  rec_expect(r, 0, 100, 0);
  ck_assert_uint_eq(r->ring[0], 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  pat_write_range(&t->f, 0, 100, 10);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  rec_expect(r, 100, 10, 100);
  st = rf_stats(c);
  ck_assert_uint_eq(st.seen, 110);
  ck_assert_uint_eq(st.lost, 0);
  ck_assert_uint_eq(st.skipped, 0);
  ck_assert_uint_eq(st.lost_words, 0);
  ck_assert_int_eq(st.lost_exact, has_ext);
  ck_assert_uint_eq(r->lost_calls, 0);
}
END_TEST

/* A 64-word ring read often enough that nothing is lost: every wrap puts a
 * padding record at the end, which is never delivered. */
START_TEST(wrap_with_padding)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 64);
  struct rec *r;
  struct ocgc_cursor *c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  uint64_t i, total = 0;

  for (i = 0; i < 600; i++) {
    pat_write(&t->f, 0, i);
    if (i % 2 == 1) total += (uint64_t)ocgc_cursor_poll(c, 0);
  }
  total += (uint64_t)ocgc_cursor_poll(c, 0);
  ck_assert_uint_eq(total, 600);
  rec_expect(r, 0, 600, 0);
  /* the writer did pad: its tail is past the words of the events */
  ck_assert_uint_gt(t->f.rings[0].tail, pat_words(0, 600));
  /* and did overwrite, but only what had been read */
  ck_assert_uint_gt(t->f.rings[0].head_events, 500);
  ck_assert_uint_eq(rf_stats(c).seen, 600);
  ck_assert_uint_eq(rf_stats(c).lost, 0);
}
END_TEST

/* ---- where a cursor starts ------------------------------------------------------------ */

/* OCGC_START_NOW: only what is written after the cursor was made. */
START_TEST(start_now)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 256);
  struct rec *r;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);

  pat_write_range(&t->f, 0, 0, 10);
  c = rf_reader(t, OCGC_START_NOW, 0, &r);
  /* skipped grows as the polls pass what came before the start */
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ck_assert_uint_eq(rf_stats(c).skipped, has_ext ? 10 : 0);
  pat_write_range(&t->f, 0, 10, 5);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  rec_expect(r, 0, 5, 10);
  st = rf_stats(c);
  ck_assert_uint_eq(st.seen, 5);
  ck_assert_uint_eq(st.lost, 0);
  if (has_ext) ck_assert_uint_eq(st.seen + st.lost + st.skipped, 15);
}
END_TEST

/* START_NOW on a ring that has wrapped and been overwritten (padding and a
 * moved head in the ring): skipped counts every event written so far. */
START_TEST(start_now_after_overwrite)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 64);
  struct rec *r;
  struct ocgc_cursor *c;

  pat_write_range(&t->f, 0, 0, 1003);
  ck_assert_uint_gt(t->f.rings[0].head, 0);
  c = rf_reader(t, OCGC_START_NOW, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ck_assert_uint_eq(rf_stats(c).skipped, has_ext ? 1003 : 0);
  pat_write_range(&t->f, 0, 1003, 4);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 4);
  rec_expect(r, 0, 4, 1003);
  if (has_ext)
    ck_assert_uint_eq(rf_stats(c).seen + rf_stats(c).lost + rf_stats(c).skipped, 1007);
}
END_TEST

/* ---- how much one poll takes ------------------------------------------------------------ */

/* max_events and a callback that stops. */
START_TEST(max_events_and_stop)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct rec *r;
  struct ocgc_cursor *c;

  pat_write_range(&t->f, 0, 0, 20);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 3), 3);
  ck_assert_int_eq(ocgc_cursor_poll(c, 1), 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 3), 3);
  rec_expect(r, 0, 7, 0);
  r->stop_at = 12; /* stop after the 5th of the next poll */
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  ck_assert_int_eq(ocgc_cursor_poll(c, 100), 8);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  rec_expect(r, 0, 20, 0);
  ck_assert_uint_eq(rf_stats(c).seen, 20);
}
END_TEST

/* Small copy buffers: many batches per poll, events cut by a batch end are
 * taken again by the next batch. */
START_TEST(small_batches)
{
  static const size_t batches[] = {1, 2048, 2049, 2053, 3000, 0};
  size_t b = batches[_i];
  struct tf *t = rf_file(1, 1, 8192);
  struct rec *r;
  struct ocgc_cursor *c;
  uint64_t n = 0;

  while (pat_words(0, n + 1) < 8000) n++;
  pat_write_range(&t->f, 0, 0, n);
  ck_assert_uint_eq(t->f.rings[0].head, 0);
  c = rf_reader(t, OCGC_START_OLDEST, b, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), (int64_t)n);
  rec_expect(r, 0, (size_t)n, 0);
  /* wrap-around inside a batch */
  pat_write_range(&t->f, 0, n, n);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), (int64_t)n);
  rec_expect(r, 0, (size_t)(2 * n), 0);
  ck_assert_uint_eq(rf_stats(c).lost, 0);
}
END_TEST

/* A batch_words so large that batch_words * 8 wraps around u64 must not
 * give a small buffer that the copy then overruns: the cursor must refuse
 * it or read correctly. */
START_TEST(huge_batch_words)
{
  struct tf *t = rf_file(1, 1, 8192);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  int err;

  pat_write_range(&t->f, 0, 0, 1000);
  s = rf_open(t, OCGC_IDS_AUTO);
  o.on_event = rec_event;
  o.ctx = r;
  o.batch_words = ((size_t)1 << 61) + 1; /* x 8 == 8 bytes */
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  err = ocgc_cursor_new(s, &o, &c);
  if (err == 0) {
    ck_assert_int_eq(ocgc_cursor_poll(c, 0), 1000);
    rec_expect(r, 0, 1000, 0);
    ocgc_cursor_free(c);
  } else {
    ck_assert_int_lt(err, 0);
  }
}
END_TEST

/* The event budget: a poll delivers at most poll_max_events, says it is
 * behind, and the next polls read on from there, nothing lost or twice. */
START_TEST(budget_events)
{
  struct tf *t = rf_file(1, 1, 4096);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  unsigned polls = 0;

  pat_write_range(&t->f, 0, 0, 500);
  s = rf_open(t, OCGC_IDS_AUTO);
  o.on_event = rec_event;
  o.ctx = r;
  o.poll_max_events = 100;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 100);
  st = rf_stats(c);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.cut_polls, 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 30), 30); /* the caller's own, smaller limit */
  st = rf_stats(c);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.cut_polls, 1);           /* not the budget's doing */
  while (rf_stats(c).behind && polls++ < 10) ck_assert_int_ge(ocgc_cursor_poll(c, 0), 0);
  ck_assert_int_eq(rf_stats(c).behind, 0);
  ck_assert_uint_eq(r->n, 500);
  rec_expect(r, 0, 500, 0);
  ocgc_cursor_free(c);
}
END_TEST

/* The time budget: a slow consumer cannot turn one poll into a long one. */
static int slow_event(const struct ocgc_event *ev, void *ctx)
{
  struct timespec ts = {0, 1000000}; /* 1 ms */
  (void)ev;
  ++*(unsigned *)ctx;
  nanosleep(&ts, NULL);
  return 0;
}

START_TEST(budget_time)
{
  struct tf *t = rf_file(1, 1, 8192);
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  unsigned calls = 0;
  int64_t got;

  pat_write_range(&t->f, 0, 0, 1000);
  s = rf_open(t, OCGC_IDS_AUTO);
  o.on_event = slow_event;
  o.ctx = &calls;
  o.poll_max_ns = 5000000; /* 5 ms: the clock is read every 64 events */
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  got = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(got, 0);
  ck_assert_int_le(got, 64);
  ck_assert_int_eq(rf_stats(c).behind, 1);
  ck_assert_uint_eq(rf_stats(c).cut_polls, 1);
  ocgc_cursor_free(c);
}
END_TEST

/* ---- several cursors, several rings ------------------------------------------------------ */

/* Several cursors, on one source and on a second source of the same file,
 * each see everything, whatever the others do. */
START_TEST(several_cursors)
{
  struct tf *t = rf_file(1, 1, 4096); /* 4 rounds (~740 words) fit: nothing lost */
  struct ocgc_source *s1 = rf_open(t, OCGC_IDS_AUTO), *s2 = rf_open(t, OCGC_IDS_AUTO);
  struct rec *r[4];
  struct ocgc_cursor *c[4];
  unsigned k, round;
  uint64_t written = 0;

  for (k = 0; k < 4; k++) r[k] = rf_rec();
  c[0] = rf_cursor(s1, r[0], OCGC_START_OLDEST, 0);
  c[1] = rf_cursor(s1, r[1], OCGC_START_OLDEST, 2048);
  c[2] = rf_cursor(s2, r[2], OCGC_START_OLDEST, 0);
  c[3] = rf_cursor(s2, r[3], OCGC_START_OLDEST, 0);
  for (round = 0; round < 50; round++) {
    pat_write_range(&t->f, 0, written, 30);
    written += 30;
    for (k = 0; k < 4; k++)
      if ((round + k) % (k + 1) == 0) ck_assert_int_ge(ocgc_cursor_poll(c[k], 0), 0);
  }
  for (k = 0; k < 4; k++) {
    ck_assert_int_ge(ocgc_cursor_poll(c[k], 0), 0);
    ck_assert_uint_eq(r[k]->n, written);
    rec_expect(r[k], 0, written, 0);
    ck_assert_uint_eq(rf_stats(c[k]).lost, 0);
  }
}
END_TEST

/* Several rings: every event says its ring; a limit of one event per poll
 * takes the rings in turn, so a busy ring cannot starve the others. */
START_TEST(several_rings)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 3, 256);
  struct rec *r;
  struct ocgc_cursor *c;
  size_t k, on0 = 0, on2 = 0;

  pat_write_range(&t->f, 0, 0, 10);
  pat_write_range(&t->f, 2, 100, 10);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  for (k = 0; k < 6; k++) ck_assert_int_eq(ocgc_cursor_poll(c, 1), 1);
  for (k = 0; k < 6; k++) ck_assert_uint_eq(r->ring[k], k % 2 ? 2 : 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 14);
  for (k = 0; k < r->n; k++) {
    if (r->ring[k] == 0) ck_assert_uint_eq(r->ts[k], on0++);
    else {
      ck_assert_uint_eq(r->ring[k], 2);
      ck_assert_uint_eq(r->ts[k], 100 + on2++);
    }
  }
  ck_assert_uint_eq(on0, 10);
  ck_assert_uint_eq(on2, 10);
}
END_TEST

/* ---- arguments ------------------------------------------------------------------------------ */

START_TEST(cursor_arguments)
{
  struct tf *t = rf_file(1, 1, 256);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);

  pat_write_range(&t->f, 0, 0, 4);
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_cursor_new(NULL, &o, &c), -EINVAL);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_cursor_poll(NULL, 0), -EINVAL);
  ocgc_cursor_free(NULL);
  ocgc_cursor_stats(NULL, &st);

  /* opts NULL: from the oldest, events only counted */
  ck_assert_int_eq(ocgc_cursor_new(s, NULL, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 4);
  ocgc_cursor_free(c);

  /* an older caller's smaller struct: fields past its sz are not read */
  o.on_event = rec_event;
  o.ctx = r;
  o.start = OCGC_START_NOW;
  o.sz = offsetof(struct ocgc_cursor_opts, start);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 4); /* START_OLDEST, no callback */
  ck_assert_uint_eq(r->n, 0);
  ocgc_cursor_free(c);
  o.sz = offsetof(struct ocgc_cursor_opts, batch_words);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  pat_write_range(&t->f, 0, 4, 2);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 2);
  rec_expect(r, 0, 2, 4);
  ocgc_cursor_free(c);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

static Suite *cursor_suite(void)
{
  Suite *s = suite_create("cursor");
  TCase *tc = rf_tcase(s, "read", 120);
  tcase_add_loop_test(tc, read_all_in_order, 0, 2);
  tcase_add_loop_test(tc, wrap_with_padding, 0, 2);

  tc = rf_tcase(s, "start", 120);
  tcase_add_loop_test(tc, start_now, 0, 2);
  tcase_add_loop_test(tc, start_now_after_overwrite, 0, 2);

  tc = rf_tcase(s, "poll", 120);
  tcase_add_test(tc, max_events_and_stop);
  tcase_add_loop_test(tc, small_batches, 0, 6);
  tcase_add_test(tc, huge_batch_words);
  tcase_add_test(tc, budget_events);
  tcase_add_test(tc, budget_time);

  tc = rf_tcase(s, "several", 120);
  tcase_add_test(tc, several_cursors);
  tcase_add_loop_test(tc, several_rings, 0, 2);
  tcase_add_test(tc, cursor_arguments);
  return s;
}

TU_SUITE(cursor_suite);
