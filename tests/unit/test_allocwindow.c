/* test_allocwindow.c - the allocation profile window (libconsumer/
 * allocwindow.c) on rings written here as a producer lays them out, the
 * producer's answers written by hand:
 * - a window is the delta of two copies, the window's copy the cumulative
 *   profile; a table that began anew is told, and the next window begins
 *   at the copy that found it;
 * - the rate asked is put back on every way out: after the answer, after a
 *   refusal, after no answer in time, after another request overtook ours
 *   (each an error after the request), whether by _end or by _free alone;
 *   a lease is released the same way, and a window that could not take
 *   one holds nothing;
 * - the window of a producer that did not sample begins at the copy before
 *   the ask; of one that sampled at another rate, at a copy after the
 *   answer;
 * - a bytecode program is never asked;
 * - the options rule of libconsumer/opts.h. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

#define REQ(n, rate) ((UINT64_C(n) << OCGC_MP_CONTROL_REQ_SHIFT) | (rate))

static struct ocgc_wire_mp *table_at(char *map, struct tf *t)
{
  return (struct ocgc_wire_mp *)(map + t->f.ext->totals_offset + sizeof(struct ocgc_wire_totals));
}

static struct ocgc_wire_mp_row *row_of(struct ocgc_wire_mp *m, unsigned i)
{
  return (struct ocgc_wire_mp_row *)(m + 1) + i;
}

/* A producer's table: one stack, sampling at 4096 (or [state]). */
static struct tf *producer_file(enum ocgc_mp_state state, uint64_t lease_ns)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_wire_mp *m = table_at(t->f.map, t);
  rf_identify_as_self(t); /* a producer alive: the window waits for it */
  m->size = OCGC_WIRE_MP_SIZE;
  m->rows = OCGC_MP_ROWS;
  m->row_size = sizeof(struct ocgc_wire_mp_row);
  m->depth = OCGC_MP_DEPTH;
  m->state = state;
  m->rate_bytes = state == OCGC_MP_ON ? 4096 : 0;
  m->stacks = 1;
  m->samples = 30;
  m->words = 30 * 512;
  m->reserved[OCGC_MP_LEASE_NS] = lease_ns;
  m->reserved[OCGC_MP_LEASE_BASE] = m->rate_bytes;
  row_of(m, 0)->meta = OCGC_MP_META_OVERFLOW;
  row_of(m, 1)->meta = OCGC_MP_META(1, 0, OCGC_MP_MINOR, 0);
  row_of(m, 1)->frames[0] = 0x1111;
  row_of(m, 1)->alloc = (struct ocgc_wire_mp_counts){30, 30 * 512, 30 * 1024};
  m->magic = OCGC_MP_MAGIC;
  return t;
}

/* A ring file opened: plain (a producer without leases: the rate is
 * switched), or copied into a memfd sealed as the producer's are (leases).
 * *m is the table as the producer sees it. */
