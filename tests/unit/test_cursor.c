/* test_cursor.c - cursors, sources and classification over ring files
 * written by ringgen (the producer's protocol, see ringgen.h).
 *
 * Every event written carries its index i as timestamp and i * 7 + k as
 * payload word k, and its type follows i (pattern below), so a reader's
 * output can be checked exactly: events in order, intact, and every index
 * missing between two seen ones counted as lost exactly once (ocgc files). */

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringgen.h"
#include "source.h"
#include "testutil.h"

/* ---- fixture: a scratch folder per test case ------------------------------------- */

/* Made and removed by the runner process (an unchecked fixture), so that
 * the files of a test that crashed are removed too.  Tests run in forked
 * children: file names carry the pid. */
static char *tmp;
static unsigned file_no;

static void setup(void)
{
  tmp = tu_mkdtemp();
}

static void teardown(void)
{
  tu_rmtree(tmp);
  free(tmp);
  tmp = NULL;
}

struct tf {
  struct rg_file f;
  char path[4096];
};

static void tf_create(struct tf *t, int has_ext, unsigned md, uint64_t rw)
{
  char name[64];
  int r;
  ck_assert_msg(tmp != NULL, "no scratch folder");
  snprintf(name, sizeof name, "%ld-%u.events", (long)getpid(), ++file_no);
  tu_path(t->path, sizeof t->path, tmp, name);
  r = rg_create(&t->f, t->path, has_ext, md, rw);
  ck_assert_msg(r == 0, "rg_create: %s", strerror(-r));
}

static struct ocgc_source *tf_open(const struct tf *t, enum ocgc_ids ids)
{
  struct ocgc_open_opts o = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_source *s = NULL;
  int r;
  o.ids = ids;
  r = ocgc_source_open_path(t->path, &o, &s);
  ck_assert_msg(r == 0, "open %s: %s", t->path, ocgc_strerror(r));
  return s;
}

/* Make the file's identity that of this very process (pid, /proc start
 * time, boot id), so that readers find its producer alive. */
static void identify_as_self(struct tf *t)
{
  char buf[1024], *p;
  FILE *f;
  unsigned field;
  size_t n;
  t->f.ext->pid = (uint64_t)getpid();
  f = fopen("/proc/self/stat", "r");
  ck_assert_ptr_nonnull(f);
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  p = strrchr(buf, ')');
  ck_assert_ptr_nonnull(p);
  for (field = 2; field < 22 && p != NULL; field++) p = strchr(p + 1, ' ');
  ck_assert_ptr_nonnull(p);
  t->f.ext->start_time = strtoull(p + 1, NULL, 10);
  memset(t->f.ext->boot_id, 0, sizeof t->f.ext->boot_id);
  f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f != NULL) {
    if (fgets(buf, sizeof buf, f) != NULL) {
      n = strcspn(buf, "\n");
      if (n >= sizeof t->f.ext->boot_id) n = sizeof t->f.ext->boot_id - 1;
      memcpy(t->f.ext->boot_id, buf, n);
    }
    fclose(f);
  }
}

/* A pid that names no process. */
static uint64_t dead_pid(void)
{
  pid_t p = fork();
  ck_assert_int_ge(p, 0);
  if (p == 0) _exit(0);
  ck_assert_int_eq(waitpid(p, NULL, 0), p);
  return (uint64_t)p;
}

/* ---- the event pattern -------------------------------------------------------------- */

static uint64_t pat_header(uint64_t i)
{
  switch (i % 6) {
  case 0: return OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED);
  case 1: return OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR);
  case 2: return OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR);
  case 3: return OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 5);
  case 4: return OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0);
  default: return OCGC_EV_HEADER(5, 1, OCGC_USER_CUSTOM, 6);
  }
}

static void pat_write(struct rg_file *f, unsigned d, uint64_t i)
{
  uint64_t payload[20];
  unsigned k;
  for (k = 0; k < 20; k++) payload[k] = i * 7 + k;
  rg_write(f, d, pat_header(i), i, payload);
}

static void pat_write_range(struct rg_file *f, unsigned d, uint64_t from, uint64_t n)
{
  uint64_t i;
  for (i = from; i < from + n; i++) pat_write(f, d, i);
}

/* Words taken by events [from, from + n) (without padding). */
static uint64_t pat_words(uint64_t from, uint64_t n)
{
  uint64_t i, w = 0;
  for (i = from; i < from + n; i++) w += OCGC_EV_LENGTH(pat_header(i));
  return w;
}

/* ---- recording what a cursor delivers ---------------------------------------------- */

struct rec {
  uint64_t *ts;
  unsigned *ring;
  const char **name;
  size_t n, cap;
  size_t stop_at;          /* callback returns 1 when n reaches this (0: never) */
  uint64_t lost_sum;
  unsigned lost_calls;
  int lost_inexact;        /* some on_lost call said exact == 0 */
  unsigned lost_ring_mask;
};

static void rec_free(struct rec *r)
{
  free(r->ts);
  free(r->ring);
  free(r->name);
  memset(r, 0, sizeof *r);
}

/* Check an event against the pattern and record it. */
static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct rec *r = ctx;
  uint64_t i = ev->timestamp, h = pat_header(i);
  unsigned k;
  TU_CHECK(ev->user == OCGC_EV_IS_USER(h) && ev->type == OCGC_EV_TYPE(h) &&
               ev->id == OCGC_EV_ID(h) && ev->payload_words == OCGC_EV_LENGTH(h) - 2 &&
               ev->value == (ev->payload_words ? i * 7 : 0),
           "event %llu: user %u type %u id %u payload %u value %llu do not match its index",
           (unsigned long long)i, ev->user, ev->type, ev->id, ev->payload_words,
           (unsigned long long)ev->value);
  for (k = 0; k < ev->payload_words; k++)
    TU_CHECK(ev->payload[k] == i * 7 + k, "event %llu: payload word %u is %llu",
             (unsigned long long)i, k, (unsigned long long)ev->payload[k]);
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->ts = realloc(r->ts, r->cap * sizeof *r->ts);
    r->ring = realloc(r->ring, r->cap * sizeof *r->ring);
    r->name = realloc(r->name, r->cap * sizeof *r->name);
    ck_assert(r->ts && r->ring && r->name);
  }
  r->ts[r->n] = i;
  r->ring[r->n] = ev->ring;
  r->name[r->n] = ev->name;
  r->n++;
  return r->stop_at && r->n == r->stop_at;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct rec *r = ctx;
  ck_assert_uint_gt(lost, 0);
  r->lost_sum += lost;
  r->lost_calls++;
  if (!exact) r->lost_inexact = 1;
  r->lost_ring_mask |= 1u << ring;
}

static struct ocgc_cursor *cursor(struct ocgc_source *s, struct rec *r,
                                  enum ocgc_cursor_start start, size_t batch)
{
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  int err;
  o.start = start;
  o.on_event = on_event;
  o.on_lost = on_lost;
  o.ctx = r;
  o.batch_words = batch;
  err = ocgc_cursor_new(s, &o, &c);
  ck_assert_msg(err == 0, "cursor_new: %s", ocgc_strerror(err));
  return c;
}

/* Recorded events [from, from + n) of one ring are exactly first..first+n-1. */
static void expect_range(const struct rec *r, size_t from, size_t n, uint64_t first)
{
  size_t k;
  ck_assert_uint_ge(r->n, from + n);
  for (k = 0; k < n; k++)
    TU_CHECK(r->ts[from + k] == first + k, "event %zu is %llu, want %llu", from + k,
             (unsigned long long)r->ts[from + k], (unsigned long long)(first + k));
}

/* Events missing from a strictly increasing record of one ring whose
 * writer wrote indices [0, written). */
static uint64_t missing(const struct rec *r, uint64_t written)
{
  uint64_t m = 0, next = 0;
  size_t k;
  for (k = 0; k < r->n; k++) {
    TU_CHECK(r->ts[k] >= next, "event %llu after %llu: out of order or twice",
             (unsigned long long)r->ts[k], (unsigned long long)next);
    m += r->ts[k] - next;
    next = r->ts[k] + 1;
  }
  return m + (written - next);
}

