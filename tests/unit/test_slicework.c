/* test_slicework.c - the major slices' work counters of stock OCaml 5.3+
 * rings (slicework.c, ocgc/slicework.h): nine counters before each
 * slice, on two-ring stock files written by ringgen as 5.3 writes them,
 * read into exact figures (sums, the histogram of work, the runtime's
 * totals, the newest and the longest slice, what set each slice's work);
 * a slice cut, out of order or across a loss never counted; nothing from a 5.2 numbering
 * or a ring without them; the sz rule of the output. */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

#define SPAN(b, id) OCGC_EV_HEADER(2, 0, (b) ? OCGC_RT_BEGIN : OCGC_RT_END, id)
#define COUNTER(id) OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id)
#define CT_HEAP_WORDS 17u /* 5.3's EV_C_MAJOR_HEAP_WORDS, the first of the nine */
#define PH53_MAJOR_SLICE 27u
#define PH53_FINISH_CYCLE 28u

static char *tmp;
static unsigned file_no;

static void setup(void) { tmp = tu_mkdtemp(); }
static void teardown(void) { tu_rmtree(tmp); free(tmp); tmp = NULL; }

struct tf {
  char path[600];
  struct rg_file f;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *snap;
};

static void tf_create(struct tf *t)
{
  char name[64];
  memset(t, 0, sizeof *t);
  snprintf(name, sizeof name, "%ld-%u.events", (long)getpid(), ++file_no);
  tu_path(t->path, sizeof t->path, tmp, name);
  ck_assert_int_eq(rg_create(&t->f, t->path, 0, 2, 4096), 0);
}

/* Read the file whole with numbering [ids], and snapshot it. */
static void tf_read(struct tf *t, enum ocgc_ids ids)
{
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  oo.ids = ids;
  ck_assert_int_eq(ocgc_source_open_path(t->path, &oo, &t->src), 0);
  ck_assert_int_eq(ocgc_agg_new(t->src, &o, &t->agg), 0);
  while (ocgc_agg_poll(t->agg) > 0) continue;
  ck_assert_int_eq(ocgc_agg_snapshot(t->agg, &t->snap), 0);
}

static void tf_close(struct tf *t)
{
  ocgc_snapshot_free(t->snap);
  ocgc_agg_free(t->agg);
  ocgc_source_close(t->src);
  rg_close(&t->f);
}

/* The nine counters of a slice on ring [d], one ns apart from [ts], as
 * update_major_slice_work writes them; [skip] (1..9) leaves one out. */
static void counters(struct tf *t, unsigned d, uint64_t ts, const uint64_t v[9], unsigned skip)
{
  unsigned i;
  for (i = 0; i < 9; i++)
    if (i + 1 != skip) rg_write1(&t->f, d, COUNTER(CT_HEAP_WORDS + i), ts + i, v[i]);
}

static void span(struct tf *t, unsigned d, unsigned id, uint64_t b, uint64_t e)
{
  rg_write1(&t->f, d, SPAN(1, id), b, 0);
  rg_write1(&t->f, d, SPAN(0, id), e, 0);
}

static void slicework(struct tf *t, struct ocgc_slicework *w, int want)
{
  memset(w, 0, sizeof *w);
  w->sz = sizeof *w;
  ck_assert_int_eq(ocgc_snapshot_slicework(t->snap, w), want);
}

/* Four slices on two domains: A, set by allocation; B, by extra
 * resources, the longest; C, a full major's inner slice with an explicit
 * budget; D, with the GC ahead (work 0), not timed. */