static struct ocgc_source *open_ring(struct tf *t, int sealed, struct ocgc_wire_mp **m)
{
  struct ocgc_source *src = NULL;
  char *map, self[64];
  int fd;
  if (!sealed) {
    *m = table_at(t->f.map, t);
    return rf_open(t, OCGC_IDS_AUTO);
  }
  fd = (int)syscall(SYS_memfd_create, "allocwindow-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)t->f.size), 0);
  ck_assert_int_eq(pwrite(fd, t->f.map, t->f.size, 0), (ssize_t)t->f.size);
  ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  map = mmap(NULL, t->f.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert_ptr_ne(map, MAP_FAILED);
  *m = table_at(map, t);
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  ck_assert_int_eq(ocgc_source_open_path(self, NULL, &src), 0);
  close(fd);
  return src;
}

/* The producer reads the control word and does [result] with it. */
static void producer_reads(struct ocgc_wire_mp *m, enum ocgc_mp_control_result result)
{
  m->control_seen = m->control;
  m->control_result = result;
  if (result == OCGC_MP_CONTROL_APPLIED) {
    m->rate_bytes = m->control & OCGC_MP_CONTROL_RATE_MASK;
    m->state = m->rate_bytes ? OCGC_MP_ON : OCGC_MP_OFF;
  }
}

/* The producer will have applied the next request, of [rate], when it is
 * read: what the put-back finds at its first look. */
static void producer_will_apply(struct ocgc_wire_mp *m, uint64_t rate)
{
  m->control_seen = (((m->control >> OCGC_MP_CONTROL_REQ_SHIFT) + 1) << OCGC_MP_CONTROL_REQ_SHIFT) | rate;
  m->control_result = OCGC_MP_CONTROL_APPLIED;
}

static void sleep_ms(long ms)
{
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static struct ocgc_allocwindow_opts rate_opts(uint64_t rate)
{
  struct ocgc_allocwindow_opts o = OCGC_OPTS_INIT(struct ocgc_allocwindow_opts);
  o.rate_bytes = rate;
  return o;
}

START_TEST(window_is_the_delta)
{
  struct tf *t = producer_file(OCGC_MP_ON, 0);
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 0, &m);
  struct ocgc_allocwindow *w = NULL;
  struct ocgc_allocwindow_stats st = OCGC_OPTS_INIT(struct ocgc_allocwindow_stats);
  struct ocgc_memprof *d = NULL;
  ck_assert_int_eq(ocgc_allocwindow_open(src, NULL, &w, NULL), 0);
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->samples, 30);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1); /* nothing asked */
  /* the producer samples 6 more: 5 in row 1, 1 in a new stack */
  row_of(m, 1)->alloc.samples += 5;
  row_of(m, 1)->alloc.words += 5 * 512;
  row_of(m, 2)->meta = OCGC_MP_META(1, 0, OCGC_MP_MAJOR, 0);
  row_of(m, 2)->frames[0] = 0x2222;
  row_of(m, 2)->alloc = (struct ocgc_wire_mp_counts){1, 512, 1024};
  m->stacks = 2;
  m->samples += 6;
  m->words += 6 * 512;
  ck_assert_int_eq(ocgc_allocwindow_next(w, &d), 0);
  ck_assert_uint_eq(d->samples, 6);
  ck_assert_uint_eq(d->nstacks, 3);
  ck_assert_uint_eq(d->stack[1].alloc.samples, 5);
  ck_assert_uint_eq(d->stack[2].alloc.samples, 1);
  ocgc_memprof_free(d);
  /* the window's copy is the cumulative profile */
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->samples, 36);
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->nstacks, 3);
  /* the next window: nothing since */
  ck_assert_int_eq(ocgc_allocwindow_next(w, &d), 0);
  ck_assert_uint_eq(d->samples, 0);
  ck_assert_uint_eq(d->nstacks, 1); /* the overflow row only */
  ocgc_memprof_free(d);
  /* a table that began anew (a count went back): told, and the next
   * window begins at the copy that found it */
  row_of(m, 1)->alloc.samples = 1;
  m->samples = 2;
  ck_assert_int_eq(ocgc_allocwindow_next(w, &d), OCGC_E_STALE);
  ck_assert_ptr_null(d);
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->samples, 2);
  ck_assert_int_eq(ocgc_allocwindow_next(w, &d), 0);
  ck_assert_uint_eq(d->samples, 0);
  ocgc_memprof_free(d);
  /* a copy kept elsewhere against the window's */
  {
    struct ocgc_memprof *last = NULL;
    row_of(m, 1)->alloc.samples += 3;
    m->samples += 3;
    ck_assert_int_eq(ocgc_memprof_read(src, &last), 0);
    ck_assert_int_eq(ocgc_allocwindow_since(w, last, &d), 0);
    ck_assert_uint_eq(d->samples, 3);
    ck_assert_uint_eq(ocgc_allocwindow_copy(w)->samples, 2); /* not changed */
    ocgc_memprof_free(d);
    ocgc_memprof_free(last);
  }
  ck_assert_int_eq(ocgc_allocwindow_stats(w, &st), 0);
  ck_assert_int_eq(st.rate, OCGC_ALLOCWINDOW_NO_RATE);
  ck_assert_uint_eq(st.copies, 5);
  ck_assert_int_eq(ocgc_allocwindow_end(w), 0);
  ck_assert_uint_eq(m->control, 0); /* nothing asked, nothing written */
  ocgc_allocwindow_free(w);
  ocgc_allocwindow_free(NULL);
}
END_TEST