static struct ocgc_cursor_stats stats(const struct ocgc_cursor *c)
{
  struct ocgc_cursor_stats st;
  memset(&st, 0xee, sizeof st);
  ocgc_cursor_stats(c, &st);
  return st;
}

/* ---- reading ------------------------------------------------------------------------- */

/* All events, in order, fields intact; then nothing; then the new ones. */
START_TEST(read_all_in_order)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;

  tf_create(&t, has_ext, 1, 1024);
  pat_write_range(&t.f, 0, 0, 100);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 100);
  expect_range(&r, 0, 100, 0);
  ck_assert_uint_eq(r.ring[0], 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  pat_write_range(&t.f, 0, 100, 10);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  expect_range(&r, 100, 10, 100);
  st = stats(c);
  ck_assert_uint_eq(st.seen, 110);
  ck_assert_uint_eq(st.lost, 0);
  ck_assert_uint_eq(st.skipped, 0);
  ck_assert_uint_eq(st.lost_words, 0);
  ck_assert_int_eq(st.lost_exact, has_ext);
  ck_assert_uint_eq(r.lost_calls, 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* A 64-word ring read often enough that nothing is lost: every wrap puts a
 * padding record at the end, which is never delivered. */
START_TEST(wrap_with_padding)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  uint64_t i, total = 0;

  tf_create(&t, has_ext, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  for (i = 0; i < 600; i++) {
    pat_write(&t.f, 0, i);
    if (i % 2 == 1) total += (uint64_t)ocgc_cursor_poll(c, 0);
  }
  total += (uint64_t)ocgc_cursor_poll(c, 0);
  ck_assert_uint_eq(total, 600);
  expect_range(&r, 0, 600, 0);
  /* the writer did pad: its tail is past the words of the events */
  ck_assert_uint_gt(t.f.rings[0].tail, pat_words(0, 600));
  /* and did overwrite, but only what had been read */
  ck_assert_uint_gt(t.f.rings[0].head_events, 500);
  ck_assert_uint_eq(stats(c).seen, 600);
  ck_assert_uint_eq(stats(c).lost, 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* Overwrite before the first poll: ocgc files count the loss exactly. */
START_TEST(overwrite_exact_loss)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;
  int64_t n;

  tf_create(&t, 1, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  pat_write_range(&t.f, 0, 0, 1000);
  n = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(n, 0);
  st = stats(c);
  ck_assert_int_eq(st.lost_exact, 1);
  ck_assert_uint_eq(st.lost, t.f.rings[0].head_events);
  ck_assert_uint_eq(st.lost_words, t.f.rings[0].head);
  ck_assert_uint_eq(st.seen + st.lost + st.skipped, 1000);
  ck_assert_uint_eq(st.skipped, 0);
  /* what is left is the newest events, consecutive */
  expect_range(&r, 0, (size_t)n, 1000 - (uint64_t)n);
  ck_assert_uint_eq(missing(&r, 1000), st.lost);
  ck_assert_uint_eq(r.lost_sum, st.lost);
  ck_assert_int_eq(r.lost_inexact, 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* The reader falls behind between polls, again and again (fixed seed):
 * after each poll, seen + lost + skipped == written and every missing index
 * is counted once. */
START_TEST(overwrite_behind_between_polls)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;
  uint64_t written = 0, x = 88172645463325252u;
  unsigned round;

  tf_create(&t, 1, 1, 128);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  for (round = 0; round < 400; round++) {
    uint64_t k;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    k = x % (round % 3 == 0 ? 200 : 15); /* mostly a little, sometimes laps */
    pat_write_range(&t.f, 0, written, k);
    written += k;
    ck_assert_int_ge(ocgc_cursor_poll(c, 0), 0);
    st = stats(c);
    ck_assert_uint_eq(st.seen + st.lost + st.skipped, written);
    ck_assert_uint_eq(st.seen, r.n);
    ck_assert_uint_eq(missing(&r, written), st.lost);
    ck_assert_uint_le(st.lost, t.f.rings[0].head_events);
  }
  ck_assert_uint_gt(st.lost, 0);     /* the test did lap the reader */
  ck_assert_uint_gt(st.seen, 1000);  /* and it did read */
  ck_assert_uint_eq(r.lost_sum, st.lost);
  ck_assert_int_eq(st.lost_exact, 1);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* A cursor made after the overwrite: what was gone is skipped, not lost. */
START_TEST(overwritten_before_cursor_is_skipped)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;
  int64_t n;

  tf_create(&t, 1, 1, 64);
  pat_write_range(&t.f, 0, 0, 1000);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_uint_eq(stats(c).skipped, t.f.rings[0].head_events);
  n = ocgc_cursor_poll(c, 0);
  st = stats(c);
  ck_assert_uint_eq((uint64_t)n, 1000 - t.f.rings[0].head_events);
  ck_assert_uint_eq(st.lost, 0);
  ck_assert_uint_eq(st.seen + st.lost + st.skipped, 1000);
  expect_range(&r, 0, (size_t)n, t.f.rings[0].head_events);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* Stock files: loss is estimated (and said so), lost words are exact. */
START_TEST(stock_loss_estimated)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;
  uint64_t pos, head;
  int64_t n;

  tf_create(&t, 0, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(stats(c).lost_exact, 0);
  pat_write_range(&t.f, 0, 0, 1000);
  n = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(n, 0);
  st = stats(c);
  ck_assert_int_eq(st.lost_exact, 0);
  ck_assert_uint_eq(st.lost_words, t.f.rings[0].head);
  ck_assert_uint_ge(st.lost, 1);
  ck_assert_uint_le(st.lost, st.lost_words);
  ck_assert_uint_eq(st.skipped, 0);
  expect_range(&r, 0, (size_t)n, 1000 - (uint64_t)n);
  ck_assert_int_eq(r.lost_inexact, 1);
  ck_assert_uint_eq(r.lost_sum, st.lost);

  /* behind between polls: the words lost are exactly head - position */
  pos = t.f.rings[0].tail;
  pat_write_range(&t.f, 0, 1000, 500);
  head = t.f.rings[0].head;
  ck_assert_uint_gt(head, pos);
  n = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(n, 0);
  ck_assert_uint_eq(stats(c).lost_words, st.lost_words + (head - pos));
  ck_assert_uint_gt(stats(c).lost, st.lost);
  ck_assert_uint_eq(r.ts[r.n - 1], 1499);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* OCGC_START_NOW: only what is written after the cursor was made. */
START_TEST(start_now)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;

  tf_create(&t, has_ext, 1, 256);
  pat_write_range(&t.f, 0, 0, 10);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_NOW, 0);
  /* skipped grows as the polls pass what came before the start */
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ck_assert_uint_eq(stats(c).skipped, has_ext ? 10 : 0);
  pat_write_range(&t.f, 0, 10, 5);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  expect_range(&r, 0, 5, 10);
  st = stats(c);
  ck_assert_uint_eq(st.seen, 5);
  ck_assert_uint_eq(st.lost, 0);
  if (has_ext) ck_assert_uint_eq(st.seen + st.lost + st.skipped, 15);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* START_NOW on a ring that has wrapped and been overwritten (padding and a
 * moved head in the ring): skipped counts every event written so far. */
START_TEST(start_now_after_overwrite)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;

  tf_create(&t, has_ext, 1, 64);
  pat_write_range(&t.f, 0, 0, 1003);
  ck_assert_uint_gt(t.f.rings[0].head, 0);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_NOW, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ck_assert_uint_eq(stats(c).skipped, has_ext ? 1003 : 0);
  pat_write_range(&t.f, 0, 1003, 4);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 4);
  expect_range(&r, 0, 4, 1003);
  if (has_ext) ck_assert_uint_eq(stats(c).seen + stats(c).lost + stats(c).skipped, 1007);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* max_events and a callback that stops. */
START_TEST(max_events_and_stop)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;

  tf_create(&t, 1, 1, 1024);
  pat_write_range(&t.f, 0, 0, 20);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 3), 3);
  ck_assert_int_eq(ocgc_cursor_poll(c, 1), 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 3), 3);
  expect_range(&r, 0, 7, 0);
  r.stop_at = 12; /* stop after the 5th of the next poll */
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  ck_assert_int_eq(ocgc_cursor_poll(c, 100), 8);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  expect_range(&r, 0, 20, 0);
  ck_assert_uint_eq(stats(c).seen, 20);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* Small copy buffers: many batches per poll, events cut by a batch end are
 * taken again by the next batch. */
START_TEST(small_batches)
{
  static const size_t batches[] = {1, 2048, 2049, 2053, 3000, 0};
  size_t b = batches[_i];
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  uint64_t n = 0;

  tf_create(&t, 1, 1, 8192);
  while (pat_words(0, n + 1) < 8000) n++;
  pat_write_range(&t.f, 0, 0, n);
  ck_assert_uint_eq(t.f.rings[0].head, 0);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, b);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), (int64_t)n);
  expect_range(&r, 0, (size_t)n, 0);
  /* wrap-around inside a batch */
  pat_write_range(&t.f, 0, n, n);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), (int64_t)n);
  expect_range(&r, 0, (size_t)(2 * n), 0);
  ck_assert_uint_eq(stats(c).lost, 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* A batch_words so large that batch_words * 8 wraps around u64 must not
 * give a small buffer that the copy then overruns: the cursor must refuse
 * it or read correctly. */
START_TEST(huge_batch_words)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  int err;

  tf_create(&t, 1, 1, 8192);
  pat_write_range(&t.f, 0, 0, 1000);
  s = tf_open(&t, OCGC_IDS_AUTO);
  o.on_event = on_event;
  o.ctx = &r;
  o.batch_words = ((size_t)1 << 61) + 1; /* x 8 == 8 bytes */
  err = ocgc_cursor_new(s, &o, &c);
  if (err == 0) {
    ck_assert_int_eq(ocgc_cursor_poll(c, 0), 1000);
    expect_range(&r, 0, 1000, 0);
    ocgc_cursor_free(c);
  } else {
    ck_assert_int_lt(err, 0);
  }
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* Several cursors, on one source and on a second source of the same file,
 * each see everything, whatever the others do. */
START_TEST(several_cursors)
{
  struct tf t;
  struct rec r[4] = {{0}};
  struct ocgc_source *s1, *s2;
  struct ocgc_cursor *c[4];
  unsigned k, round;
  uint64_t written = 0;

  tf_create(&t, 1, 1, 4096); /* 4 rounds (~740 words) fit: nothing lost */
  s1 = tf_open(&t, OCGC_IDS_AUTO);
  s2 = tf_open(&t, OCGC_IDS_AUTO);
  c[0] = cursor(s1, &r[0], OCGC_START_OLDEST, 0);
  c[1] = cursor(s1, &r[1], OCGC_START_OLDEST, 2048);
  c[2] = cursor(s2, &r[2], OCGC_START_OLDEST, 0);
  c[3] = cursor(s2, &r[3], OCGC_START_OLDEST, 0);
  for (round = 0; round < 50; round++) {
    pat_write_range(&t.f, 0, written, 30);
    written += 30;
    for (k = 0; k < 4; k++)
      if ((round + k) % (k + 1) == 0) ck_assert_int_ge(ocgc_cursor_poll(c[k], 0), 0);
  }
  for (k = 0; k < 4; k++) {
    ck_assert_int_ge(ocgc_cursor_poll(c[k], 0), 0);
    ck_assert_uint_eq(r[k].n, written);
    expect_range(&r[k], 0, written, 0);
    ck_assert_uint_eq(stats(c[k]).lost, 0);
    ocgc_cursor_free(c[k]);
    rec_free(&r[k]);
  }
  ocgc_source_close(s1);
  ocgc_source_close(s2);
  rg_close(&t.f);
}
END_TEST

/* Several rings: every event says its ring; a limit of one event per poll
 * takes the rings in turn, so a busy ring cannot starve the others. */
START_TEST(several_rings)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  size_t k, on0 = 0, on2 = 0;

  tf_create(&t, has_ext, 3, 256);
  pat_write_range(&t.f, 0, 0, 10);
  pat_write_range(&t.f, 2, 100, 10);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  for (k = 0; k < 6; k++) ck_assert_int_eq(ocgc_cursor_poll(c, 1), 1);
  for (k = 0; k < 6; k++) ck_assert_uint_eq(r.ring[k], k % 2 ? 2 : 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 14);
  for (k = 0; k < r.n; k++) {
    if (r.ring[k] == 0) ck_assert_uint_eq(r.ts[k], on0++);
    else {
      ck_assert_uint_eq(r.ring[k], 2);
      ck_assert_uint_eq(r.ts[k], 100 + on2++);
    }
  }
  ck_assert_uint_eq(on0, 10);
  ck_assert_uint_eq(on2, 10);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* A writer thread laps the reader while it polls: no poll fails (a lap is
 * loss, not corruption), exact accounting holds and every event delivered
 * is intact (the head is re-read after each copy, so words overwritten
 * during the copy are never decoded).  The ring is small and the writer
 * fast, so the reader is lapped between any two of its loads; several
 * rounds, because the interleaving depends on the machine's load. */
struct writer_arg {
  struct rg_file *f;
  uint64_t from, n;
  int done;
};

static void *writer_main(void *p)
{
  struct writer_arg *a = p;
  pat_write_range(a->f, 0, a->from, a->n);
  __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* Streaming check: events intact, in order, gaps summed. */
struct stream {
  uint64_t next, seen, gaps, lost;
};

static int stream_event(const struct ocgc_event *ev, void *ctx)
{
  struct stream *x = ctx;
  uint64_t i = ev->timestamp, h = pat_header(i);
  unsigned k;
  TU_CHECK(i >= x->next, "event %llu after %llu", (unsigned long long)i,
           (unsigned long long)x->next);
  TU_CHECK(ev->user == OCGC_EV_IS_USER(h) && ev->type == OCGC_EV_TYPE(h) &&
               ev->id == OCGC_EV_ID(h) && ev->payload_words == OCGC_EV_LENGTH(h) - 2,
           "event %llu torn", (unsigned long long)i);
  for (k = 0; k < ev->payload_words; k++)
    TU_CHECK(ev->payload[k] == i * 7 + k, "event %llu: payload word %u torn",
             (unsigned long long)i, k);
  x->gaps += i - x->next;
  x->next = i + 1;
  x->seen++;
  return 0;
}

static void stream_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct stream *x = ctx;
  (void)ring;
  (void)exact;
  x->lost += lost;
}

START_TEST(concurrent_writer)
{
  int has_ext = _i;
  struct tf t;
  struct stream x;
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;
  struct writer_arg a;
  uint64_t written = 0;
  unsigned polls = 0, round;

  memset(&x, 0, sizeof x);
  tf_create(&t, has_ext, 1, 256);
  /* A live producer, as the writer thread is: a reader that finds the
   * seqlock busy for long (the writer preempted mid-update) must wait, not
   * take the ring for a dead producer's and read a torn pair as final. */
  if (has_ext) identify_as_self(&t);
  s = tf_open(&t, OCGC_IDS_AUTO);
  o.on_event = stream_event;
  o.on_lost = stream_lost;
  o.ctx = &x;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  for (round = 0; round < 4; round++) {
    pthread_t th;
    int64_t n;
    a.f = &t.f;
    a.from = written;
    a.n = 1000000;
    a.done = 0;
    ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &a), 0);
    while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
      n = ocgc_cursor_poll(c, 0);
      TU_CHECK(n >= 0, "round %u, poll %u: %s", round, polls, ocgc_strerror((int)n));
      polls++;
    }
    pthread_join(th, NULL);
    written += a.n;
    n = ocgc_cursor_poll(c, 0);
    ck_assert_msg(n >= 0, "round %u, last poll: %s", round, ocgc_strerror((int)n));
    st = stats(c);
    ck_assert_uint_eq(st.seen, x.seen);
    ck_assert_uint_eq(x.next, written); /* read up to the last event */
    ck_assert_uint_eq(st.lost, x.lost);
    if (has_ext) {
      ck_assert_int_eq(st.lost_exact, 1);
      ck_assert_uint_eq(st.seen + st.lost + st.skipped, written);
      ck_assert_uint_eq(x.gaps, st.lost);
    }
  }
  ck_assert_uint_gt(x.gaps, 0); /* the writer did lap the reader */
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* ---- corruption ---------------------------------------------------------------------- */

