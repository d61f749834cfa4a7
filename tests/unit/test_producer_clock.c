/* test_producer_clock.c - how the runtime's clock measures the TSC's rate
 * (caml_ocgc_clock_rate, runtime_patch/src/ocgc_clock.c), on synthetic
 * clock and TSC readings:
 * - a steady TSC gives its rate after the first 20 ms, and the rate is
 *   refreshed over windows of a second, following a slewed clock;
 * - a suspend that the TSC counts through and the clock does not is a
 *   jump: the TSC stands down (clock reads) and the next window gives the
 *   true rate again.  The rate used to be measured from the process's
 *   start, and such a suspend compressed every later duration;
 * - a TSC reset (behind the window's start) keeps the rate and starts a
 *   new window. */

#define CAML_INTERNALS
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ocgc_clock.h"
#include "testutil.h"

#ifdef CAML_OCGC_HAVE_TSC

#define MS UINT64_C(1000000)
#define S UINT64_C(1000000000)

/* A 3 GHz TSC: 3 cycles per ns, scale 2^32 / 3 (32.32 ns per cycle). */
#define HZ3 3

struct sim {
  struct caml_ocgc_clock c;
  uint64_t t, tsc; /* the clock and the TSC now */
};

static void sim_start(struct sim *m)
{
  memset(m, 0, sizeof *m);
  m->t = 5 * S;
  m->tsc = UINT64_C(7000000000000);
  m->c.base_ns = m->c.anchor_ns = m->c.last = m->t;
  m->c.base_tsc = m->c.anchor_tsc = m->tsc;
  m->c.tsc_ok = 1;
}

/* Time passes: [ns] of the clock, [cycles] of the TSC; then a reading. */
static void sim_step(struct sim *m, uint64_t ns, uint64_t cycles)
{
  m->t += ns;
  m->tsc += cycles;
  caml_ocgc_clock_rate(&m->c, m->t, m->tsc);
}

/* Run steadily for [total] ns, a reading every [every] ns, at [ppm]
 * parts per million of slew of the clock against a 3 GHz TSC. */
static void sim_run(struct sim *m, uint64_t total, uint64_t every, int ppm)
{
  uint64_t done;
  for (done = 0; done < total; done += every)
    sim_step(m, every, (uint64_t)((double)every * HZ3 * (1.0 - ppm * 1e-6)));
}

/* ns per cycle the scale says, against [want], in parts per million */
static double scale_error_ppm(const struct sim *m, double want)
{
  double got = (double)m->c.scale / 4294967296.0;
  return (got - want) / want * 1e6;
}

START_TEST(test_steady_rate)
{
  struct sim m;
  sim_start(&m);
  sim_run(&m, 10 * MS, MS, 0);
  ck_assert_uint_eq(m.c.scale, 0); /* not before 20 ms */
  sim_run(&m, 20 * MS, MS, 0);
  ck_assert_uint_ne(m.c.scale, 0);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3) < 1 && scale_error_ppm(&m, 1.0 / HZ3) > -1);
  ck_assert_uint_ne(m.c.span_tsc, 0);
  /* A clock slewed by 500 ppm: followed, never taken for a jump. */
  sim_run(&m, 5 * S, 10 * MS, 500);
  ck_assert_uint_ne(m.c.scale, 0);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3 / (1 - 500e-6)) < 5);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3 / (1 - 500e-6)) > -5);
  sim_run(&m, 5 * S, 10 * MS, -500);
  ck_assert_uint_ne(m.c.scale, 0);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3 / (1 + 500e-6)) < 5);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3 / (1 + 500e-6)) > -5);
}
END_TEST

START_TEST(test_suspend_counted_by_the_tsc)
{
  struct sim m;
  sim_start(&m);
  sim_run(&m, 3 * S, 10 * MS, 0);
  ck_assert_uint_ne(m.c.scale, 0);
  /* A minute of suspend: the TSC counts it, CLOCK_MONOTONIC does not. */
  m.tsc += 60 * S * HZ3;
  sim_run(&m, 2 * S, 10 * MS, 0);
  /* The window that held the suspend was refused; the next one rated the
   * TSC right again.  (A rate from the start would be 5 s / 65 s of it.) */
  ck_assert_uint_ne(m.c.scale, 0);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3) < 1 && scale_error_ppm(&m, 1.0 / HZ3) > -1);
  /* Between the refused window and the next rating, the clock alone. */
  sim_start(&m);
  sim_run(&m, 3 * S, 10 * MS, 0);
  m.tsc += 60 * S * HZ3;
  sim_step(&m, S + 10 * MS, (S + 10 * MS) * HZ3);
  ck_assert_uint_eq(m.c.scale, 0);
  ck_assert_uint_eq(m.c.span_tsc, 0);
}
END_TEST

START_TEST(test_tsc_reset)
{
  struct sim m;
  sim_start(&m);
  sim_run(&m, 3 * S, 10 * MS, 0);
  ck_assert_uint_ne(m.c.scale, 0);
  /* A resume that reset the TSC: the rate holds, the window restarts. */
  m.tsc = 1000;
  sim_step(&m, 10 * MS, 10 * MS * HZ3);
  ck_assert_uint_ne(m.c.scale, 0);
  ck_assert_uint_eq(m.c.base_tsc, m.tsc);
  sim_run(&m, 3 * S, 10 * MS, 0);
  ck_assert(scale_error_ppm(&m, 1.0 / HZ3) < 1 && scale_error_ppm(&m, 1.0 / HZ3) > -1);
}
END_TEST

START_TEST(test_no_tsc_to_trust)
{
  struct sim m;
  sim_start(&m);
  /* 1 cycle per 100 ns: a 10 MHz "TSC" is none. */
  sim_step(&m, 30 * MS, 30 * MS / 100);
  ck_assert_uint_eq(m.c.scale, 0);
  ck_assert_uint_eq(m.c.span_tsc, 0);
}
END_TEST

static Suite *producer_clock_suite(void)
{
  Suite *s = suite_create("producer_clock");
  TCase *tc = tcase_create("rate");
  tcase_add_test(tc, test_steady_rate);
  tcase_add_test(tc, test_suspend_counted_by_the_tsc);
  tcase_add_test(tc, test_tsc_reset);
  tcase_add_test(tc, test_no_tsc_to_trust);
  suite_add_tcase(s, tc);
  return s;
}

#else /* no TSC on this architecture: the clock alone, nothing to rate */

static Suite *producer_clock_suite(void)
{
  return suite_create("producer_clock");
}

#endif

TU_SUITE(producer_clock_suite);
