/* test_hist.c - log-linear histograms (libconsumer/hist.c).
 *
 * Checked only through the public API, against exact answers the suite
 * computes itself: a sorted array of the very values recorded is the
 * oracle for percentiles (rank ceil(pct/100 * count), computed in integers
 * from pct = num/den) and for count_le.  The promise under test: every
 * value is reported within 0.1% and never below itself; percentile(100) is
 * the exact max; count_le never overcounts and misses only values within
 * 0.1% below its argument; min, max, sum and count are exact; values above
 * an hour are recorded as an hour and counted as clamped.  Subtracting an
 * earlier copy gives what a histogram of the interval alone reads (min and
 * max to bucket precision), and iteration agrees with count_le. */

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocgc/consumer.h"
#include "ocgc/expo.h"
#include "testutil.h"

#define HOUR UINT64_C(3600000000000)

/* ---- helpers ------------------------------------------------------------------ */

static struct ocgc_hist *hist(void)
{
  struct ocgc_hist *h = NULL;
  ck_assert_int_eq(ocgc_hist_new(&h), 0);
  ck_assert_ptr_nonnull(h);
  return h;
}

static uint64_t clamp_hour(uint64_t v)
{
  return v > HOUR ? HOUR : v;
}

/* r reports v: not below it, at most 0.1% above.  v <= HOUR, so no overflow. */
static int within(uint64_t r, uint64_t v)
{
  return r >= v && r - v <= v && (r - v) * 1000 <= v;
}

/* A fixed-seed generator, the same on every libc (splitmix64). */
static uint64_t next_rand(uint64_t *s)
{
  uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Log-uniform in [1, hi]. */
static uint64_t log_uniform(uint64_t *s, double hi)
{
  double u = (double)(next_rand(s) >> 11) * 0x1p-53;
  return (uint64_t)exp(u * log(hi));
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Number of values <= x in sorted[0..n). */
static uint64_t exact_le(const uint64_t *sorted, size_t n, uint64_t x)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ceil(num/den / 100 * count), at least 1, in integers. */
static uint64_t exact_rank(uint64_t num, uint64_t den, uint64_t count)
{
  uint64_t r = (num * count + den * 100 - 1) / (den * 100);
  return r ? r : 1;
}

/* Percentiles every oracle check asks for, as num/den percent: 0.0, 0.1, ...
 * 100.0, and the tails. */
struct pct {
  uint64_t num, den;
};
static const struct pct tails[] = {
  {50, 1}, {75, 1}, {90, 1}, {95, 1}, {99, 1}, {999, 10}, {9999, 100}, {99999, 1000},
  {999999, 10000}, {1, 1000}, {100, 3}, {200, 3}, {1, 7},
};

static void check_pct(const struct ocgc_hist *h, const uint64_t *sorted, size_t n, uint64_t num,
                      uint64_t den)
{
  uint64_t rank = exact_rank(num, den, n), v = sorted[rank - 1];
  uint64_t r = ocgc_hist_percentile(h, (double)num / (double)den);
  TU_CHECK(within(r, v), "p%" PRIu64 "/%" PRIu64 ": %" PRIu64 " reports %" PRIu64, num, den, v, r);
  TU_CHECK(r <= ocgc_hist_max(h), "p%" PRIu64 "/%" PRIu64 " above max", num, den);
  /* percentile and count_le see the same buckets */
  TU_CHECK(ocgc_hist_count_le(h, r) >= rank, "count_le(p%" PRIu64 "/%" PRIu64 ") below rank",
           num, den);
  TU_CHECK(r == 0 || ocgc_hist_count_le(h, r - 1) < rank,
           "count_le(p%" PRIu64 "/%" PRIu64 " - 1) reaches the rank", num, den);
}

/* count_le(ns): 0 below min, count from max on, non-decreasing, never more
 * than the exact count, never less than the values 0.1% or more below ns. */
static void check_le(const struct ocgc_hist *h, const uint64_t *sorted, size_t n, uint64_t ns,
                     uint64_t *prev)
{
  uint64_t got = ocgc_hist_count_le(h, ns);
  TU_CHECK(got >= *prev, "count_le not monotone at %" PRIu64, ns);
  *prev = got;
  if (ns >= sorted[n - 1]) {
    TU_CHECK(got == n, "count_le(%" PRIu64 ") = %" PRIu64 ", not count", ns, got);
    return;
  }
  if (ns < sorted[0]) TU_CHECK(got == 0, "count_le below min = %" PRIu64, got);
  TU_CHECK(got <= exact_le(sorted, n, ns), "count_le(%" PRIu64 ") overcounts", ns);
  TU_CHECK(got >= exact_le(sorted, n, ns * 1000 / 1001),
           "count_le(%" PRIu64 ") = %" PRIu64 " misses more than the 0.1%% band", ns, got);
}

/* Everything the histogram says about the (clamped) values sorted[0..n). */
static void check_oracle(const struct ocgc_hist *h, const uint64_t *sorted, size_t n)
{
  uint64_t sum = 0, k, prev = 0, ns;
  size_t i, np = 0;
  uint64_t *probes;

  for (i = 0; i < n; i++) sum += sorted[i];
  ck_assert_uint_eq(ocgc_hist_count(h), n);
  ck_assert_uint_eq(ocgc_hist_min(h), sorted[0]);
  ck_assert_uint_eq(ocgc_hist_max(h), sorted[n - 1]);
  ck_assert_uint_eq(ocgc_hist_sum(h), sum);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100), sorted[n - 1]);

  for (k = 0; k <= 1000; k++) check_pct(h, sorted, n, k, 10);
  for (i = 0; i < sizeof tails / sizeof tails[0]; i++)
    check_pct(h, sorted, n, tails[i].num, tails[i].den);

  /* count_le at the values themselves, their neighbours, and a grid */
  probes = malloc(sizeof *probes * 8000);
  ck_assert_ptr_nonnull(probes);
  for (i = 0; i < 1000; i++) {
    uint64_t v = sorted[i * n / 1000];
    probes[np++] = v;
    probes[np++] = v + 1;
    probes[np++] = v ? v - 1 : 0;
    probes[np++] = v + v / 1000;
  }
  for (ns = 1; ns < 2 * HOUR; ns = ns + ns / 50 + 1) probes[np++] = ns;
  probes[np++] = 0;
  probes[np++] = UINT64_MAX;
  ck_assert_uint_le(np, 8000);
  qsort(probes, np, sizeof *probes, cmp_u64);
  for (i = 0; i < np; i++) check_le(h, sorted, n, probes[i], &prev);
  free(probes);
}