/* A corrupt event in the middle: the events before it are delivered, the
 * poll says OCGC_E_CORRUPT, the cursor moves to the tail; what the writer
 * adds later is read. */
START_TEST(corrupt_event_in_middle)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_cursor_stats st;
  uint64_t at = pat_words(0, 5);

  tf_create(&t, has_ext, 1, 1024);
  pat_write_range(&t.f, 0, 0, 10);
  t.f.rings[0].data[at] |= 1; /* a reserved bit in event 5's header */
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  ck_assert_uint_eq(r.n, 5);
  expect_range(&r, 0, 5, 0);
  st = stats(c);
  ck_assert_uint_eq(st.seen, 5);
  ck_assert_uint_ge(st.lost, 1);
  ck_assert_uint_eq(st.lost_words, pat_words(5, 5));
  ck_assert_int_eq(st.lost_exact, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  pat_write_range(&t.f, 0, 10, 3);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 3);
  expect_range(&r, 5, 3, 10);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* Head past tail, or tail more than a ring ahead of head. */
START_TEST(head_tail_inconsistent)
{
  int has_ext = _i;
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  uint64_t tail;

  tf_create(&t, has_ext, 1, 256);
  pat_write_range(&t.f, 0, 0, 10);
  tail = t.f.rings[0].tail;
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  /* head beyond tail */
  if (has_ext) t.f.rings[0].er->head_pos = tail + 8;
  else t.f.rings[0].rh->head = tail + 8;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  if (has_ext) t.f.rings[0].er->head_pos = 0;
  else t.f.rings[0].rh->head = 0;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  /* tail more than a ring ahead of head */
  t.f.rings[0].rh->tail = 256 + 1;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  t.f.rings[0].rh->tail = UINT64_MAX;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* ocgc files: events before head can only grow; fewer than the cursor has
 * accounted for is corrupt. */
START_TEST(head_events_backwards)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;

  tf_create(&t, 1, 1, 256);
  pat_write_range(&t.f, 0, 0, 20);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 20);
  pat_write_range(&t.f, 0, 20, 1);
  t.f.rings[0].er->head_pos = t.f.rings[0].tail; /* everything overwritten ... */
  t.f.rings[0].er->head_events = 3;              /* ... but only 3 events before it */
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* The ext ring seqlock held odd by a live producer (hostile, or preempted
 * mid-update): a poll ends early and empty, saying so, and a new cursor is
 * still made, without exact counts; when the seq moves on, reading goes on. */