START_TEST(slices_of_two_domains)
{
  /* heap, allocated, alloc_work, dependent, extra, work ctr, alloc ctr, target, budget */
  static const uint64_t a[9] = {100000, 5000, 20000, 0, 0, 1000000, 1020000, 1020000, 0};
  static const uint64_t b[9] = {50000, 100, 400, 0, 300000, 1010000, 1320000, 1320000, 0};
  static const uint64_t c[9] = {100000, 0, 0, 0, 0, 1330000, 1320000, 1330000, 10000000};
  static const uint64_t dd[9] = {50000, 0, 0, 0, 0, 1340000, 1320000, 1320000, 0};
  struct ocgc_slicework w;
  struct tf t;
  ck_assert_str_eq(ocgc_phase_name(OCGC_IDS_53, PH53_MAJOR_SLICE), "major_slice");
  ck_assert_str_eq(ocgc_phase_name(OCGC_IDS_53, PH53_FINISH_CYCLE), "major_finish_cycle");
  tf_create(&t);
  counters(&t, 0, 1000, a, 0);
  span(&t, 0, PH53_MAJOR_SLICE, 1100, 1600);
  counters(&t, 1, 2000, b, 0);
  span(&t, 1, PH53_MAJOR_SLICE, 2100, 5100);
  rg_write1(&t.f, 0, SPAN(1, PH53_FINISH_CYCLE), 5900, 0);
  counters(&t, 0, 5910, c, 0);
  span(&t, 0, PH53_MAJOR_SLICE, 6000, 6200);
  rg_write1(&t.f, 0, SPAN(0, PH53_FINISH_CYCLE), 6300, 0);
  counters(&t, 1, 7000, dd, 0);
  tf_read(&t, OCGC_IDS_53);
  slicework(&t, &w, 0);
  ck_assert_uint_eq(w.slices, 4);
  ck_assert_uint_eq(w.timed, 3);
  ck_assert_uint_eq(w.by_driver[OCGC_SLICE_DRIVER_NONE], 1);
  ck_assert_uint_eq(w.by_driver[OCGC_SLICE_DRIVER_ALLOCATION], 1);
  ck_assert_uint_eq(w.by_driver[OCGC_SLICE_DRIVER_DEPENDENT], 0);
  ck_assert_uint_eq(w.by_driver[OCGC_SLICE_DRIVER_EXTRA], 1);
  ck_assert_uint_eq(w.by_driver[OCGC_SLICE_DRIVER_BUDGET], 1);
  ck_assert_uint_eq(w.allocated_words, 5100);
  ck_assert_uint_eq(w.alloc_work, 20400);
  ck_assert_uint_eq(w.dependent_work, 0);
  ck_assert_uint_eq(w.extra_work, 300000);
  ck_assert_uint_eq(w.budget, 10000000);
  ck_assert_uint_eq(w.work, 20000 + 310000 + 10000000);
  /* bounds 100 .. 1e8: D (0) in the first, A 2e4, B 3.1e5, C 1e7 */
  ck_assert_uint_eq(ocgc_slicework_bounds()[0], 100);
  ck_assert_uint_eq(ocgc_slicework_bounds()[OCGC_SLICEWORK_NBOUNDS - 1], 100000000);
  ck_assert_uint_eq(w.work_le[0], 1);
  ck_assert_uint_eq(w.work_le[1], 1);
  ck_assert_uint_eq(w.work_le[2], 1);
  ck_assert_uint_eq(w.work_le[3], 2);
  ck_assert_uint_eq(w.work_le[4], 3);
  ck_assert_uint_eq(w.work_le[5], 4);
  ck_assert_uint_eq(w.work_le[6], 4);
  ck_assert_uint_eq(w.work_done, 1340000);
  ck_assert_uint_eq(w.work_asked, 1320000);
  /* the newest: D, on ring 1, untimed */
  ck_assert_uint_eq(w.last.ring, 1);
  ck_assert_uint_eq(w.last.time_ns, 7008);
  ck_assert_uint_eq(w.last.duration_ns, 0);
  ck_assert_int_eq(w.last.work, 0); /* max(-20000, its budget 0) */
  ck_assert_int_eq(w.last.driver, OCGC_SLICE_DRIVER_NONE);
  /* the longest: B, 3000 ns for 310000 units, set by extra resources */
  ck_assert_uint_eq(w.longest.ring, 1);
  ck_assert_uint_eq(w.longest.duration_ns, 3000);
  ck_assert_int_eq(w.longest.work, 310000);
  ck_assert_uint_eq(w.longest.extra_work, 300000);
  ck_assert_uint_eq(w.longest.heap_words, 50000);
  ck_assert_uint_eq(w.longest.allocated_words, 100);
  ck_assert_uint_eq(w.longest.work_counter, 1010000);
  ck_assert_uint_eq(w.longest.alloc_counter, 1320000);
  ck_assert_uint_eq(w.longest.target, 1320000);
  ck_assert_int_eq(w.longest.budget, 0);
  ck_assert_int_eq(w.longest.driver, OCGC_SLICE_DRIVER_EXTRA);
  ck_assert_str_eq(ocgc_slice_driver_name(w.longest.driver), "extra");
  ck_assert_str_eq(ocgc_slice_driver_name(OCGC_SLICE_DRIVER_BUDGET), "budget");
  ck_assert_ptr_null(ocgc_slice_driver_name(OCGC_SLICE_DRIVER_COUNT));
  tf_close(&t);
}
END_TEST