/* a and b hold the same data, as far as every reader can tell. */
static void check_same_now(const struct ocgc_hist *a, const struct ocgc_hist *b)
{
  uint64_t k, ns;
  ck_assert_uint_eq(ocgc_hist_count(a), ocgc_hist_count(b));
  ck_assert_uint_eq(ocgc_hist_min(a), ocgc_hist_min(b));
  ck_assert_uint_eq(ocgc_hist_max(a), ocgc_hist_max(b));
  ck_assert_uint_eq(ocgc_hist_sum(a), ocgc_hist_sum(b));
  ck_assert_uint_eq(ocgc_hist_clamped(a), ocgc_hist_clamped(b));
  for (k = 0; k <= 1000; k++) {
    double p = (double)k / 10;
    uint64_t ra = ocgc_hist_percentile(a, p);
    TU_CHECK(ra == ocgc_hist_percentile(b, p), "percentile(%g) differs", p);
    TU_CHECK(ocgc_hist_count_le(a, ra) == ocgc_hist_count_le(b, ra),
             "count_le(%" PRIu64 ") differs", ra);
  }
  for (ns = 0; ns < 2 * HOUR; ns = ns + ns / 100 + 1)
    TU_CHECK(ocgc_hist_count_le(a, ns) == ocgc_hist_count_le(b, ns),
             "count_le(%" PRIu64 ") differs", ns);
}

/* No reader looks into the bucket of max (percentile and count_le know it
 * holds the rest), so compare again with an hour added to both, which
 * makes that bucket an inner one. */
static void check_same(const struct ocgc_hist *a, const struct ocgc_hist *b)
{
  struct ocgc_hist *a2, *b2;
  check_same_now(a, b);
  ck_assert_int_eq(ocgc_hist_new(&a2), 0);
  ck_assert_int_eq(ocgc_hist_new(&b2), 0);
  ck_assert_int_eq(ocgc_hist_copy(a2, a), 0);
  ck_assert_int_eq(ocgc_hist_merge(b2, b), 0);
  ocgc_hist_record(a2, HOUR);
  ocgc_hist_record(b2, HOUR);
  check_same_now(a2, b2);
  ocgc_hist_free(a2);
  ocgc_hist_free(b2);
}

static void check_empty(const struct ocgc_hist *h)
{
  ck_assert_uint_eq(ocgc_hist_count(h), 0);
  ck_assert_uint_eq(ocgc_hist_min(h), 0);
  ck_assert_uint_eq(ocgc_hist_max(h), 0);
  ck_assert_uint_eq(ocgc_hist_sum(h), 0);
  ck_assert_uint_eq(ocgc_hist_clamped(h), 0);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 0), 0);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 50), 0);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100), 0);
  ck_assert_uint_eq(ocgc_hist_count_le(h, 0), 0);
  ck_assert_uint_eq(ocgc_hist_count_le(h, UINT64_MAX), 0);
}

/* ---- basics ------------------------------------------------------------------- */

START_TEST(empty_histogram)
{
  struct ocgc_hist *h = hist();
  check_empty(h);
  ck_assert_uint_eq(ocgc_hist_percentile(h, -1), 0);
  ck_assert_uint_eq(ocgc_hist_percentile(h, NAN), 0);
  ocgc_hist_reset(h);
  check_empty(h);
  ocgc_hist_free(h);
}
END_TEST

START_TEST(null_arguments)
{
  struct ocgc_hist *h = hist();
  ck_assert_int_eq(ocgc_hist_new(NULL), -EINVAL);
  ck_assert_int_eq(ocgc_hist_merge(NULL, h), -EINVAL);
  ck_assert_int_eq(ocgc_hist_merge(h, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_hist_copy(NULL, h), -EINVAL);
  ck_assert_int_eq(ocgc_hist_copy(h, NULL), -EINVAL);
  /* mutators ignore NULL; readers see an empty histogram */
  ocgc_hist_record(NULL, 5);
  ocgc_hist_record_n(NULL, 5, 3);
  ocgc_hist_reset(NULL);
  ocgc_hist_free(NULL);
  check_empty(NULL);
  check_empty(h);
  ocgc_hist_free(h);
}
END_TEST

/* One value alone, across the whole range: reported exactly (the bucket's
 * top is capped at max, which is the value), clamped above an hour. */
START_TEST(single_values)
{
  static const uint64_t vals[] = {
    0, 1, 2, 3, 999, 1000, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097,
    1000000, UINT64_C(1000000007), UINT64_C(1000000000), HOUR - 1, HOUR, HOUR + 1,
    UINT64_C(1) << 42, UINT64_C(1000000000000000), UINT64_MAX,
  };
  struct ocgc_hist *h = hist();
  size_t i;
  for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    uint64_t v = vals[i], e = clamp_hour(v);
    ocgc_hist_reset(h);
    ocgc_hist_record(h, v);
    ck_assert_uint_eq(ocgc_hist_count(h), 1);
    ck_assert_uint_eq(ocgc_hist_min(h), e);
    ck_assert_uint_eq(ocgc_hist_max(h), e);
    ck_assert_uint_eq(ocgc_hist_sum(h), e);
    ck_assert_uint_eq(ocgc_hist_clamped(h), v > HOUR);
    ck_assert_uint_eq(ocgc_hist_percentile(h, 0), e);
    ck_assert_uint_eq(ocgc_hist_percentile(h, 50), e);
    ck_assert_uint_eq(ocgc_hist_percentile(h, 100), e);
    ck_assert_uint_eq(ocgc_hist_count_le(h, e), 1);
    if (e) ck_assert_uint_eq(ocgc_hist_count_le(h, e - 1), 0);
  }
  ocgc_hist_free(h);
}
END_TEST