/* A producer without leases: the rate switched, and put back once the
 * window ends; the window begins at a copy after the answer. */
START_TEST(switched_put_back)
{
  struct tf *t = producer_file(OCGC_MP_ON, 0);
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 0, &m);
  struct ocgc_allocwindow_opts o = rate_opts(8192);
  struct ocgc_allocwindow *w = NULL;
  struct ocgc_allocwindow_stats st = OCGC_OPTS_INIT(struct ocgc_allocwindow_stats);
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  ck_assert_uint_eq(m->control, REQ(1, 8192));
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 0); /* not read yet */
  ck_assert_int_eq(ocgc_allocwindow_stats(w, &st), 0);
  ck_assert_int_eq(st.rate, OCGC_ALLOCWINDOW_SWITCHED);
  ck_assert_uint_eq(st.put_back_bytes, 4096);
  ck_assert_int_eq(st.answered, 0);
  /* applied; samples at the old rate meanwhile are not in the window */
  row_of(m, 1)->alloc.samples += 4;
  m->samples += 4;
  producer_reads(m, OCGC_MP_CONTROL_APPLIED);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1);
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->samples, 34);
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->rate_bytes, 8192);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1);
  producer_will_apply(m, 4096);
  ck_assert_int_eq(ocgc_allocwindow_end(w), 0);
  ck_assert_uint_eq(m->control, REQ(2, 4096));
  ck_assert_int_eq(ocgc_allocwindow_end(w), 0); /* once */
  ck_assert_uint_eq(m->control, REQ(2, 4096));
  ocgc_allocwindow_free(w); /* not again */
  ck_assert_uint_eq(m->control, REQ(2, 4096));
}
END_TEST

/* Errors after the request: each way out puts the rate back (free alone). */
START_TEST(put_back_after_errors)
{
  struct tf *t = producer_file(OCGC_MP_ON, 0);
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 0, &m);
  struct ocgc_allocwindow_opts o = rate_opts(8192);
  struct ocgc_allocwindow *w = NULL;
  uint64_t t0;

  /* refused */
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  producer_reads(m, OCGC_MP_CONTROL_REFUSED);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), -ERANGE);
  producer_will_apply(m, 4096);
  ocgc_allocwindow_free(w);
  ck_assert_uint_eq(m->control, REQ(2, 4096));

  /* overtaken: another request was read after ours */
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  ck_assert_uint_eq(m->control, REQ(3, 8192));
  m->control_seen = REQ(4, 65536);
  m->control_result = OCGC_MP_CONTROL_APPLIED;
  m->control = REQ(4, 65536);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), -ECANCELED);
  producer_will_apply(m, 4096);
  ocgc_allocwindow_free(w);
  ck_assert_uint_eq(m->control, REQ(5, 4096));

  /* never read within answer_ns: the put-back is waited for 2 s at most,
   * and written all the same */
  o.answer_ns = 1000000;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  sleep_ms(5);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), -ETIMEDOUT);
  t0 = (uint64_t)time(NULL);
  ocgc_allocwindow_free(w);
  ck_assert_uint_eq(m->control, REQ(7, 4096));
  ck_assert_uint_le((uint64_t)time(NULL) - t0, 30);

  /* the put-back refused: said by _end */
  o.answer_ns = 0;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  producer_reads(m, OCGC_MP_CONTROL_APPLIED);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1);
  m->control_seen = REQ(9, 4096);
  m->control_result = OCGC_MP_CONTROL_REFUSED;
  ck_assert_int_eq(ocgc_allocwindow_end(w), -ERANGE);
  ck_assert_uint_eq(m->control, REQ(9, 4096));
  ocgc_allocwindow_free(w);
}
END_TEST