START_TEST(ext_seq_stuck_odd)
{
  struct tf t;
  struct rec r = {0}, r2 = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL, *c2 = NULL, *c3 = NULL;
  struct ocgc_cursor_stats st;

  tf_create(&t, 1, 1, 256);
  identify_as_self(&t); /* a live producer: its odd seq will change */
  pat_write_range(&t.f, 0, 0, 5);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  t.f.rings[0].er->seq = 7;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  st = stats(c);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.busy_polls, 1);
  c2 = cursor(s, &r2, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(stats(c2).lost_exact, 0);
  c3 = cursor(s, &r2, OCGC_START_NOW, 0);
  ck_assert_int_eq(stats(c3).lost_exact, 0);
  t.f.rings[0].er->seq = 8;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  ck_assert_int_eq(stats(c).behind, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c2, 0), 5); /* from the header's head */
  ck_assert_int_eq(ocgc_cursor_poll(c3, 0), 0);  /* from the tail of then */
  pat_write_range(&t.f, 0, 5, 2);
  ck_assert_int_eq(ocgc_cursor_poll(c3, 0), 2);
  ocgc_cursor_free(c);
  ocgc_cursor_free(c2);
  ocgc_cursor_free(c3);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
  rec_free(&r2);
}
END_TEST

/* ---- truncation under the mapping --------------------------------------------------- */

/* The file shrinks while mapped: poll, info and totals say so (they fstat
 * before touching the mapping, which would raise SIGBUS). */
START_TEST(truncated_after_open)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  struct ocgc_source_info info;
  struct ocgc_totals tot;

  tf_create(&t, 1, 1, 1024);
  pat_write_range(&t.f, 0, 0, 10);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 2), 2);
  ck_assert_int_eq(ftruncate(t.f.fd, (off_t)(_i ? 4096 : 0)), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_TRUNCATED);
  ck_assert_int_eq(ocgc_source_info(s, &info), OCGC_E_TRUNCATED);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), OCGC_E_TRUNCATED);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_TRUNCATED);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* The same for the other entry points that read the mapping.  A truncated
 * file must give an error (or NULL), never SIGBUS (DESIGN.md section 4). */
START_TEST(truncated_written)
{
  struct tf t;
  struct ocgc_source *s;
  uint64_t w = 0;
  tf_create(&t, 1, 1, 1024);
  pat_write_range(&t.f, 0, 0, 10);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), 0);
  ck_assert_uint_eq(w, 10);
  ck_assert_int_eq(ftruncate(t.f.fd, 0), 0);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), OCGC_E_TRUNCATED);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

START_TEST(truncated_user_name)
{
  struct tf t;
  struct ocgc_source *s;
  tf_create(&t, 1, 1, 1024);
  rg_set_name(&t.f, 3, "ocgc.cause.weak");
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ftruncate(t.f.fd, 0), 0);
  ck_assert_ptr_null(ocgc_source_user_name(s, 3));
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

START_TEST(truncated_cursor_new)
{
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  tf_create(&t, 1, 1, 1024);
  pat_write_range(&t.f, 0, 0, 10);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ftruncate(t.f.fd, 0), 0);
  o.start = _i ? OCGC_START_NOW : OCGC_START_OLDEST;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), OCGC_E_TRUNCATED);
  ck_assert_ptr_null(c);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* ---- sources: info, totals, written, names --------------------------------------- */