/* The bucket geometry, value by value: with v and a larger value recorded,
 * percentile(0) is the top of v's bucket, uncapped.  It must be within
 * 0.1% of v, count_le must step from 0 to 1 exactly there, and values
 * between v and that top share the bucket.  Every value up to 20000, the
 * edges of every power of two, and a fine geometric sweep to an hour. */
static void check_bucket_of(struct ocgc_hist *h, uint64_t v, uint64_t *top_seen)
{
  uint64_t big = clamp_hour(2 * v + 2), top;
  ocgc_hist_reset(h);
  ocgc_hist_record(h, v);
  ocgc_hist_record(h, big);
  top = ocgc_hist_percentile(h, 0);
  TU_CHECK(within(top, v), "%" PRIu64 " reported as %" PRIu64, v, top);
  if (top < big) {
    /* top is the last value of v's bucket, top + 1 the first of the next */
    ocgc_hist_reset(h);
    ocgc_hist_record(h, top);
    ocgc_hist_record(h, big);
    TU_CHECK(ocgc_hist_percentile(h, 0) == top, "top of %" PRIu64 " is not its own top", v);
    ocgc_hist_reset(h);
    ocgc_hist_record(h, top + 1);
    ocgc_hist_record(h, big + 2);
    TU_CHECK(ocgc_hist_percentile(h, 0) > top, "top of %" PRIu64 " + 1 in the same bucket", v);
    ocgc_hist_reset(h);
    ocgc_hist_record(h, v);
    ocgc_hist_record(h, big);
    TU_CHECK(ocgc_hist_count_le(h, top) == 1, "count_le(top of %" PRIu64 ") != 1", v);
    TU_CHECK(top == 0 || ocgc_hist_count_le(h, top - 1) == 0,
             "count_le(top of %" PRIu64 " - 1) != 0", v);
    /* increasing v: a v not past the last top is in the same bucket */
    if (top_seen) {
      TU_CHECK(v > *top_seen || top == *top_seen, "%" PRIu64 " splits a bucket", v);
      *top_seen = top;
    }
  } else {
    TU_CHECK(top == HOUR, "%" PRIu64 " shares the hour's bucket but reports %" PRIu64, v, top);
  }
}

START_TEST(geometry_sweep)
{
  struct ocgc_hist *h = hist();
  uint64_t v, top = 0;
  unsigned m;
  int d;
  for (v = 0; v <= 20000; v++) check_bucket_of(h, v, &top);
  for (v = 20000; v <= HOUR; v = v + v / 2000 + 1) check_bucket_of(h, v, &top);
  for (m = 2; m <= 41; m++)
    for (d = -3; d <= 3; d++)
      check_bucket_of(h, (UINT64_C(1) << m) + (uint64_t)(int64_t)d, NULL);
  for (v = HOUR - 5; v <= HOUR; v++) check_bucket_of(h, v, NULL);
  ocgc_hist_free(h);
}
END_TEST

START_TEST(zero_values)
{
  struct ocgc_hist *h = hist();
  ocgc_hist_record(h, 0);
  ocgc_hist_record_n(h, 0, 2);
  ocgc_hist_record(h, 5);
  ck_assert_uint_eq(ocgc_hist_count(h), 4);
  ck_assert_uint_eq(ocgc_hist_min(h), 0);
  ck_assert_uint_eq(ocgc_hist_sum(h), 5);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 0), 0);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 75), 0);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 76), 5);
  ck_assert_uint_eq(ocgc_hist_count_le(h, 0), 3);
  ck_assert_uint_eq(ocgc_hist_count_le(h, 4), 3);
  ck_assert_uint_eq(ocgc_hist_count_le(h, 5), 4);
  ocgc_hist_free(h);
}
END_TEST

START_TEST(clamping)
{
  struct ocgc_hist *h = hist();
  ocgc_hist_record(h, 1000);
  ocgc_hist_record(h, HOUR);         /* an hour is in range */
  ocgc_hist_record(h, HOUR + 1);
  ocgc_hist_record_n(h, UINT64_MAX, 3);
  ck_assert_uint_eq(ocgc_hist_count(h), 6);
  ck_assert_uint_eq(ocgc_hist_clamped(h), 4);
  ck_assert_uint_eq(ocgc_hist_max(h), HOUR);
  ck_assert_uint_eq(ocgc_hist_sum(h), 1000 + 5 * HOUR);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100), HOUR);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 16), 1000); /* rank 1 of 6 */
  ck_assert_uint_eq(ocgc_hist_percentile(h, 50), HOUR);
  ck_assert_uint_eq(ocgc_hist_count_le(h, HOUR), 6);
  ck_assert_uint_eq(ocgc_hist_count_le(h, HOUR - HOUR / 1000), 1);
  ocgc_hist_free(h);
}
END_TEST

/* ---- percentiles --------------------------------------------------------------- */

/* Below 2048 buckets are exact, so the rank rule shows through: rank =
 * ceil(pct/100 * count) even when pct (99.9, 100/3) has no exact binary
 * form and the product lands a hair above an integer. */
START_TEST(percentile_rank_rule)
{
  struct ocgc_hist *h = hist();
  uint64_t v, k;
  for (v = 1; v <= 1000; v++) ocgc_hist_record(h, v);
  for (k = 0; k <= 1000; k++) {
    uint64_t want = k ? k : 1;
    uint64_t got = ocgc_hist_percentile(h, (double)k / 10);
    TU_CHECK(got == want, "1..1000: p%g = %" PRIu64 ", want %" PRIu64, (double)k / 10, got, want);
  }
  ck_assert_uint_eq(ocgc_hist_percentile(h, 99.9), 999);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 0.1), 1);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 0.15), 2);

  ocgc_hist_reset(h);
  for (v = 1; v <= 2000; v++) ocgc_hist_record(h, v);
  for (k = 0; k <= 10000; k++) {
    uint64_t want = exact_rank(k, 100, 2000);
    uint64_t got = ocgc_hist_percentile(h, (double)k / 100);
    TU_CHECK(got == want, "1..2000: p%g = %" PRIu64 ", want %" PRIu64, (double)k / 100, got, want);
  }

  ocgc_hist_reset(h);
  ocgc_hist_record(h, 10);
  ocgc_hist_record(h, 20);
  ocgc_hist_record(h, 30);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100.0 / 3), 10);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 34), 20);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 200.0 / 3), 20);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 66.67), 30);
  ocgc_hist_free(h);
}
END_TEST