/* A producer that did not sample: the window begins at the copy before
 * the ask (no sample of another rate can be in it, and every sample at
 * the new one is), and sampling is switched off again at the end. */
START_TEST(off_producer)
{
  struct tf *t = producer_file(OCGC_MP_OFF, 0);
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 0, &m);
  struct ocgc_allocwindow_opts o = rate_opts(8192);
  struct ocgc_allocwindow *w = NULL;
  struct ocgc_memprof *d = NULL;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  producer_reads(m, OCGC_MP_CONTROL_APPLIED);
  row_of(m, 1)->alloc.samples += 2; /* sampled as soon as it applied the rate */
  m->samples += 2;
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1);
  ck_assert_uint_eq(ocgc_allocwindow_copy(w)->samples, 30);
  ck_assert_int_eq(ocgc_allocwindow_next(w, &d), 0);
  ck_assert_uint_eq(d->samples, 2);
  ocgc_memprof_free(d);
  producer_will_apply(m, 0);
  ck_assert_int_eq(ocgc_allocwindow_end(w), 0);
  ck_assert_uint_eq(m->control, REQ(2, 0));
  ocgc_allocwindow_free(w);

  /* the rate in force already, of a producer without leases: nothing asked */
  t = producer_file(OCGC_MP_ON, 0);
  src = open_ring(t, 0, &m);
  o.rate_bytes = 4096;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1);
  ocgc_allocwindow_free(w);
  ck_assert_uint_eq(m->control, 0);
}
END_TEST

static uint64_t slot(const struct ocgc_wire_mp *m, int i)
{
  return __atomic_load_n(&m->reserved[i], __ATOMIC_SEQ_CST);
}

/* A producer with leases: the lease released on every way out. */
START_TEST(lease_released)
{
  struct tf *t = producer_file(OCGC_MP_ON, UINT64_C(10000000000));
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 1, &m);
  struct ocgc_allocwindow_opts o = rate_opts(8192);
  struct ocgc_allocwindow *w = NULL, *busy = NULL;
  struct ocgc_allocwindow_stats st = OCGC_OPTS_INIT(struct ocgc_allocwindow_stats);
  int holders[OCGC_MP_LEASE_SLOTS];
  unsigned i;

  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  ck_assert_uint_eq(OCGC_MP_LEASE_RATE(slot(m, 0)), 8192);
  ck_assert_int_eq(ocgc_allocwindow_stats(w, &st), 0);
  ck_assert_int_eq(st.rate, OCGC_ALLOCWINDOW_LEASE);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 0);
  m->reserved[OCGC_MP_LEASE_STATE] = 0x1 | OCGC_MP_LEASE_IN_FORCE;
  m->rate_bytes = 8192;
  ck_assert_int_eq(ocgc_allocwindow_answer(w), 1);
  ck_assert_int_eq(ocgc_allocwindow_renew(w), 0); /* not due */
  ck_assert_int_eq(ocgc_allocwindow_end(w), 0);
  ck_assert_uint_eq(slot(m, 0), 0);
  ck_assert_uint_eq(m->control, 0); /* a lease, never the control word */
  ocgc_allocwindow_free(w);

  /* an error after the lease was taken (no answer in time): released by
   * free alone */
  m->reserved[OCGC_MP_LEASE_STATE] = 0;
  o.answer_ns = 1000000;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), 0);
  ck_assert_uint_ne(slot(m, 0), 0);
  sleep_ms(5);
  ck_assert_int_eq(ocgc_allocwindow_answer(w), -ETIMEDOUT);
  ocgc_allocwindow_free(w);
  ck_assert_uint_eq(slot(m, 0), 0);

  /* every slot held by others: no window, nothing of ours written */
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++)
    m->reserved[i] = OCGC_MP_LEASE_WORD(65536, 4242u + i, 1);
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &busy, holders), -EBUSY);
  ck_assert_ptr_null(busy);
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++) {
    ck_assert_int_eq(holders[i], 4242 + (int)i);
    ck_assert_uint_eq(slot(m, i), OCGC_MP_LEASE_WORD(65536, 4242u + i, 1));
  }
  ocgc_source_close(src);
}
END_TEST