START_TEST(source_info)
{
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_source_info info;

  tf_create(&t, 1, 1, 1024);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 1);
  ck_assert_uint_eq(info.max_domains, 1);
  ck_assert_uint_eq(info.ring_words, 1024);
  ck_assert_uint_eq(info.file_size, t.f.size);
  ck_assert_int_eq(info.ids, OCGC_IDS_52);
  ck_assert_uint_eq(info.pid, 4242);
  ck_assert_uint_eq(info.start_time, 123456);
  ck_assert_str_eq(info.boot_id, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  ck_assert_int_eq(info.realtime_offset_ns, INT64_C(1700000000000000000));
  ck_assert_uint_eq(info.created_ns, 1000);
  ck_assert_uint_eq(info.state, OCGC_STATE_RUNNING);
  ck_assert_uint_eq(info.exited_ns, 0);
  ck_assert_uint_eq(info.flags, OCGC_EXT_NATIVE);
  ck_assert_str_eq(info.ocaml_version, "4.13.1");
  ck_assert_str_eq(info.ocgc_version, "0.1.0");
  ck_assert_str_eq(info.program, "ringgen");
  /* state is read fresh */
  t.f.ext->exited_ns = 99;
  t.f.ext->state = OCGC_STATE_EXITED;
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(info.state, OCGC_STATE_EXITED);
  ck_assert_uint_eq(info.exited_ns, 99);
  /* unterminated strings are cut, never overrun */
  memset(t.f.ext->program, 'p', sizeof t.f.ext->program);
  memset(t.f.ext->boot_id, 'b', sizeof t.f.ext->boot_id);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(strlen(info.program), sizeof info.program - 1);
  ck_assert_uint_eq(strlen(info.boot_id), sizeof info.boot_id - 1);
  ck_assert_int_eq(ocgc_source_info(NULL, &info), -EINVAL);
  ck_assert_int_eq(ocgc_source_info(s, NULL), -EINVAL);
  ocgc_source_close(s);
  rg_close(&t.f);

  tf_create(&t, 0, 4, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  memset(&info, 0x55, sizeof info);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 0);
  ck_assert_uint_eq(info.max_domains, 4);
  ck_assert_uint_eq(info.ring_words, 64);
  ck_assert_uint_eq(info.pid, 0);
  ck_assert_str_eq(info.program, "");
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* A producer killed between making a seqlock odd and making it even again
 * leaves it odd for ever: while it lives readers retry and give up
 * (-EAGAIN); once it is dead, the totals and the ring are read as it left
 * them. */
START_TEST(odd_seq_of_a_dead_producer)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL;
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_totals tot;

  tf_create(&t, 1, 1, 64);
  pat_write_range(&t.f, 0, 0, 100); /* wraps: head and its seqlock moved */
  t.f.totals->minor_collections = 7;
  t.f.totals->seq = 3;              /* killed inside a publication */
  t.f.rings[0].er->seq |= 1;
  identify_as_self(&t);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), -EAGAIN);
  co.on_event = on_event;
  co.ctx = &r;
  co.start = OCGC_START_OLDEST;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &c), 0); /* live: made, inexact */
  ck_assert_int_eq(stats(c).lost_exact, 0);
  ocgc_cursor_free(c);
  c = NULL;

  t.f.ext->pid = dead_pid();
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  ck_assert_uint_eq(tot.minor_collections, 7);
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &c), 0);
  ck_assert_int_eq(stats(c).lost_exact, 1); /* dead: what it left is final */
  ck_assert_int_gt(ocgc_cursor_poll(c, 0), 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

START_TEST(source_totals)
{
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_totals tot;
  struct ocgc_wire_totals *w;
  unsigned k, c;
  uint64_t *bc;

  tf_create(&t, 1, 1, 1024);
  w = t.f.totals;
  w->minor_collections = 1;
  w->major_collections = 2;
  w->compactions = 3;
  w->forced_major_collections = 4;
  w->major_slices = 5;
  w->minor_words = 6;
  w->promoted_words = 7;
  w->major_words = 8;
  w->direct_major_words = 9;
  w->heap_words = 10;
  w->top_heap_words = 11;
  w->heap_chunks = 12;
  w->gc_time_ns = 13;
  for (k = 0; k < OCGC_KIND_COUNT; k++) w->kind_time_ns[k] = 14 + k;
  w->updated_ns = 18;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++) w->by_cause[k][c] = c == 2 ? k + 1 : 0;
  w->seq = 2;
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  ck_assert_uint_eq(tot.minor_collections, 1);
  ck_assert_uint_eq(tot.major_collections, 2);
  ck_assert_uint_eq(tot.compactions, 3);
  ck_assert_uint_eq(tot.forced_major_collections, 4);
  ck_assert_uint_eq(tot.major_slices, 5);
  ck_assert_uint_eq(tot.minor_words, 6);
  ck_assert_uint_eq(tot.promoted_words, 7);
  ck_assert_uint_eq(tot.major_words, 8);
  ck_assert_uint_eq(tot.direct_major_words, 9);
  ck_assert_uint_eq(tot.heap_words, 10);
  ck_assert_uint_eq(tot.top_heap_words, 11);
  ck_assert_uint_eq(tot.heap_chunks, 12);
  ck_assert_uint_eq(tot.gc_time_ns, 13);
  for (k = 0; k < OCGC_KIND_COUNT; k++) ck_assert_uint_eq(tot.kind_time_ns[k], 14 + k);
  ck_assert_uint_eq(tot.updated_ns, 18);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++) ck_assert_uint_eq(tot.by_cause[k][c], c == 2 ? k + 1 : 0);
  /* a live producer in the middle of an update: seq odd (for longer than
   * readers wait) */
  identify_as_self(&t);
  w->seq = 3;
  ck_assert_int_eq(ocgc_source_totals(s, &tot), -EAGAIN);
  w->seq = 4;
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  ck_assert_int_eq(ocgc_source_totals(NULL, &tot), -EINVAL);
  ck_assert_int_eq(ocgc_source_totals(s, NULL), -EINVAL);
  ocgc_source_close(s);

  /* a producer with fewer cause columns (20): the table is read with its
   * own stride and the missing columns read 0 */
  t.f.ext->cause_slots = OCGC_CAUSE_COUNT;
  bc = (uint64_t *)((char *)w + offsetof(struct ocgc_wire_totals, by_cause));
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) bc[k * OCGC_CAUSE_COUNT + c] = c == 1 + k ? k + 1 : 0;
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++)
      ck_assert_uint_eq(tot.by_cause[k][c], c < OCGC_CAUSE_COUNT && c == 1 + k ? k + 1 : 0);

  /* a cause table no producer writes: a row summing above its kind's
   * counter (+1 for a collection between the two), or wrapping around */
  bc[0 * OCGC_CAUSE_COUNT + 3] = 2; /* minor: 1 + 2 > 1 + 1 */
  ck_assert_int_eq(ocgc_source_totals(s, &tot), OCGC_E_CORRUPT);
  bc[0 * OCGC_CAUSE_COUNT + 3] = 0;
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  bc[1 * OCGC_CAUSE_COUNT + 0] = UINT64_MAX; /* slices: 2 + 2^64-1 wraps to 1 */
  ck_assert_int_eq(ocgc_source_totals(s, &tot), OCGC_E_CORRUPT);
  ocgc_source_close(s);
  rg_close(&t.f);

  tf_create(&t, 0, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), -ENODATA);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* A writer thread updating the totals under the seqlock, all fields equal
 * to one counter: every snapshot the reader gets is consistent. */
struct totals_arg {
  struct ocgc_wire_totals *w;
  volatile int stop;
};

static void *totals_writer(void *p)
{
  struct totals_arg *a = p;
  uint64_t v = 0, seq = 0;
  while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
    uint64_t *f = (uint64_t *)a->w;
    unsigned k;
    v++;
    __atomic_store_n(&a->w->seq, ++seq, __ATOMIC_RELAXED); /* odd */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (k = 1; k < 19; k++) __atomic_store_n(&f[k], v, __ATOMIC_RELAXED);
    __atomic_store_n(&a->w->seq, ++seq, __ATOMIC_RELEASE); /* even */
    /* the producer updates at GC events, not back to back */
    for (k = 0; k < 2000; k++) __asm__ __volatile__("" ::: "memory");
  }
  return NULL;
}