/* A slice whose counters are not the nine in order is never counted; a
 * slice's span that began before its counters does not time it; the
 * slice after a cut one is whole. */
START_TEST(cut_slices_not_counted)
{
  static const uint64_t v[9] = {1000, 10, 40, 0, 0, 500, 540, 540, 0};
  struct ocgc_slicework w;
  struct tf t;
  tf_create(&t);
  counters(&t, 0, 1000, v, 3);               /* alloc_work missing */
  counters(&t, 0, 1100, v, 9);               /* the budget missing */
  span(&t, 0, PH53_MAJOR_SLICE, 1160, 1170); /* no slice waits for it */
  counters(&t, 1, 1200, v, 0);               /* whole, on the other ring */
  span(&t, 1, PH53_MAJOR_SLICE, 1100, 1900); /* began before its counters */
  counters(&t, 0, 2000, v, 0);               /* whole */
  span(&t, 0, PH53_MAJOR_SLICE, 2010, 2050);
  tf_read(&t, OCGC_IDS_53);
  slicework(&t, &w, 0);
  ck_assert_uint_eq(w.slices, 2);
  ck_assert_uint_eq(w.timed, 1);
  ck_assert_uint_eq(w.alloc_work, 80);
  ck_assert_uint_eq(w.work, 80);
  ck_assert_uint_eq(w.longest.duration_ns, 40);
  ck_assert_uint_eq(w.longest.ring, 0);
  tf_close(&t);
}
END_TEST

/* The same counters in a file read with the 5.2 numbering (which has no
 * such ids) count nothing; a 5.3 file without them has no figures, not
 * zeros; an older caller's struct is filled as far as its sz. */