/* A bytecode program is never asked; bad options are refused. */
START_TEST(never_asked)
{
  struct tf *t = producer_file(OCGC_MP_UNAVAILABLE, 0);
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 0, &m);
  struct ocgc_allocwindow_opts o = rate_opts(8192);
  struct ocgc_allocwindow *w = NULL;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), -ENOTSUP);
  ck_assert_ptr_null(w);
  ck_assert_uint_eq(m->control, 0);
  /* without a rate: its (empty) profile */
  ck_assert_int_eq(ocgc_allocwindow_open(src, NULL, &w, NULL), 0);
  ck_assert_int_eq(ocgc_allocwindow_copy(w)->state, OCGC_MP_UNAVAILABLE);
  ocgc_allocwindow_free(w);
  o.rate_bytes = OCGC_MP_RATE_MIN - 1;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &o, &w, NULL), -ERANGE);
  ck_assert_int_eq(ocgc_allocwindow_open(NULL, NULL, &w, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_allocwindow_open(src, NULL, NULL, NULL), -EINVAL);
  ck_assert_uint_eq(m->control, 0);
}
END_TEST

/* The one options rule (libconsumer/opts.h): a caller's larger struct is
 * taken when zero past ours, refused when not; stats filled as far as the
 * caller's sz says. */
START_TEST(options_one_way)
{
  struct tf *t = producer_file(OCGC_MP_ON, 0);
  struct ocgc_wire_mp *m;
  struct ocgc_source *src = open_ring(t, 0, &m);
  struct ocgc_allocwindow *w = NULL;
  struct ocgc_allocwindow_stats st;
  struct {
    struct ocgc_allocwindow_opts o;
    uint64_t newer;
  } big;
  memset(&big, 0, sizeof big);
  big.o.sz = sizeof big;
  big.newer = 1;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &big.o, &w, NULL), -EINVAL);
  ck_assert_ptr_null(w);
  big.o.sz = 1;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &big.o, &w, NULL), -EINVAL);
  big.o.sz = sizeof big;
  big.newer = 0;
  ck_assert_int_eq(ocgc_allocwindow_open(src, &big.o, &w, NULL), 0);
  memset(&st, 0xff, sizeof st);
  st.sz = offsetof(struct ocgc_allocwindow_stats, rate_bytes); /* up to rate */
  ck_assert_int_eq(ocgc_allocwindow_stats(w, &st), 0);
  ck_assert_int_eq(st.rate, OCGC_ALLOCWINDOW_NO_RATE);
  ck_assert_uint_eq(st.rate_bytes, UINT64_MAX); /* past its sz: untouched */
  st.sz = sizeof st;
  ck_assert_int_eq(ocgc_allocwindow_stats(w, &st), 0);
  ck_assert_uint_eq(st.copies, 1);
  ocgc_allocwindow_free(w);
}
END_TEST

static Suite *allocwindow_suite(void)
{
  Suite *s = suite_create("allocwindow");
  TCase *tc = rf_tcase(s, "window", 60);
  tcase_add_test(tc, window_is_the_delta);
  tcase_add_test(tc, switched_put_back);
  tcase_add_test(tc, put_back_after_errors);
  tcase_add_test(tc, off_producer);
  tcase_add_test(tc, lease_released);
  tcase_add_test(tc, never_asked);
  tcase_add_test(tc, options_one_way);
  return s;
}

TU_SUITE(allocwindow_suite);