START_TEST(percentile_out_of_range)
{
  struct ocgc_hist *h = hist();
  uint64_t v;
  for (v = 1000; v <= 1000000; v += 1000) ocgc_hist_record(h, v);
  ck_assert_uint_eq(ocgc_hist_percentile(h, -1), ocgc_hist_percentile(h, 0));
  ck_assert_uint_eq(ocgc_hist_percentile(h, -INFINITY), ocgc_hist_percentile(h, 0));
  ck_assert_uint_eq(ocgc_hist_percentile(h, NAN), ocgc_hist_percentile(h, 0));
  ck_assert(within(ocgc_hist_percentile(h, 0), 1000));
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100), 1000000);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100.5), 1000000);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 1e300), 1000000);
  ck_assert_uint_eq(ocgc_hist_percentile(h, INFINITY), 1000000);
  ocgc_hist_free(h);
}
END_TEST

/* 1..1e6 step 1, then 1..~1e9 step 997: the usual percentiles against the
 * sorted values. */
START_TEST(uniform_sweeps)
{
  static const uint64_t steps[] = {1, 997};
  const size_t n = 1000000;
  uint64_t *vals = malloc(n * sizeof *vals);
  struct ocgc_hist *h = hist();
  size_t i, s;
  ck_assert_ptr_nonnull(vals);
  for (s = 0; s < 2; s++) {
    ocgc_hist_reset(h);
    for (i = 0; i < n; i++) {
      vals[i] = 1 + i * steps[s];
      ocgc_hist_record(h, vals[i]);
    }
    check_oracle(h, vals, n);
  }
  ocgc_hist_free(h);
  free(vals);
}
END_TEST

/* 100k log-uniform values in [1, 1e13] (about 3% above an hour) plus some
 * zeros, and a pause-like mix (a 50 us body with a 5 ms tail), fixed seeds. */
static void random_run(uint64_t seed, int pauses)
{
  const size_t n = 100000;
  uint64_t *vals = malloc(n * sizeof *vals), clamped = 0;
  struct ocgc_hist *h = hist();
  size_t i;
  ck_assert_ptr_nonnull(vals);
  for (i = 0; i < n; i++) {
    uint64_t v, r = next_rand(&seed);
    if (pauses)
      v = r % 10 ? 30000 + r % 40000 : 1000000 + log_uniform(&seed, 9e6);
    else
      v = r % 1000 ? log_uniform(&seed, 1e13) : 0;
    ocgc_hist_record(h, v);
    clamped += v > HOUR;
    vals[i] = clamp_hour(v);
  }
  qsort(vals, n, sizeof *vals, cmp_u64);
  ck_assert_uint_eq(ocgc_hist_clamped(h), clamped);
  if (!pauses) ck_assert_uint_gt(clamped, 0);
  check_oracle(h, vals, n);
  ocgc_hist_free(h);
  free(vals);
}

START_TEST(random_log_uniform)
{
  random_run(UINT64_C(0x0c9c0001), 0);
  random_run(UINT64_C(0x0c9c0002), 0);
}
END_TEST

START_TEST(random_pauses)
{
  random_run(UINT64_C(0x0c9c0003), 1);
}
END_TEST

/* ---- record_n, merge, copy, reset ---------------------------------------------- */

START_TEST(record_n_equals_records)
{
  static const uint64_t vals[] = {0, 1, 1500, 2048, 99999, 123456789, HOUR, HOUR + 7};
  static const uint64_t ns[] = {1, 2, 7, 1000, 3, 250, 4, 2};
  struct ocgc_hist *a = hist(), *b = hist(), *c = hist();
  size_t i;
  uint64_t k;
  for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    for (k = 0; k < ns[i]; k++) ocgc_hist_record(a, vals[i]);
    ocgc_hist_record_n(b, vals[i], ns[i]);
  }
  check_same(a, b);
  /* n == 0 records nothing, not even a new min or max */
  ocgc_hist_reset(b);
  ocgc_hist_record_n(b, 77777, 0);
  check_empty(b);
  ocgc_hist_record(b, 1000);
  ocgc_hist_record(b, 2000);
  ck_assert_int_eq(ocgc_hist_copy(c, b), 0);
  ocgc_hist_record_n(b, 1, 0);
  ocgc_hist_record_n(b, UINT64_MAX, 0);
  check_same(b, c);
  ck_assert_uint_eq(ocgc_hist_min(b), 1000);
  ck_assert_uint_eq(ocgc_hist_max(b), 2000);
  ocgc_hist_free(a);
  ocgc_hist_free(b);
  ocgc_hist_free(c);
}
END_TEST

/* Counts, clamped and sum stop at UINT64_MAX instead of wrapping. */
START_TEST(saturation)
{
  struct ocgc_hist *h = hist(), *g = hist();
  ocgc_hist_record_n(h, HOUR, UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_count(h), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_sum(h), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_clamped(h), 0);
  ocgc_hist_record(h, 1);
  ck_assert_uint_eq(ocgc_hist_count(h), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_sum(h), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_min(h), 1);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 0), 1);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 50), HOUR);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100), HOUR);
  ck_assert_uint_eq(ocgc_hist_count_le(h, 1), 1);
  ck_assert_uint_eq(ocgc_hist_count_le(h, HOUR), UINT64_MAX);
  ocgc_hist_record_n(h, HOUR + 1, UINT64_MAX);
  ocgc_hist_record_n(h, HOUR + 1, 5);
  ck_assert_uint_eq(ocgc_hist_clamped(h), UINT64_MAX);
  /* a sum overflowing by a product alone */
  ocgc_hist_record_n(g, UINT64_C(1) << 40, UINT64_C(1) << 30);
  ck_assert_uint_eq(ocgc_hist_sum(g), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_count(g), UINT64_C(1) << 30);
  ck_assert_int_eq(ocgc_hist_merge(h, g), 0);
  ck_assert_uint_eq(ocgc_hist_count(h), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 100), HOUR);
  ocgc_hist_free(h);
  ocgc_hist_free(g);
}
END_TEST

