/* test_cursor_live.c - readers next to a live producer: a writer thread
 * that laps the cursor while it polls, cursors started from now against a
 * flood, totals updated under their seqlock while they are read, and
 * seqlocks left odd by a producer that is alive (readers wait, then say
 * so) or dead (what it left is final).  The rings are written by ringgen
 * with the pattern of ringfix.h; the threads race for real, so several
 * rounds are run where the interleaving matters. */

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

/* ---- a writer thread --------------------------------------------------------------- */

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

/* After a round of concurrent_writer: the cursor read up to the last
 * event, and its counts agree with what the stream saw. */
static void check_round(struct ocgc_cursor *c, const struct stream *x, uint64_t written,
                        int has_ext)
{
  struct ocgc_cursor_stats st = rf_stats(c);
  ck_assert_uint_eq(st.seen, x->seen);
  ck_assert_uint_eq(x->next, written); /* read up to the last event */
  ck_assert_uint_eq(st.lost, x->lost);
  if (has_ext) {
    ck_assert_int_eq(st.lost_exact, 1);
    ck_assert_uint_eq(st.seen + st.lost + st.skipped, written);
    ck_assert_uint_eq(x->gaps, st.lost);
  }
}

/* A writer thread laps the reader while it polls: no poll fails (a lap is
 * loss, not corruption), exact accounting holds and every event delivered
 * is intact (the head is re-read after each copy, so words overwritten
 * during the copy are never decoded).  The ring is small and the writer
 * fast, so the reader is lapped between any two of its loads; several
 * rounds, because the interleaving depends on the machine's load. */
START_TEST(concurrent_writer)
{
  int has_ext = _i;
  struct tf *t = rf_file(has_ext, 1, 256);
  struct stream x;
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c;
  struct writer_arg a;
  uint64_t written = 0;
  unsigned polls = 0, round;

  memset(&x, 0, sizeof x);
  /* A live producer, as the writer thread is: a reader that finds the
   * seqlock busy for long (the writer preempted mid-update) must wait, not
   * take the ring for a dead producer's and read a torn pair as final. */
  if (has_ext) rf_identify_as_self(t);
  s = rf_open(t, OCGC_IDS_AUTO);
  o.on_event = stream_event;
  o.on_lost = stream_lost;
  o.ctx = &x;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  for (round = 0; round < 4; round++) {
    pthread_t th;
    int64_t n;
    a.f = &t->f;
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
    rf_poll_all(c); /* to the last event, however slowly the machine runs */
    check_round(c, &x, written, has_ext);
  }
  ck_assert_uint_gt(x.gaps, 0); /* the writer did lap the reader */
  ocgc_cursor_free(c);
}
END_TEST

/* Start-from-now against a writer that never stops, on a ring it laps all
 * the time: making the cursor is O(1) and always succeeds, and the counts
 * still add up once the writer stops.  The cursors have no time budget: with
 * one, a cursor made on a loaded machine may run out of it while the
 * seqlock is busy and start inexact (estimated loss), as it is documented
 * to, and its counts then add up only roughly.  One that still came out
 * inexact (the seqlock busy for all of read_head's tries) is held to what
 * is exact even then; at least one must be exact. */
START_TEST(start_now_under_flood)
{
  struct tf *t = rf_file(1, 1, 1u << 16);
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c[20];
  struct writer_arg a;
  pthread_t th;
  unsigned k, polls, exact = 0;

  o.start = OCGC_START_NOW;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  a.f = &t->f;
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
    struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
    polls = 0;
    do {
      int64_t n = ocgc_cursor_poll(c[k], 0);
      ck_assert_msg(n >= 0, "cursor %u: %s", k, ocgc_strerror((int)n));
    } while (rf_stats(c[k]).behind && ++polls < 1000);
    st = rf_stats(c[k]);
    ck_assert_int_eq(st.behind, 0);
    if (st.lost_exact) {
      ck_assert_uint_eq(st.seen + st.lost + st.skipped, a.n);
      exact++;
    } else {
      ck_assert_uint_le(st.seen + st.skipped, a.n);
      fprintf(stderr, "start_now_under_flood: cursor %u started inexact\n", k);
    }
    ocgc_cursor_free(c[k]);
  }
  ck_assert_uint_ge(exact, 1);
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
    /* The producer updates at GC events, not back to back: a collection
     * takes microseconds.  (A file read by copy costs the reader three
     * system calls a try, words.c.) */
    for (k = 0; k < 20000; k++) __asm__ __volatile__("" ::: "memory");
  }
  return NULL;
}

START_TEST(totals_seqlock_consistent)
{
  struct tf *t = rf_file(1, 1, 64);
  struct ocgc_source *s;
  struct totals_arg a;
  pthread_t th;
  unsigned i, ok = 0;

  /* A live producer's: a seqlock busy for all the tries must not be read
   * as a dead producer's, final as it is (ocgc_source_seq_stuck). */
  rf_identify_as_self(t);
  s = rf_open(t, OCGC_IDS_AUTO);
  a.w = t->f.totals;
  a.stop = 0;
  ck_assert_int_eq(pthread_create(&th, NULL, totals_writer, &a), 0);
  for (i = 0; i < 50000; i++) {
    struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);
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
}
END_TEST