START_TEST(totals_seqlock_consistent)
{
  struct tf t;
  struct ocgc_source *s;
  struct totals_arg a;
  pthread_t th;
  unsigned i, ok = 0;

  tf_create(&t, 1, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  a.w = t.f.totals;
  a.stop = 0;
  ck_assert_int_eq(pthread_create(&th, NULL, totals_writer, &a), 0);
  for (i = 0; i < 50000; i++) {
    struct ocgc_totals tot;
    int r = ocgc_source_totals(s, &tot);
    unsigned k;
    if (r == -EAGAIN) continue;
    TU_CHECK(r == 0, "totals: %d", r);
    ok++;
    TU_CHECK(tot.major_collections == tot.minor_collections &&
                 tot.compactions == tot.minor_collections &&
                 tot.heap_chunks == tot.minor_collections &&
                 tot.gc_time_ns == tot.minor_collections &&
                 tot.updated_ns == tot.minor_collections,
             "torn totals: %llu %llu %llu %llu %llu", (unsigned long long)tot.minor_collections,
             (unsigned long long)tot.major_collections, (unsigned long long)tot.compactions,
             (unsigned long long)tot.heap_chunks, (unsigned long long)tot.updated_ns);
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      TU_CHECK(tot.kind_time_ns[k] == tot.minor_collections, "torn totals: kind time %u", k);
  }
  __atomic_store_n(&a.stop, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  ck_assert_uint_gt(ok, 1000);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

START_TEST(source_written)
{
  struct tf t;
  struct ocgc_source *s;
  uint64_t w = 1;

  tf_create(&t, 1, 2, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), 0);
  ck_assert_uint_eq(w, 0);
  pat_write_range(&t.f, 1, 0, 300); /* laps the ring: written still counts all */
  ck_assert_int_eq(ocgc_source_written(s, 1, &w), 0);
  ck_assert_uint_eq(w, 300);
  ck_assert_int_eq(ocgc_source_written(s, 2, &w), -EINVAL);
  ck_assert_int_eq(ocgc_source_written(s, 0, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_source_written(NULL, 0, &w), -EINVAL);
  ocgc_source_close(s);
  rg_close(&t.f);

  tf_create(&t, 0, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), -ENODATA);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* Names are copied out of the mapping; empty and out-of-range slots give
 * NULL; events carry their slot's name. */
/* The library's fstat() and pread() calls, counted: this suite is linked
 * with -Wl,--wrap=fstat,--wrap=pread (unit.am), which routes the calls of
 * the library's objects through these. */
static unsigned long fstat_calls, pread_calls;
int __real_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);

int __wrap_fstat(int fd, struct stat *st)
{
  __atomic_add_fetch(&fstat_calls, 1, __ATOMIC_RELAXED);
  return __real_fstat(fd, st);
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
  __atomic_add_fetch(&pread_calls, 1, __ATOMIC_RELAXED);
  return __real_pread(fd, buf, n, off);
}

static unsigned long syscalls_counted(void)
{
  return __atomic_load_n(&fstat_calls, __ATOMIC_RELAXED) +
         __atomic_load_n(&pread_calls, __ATOMIC_RELAXED);
}

/* Events of an unnamed user slot cost no system call each: the empty slot
 * is read once per poll (it was an fstat per event). */
struct names_seen {
  unsigned events, named;
  const char *last;
};

static int note_name(const struct ocgc_event *ev, void *ctx)
{
  struct names_seen *n = ctx;
  n->events++;
  if (ev->name != NULL) {
    n->named++;
    n->last = ev->name;
  }
  return 0;
}

START_TEST(unnamed_slot_no_syscall_per_event)
{
  struct tf t;
  struct names_seen n = {0, 0, NULL};
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  unsigned long before, after;
  unsigned i;

  tf_create(&t, 1, 1, 1u << 16);
  for (i = 0; i < 10000; i++)
    rg_write1(&t.f, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 77), i, i);
  s = tf_open(&t, OCGC_IDS_AUTO);
  o.on_event = note_name;
  o.ctx = &n;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  before = syscalls_counted();
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10000);
  after = syscalls_counted();
  ck_assert_uint_eq(n.named, 0);
  /* an fstat per poll, a pread per batch (two at the ring's end) and one
   * for the empty slot */
  ck_assert_uint_gt(after - before, 0); /* the counting works */
  ck_assert_uint_le(after - before, 8);
  /* named later: seen from the next poll on */
  rg_set_name(&t.f, 77, "late.name");
  rg_write1(&t.f, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 77), 10000, 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 1);
  ck_assert_uint_eq(n.named, 1);
  ck_assert_str_eq(n.last, "late.name");
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

START_TEST(user_names)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  const char *n;
  char longname[200];

  tf_create(&t, 1, 1, 256);
  rg_set_name(&t.f, 0, "first");
  rg_set_name(&t.f, 5, "ocgc.heap.grow");
  memset(longname, 'x', sizeof longname);
  longname[127] = '\0';
  rg_set_name(&t.f, 8191, longname);
  s = tf_open(&t, OCGC_IDS_AUTO);
  n = ocgc_source_user_name(s, 5);
  ck_assert_ptr_nonnull(n);
  ck_assert_str_eq(n, "ocgc.heap.grow");
  /* a copy, not a pointer into the mapping */
  ck_assert(n < t.f.map || n >= t.f.map + t.f.size);
  ck_assert(n < s->map || n >= s->map + s->size);
  ck_assert_str_eq(ocgc_source_user_name(s, 0), "first");
  ck_assert_uint_eq(strlen(ocgc_source_user_name(s, 8191)), 127);
  ck_assert_ptr_null(ocgc_source_user_name(s, 1));       /* empty */
  ck_assert_ptr_null(ocgc_source_user_name(s, 8192));    /* out of range */
  ck_assert_ptr_null(ocgc_source_user_name(s, ~0u));
  ck_assert_ptr_null(ocgc_source_user_name(NULL, 0));
  /* a slot registered later is found later */
  rg_set_name(&t.f, 1, "late");
  ck_assert_str_eq(ocgc_source_user_name(s, 1), "late");
  /* what the caller holds does not change when the mapping does */
  rg_set_name(&t.f, 5, "changed");
  ck_assert_str_eq(n, "ocgc.heap.grow");
  /* events carry names: slot 5 (user int) named, slot 6 (custom) not */
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  pat_write_range(&t.f, 0, 0, 6);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 6);
  ck_assert_ptr_null(r.name[0]);
  ck_assert_str_eq(r.name[3], "ocgc.heap.grow");
  ck_assert_ptr_null(r.name[5]);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* A slot of 128 bytes without a NUL is "not a valid string" (consumer.h:
 * "or NULL if the slot is empty or not a valid string"). */
START_TEST(user_name_unterminated)
{
  struct tf t;
  struct ocgc_source *s;
  char *slot;

  tf_create(&t, 1, 1, 256);
  slot = t.f.map + t.f.hdr->custom_events_offset + 2 * OCGC_WIRE_USER_NAME_LEN;
  memset(slot, 'A', OCGC_WIRE_USER_NAME_LEN);
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_ptr_null(ocgc_source_user_name(s, 2));
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* ---- cursor options and arguments ----------------------------------------------------- */

START_TEST(cursor_arguments)
{
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL;
  struct rec r = {0};
  struct ocgc_cursor_stats st;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);

  tf_create(&t, 1, 1, 256);
  pat_write_range(&t.f, 0, 0, 4);
  s = tf_open(&t, OCGC_IDS_AUTO);
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
  o.on_event = on_event;
  o.ctx = &r;
  o.start = OCGC_START_NOW;
  o.sz = offsetof(struct ocgc_cursor_opts, start);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 4); /* START_OLDEST, no callback */
  ck_assert_uint_eq(r.n, 0);
  ocgc_cursor_free(c);
  o.sz = offsetof(struct ocgc_cursor_opts, batch_words);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  pat_write_range(&t.f, 0, 4, 2);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 2);
  expect_range(&r, 0, 2, 4);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* An older caller's smaller ocgc_open_opts: ids past its sz is not read. */