static void fill_random(struct ocgc_hist *h1, struct ocgc_hist *h2, uint64_t seed, size_t n,
                        double lo, double hi)
{
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t v = (uint64_t)lo + log_uniform(&seed, hi - lo);
    ocgc_hist_record(h1, v);
    if (h2) ocgc_hist_record(h2, v);
  }
}

START_TEST(merge_equals_recording_both)
{
  struct ocgc_hist *a = hist(), *b = hist(), *both = hist(), *b2 = hist(), *e = hist();
  fill_random(a, both, 11, 5000, 1, 1e6);
  fill_random(b, both, 12, 5000, 1e5, 1e13); /* overlaps a, some clamped */
  fill_random(b2, NULL, 12, 5000, 1e5, 1e13);
  ck_assert_int_eq(ocgc_hist_merge(a, b), 0);
  check_same(a, both);
  check_same(b, b2); /* src untouched */
  ck_assert_uint_gt(ocgc_hist_clamped(a), 0);

  /* empty on either side */
  ck_assert_int_eq(ocgc_hist_merge(a, e), 0);
  check_same(a, both);
  ck_assert_int_eq(ocgc_hist_merge(e, b), 0);
  check_same(e, b);

  /* into itself: everything twice */
  ocgc_hist_reset(both);
  fill_random(both, NULL, 12, 5000, 1e5, 1e13);
  fill_random(both, NULL, 12, 5000, 1e5, 1e13);
  ck_assert_int_eq(ocgc_hist_merge(b, b), 0);
  check_same(b, both);

  ocgc_hist_free(a);
  ocgc_hist_free(b);
  ocgc_hist_free(both);
  ocgc_hist_free(b2);
  ocgc_hist_free(e);
}
END_TEST

/* Copy over a histogram with other data (a wider span), then diverge. */
START_TEST(copy_replaces)
{
  struct ocgc_hist *src = hist(), *dst = hist(), *ref = hist(), *e = hist();
  fill_random(src, ref, 21, 3000, 1000, 1e7);
  ocgc_hist_record(dst, 0);
  ocgc_hist_record(dst, 5000);
  ocgc_hist_record(dst, HOUR + 1);
  ck_assert_int_eq(ocgc_hist_copy(dst, src), 0);
  check_same(dst, ref);
  ocgc_hist_record(src, 42);
  check_same(dst, ref);
  ck_assert_int_eq(ocgc_hist_copy(dst, dst), 0);
  check_same(dst, ref);

  /* copying an empty one empties: no stale bucket shows once the span is
   * wide again */
  ck_assert_int_eq(ocgc_hist_copy(dst, e), 0);
  check_empty(dst);
  ocgc_hist_record(dst, 1);
  ocgc_hist_record(dst, HOUR);
  ck_assert_uint_eq(ocgc_hist_count_le(dst, HOUR / 2), 1);
  ck_assert_uint_eq(ocgc_hist_percentile(dst, 50), 1);
  ck_assert_uint_eq(ocgc_hist_percentile(dst, 51), HOUR);
  ocgc_hist_free(src);
  ocgc_hist_free(dst);
  ocgc_hist_free(ref);
  ocgc_hist_free(e);
}
END_TEST

/* Copy onto a histogram whose span lies every way around the source's
 * (wider on both sides, on one, overlapping, disjoint below and above):
 * once both are widened to the whole range, no bucket of the old data is
 * left, whatever part of it the copy cleared or wrote over. */
START_TEST(copy_over_any_span)
{
  static const uint64_t spans[][2] = {
    {10, 1000000000}, {10, 60000}, {40000, 1000000000}, {45000, 52000},
    {10, 20}, {900000000, 1000000000}, {50000, 50000},
  };
  size_t i;
  for (i = 0; i < sizeof spans / sizeof spans[0]; i++) {
    struct ocgc_hist *src = hist(), *dst = hist(), *ref = hist();
    uint64_t v;
    for (v = 50000; v <= 55000; v += 7) ocgc_hist_record(src, v);
    for (v = spans[i][0]; v <= spans[i][1]; v += (spans[i][1] - spans[i][0]) / 97 + 1)
      ocgc_hist_record(dst, v);
    ocgc_hist_record(dst, spans[i][1]);
    ck_assert_int_eq(ocgc_hist_copy(dst, src), 0);
    ck_assert_int_eq(ocgc_hist_copy(ref, src), 0);
    ocgc_hist_record(dst, 0);
    ocgc_hist_record(ref, 0);
    ocgc_hist_record(dst, HOUR);
    ocgc_hist_record(ref, HOUR);
    check_same(dst, ref);
    ocgc_hist_free(src);
    ocgc_hist_free(dst);
    ocgc_hist_free(ref);
  }
}
END_TEST

START_TEST(reset_clears)
{
  struct ocgc_hist *h = hist();
  ocgc_hist_record(h, 1000);
  ocgc_hist_record(h, 5000);
  ocgc_hist_record(h, 1000000);
  ocgc_hist_record(h, HOUR + 1);
  ocgc_hist_reset(h);
  check_empty(h);
  /* min and max start afresh, and no stale bucket counts */
  ocgc_hist_record(h, 1);
  ocgc_hist_record(h, HOUR);
  ck_assert_uint_eq(ocgc_hist_min(h), 1);
  ck_assert_uint_eq(ocgc_hist_max(h), HOUR);
  ck_assert_uint_eq(ocgc_hist_count(h), 2);
  ck_assert_uint_eq(ocgc_hist_sum(h), HOUR + 1);
  ck_assert_uint_eq(ocgc_hist_clamped(h), 0);
  ck_assert_uint_eq(ocgc_hist_count_le(h, 2000000), 1);
  ck_assert_uint_eq(ocgc_hist_percentile(h, 51), HOUR);
  ocgc_hist_free(h);
}
END_TEST

/* ---- subtraction and iteration -------------------------------------------------------- */