START_TEST(absent_and_sz)
{
  static const uint64_t v[9] = {1000, 10, 40, 0, 0, 500, 540, 540, 0};
  struct ocgc_slicework w;
  struct tf t;
  size_t small = offsetof(struct ocgc_slicework, by_driver);
  tf_create(&t);
  counters(&t, 0, 1000, v, 0);
  span(&t, 0, PH53_MAJOR_SLICE, 1100, 1200);
  tf_read(&t, OCGC_IDS_52);
  slicework(&t, &w, -ENODATA);
  ck_assert_uint_eq(w.slices, 0);
  ck_assert_uint_eq(w.work_asked, 0);
  ocgc_snapshot_free(t.snap);
  ocgc_agg_free(t.agg);
  ocgc_source_close(t.src);
  tf_read(&t, OCGC_IDS_53);
  memset(&w, 0x55, sizeof w);
  w.sz = small;
  ck_assert_int_eq(ocgc_snapshot_slicework(t.snap, &w), 0);
  ck_assert_uint_eq(w.slices, 1);
  ck_assert_uint_eq(w.timed, 1);
  ck_assert_uint_eq(w.by_driver[0], UINT64_C(0x5555555555555555));
  w.sz = 4;
  ck_assert_int_eq(ocgc_snapshot_slicework(t.snap, &w), -EINVAL);
  ck_assert_int_eq(ocgc_snapshot_slicework(NULL, &w), -EINVAL);
  ck_assert_int_eq(ocgc_snapshot_slicework(t.snap, NULL), -EINVAL);
  tf_close(&t);
  /* a 5.3 file with slices but none of their counters */
  tf_create(&t);
  span(&t, 0, PH53_MAJOR_SLICE, 1100, 1200);
  rg_write1(&t.f, 0, COUNTER(OCGC_CT_MINOR_ALLOCATED), 1300, 800);
  tf_read(&t, OCGC_IDS_53);
  slicework(&t, &w, -ENODATA);
  ck_assert_uint_eq(w.slices, 0);
  tf_close(&t);
}
END_TEST

/* Events lost on a ring between the counters of a slice: the slice being
 * read is dropped, and the counters after the gap (the end of another
 * slice) are not taken for its end; the next whole slice counts. */
START_TEST(loss_drops_the_slice_being_read)
{
  static const uint64_t v[9] = {1000, 10, 40, 0, 0, 500, 540, 540, 0};
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_cursor_stats cs = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_slicework w;
  struct tf t;
  char name[64];
  unsigned i;
  memset(&t, 0, sizeof t);
  snprintf(name, sizeof name, "%ld-%u.events", (long)getpid(), ++file_no);
  tu_path(t.path, sizeof t.path, tmp, name);
  ck_assert_int_eq(rg_create(&t.f, t.path, 0, 1, 64), 0); /* 21 counters a ring */
  for (i = 0; i < 5; i++) rg_write1(&t.f, 0, COUNTER(CT_HEAP_WORDS + i), 1000 + i, v[i]);
  oo.ids = OCGC_IDS_53;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_source_open_path(t.path, &oo, &t.src), 0);
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &t.agg), 0);
  ck_assert_int_eq(ocgc_agg_poll(t.agg), 5);
  /* the rest of that slice and more overwritten, then another's end */
  for (i = 0; i < 30; i++) rg_write1(&t.f, 0, COUNTER(OCGC_CT_MINOR_ALLOCATED), 2000 + i, 8);
  for (i = 5; i < 9; i++) rg_write1(&t.f, 0, COUNTER(CT_HEAP_WORDS + i), 3000 + i, v[i]);
  while (ocgc_agg_poll(t.agg) > 0) continue;
  ocgc_agg_cursor_stats(t.agg, &cs);
  ck_assert_uint_gt(cs.lost, 0);
  ck_assert_int_eq(ocgc_agg_snapshot(t.agg, &t.snap), 0);
  slicework(&t, &w, -ENODATA);
  ck_assert_uint_eq(w.slices, 0);
  counters(&t, 0, 4000, v, 0);
  while (ocgc_agg_poll(t.agg) > 0) continue;
  ocgc_snapshot_free(t.snap);
  ck_assert_int_eq(ocgc_agg_snapshot(t.agg, &t.snap), 0);
  slicework(&t, &w, 0);
  ck_assert_uint_eq(w.slices, 1);
  ck_assert_uint_eq(w.last.time_ns, 4008);
  tf_close(&t);
}
END_TEST

static Suite *slicework_suite(void)
{
  Suite *s = suite_create("slicework");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, slices_of_two_domains);
  tcase_add_test(tc, cut_slices_not_counted);
  tcase_add_test(tc, absent_and_sz);
  tcase_add_test(tc, loss_drops_the_slice_being_read);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(slicework_suite);