START_TEST(open_opts_sz)
{
  struct tf t;
  struct ocgc_open_opts o = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info;

  tf_create(&t, 0, 1, 64);
  o.ids = OCGC_IDS_53;
  o.sz = offsetof(struct ocgc_open_opts, ids);
  ck_assert_int_eq(ocgc_source_open_path(t.path, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_52);
  ocgc_source_close(s);
  o.sz = sizeof o;
  ck_assert_int_eq(ocgc_source_open_path(t.path, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_53);
  ocgc_source_close(s);
  ck_assert_int_eq(ocgc_source_open_path(t.path, NULL, NULL), -EINVAL);
  rg_close(&t.f);
}
END_TEST

/* ---- what events mean ------------------------------------------------------------------- */

static struct ocgc_event rt_event(unsigned type, unsigned id)
{
  struct ocgc_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.id = id;
  ev.value = 1;
  return ev;
}

static struct ocgc_event user_event(unsigned type, unsigned slot)
{
  struct ocgc_event ev = rt_event(type, slot);
  ev.user = 1;
  return ev;
}

/* 5.2 cause counters map to causes; other counters and types do not. */
START_TEST(cause_of_counters)
{
  struct tf t;
  struct ocgc_source *s;
  unsigned id, c;

  tf_create(&t, 1, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  for (id = 0; id < 64; id++) {
    struct ocgc_event ev = rt_event(OCGC_RT_COUNTER, id);
    int want = -1;
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (ocgc_cause_counter(c) == (int)id) want = (int)c;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), want);
    ev.type = OCGC_RT_BEGIN;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
    ev.type = OCGC_RT_LIFECYCLE;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  }
  {
    struct ocgc_event ev = rt_event(OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_MINOR_HEAP_FULL);
    ev.id = OCGC_CT_REQUEST_MAJOR_ALLOC_SHR;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_ALLOC_SHR);
    ev.id = OCGC_CT_MINOR_PROMOTED;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
    ck_assert_int_eq(ocgc_event_cause(NULL, &ev), -1);
    ck_assert_int_eq(ocgc_event_cause(s, NULL), -1);
  }
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* "ocgc.cause.<name>" user ints map to causes, by name, wherever the slot. */
START_TEST(cause_of_user_events)
{
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_event ev;
  unsigned c;
  char name[128];

  tf_create(&t, 1, 1, 64);
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    snprintf(name, sizeof name, "%s%s", OCGC_UEV_CAUSE_PREFIX, ocgc_cause_name(c));
    rg_set_name(&t.f, 100 + 3 * c, name);
  }
  rg_set_name(&t.f, 10, "ocgc.cause.nope");
  rg_set_name(&t.f, 11, "ocgc.cause.");
  rg_set_name(&t.f, 12, "ocgc.cause.weakx");
  rg_set_name(&t.f, 13, "ocgc.cause");
  rg_set_name(&t.f, 14, "xocgc.cause.weak");
  rg_set_name(&t.f, 15, OCGC_UEV_HEAP_GROW);
  rg_set_name(&t.f, 8191, "ocgc.cause.explicit");
  s = tf_open(&t, OCGC_IDS_AUTO);
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    ev = user_event(OCGC_USER_INT, 100 + 3 * c);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), (int)c);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), (int)c); /* cached */
    ev.type = OCGC_USER_UNIT; /* only int events announce causes */
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
    ev.type = OCGC_USER_SPAN_BEGIN;
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  }
  for (c = 10; c <= 15; c++) {
    ev = user_event(OCGC_USER_INT, c);
    ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  }
  ev = user_event(OCGC_USER_INT, 8191);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_EXPLICIT);
  /* an empty slot, registered after the first look */
  ev = user_event(OCGC_USER_INT, 50);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  rg_set_name(&t.f, 50, "ocgc.cause.memprof");
  ck_assert_int_eq(ocgc_event_cause(s, &ev), OCGC_CAUSE_MEMPROF);
  /* a runtime counter with the id of a cause slot is not a user event */
  ev = rt_event(OCGC_RT_COUNTER, 100 + 3 * OCGC_CAUSE_WEAK);
  ck_assert_int_eq(ocgc_event_cause(s, &ev), -1);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

struct kind_want {
  unsigned id;
  int kind;
};

static void check_kinds(struct ocgc_source *s, const struct kind_want *w, unsigned nw)
{
  unsigned id, k;
  for (id = 0; id < 8192; id++) {
    struct ocgc_event ev = rt_event(OCGC_RT_BEGIN, id);
    int want = -1, begin = -1;
    for (k = 0; k < nw; k++)
      if (w[k].id == id) want = w[k].kind;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == want, "phase %u begin: %d, want %d", id,
             ocgc_event_kind(s, &ev, &begin), want);
    TU_CHECK(want < 0 || begin == 1, "phase %u begin: begin %d", id, begin);
    ev.type = OCGC_RT_END;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == want, "phase %u end", id);
    TU_CHECK(want < 0 || begin == 0, "phase %u end: begin %d", id, begin);
    TU_CHECK(ocgc_event_kind(s, &ev, NULL) == want, "phase %u end, begin NULL", id);
    ev.type = OCGC_RT_COUNTER;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == -1, "counter %u has a kind", id);
    ev.type = OCGC_RT_LIFECYCLE;
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == -1, "lifecycle %u has a kind", id);
    ev = user_event(OCGC_USER_SPAN_BEGIN, id);
    TU_CHECK(ocgc_event_kind(s, &ev, &begin) == -1, "user span %u has a kind", id);
  }
}

/* Phases map to kinds by name, per numbering: 5.2 by default, 5.3 when a
 * stock file is opened with OCGC_IDS_53 (the memprof phases shift them). */
START_TEST(kind_of_phases)
{
  static const struct kind_want k52[] = {
    {10, OCGC_KIND_MINOR}, {24, OCGC_KIND_MAJOR_SLICE},
    {25, OCGC_KIND_MAJOR_FINISH}, {40, OCGC_KIND_COMPACTION},
  };
  static const struct kind_want k53[] = {
    {11, OCGC_KIND_MINOR}, {27, OCGC_KIND_MAJOR_SLICE},
    {28, OCGC_KIND_MAJOR_FINISH}, {44, OCGC_KIND_COMPACTION},
  };
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_source_info info;

  ck_assert_uint_eq(k52[0].id, OCGC_PH_MINOR);
  ck_assert_uint_eq(k52[1].id, OCGC_PH_MAJOR_SLICE);
  ck_assert_uint_eq(k52[2].id, OCGC_PH_MAJOR_FINISH_CYCLE);
  ck_assert_uint_eq(k52[3].id, OCGC_PH_COMPACT);

  /* stock file, default and explicit 5.2 */
  tf_create(&t, 0, 1, 64);
  s = tf_open(&t, OCGC_IDS_AUTO);
  check_kinds(s, k52, 4);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_52);
  ocgc_source_close(s);
  s = tf_open(&t, OCGC_IDS_52);
  check_kinds(s, k52, 4);
  ocgc_source_close(s);
  /* stock file written by 5.3 */
  s = tf_open(&t, OCGC_IDS_53);
  check_kinds(s, k53, 4);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_53);
  ocgc_source_close(s);
  rg_close(&t.f);

  /* ocgc files are always 5.2-numbered, whatever the caller says */
  tf_create(&t, 1, 1, 64);
  s = tf_open(&t, OCGC_IDS_53);
  check_kinds(s, k52, 4);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_52);
  {
    struct ocgc_event ev = rt_event(OCGC_RT_BEGIN, OCGC_PH_MINOR);
    int begin = 7;
    ck_assert_int_eq(ocgc_event_kind(NULL, &ev, &begin), -1);
    ck_assert_int_eq(ocgc_event_kind(s, NULL, &begin), -1);
  }
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* Classification on events as a cursor delivers them. */
struct classify_ctx {
  struct ocgc_source *s;
  int causes[8], kinds[8], begins[8];
  unsigned n;
};

static int classify_event(const struct ocgc_event *ev, void *p)
{
  struct classify_ctx *x = p;
  if (x->n < 8) {
    x->causes[x->n] = ocgc_event_cause(x->s, ev);
    x->begins[x->n] = -1;
    x->kinds[x->n] = ocgc_event_kind(x->s, ev, &x->begins[x->n]);
  }
  x->n++;
  return 0;
}