/* ---- seqlocks left odd ----------------------------------------------------------------- */

/* The ext ring seqlock held odd by a live producer (hostile, or preempted
 * mid-update): a poll ends early and empty, saying so, and a new cursor is
 * still made, without exact counts; when the seq moves on, reading goes on. */
START_TEST(ext_seq_stuck_odd)
{
  struct tf *t = rf_file(1, 1, 256);
  struct rec *r2 = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor *c, *c2, *c3;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);

  rf_identify_as_self(t); /* a live producer: its odd seq will change */
  pat_write_range(&t->f, 0, 0, 5);
  s = rf_open(t, OCGC_IDS_AUTO);
  c = rf_cursor_budget(s, rf_rec(), OCGC_START_OLDEST, 0, 0);
  t->f.rings[0].er->seq = 7;
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  st = rf_stats(c);
  ck_assert_int_eq(st.behind, 1);
  ck_assert_uint_eq(st.busy_polls, 1);
  c2 = rf_cursor_budget(s, r2, OCGC_START_OLDEST, 0, 0);
  ck_assert_int_eq(rf_stats(c2).lost_exact, 0);
  c3 = rf_cursor_budget(s, r2, OCGC_START_NOW, 0, 0);
  ck_assert_int_eq(rf_stats(c3).lost_exact, 0);
  t->f.rings[0].er->seq = 8;
  ck_assert_int_eq(rf_poll_all(c), 5);
  ck_assert_int_eq(rf_poll_all(c2), 5); /* from the header's head */
  ck_assert_int_eq(rf_poll_all(c3), 0); /* from the tail of then */
  pat_write_range(&t->f, 0, 5, 2);
  ck_assert_int_eq(rf_poll_all(c3), 2);
}
END_TEST

/* A producer killed between making a seqlock odd and making it even again
 * leaves it odd for ever: while it lives readers retry and give up
 * (-EAGAIN); once it is dead, the totals and the ring are read as it left
 * them. */
START_TEST(odd_seq_of_a_dead_producer)
{
  struct tf *t = rf_file(1, 1, 64);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL;
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);

  pat_write_range(&t->f, 0, 0, 100); /* wraps: head and its seqlock moved */
  t->f.totals->minor_collections = 7;
  t->f.totals->seq = 3;              /* killed inside a publication */
  t->f.rings[0].er->seq |= 1;
  rf_identify_as_self(t);
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), -EAGAIN);
  co.on_event = rec_event;
  co.ctx = r;
  co.start = OCGC_START_OLDEST;
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &c), 0); /* live: made, inexact */
  ck_assert_int_eq(rf_stats(c).lost_exact, 0);
  ocgc_cursor_free(c);
  c = NULL;

  t->f.ext->pid = rf_dead_pid();
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  ck_assert_uint_eq(tot.minor_collections, 7);
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &c), 0);
  ck_assert_int_eq(rf_stats(c).lost_exact, 1); /* dead: what it left is final */
  ck_assert_int_gt(rf_poll_all(c), 0);
  ocgc_cursor_free(c);
}
END_TEST

/* How long the first try took must not decide what a dead producer's ring
 * gives: with a budget spent before the first try gives up on the odd
 * seqlock (as on a loaded machine), the cursor still asks whether the
 * producer is dead and reads what it left exactly.  (The golden record of
 * the ocgc-ext-seq-odd fixture said lost_exact 0 under load.) */
START_TEST(dead_producer_exact_out_of_time)
{
  struct tf *t = rf_file(1, 1, 64);
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL;
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);

  pat_write_range(&t->f, 0, 0, 100);
  t->f.rings[0].er->seq |= 1; /* killed inside a publication */
  rf_identify_as_self(t);
  t->f.ext->pid = rf_dead_pid();
  s = rf_open(t, OCGC_IDS_AUTO);
  co.start = OCGC_START_OLDEST;
  co.poll_max_ns = 1; /* out of time at the first look at the clock */
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &c), 0);
  ck_assert_int_eq(rf_stats(c).lost_exact, 1);
  ocgc_cursor_free(c);
}
END_TEST

static Suite *cursor_live_suite(void)
{
  Suite *s = suite_create("cursor_live");
  TCase *tc = rf_tcase(s, "writer", 120);
  tcase_add_loop_test(tc, concurrent_writer, 0, 2);
  tcase_add_test(tc, start_now_under_flood);
  tcase_add_test(tc, totals_seqlock_consistent);

  tc = rf_tcase(s, "seqlock", 60);
  tcase_add_test(tc, ext_seq_stuck_odd);
  tcase_add_test(tc, odd_seq_of_a_dead_producer);
  tcase_add_test(tc, dead_producer_exact_out_of_time);
  return s;
}

TU_SUITE(cursor_live_suite);