/* Walk [h]'s buckets and check what ocgc_hist_iter promises: increasing,
 * non-overlapping, cumulative, agreeing with count_le; and, against the
 * values recorded (sorted[0..n), clamped), that each bucket holds exactly
 * the values between its bounds.  Returns the number of buckets. */
static unsigned check_iter(const struct ocgc_hist *h, const uint64_t *sorted, size_t n)
{
  struct ocgc_hist_iter it;
  uint64_t total = 0, prev_high = 0;
  unsigned buckets = 0;
  ck_assert_int_eq(ocgc_hist_iter_init(&it, h), 0);
  while (ocgc_hist_iter_next(&it)) {
    TU_CHECK(it.count > 0, "an empty bucket at %" PRIu64, it.lowest);
    TU_CHECK(it.lowest <= it.highest, "bucket %" PRIu64 " upside down", it.lowest);
    TU_CHECK(buckets == 0 || it.lowest > prev_high, "bucket %" PRIu64 " not increasing",
             it.lowest);
    /* its width keeps the 0.1% promise */
    TU_CHECK(it.highest - it.lowest <= it.lowest / 1000, "bucket %" PRIu64 " too wide",
             it.lowest);
    total += it.count;
    TU_CHECK(it.cumulative == total, "cumulative %" PRIu64 " != %" PRIu64, it.cumulative, total);
    TU_CHECK(ocgc_hist_count_le(h, it.highest) == it.cumulative, "count_le(%" PRIu64 ")",
             it.highest);
    TU_CHECK(it.lowest == 0 || ocgc_hist_count_le(h, it.lowest - 1) == total - it.count,
             "count_le(%" PRIu64 " - 1)", it.lowest);
    if (sorted != NULL)
      TU_CHECK(exact_le(sorted, n, it.highest) -
                       (it.lowest ? exact_le(sorted, n, it.lowest - 1) : 0) == it.count,
               "bucket %" PRIu64 " holds other values", it.lowest);
    prev_high = it.highest;
    buckets++;
  }
  ck_assert_uint_eq(total, ocgc_hist_count(h));
  ck_assert_int_eq(ocgc_hist_iter_next(&it), 0); /* and stays done */
  return buckets;
}

START_TEST(iterate_buckets)
{
  struct ocgc_hist *h = hist();
  struct ocgc_hist_iter it;
  uint64_t seed = 41, *vals = malloc(sizeof *vals * 20000);
  size_t i;
  ck_assert_ptr_nonnull(vals);
  ck_assert_int_eq(ocgc_hist_iter_init(NULL, h), -EINVAL);
  ck_assert_int_eq(ocgc_hist_iter_next(NULL), 0);
  ck_assert_uint_eq(check_iter(h, NULL, 0), 0);
  ck_assert_uint_eq(check_iter(NULL, NULL, 0), 0);
  /* one value: one bucket, around it */
  ocgc_hist_record(h, 123456789);
  ocgc_hist_iter_init(&it, h);
  ck_assert_int_eq(ocgc_hist_iter_next(&it), 1);
  ck_assert_uint_le(it.lowest, 123456789);
  ck_assert_uint_ge(it.highest, 123456789);
  ck_assert_uint_eq(it.count, 1);
  ck_assert_int_eq(ocgc_hist_iter_next(&it), 0);
  /* every range, the extremes and clamped values included */
  ocgc_hist_reset(h);
  for (i = 0; i < 20000; i++) {
    vals[i] = i < 3 ? (uint64_t[]){0, 1, HOUR + 5}[i] : log_uniform(&seed, 2e12);
    ocgc_hist_record(h, vals[i]);
    vals[i] = clamp_hour(vals[i]);
  }
  qsort(vals, 20000, sizeof *vals, cmp_u64);
  ck_assert_uint_gt(check_iter(h, vals, 20000), 1000);
  free(vals);
  ocgc_hist_free(h);
}
END_TEST

/* percentile(p) of the interval read from a difference and from a
 * histogram that recorded only the interval: the same bucket, and the very
 * same value below the top bucket (there the difference knows its max
 * only by bucket). */
static void check_pct_as_interval(const struct ocgc_hist *diff, const struct ocgc_hist *iv)
{
  struct ocgc_hist_iter it;
  uint64_t k, top_low = 0;
  ocgc_hist_iter_init(&it, iv);
  while (ocgc_hist_iter_next(&it)) top_low = it.lowest;
  for (k = 0; k <= 1000; k++) {
    double p = (double)k / 10;
    uint64_t a = ocgc_hist_percentile(diff, p), b = ocgc_hist_percentile(iv, p);
    TU_CHECK(a == b || (a >= top_low && b >= top_low && within(a, b)),
             "p%g: %" PRIu64 " from the difference, %" PRIu64 " from the interval", p, a, b);
  }
}

/* Both hold the same buckets (bounds, counts, cumulative). */
static void check_same_buckets(const struct ocgc_hist *a, const struct ocgc_hist *b)
{
  struct ocgc_hist_iter ia, ib;
  int more;
  ocgc_hist_iter_init(&ia, a);
  ocgc_hist_iter_init(&ib, b);
  do {
    more = ocgc_hist_iter_next(&ia);
    TU_CHECK(more == ocgc_hist_iter_next(&ib), "not as many buckets");
    TU_CHECK(!more || (ia.lowest == ib.lowest && ia.highest == ib.highest &&
                       ia.count == ib.count && ia.cumulative == ib.cumulative),
             "bucket %" PRIu64 " differs", ia.lowest);
  } while (more);
}

/* cum = before + interval; copy(cum) - before == interval, as the
 * interval alone records it.  [wider]: the interval holds a new min and a
 * new max, so even those are exact; else they lie inside before's range
 * and are known by bucket. */