START_TEST(classify_delivered_events)
{
  struct tf t;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  struct classify_ctx x;

  memset(&x, 0, sizeof x);
  tf_create(&t, 1, 1, 256);
  rg_set_name(&t.f, 7, "ocgc.cause.explicit");
  rg_write1(&t.f, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL), 1, 1);
  rg_write1(&t.f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR), 1, 0);
  rg_write1(&t.f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_MINOR), 2, 0);
  rg_write1(&t.f, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 7), 3, 1);
  rg_write1(&t.f, 0, OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_COMPACT), 3, 0);
  x.s = tf_open(&t, OCGC_IDS_AUTO);
  o.on_event = classify_event;
  o.ctx = &x;
  ck_assert_int_eq(ocgc_cursor_new(x.s, &o, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 5);
  ck_assert_int_eq(x.causes[0], OCGC_CAUSE_MINOR_HEAP_FULL);
  ck_assert_int_eq(x.kinds[0], -1);
  ck_assert_int_eq(x.kinds[1], OCGC_KIND_MINOR);
  ck_assert_int_eq(x.begins[1], 1);
  ck_assert_int_eq(x.kinds[2], OCGC_KIND_MINOR);
  ck_assert_int_eq(x.begins[2], 0);
  ck_assert_int_eq(x.causes[3], OCGC_CAUSE_EXPLICIT);
  ck_assert_int_eq(x.kinds[4], OCGC_KIND_COMPACTION);
  ocgc_cursor_free(c);
  ocgc_source_close(x.s);
  rg_close(&t.f);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

/* ---- bounded work and impossible values (issue 9) ----------------------------------- */

/* The event budget: a poll delivers at most poll_max_events, says it is
 * behind, and the next polls read on from there, nothing lost or twice. */
START_TEST(budget_events)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  struct ocgc_cursor_stats st;
  unsigned polls = 0;

  tf_create(&t, 1, 1, 4096);
  pat_write_range(&t.f, 0, 0, 500);
  s = tf_open(&t, OCGC_IDS_AUTO);
  o.on_event = on_event;
  o.ctx = &r;
  o.poll_max_events = 100;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 100);
  st = stats(c);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.cut_polls, 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 30), 30); /* the caller's own, smaller limit */
  st = stats(c);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.cut_polls, 1);           /* not the budget's doing */
  while (stats(c).behind && polls++ < 10) ck_assert_int_ge(ocgc_cursor_poll(c, 0), 0);
  ck_assert_int_eq(stats(c).behind, 0);
  ck_assert_uint_eq(r.n, 500);
  expect_range(&r, 0, 500, 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
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
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  unsigned calls = 0;
  int64_t got;

  tf_create(&t, 1, 1, 8192);
  pat_write_range(&t.f, 0, 0, 1000);
  s = tf_open(&t, OCGC_IDS_AUTO);
  o.on_event = slow_event;
  o.ctx = &calls;
  o.poll_max_ns = 5000000; /* 5 ms: the clock is read every 64 events */
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  got = ocgc_cursor_poll(c, 0);
  ck_assert_int_gt(got, 0);
  ck_assert_int_le(got, 64);
  ck_assert_int_eq(stats(c).behind, 1);
  ck_assert_uint_eq(stats(c).cut_polls, 1);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* Start-from-now against a writer that never stops, on a ring it laps all
 * the time: making the cursor is O(1) and always succeeds, and the counts
 * still add up once the writer stops. */
START_TEST(start_now_under_flood)
{
  struct tf t;
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c[20];
  struct writer_arg a;
  pthread_t th;
  unsigned k, polls;

  tf_create(&t, 1, 1, 1u << 16);
  s = tf_open(&t, OCGC_IDS_AUTO);
  o.start = OCGC_START_NOW;
  a.f = &t.f;
  a.from = 0;
  a.n = 3000000;
  a.done = 0;
  ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &a), 0);
  for (k = 0; k < 20; k++) {
    int err = ocgc_cursor_new(s, &o, &c[k]);
    ck_assert_msg(err == 0, "cursor %u: %s", k, ocgc_strerror(err));
    ck_assert_int_ge(ocgc_cursor_poll(c[k], 0), 0);
  }
  pthread_join(th, NULL);
  for (k = 0; k < 20; k++) {
    struct ocgc_cursor_stats st;
    polls = 0;
    do {
      int64_t n = ocgc_cursor_poll(c[k], 0);
      ck_assert_msg(n >= 0, "cursor %u: %s", k, ocgc_strerror((int)n));
    } while (stats(c[k]).behind && ++polls < 1000);
    st = stats(c[k]);
    ck_assert_int_eq(st.behind, 0);
    ck_assert_uint_eq(st.seen + st.lost + st.skipped, a.n);
    ocgc_cursor_free(c[k]);
  }
  ocgc_source_close(s);
  rg_close(&t.f);
}
END_TEST

/* A tail moved back is corrupt, and what was delivered is never delivered
 * again, however the tail moves afterwards. */
START_TEST(tail_rewind_not_redelivered)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  uint64_t tail;

  tf_create(&t, 1, 1, 1024);
  pat_write_range(&t.f, 0, 0, 10);
  s = tf_open(&t, OCGC_IDS_AUTO);
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  tail = t.f.rings[0].rh->tail;
  t.f.rings[0].rh->tail = pat_words(0, 4);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  ck_assert_uint_eq(stats(c).corrupt, 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  t.f.rings[0].rh->tail = tail;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ck_assert_uint_eq(r.n, 10);
  pat_write_range(&t.f, 0, 10, 3);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 3);
  expect_range(&r, 0, 13, 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

/* Counts no writer makes: more events before head than words, and an
 * exited producer whose final count disagrees with its events. */
START_TEST(impossible_counts)
{
  struct tf t;
  struct rec r = {0};
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;

  tf_create(&t, 1, 1, 1024);
  pat_write_range(&t.f, 0, 0, 10);
  t.f.rings[0].er->head_events = UINT64_MAX - 4; /* "skipped 2^64-5" */
  s = tf_open(&t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), OCGC_E_CORRUPT);
  t.f.rings[0].er->head_events = 0;
  c = cursor(s, &r, OCGC_START_OLDEST, 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  /* exited, and says it wrote 3 where 10 were read */
  t.f.rings[0].er->written_events = 3;
  __atomic_store_n(&t.f.ext->state, OCGC_STATE_EXITED, __ATOMIC_RELEASE);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), OCGC_E_CORRUPT);
  t.f.rings[0].er->written_events = 10;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  ocgc_cursor_free(c);
  ocgc_source_close(s);
  rg_close(&t.f);
  rec_free(&r);
}
END_TEST

Suite *cursor_suite(void);
Suite *cursor_suite(void)
{
  Suite *s = suite_create("cursor");
  TCase *tc = tcase_create("read");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, read_all_in_order, 0, 2);
  tcase_add_loop_test(tc, wrap_with_padding, 0, 2);
  tcase_add_test(tc, overwrite_exact_loss);
  tcase_add_test(tc, overwrite_behind_between_polls);
  tcase_add_test(tc, overwritten_before_cursor_is_skipped);
  tcase_add_test(tc, stock_loss_estimated);
  tcase_add_loop_test(tc, start_now, 0, 2);
  tcase_add_loop_test(tc, start_now_after_overwrite, 0, 2);
  tcase_add_test(tc, max_events_and_stop);
  tcase_add_loop_test(tc, small_batches, 0, 6);
  tcase_add_test(tc, huge_batch_words);
  tcase_add_test(tc, several_cursors);
  tcase_add_loop_test(tc, several_rings, 0, 2);
  tcase_add_test(tc, cursor_arguments);
  tcase_add_test(tc, budget_events);
  tcase_add_test(tc, budget_time);
  suite_add_tcase(s, tc);

  tc = tcase_create("concurrent");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, concurrent_writer, 0, 2);
  tcase_add_test(tc, start_now_under_flood);
  suite_add_tcase(s, tc);

  tc = tcase_create("corrupt");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, corrupt_event_in_middle, 0, 2);
  tcase_add_loop_test(tc, head_tail_inconsistent, 0, 2);
  tcase_add_test(tc, head_events_backwards);
  tcase_add_test(tc, ext_seq_stuck_odd);
  tcase_add_test(tc, tail_rewind_not_redelivered);
  tcase_add_test(tc, impossible_counts);
  tcase_add_loop_test(tc, truncated_after_open, 0, 2);
  tcase_add_test(tc, truncated_written);
  tcase_add_test(tc, truncated_user_name);
  tcase_add_loop_test(tc, truncated_cursor_new, 0, 2);
  suite_add_tcase(s, tc);

  tc = tcase_create("source");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, source_info);
  tcase_add_test(tc, source_totals);
  tcase_add_test(tc, odd_seq_of_a_dead_producer);
  tcase_add_test(tc, totals_seqlock_consistent);
  tcase_add_test(tc, source_written);
  tcase_add_test(tc, user_names);
  tcase_add_test(tc, unnamed_slot_no_syscall_per_event);
  tcase_add_test(tc, user_name_unterminated);
  tcase_add_test(tc, open_opts_sz);
  suite_add_tcase(s, tc);

  tc = tcase_create("classify");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_add_test(tc, cause_of_counters);
  tcase_add_test(tc, cause_of_user_events);
  tcase_add_test(tc, kind_of_phases);
  tcase_add_test(tc, classify_delivered_events);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(cursor_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
