/* test_cursor_corrupt.c - files that no honest writer makes: an event that
 * cannot be decoded, head and tail that contradict each other or move
 * back, counts beyond what the ring holds, and a file truncated under the
 * reader.  Each is an error code (OCGC_E_CORRUPT,
 * OCGC_E_TRUNCATED), never a crash, a SIGBUS or an event delivered twice,
 * and a cursor goes on reading once the file is sane again.  The rings
 * are written by ringgen with the pattern of ringfix.h, then poked. */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

/* ---- corruption ---------------------------------------------------------------------- */

/* A corrupt event in the middle: the events before it are delivered, the
 * poll says OCGC_E_CORRUPT, the cursor moves to the tail; what the writer
 * adds later is read. */
START_TEST(corrupt_event_in_middle)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 1024);
  struct rec *r;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t at = pat_words(0, 5);

  pat_write_range(&t->f, 0, 0, 10);
  t->f.rings[0].data[at] |= 1; /* a reserved bit in event 5's header */
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  ck_assert_uint_eq(r->n, 5);
  rec_expect(r, 0, 5, 0);
  st = rf_stats(c);
  ck_assert_uint_eq(st.seen, 5);
  ck_assert_uint_ge(st.lost, 1);
  ck_assert_uint_eq(st.lost_words, pat_words(5, 5));
  ck_assert_int_eq(st.lost_exact, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  pat_write_range(&t->f, 0, 10, 3);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 3);
  rec_expect(r, 5, 3, 10);
}
END_TEST

/* Head past tail, or tail more than a ring ahead of head. */
START_TEST(head_tail_inconsistent)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 256);
  struct rec *r;
  struct ocgc_cursor *c;
  uint64_t tail;

  pat_write_range(&t->f, 0, 0, 10);
  tail = t->f.rings[0].tail;
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  /* head beyond tail */
  if (has_ext) t->f.rings[0].er->head_pos = tail + 8;
  else t->f.rings[0].rh->head = tail + 8;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  if (has_ext) t->f.rings[0].er->head_pos = 0;
  else t->f.rings[0].rh->head = 0;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  /* tail more than a ring ahead of head */
  t->f.rings[0].rh->tail = 256 + 1;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  t->f.rings[0].rh->tail = UINT64_MAX;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
}
END_TEST

/* ocgc files: events before head can only grow; fewer than the cursor has
 * accounted for is corrupt. */
START_TEST(head_events_backwards)
{
  struct tf *t = rf_file(1, 1, 256);
  struct rec *r;
  struct ocgc_cursor *c;

  pat_write_range(&t->f, 0, 0, 20);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 20);
  pat_write_range(&t->f, 0, 20, 1);
  t->f.rings[0].er->head_pos = t->f.rings[0].tail; /* everything overwritten ... */
  t->f.rings[0].er->head_events = 3;               /* ... but only 3 events before it */
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
}
END_TEST

/* A tail moved back is corrupt, and what was delivered is never delivered
 * again, however the tail moves afterwards. */
START_TEST(tail_rewind_not_redelivered)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct rec *r;
  struct ocgc_cursor *c;
  uint64_t tail;

  pat_write_range(&t->f, 0, 0, 10);
  c = rf_reader(t, OCGC_START_OLDEST, 0, &r);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  tail = t->f.rings[0].rh->tail;
  t->f.rings[0].rh->tail = pat_words(0, 4);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  ck_assert_uint_eq(rf_stats(c).corrupt, 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  t->f.rings[0].rh->tail = tail;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ck_assert_uint_eq(r->n, 10);
  pat_write_range(&t->f, 0, 10, 3);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 3);
  rec_expect(r, 0, 13, 0);
}
END_TEST

/* Counts no writer makes: more events before head than words, and an
 * exited producer whose final count disagrees with its events. */
START_TEST(impossible_counts)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;

  pat_write_range(&t->f, 0, 0, 10);
  t->f.rings[0].er->head_events = UINT64_MAX - 4; /* "skipped 2^64-5" */
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), OCGC_E_CORRUPT);
  t->f.rings[0].er->head_events = 0;
  c = rf_cursor(s, r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  /* exited, and says it wrote 3 where 10 were read */
  t->f.rings[0].er->written_events = 3;
  __atomic_store_n(&t->f.ext->state, OCGC_STATE_EXITED, __ATOMIC_RELEASE);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  t->f.rings[0].er->written_events = 10;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
}
END_TEST

/* ---- truncation under the reader ------------------------------------------------------ */

/* The file shrinks while open: poll, info and totals say so (they fstat
 * first; a plain file is read by copy, which cannot fault). */
START_TEST(truncated_after_open)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);

  pat_write_range(&t->f, 0, 0, 10);
  s = rf_open(t, OCGC_IDS_AUTO);
  c = rf_cursor(s, r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 2), 2);
  ck_assert_int_eq(ftruncate(t->f.fd, (off_t)(_i ? 4096 : 0)), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_TRUNCATED);
  ck_assert_int_eq(ocgc_source_info(s, &info), OCGC_E_TRUNCATED);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), OCGC_E_TRUNCATED);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_TRUNCATED);
}
END_TEST

/* The same for the other entry points that read the file.  A truncated
 * file must give an error (or NULL), never SIGBUS (docs/design.md,
 * section 4). */
START_TEST(truncated_written)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_source *s;
  uint64_t w = 0;
  pat_write_range(&t->f, 0, 0, 10);
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), 0);
  ck_assert_uint_eq(w, 10);
  ck_assert_int_eq(ftruncate(t->f.fd, 0), 0);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), OCGC_E_TRUNCATED);
}
END_TEST

START_TEST(truncated_user_name)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_source *s;
  rg_set_name(&t->f, 3, "ocgc.cause.weak");
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ftruncate(t->f.fd, 0), 0);
  ck_assert_ptr_null(ocgc_source_user_name(s, 3));
}
END_TEST

START_TEST(truncated_cursor_new)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  pat_write_range(&t->f, 0, 0, 10);
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ftruncate(t->f.fd, 0), 0);
  o.start = _i ? OCGC_START_NOW : OCGC_START_OLDEST;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), OCGC_E_TRUNCATED);
  ck_assert_ptr_null(c);
}
END_TEST

static Suite *cursor_corrupt_suite(void)
{
  Suite *s = suite_create("cursor_corrupt");
  TCase *tc = rf_tcase(s, "corrupt", 0);
  tcase_add_loop_test(tc, corrupt_event_in_middle, 0, 2);
  tcase_add_loop_test(tc, head_tail_inconsistent, 0, 2);
  tcase_add_test(tc, head_events_backwards);
  tcase_add_test(tc, tail_rewind_not_redelivered);
  tcase_add_test(tc, impossible_counts);

  tc = rf_tcase(s, "truncated", 0);
  tcase_add_loop_test(tc, truncated_after_open, 0, 2);
  tcase_add_test(tc, truncated_written);
  tcase_add_test(tc, truncated_user_name);
  tcase_add_loop_test(tc, truncated_cursor_new, 0, 2);
  return s;
}

TU_SUITE(cursor_corrupt_suite);