static void sub_run(uint64_t seed, int wider)
{
  struct ocgc_hist *cum = hist(), *before = hist(), *iv = hist(), *diff = hist();
  uint64_t *vals = malloc(sizeof *vals * 4000), lo = wider ? 50 : 1000, hi = wider ? 2e13 : 1e9;
  size_t i;
  ck_assert_ptr_nonnull(vals);
  fill_random(cum, NULL, seed, 5000, 100, 1e10);
  ck_assert_int_eq(ocgc_hist_copy(before, cum), 0);
  for (i = 0; i < 4000; i++) {
    vals[i] = lo + log_uniform(&seed, (double)(hi - lo));
    ocgc_hist_record(cum, vals[i]);
    ocgc_hist_record(iv, vals[i]);
    vals[i] = clamp_hour(vals[i]);
  }
  qsort(vals, 4000, sizeof *vals, cmp_u64);
  ck_assert_int_eq(ocgc_hist_copy(diff, cum), 0);
  ck_assert_int_eq(ocgc_hist_sub(diff, before), 0);
  ck_assert_uint_eq(ocgc_hist_count(diff), 4000);
  ck_assert_uint_eq(ocgc_hist_sum(diff), ocgc_hist_sum(iv));
  ck_assert_uint_eq(ocgc_hist_clamped(diff), ocgc_hist_clamped(iv));
  check_same_buckets(diff, iv);
  check_iter(diff, vals, 4000);
  check_pct_as_interval(diff, iv);
  /* min and max: never beyond the truth's bucket, on the safe side */
  ck_assert(within(vals[0], ocgc_hist_min(diff)));
  ck_assert(within(ocgc_hist_max(diff), vals[3999]));
  if (wider) check_same(diff, iv); /* then everything is exact */
  free(vals);
  ocgc_hist_free(cum);
  ocgc_hist_free(before);
  ocgc_hist_free(iv);
  ocgc_hist_free(diff);
}

START_TEST(sub_gives_the_interval)
{
  sub_run(51 + (uint64_t)_i, _i % 2);
}
END_TEST

/* What the interval reads when it is empty, everything, or one value. */
START_TEST(sub_edges)
{
  struct ocgc_hist *h = hist(), *c = hist(), *e = hist(), *ref = hist();
  fill_random(h, ref, 61, 3000, 1, 1e12);
  ocgc_hist_record(h, HOUR + 9);
  ocgc_hist_record(ref, HOUR + 9);
  /* nothing recorded since: empty */
  ck_assert_int_eq(ocgc_hist_copy(c, h), 0);
  ck_assert_int_eq(ocgc_hist_sub(c, h), 0);
  check_empty(c);
  /* an empty src: unchanged; into itself: empty */
  ck_assert_int_eq(ocgc_hist_sub(h, e), 0);
  check_same(h, ref);
  ck_assert_int_eq(ocgc_hist_copy(c, h), 0);
  ck_assert_int_eq(ocgc_hist_sub(c, c), 0);
  check_empty(c);
  ck_assert_int_eq(ocgc_hist_sub(e, e), 0);
  check_empty(e);
  /* everything since an empty start */
  ck_assert_int_eq(ocgc_hist_copy(c, h), 0);
  ck_assert_int_eq(ocgc_hist_sub(c, e), 0);
  check_same(c, ref);
  /* one value inside the old range: the difference is its bucket */
  ck_assert_int_eq(ocgc_hist_copy(c, h), 0);
  ocgc_hist_record(c, 7777777);
  ck_assert_int_eq(ocgc_hist_sub(c, h), 0);
  ck_assert_uint_eq(ocgc_hist_count(c), 1);
  ck_assert_uint_eq(ocgc_hist_sum(c), 7777777);
  ck_assert_uint_eq(ocgc_hist_clamped(c), 0);
  ck_assert(within(7777777, ocgc_hist_min(c)));
  ck_assert(within(ocgc_hist_max(c), 7777777));
  ck_assert_uint_eq(ocgc_hist_percentile(c, 50), ocgc_hist_max(c));
  /* and it goes on recording from there */
  ocgc_hist_record(c, 1);
  ocgc_hist_record(c, HOUR);
  ck_assert_uint_eq(ocgc_hist_min(c), 1);
  ck_assert_uint_eq(ocgc_hist_max(c), HOUR);
  ck_assert_uint_eq(ocgc_hist_count_le(c, 7777777 * 2), 2);
  ocgc_hist_free(h);
  ocgc_hist_free(c);
  ocgc_hist_free(e);
  ocgc_hist_free(ref);
}
END_TEST

/* src is not an earlier copy of dst: refused, dst untouched. */
START_TEST(sub_refuses_non_ancestor)
{
  struct ocgc_hist *dst = hist(), *ref = hist(), *src = hist();
  fill_random(dst, ref, 71, 2000, 1000, 1e9);
  ck_assert_int_eq(ocgc_hist_sub(NULL, src), -EINVAL);
  ck_assert_int_eq(ocgc_hist_sub(dst, NULL), -EINVAL);
  /* another history: a bucket dst does not have */
  fill_random(src, NULL, 72, 10, 1000, 1e9);
  ck_assert_int_eq(ocgc_hist_sub(dst, src), -ERANGE);
  check_same(dst, ref);
  /* a later copy: more in every figure */
  ck_assert_int_eq(ocgc_hist_copy(src, dst), 0);
  ocgc_hist_record(src, 5000);
  ck_assert_int_eq(ocgc_hist_sub(dst, src), -ERANGE);
  check_same(dst, ref);
  /* the same buckets, yet not the same values: 4097 and 4096 share one */
  ocgc_hist_reset(dst);
  ocgc_hist_reset(src);
  ocgc_hist_record(dst, 4096);
  ocgc_hist_record(dst, 4096);
  ocgc_hist_record(src, 4097);
  ck_assert_int_eq(ocgc_hist_copy(ref, dst), 0);
  ck_assert_int_eq(ocgc_hist_sub(dst, src), -ERANGE); /* sum and max above dst's */
  check_same(dst, ref);
  /* a min below dst's, in dst's bucket */
  ocgc_hist_reset(dst);
  ocgc_hist_reset(src);
  ocgc_hist_record(dst, 4097);
  ocgc_hist_record(dst, 4097);
  ocgc_hist_record(src, 4096);
  ck_assert_int_eq(ocgc_hist_copy(ref, dst), 0);
  ck_assert_int_eq(ocgc_hist_sub(dst, src), -ERANGE);
  check_same(dst, ref);
  /* clamped beyond dst's */
  ocgc_hist_reset(src);
  ocgc_hist_reset(dst);
  ocgc_hist_record(dst, HOUR);
  ocgc_hist_record(src, HOUR + 1);
  ck_assert_int_eq(ocgc_hist_sub(dst, src), -ERANGE);
  ck_assert_uint_eq(ocgc_hist_count(dst), 1);
  ck_assert_uint_eq(ocgc_hist_clamped(dst), 0);
  ocgc_hist_free(dst);
  ocgc_hist_free(ref);
  ocgc_hist_free(src);
}
END_TEST

/* A saturated figure stays saturated: what is left of it is unknown. */
START_TEST(sub_saturated)
{
  struct ocgc_hist *h = hist(), *c = hist();
  ocgc_hist_record(h, 1000);
  ck_assert_int_eq(ocgc_hist_copy(c, h), 0);
  ocgc_hist_record_n(h, UINT64_C(1) << 40, UINT64_C(1) << 30);
  ck_assert_uint_eq(ocgc_hist_sum(h), UINT64_MAX);
  ck_assert_int_eq(ocgc_hist_sub(h, c), 0);
  ck_assert_uint_eq(ocgc_hist_sum(h), UINT64_MAX);
  ck_assert_uint_eq(ocgc_hist_count(h), UINT64_C(1) << 30);
  ck_assert_uint_eq(ocgc_hist_min(h), UINT64_C(1) << 40);
  ocgc_hist_free(h);
  ocgc_hist_free(c);
}
END_TEST

/* ---- throughput: printed, never asserted ------------------------------------------- */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The one bucket scheme: 1, 2, 5 times each power of ten ns from 1 ns,
 * three a decade, past an hour; a value's bucket is the first bound it is
 * at or below (Prometheus's le); the serve exporter's le buckets are a run
 * of the same bounds. */
START_TEST(bounds_125)
{
  const uint64_t *b = ocgc_hist_bounds();
  static const uint64_t m[3] = {1, 2, 5};
  uint64_t p = 1;
  unsigned i;
  for (i = 0; i < OCGC_HIST_NBOUNDS; i++) {
    ck_assert_uint_eq(b[i], m[i % 3] * p);
    if (i % 3 == 2) p *= 10;
    ck_assert_uint_eq(ocgc_hist_bucket(b[i]), i);
    if (i > 0) ck_assert_uint_eq(ocgc_hist_bucket(b[i - 1] + 1), i);
  }
  ck_assert_uint_gt(b[OCGC_HIST_NBOUNDS - 1], UINT64_C(3600000000000));
  ck_assert_uint_eq(ocgc_hist_bucket(0), 0);
  ck_assert_uint_eq(ocgc_hist_bucket(UINT64_MAX), OCGC_HIST_NBOUNDS - 1);
  ck_assert_uint_eq(ocgc_hist_bucket(15000), 13); /* 10 us < v <= 20 us */
  ck_assert_ptr_eq(ocgc_expo_bounds_ns(), b + 9);  /* 1 us ... */
  ck_assert_uint_eq(ocgc_expo_bounds_ns()[OCGC_EXPO_NBUCKETS - 1], UINT64_C(10000000000));
}
END_TEST


START_TEST(throughput)
{
  enum { NVALS = 4096, ROUNDS = 2000 };
  static uint64_t vals[NVALS];
  struct ocgc_hist *h = hist(), *g = hist();
  uint64_t seed = 31, p99 = 0;
  double t0, t1, t2, t3;
  size_t i, r;
  for (i = 0; i < NVALS; i++) vals[i] = log_uniform(&seed, 1e10);
  t0 = now_s();
  for (r = 0; r < ROUNDS; r++)
    for (i = 0; i < NVALS; i++) ocgc_hist_record(h, vals[i]);
  t1 = now_s();
  for (r = 0; r < 100; r++) p99 += ocgc_hist_percentile(h, 99 + (double)r / 100);
  t2 = now_s();
  for (r = 0; r < 100; r++) ocgc_hist_merge(g, h);
  t3 = now_s();
  ck_assert_uint_eq(ocgc_hist_count(h), (uint64_t)NVALS * ROUNDS);
  printf("hist throughput (this build's flags): record %.2f ns, percentile %.1f us, "
         "merge %.1f us (checksum %" PRIu64 ")\n",
         (t1 - t0) * 1e9 / ((double)NVALS * ROUNDS), (t2 - t1) * 1e6 / 100,
         (t3 - t2) * 1e6 / 100, p99 % 10);
  fflush(stdout);
  ocgc_hist_free(h);
  ocgc_hist_free(g);
}
END_TEST

Suite *hist_suite(void);
Suite *hist_suite(void)
{
  Suite *s = suite_create("hist");
  TCase *tc = tcase_create("basics");
  tcase_add_test(tc, empty_histogram);
  tcase_add_test(tc, null_arguments);
  tcase_add_test(tc, single_values);
  tcase_add_test(tc, zero_values);
  tcase_add_test(tc, clamping);
  suite_add_tcase(s, tc);

  /* the sweeps are heavy under the sanitizers */
  tc = tcase_create("precision");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, geometry_sweep);
  tcase_add_test(tc, percentile_rank_rule);
  tcase_add_test(tc, percentile_out_of_range);
  tcase_add_test(tc, uniform_sweeps);
  tcase_add_test(tc, random_log_uniform);
  tcase_add_test(tc, random_pauses);
  suite_add_tcase(s, tc);

  tc = tcase_create("combine");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, record_n_equals_records);
  tcase_add_test(tc, saturation);
  tcase_add_test(tc, merge_equals_recording_both);
  tcase_add_test(tc, copy_replaces);
  tcase_add_test(tc, copy_over_any_span);
  tcase_add_test(tc, reset_clears);
  suite_add_tcase(s, tc);

  tc = tcase_create("subtract and iterate");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, iterate_buckets);
  tcase_add_loop_test(tc, sub_gives_the_interval, 0, 4);
  tcase_add_test(tc, sub_edges);
  tcase_add_test(tc, sub_refuses_non_ancestor);
  tcase_add_test(tc, sub_saturated);
  tcase_add_test(tc, bounds_125);
  suite_add_tcase(s, tc);

  tc = tcase_create("throughput");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, throughput);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(hist_suite);
