/* hist.c - log-linear histograms of durations (struct ocgc_hist).
 *
 * Owns the bucket geometry (value <-> bucket index) and every ocgc_hist_*
 * function, and the coarse 1-2-5 bounds every picture and export of a
 * histogram uses (ocgc_hist_bounds: one table, so top, the HTML report
 * and serve's le buckets cannot drift apart).  Written for ocgc; the design idea (a linear run of unit buckets,
 * then power-of-two ranges each cut into the same number of sub-buckets) is
 * HdrHistogram's.
 *
 * Geometry, for 3 significant digits from 1 ns to 1 hour:
 * - values 0..2047 have a bucket each (width 1);
 * - each range [2^m, 2^(m+1)), m >= 11, is cut into 1024 buckets of width
 *   2^(m-10).
 *   So a bucket of width w never starts below 1024*w, and its highest
 *   equivalent value exceeds any value v in it by at most w-1, less than
 *   v/1024: within 0.1%.  512 sub-buckets per range would give 0.2%, so 1024
 *   is the least power of two that keeps the promise.
 * - index(v) = shift*1024 + (v >> shift), shift = max(0, msb(v) - 10): one
 *   clz, no loop; consecutive ranges get consecutive indexes.
 * - the array ends at the bucket of OCGC_HIST_MAX_NS (1 hour, 3.6e12 ns,
 *   inside [2^41, 2^42)): index 33420, so 33421 counts rather than the 33792
 *   a full [0, 2^42) would take.  Values above an hour are recorded as an
 *   hour (min, max and sum included) and counted in `clamped`.
 *
 * Memory: sizeof(struct ocgc_hist) = 5*8 + 33421*8 = 267,408 bytes per
 * histogram, never resized, in an anonymous mapping of its own: its pages
 * are zero and not resident until a bucket on them is counted, so a
 * histogram of pauses (a few octaves) costs tens of KB of RAM.  (calloc
 * would not do: once glibc has seen a block this size freed, it serves the
 * next from its heap and must clear, that is touch, all of it.)
 *
 * What a bucket reports: its highest equivalent value, capped at max, so
 * that percentile(100) == max and count_le(max) == count.  Buckets are
 * reported in increasing order, so percentile and count_le agree:
 * count_le(percentile(p)) >= rank(p) > count_le(percentile(p) - 1).
 *
 * Invariants:
 * - count == 0: every bucket is 0, min == UINT64_MAX, max == sum ==
 *   clamped == 0 (the readers return 0 for min);
 * - count > 0: every bucket outside [index(min), index(max)] is 0, so reset,
 *   copy, merge and the readers touch only that span (a histogram of pauses
 *   from 50 us to 5 ms spans ~7k buckets, not 33k);
 * - count == the sum of the buckets, and sum == the sum of the values,
 *   until one of them reaches UINT64_MAX: counts, clamped and sum saturate
 *   there rather than wrap (2^64 ns is 584 years, so only record_n with an
 *   absurd n gets there).
 *
 * Thread safety: none.  A histogram must not be used by two threads at once
 * (one per thread, or a lock around it); readers do not write, so several
 * threads may read one histogram that no thread is writing.
 *
 * Subtraction (ocgc_hist_sub) is merge's inverse for a src that is an
 * earlier copy of dst: it is checked to be one (no figure of src above
 * dst's) before anything changes, so a failed call leaves dst as it was.
 * The difference's values are known only by bucket, so its min and max are
 * bucket bounds, except that a min below (max above) everything src holds
 * was recorded after the copy and stays exact; both stay inside their
 * buckets, which keeps the span invariant above.
 *
 * Iteration (struct ocgc_hist_iter) walks [index(min), index(max)] once,
 * reporting each non-empty bucket's own bounds (not capped at max), which
 * are what count_le agrees with.
 *
 * NULL: ocgc_hist_free(NULL) and the mutators do nothing, the readers see
 * NULL as an empty histogram (so ocgc_hist_count(ocgc_snapshot_phase(...))
 * works for a phase never seen, and iterating over it yields nothing),
 * new/merge/copy/sub return -EINVAL. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "agg.h"
#include "ocgc/consumer.h"

#define OCGC_HIST_MAX_NS UINT64_C(3600000000000) /* 1 hour */
#define SUB_BITS 10u                             /* 1024 sub-buckets per range */
#define TOP_MSB 41u                              /* msb of OCGC_HIST_MAX_NS */
#define TOP_SHIFT (TOP_MSB - SUB_BITS)
#define HIST_BUCKETS ((TOP_SHIFT << SUB_BITS) + (unsigned)(OCGC_HIST_MAX_NS >> TOP_SHIFT) + 1u)

_Static_assert((OCGC_HIST_MAX_NS >> TOP_MSB) == 1, "TOP_MSB is the msb of an hour");
_Static_assert(HIST_BUCKETS == 33421, "bucket count of the documented geometry");

struct ocgc_hist {
  uint64_t count;   /* values recorded (saturating) */
  uint64_t min;     /* UINT64_MAX when empty */
  uint64_t max;     /* 0 when empty */
  uint64_t sum;     /* saturating */
  uint64_t clamped; /* values above an hour (saturating) */
  uint64_t counts[HIST_BUCKETS];
};

_Static_assert(sizeof(struct ocgc_hist) == 267408, "the size stated in the top comment");

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* v <= OCGC_HIST_MAX_NS.  (v | 1) because clz(0) is undefined; 0 and 1 both
 * have shift 0. */
static inline unsigned bucket_index(uint64_t v)
{
  unsigned msb = 63u - (unsigned)__builtin_clzll(v | 1);
  unsigned shift = msb > SUB_BITS ? msb - SUB_BITS : 0;
  return (shift << SUB_BITS) + (unsigned)(v >> shift);
}

/* The inverse: index = shift*1024 + sub with sub in [1024, 2048) for
 * shift >= 1, so idx >> 10 == shift + 1; below 2048, shift 0 and sub = idx. */
static inline unsigned bucket_shift(unsigned idx)
{
  unsigned shift = idx >> SUB_BITS;
  return shift ? shift - 1 : 0;
}

/* The lowest value of bucket idx, and the highest. */
static inline uint64_t bucket_low(unsigned idx)
{
  unsigned shift = bucket_shift(idx);
  return (uint64_t)(idx - (shift << SUB_BITS)) << shift;
}

static inline uint64_t bucket_top(unsigned idx)
{
  return bucket_low(idx) + ((UINT64_C(1) << bucket_shift(idx)) - 1);
}

static void hist_clear(struct ocgc_hist *h)
{
  if (h->count) {
    unsigned lo = bucket_index(h->min), hi = bucket_index(h->max);
    memset(&h->counts[lo], 0, (size_t)(hi - lo + 1) * sizeof h->counts[0]);
  }
  h->count = 0;
  h->min = UINT64_MAX;
  h->max = 0;
  h->sum = 0;
  h->clamped = 0;
}

int ocgc_hist_new(struct ocgc_hist **out)
{
  struct ocgc_hist *h;
  if (!out) return -EINVAL;
  *out = NULL;
  h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (h == MAP_FAILED) return -ENOMEM;
  h->min = UINT64_MAX;
  *out = h;
  return 0;
}

void ocgc_hist_free(struct ocgc_hist *h)
{
  if (h) munmap(h, sizeof *h);
}

void ocgc_hist_reset(struct ocgc_hist *h)
{
  if (h) hist_clear(h);
}

/* The one place a value enters; inline so that ocgc_hist_record (n == 1)
 * loses the multiply check. */
static inline void hist_add(struct ocgc_hist *h, uint64_t ns, uint64_t n)
{
  uint64_t total;
  unsigned i;
  if (ns > OCGC_HIST_MAX_NS) {
    ns = OCGC_HIST_MAX_NS;
    h->clamped = sat_add(h->clamped, n);
  }
  i = bucket_index(ns);
  h->counts[i] = sat_add(h->counts[i], n);
  h->count = sat_add(h->count, n);
  if (__builtin_mul_overflow(ns, n, &total)) total = UINT64_MAX;
  h->sum = sat_add(h->sum, total);
  if (ns < h->min) h->min = ns;
  if (ns > h->max) h->max = ns;
}

void ocgc_hist_record(struct ocgc_hist *h, uint64_t ns)
{
  if (h) hist_add(h, ns, 1);
}

void ocgc_hist_record_n(struct ocgc_hist *h, uint64_t ns, uint64_t n)
{
  /* n == 0 records nothing, so it must not move min and max either. */
  if (h && n) hist_add(h, ns, n);
}

void hist_grow(struct ocgc_hist *h, uint64_t from, uint64_t to)
{
  unsigned i;
  if (h == NULL || to <= from || h->count == 0) return;
  if (from > OCGC_HIST_MAX_NS) from = OCGC_HIST_MAX_NS;
  i = bucket_index(from);
  if (h->counts[i] == 0 || h->count == UINT64_MAX) return; /* not recorded, or saturated */
  h->counts[i]--;
  h->count--;
  h->sum = h->sum >= from && h->sum != UINT64_MAX ? h->sum - from : h->sum;
  if (h->clamped > 0 && from == OCGC_HIST_MAX_NS) h->clamped--;
  if (h->count > 0 && h->counts[i] == 0 && bucket_index(h->min) == i) {
    /* from was the smallest: the next non-empty bucket's lowest value */
    unsigned j = i + 1;
    while (j < HIST_BUCKETS && h->counts[j] == 0) j++;
    h->min = j < HIST_BUCKETS ? bucket_low(j) : h->max;
  }
  if (h->count == 0) {
    h->min = UINT64_MAX;
    h->max = 0;
  }
  hist_add(h, to, 1);
}

int ocgc_hist_merge(struct ocgc_hist *dst, const struct ocgc_hist *src)
{
  unsigned i, lo, hi;
  if (!dst || !src) return -EINVAL;
  if (!src->count) return 0;
  /* Same geometry always, so bucket i means the same values in both. */
  lo = bucket_index(src->min);
  hi = bucket_index(src->max);
  for (i = lo; i <= hi; i++) dst->counts[i] = sat_add(dst->counts[i], src->counts[i]);
  dst->count = sat_add(dst->count, src->count);
  dst->sum = sat_add(dst->sum, src->sum);
  dst->clamped = sat_add(dst->clamped, src->clamped);
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
  return 0;
}

int ocgc_hist_copy(struct ocgc_hist *dst, const struct ocgc_hist *src)
{
  if (!dst || !src) return -EINVAL;
  if (dst == src) return 0;
  /* Copying src's span and clearing what dst's span has outside it keeps
   * both invariants without touching the 267 KB a whole-struct memcpy
   * would, and without clearing what is copied over at once (a copy into
   * the same snapshot again and again, whose span only grows, clears
   * nothing). */
  if (!src->count) {
    hist_clear(dst);
  } else {
    unsigned lo = bucket_index(src->min), hi = bucket_index(src->max);
    if (dst->count) {
      unsigned dlo = bucket_index(dst->min), dhi = bucket_index(dst->max);
      if (dlo < lo) {
        unsigned end = dhi < lo ? dhi + 1 : lo; /* dst's span below src's */
        memset(&dst->counts[dlo], 0, (size_t)(end - dlo) * sizeof dst->counts[0]);
      }
      if (dhi > hi) {
        unsigned from = dlo > hi ? dlo : hi + 1;
        memset(&dst->counts[from], 0, (size_t)(dhi - from + 1) * sizeof dst->counts[0]);
      }
    }
    memcpy(&dst->counts[lo], &src->counts[lo], (size_t)(hi - lo + 1) * sizeof src->counts[0]);
  }
  dst->count = src->count;
  dst->min = src->min;
  dst->max = src->max;
  dst->sum = src->sum;
  dst->clamped = src->clamped;
  return 0;
}

/* A figure of dst that saturated is "at least UINT64_MAX": what is left
 * after taking src away is unknown, so it stays saturated. */
static inline uint64_t sat_sub(uint64_t a, uint64_t b)
{
  return a == UINT64_MAX ? a : a - b;
}

/* Whether src can be an earlier state of dst: nothing in it exceeds dst. */
static int is_ancestor(const struct ocgc_hist *dst, const struct ocgc_hist *src)
{
  unsigned i, lo, hi;
  if (src->count > dst->count || src->sum > dst->sum || src->clamped > dst->clamped)
    return 0;
  if (!src->count) return 1;
  if (!dst->count || src->min < dst->min || src->max > dst->max) return 0;
  lo = bucket_index(src->min);
  hi = bucket_index(src->max);
  for (i = lo; i <= hi; i++)
    if (src->counts[i] > dst->counts[i]) return 0;
  return 1;
}

/* After a subtraction: min and max from the buckets left (see the header).
 * A value recorded after the copy that is below everything in it (or above)
 * is dst's own exact min (max); otherwise only its bucket is known. */
static void fix_extremes(struct ocgc_hist *h, uint64_t src_min, uint64_t src_max,
                         uint64_t old_min, uint64_t old_max)
{
  unsigned lo = bucket_index(old_min), hi = bucket_index(old_max);
  if (!h->count) {
    h->min = UINT64_MAX;
    h->max = h->sum = h->clamped = 0;
    return;
  }
  while (lo < hi && !h->counts[lo]) lo++;
  while (hi > lo && !h->counts[hi]) hi--;
  if (old_min < src_min) h->min = old_min;
  else h->min = bucket_low(lo) > old_min ? bucket_low(lo) : old_min;
  if (old_max > src_max) h->max = old_max;
  else h->max = bucket_top(hi) < old_max ? bucket_top(hi) : old_max;
}

int ocgc_hist_sub(struct ocgc_hist *dst, const struct ocgc_hist *src)
{
  uint64_t old_min, old_max, src_min, src_max;
  unsigned i, lo, hi;
  if (!dst || !src) return -EINVAL;
  if (!is_ancestor(dst, src)) return -ERANGE;
  if (!src->count) return 0;
  /* src may be dst itself: read what it says before dst changes. */
  old_min = dst->min;
  old_max = dst->max;
  src_min = src->min;
  src_max = src->max;
  lo = bucket_index(src_min);
  hi = bucket_index(src_max);
  for (i = lo; i <= hi; i++) dst->counts[i] = sat_sub(dst->counts[i], src->counts[i]);
  dst->count = sat_sub(dst->count, src->count);
  dst->sum = sat_sub(dst->sum, src->sum);
  dst->clamped = sat_sub(dst->clamped, src->clamped);
  fix_extremes(dst, src_min, src_max, old_min, old_max);
  return 0;
}

int ocgc_hist_iter_init(struct ocgc_hist_iter *it, const struct ocgc_hist *h)
{
  if (!it) return -EINVAL;
  memset(it, 0, sizeof *it);
  it->priv_hist = h;
  if (h && h->count) {
    it->priv_next = bucket_index(h->min);
    it->priv_end = bucket_index(h->max) + 1;
  }
  return 0;
}

int ocgc_hist_iter_next(struct ocgc_hist_iter *it)
{
  const struct ocgc_hist *h;
  if (!it || !(h = it->priv_hist)) return 0;
  /* Bounded by the array whatever the caller did to the fields. */
  while (it->priv_next < it->priv_end && it->priv_next < HIST_BUCKETS) {
    unsigned i = it->priv_next++;
    if (!h->counts[i]) continue;
    it->lowest = bucket_low(i);
    it->highest = bucket_top(i);
    it->count = h->counts[i];
    it->cumulative = sat_add(it->cumulative, h->counts[i]);
    return 1;
  }
  return 0;
}

uint64_t ocgc_hist_count(const struct ocgc_hist *h)
{
  return h ? h->count : 0;
}

uint64_t ocgc_hist_min(const struct ocgc_hist *h)
{
  return h && h->count ? h->min : 0;
}

uint64_t ocgc_hist_max(const struct ocgc_hist *h)
{
  return h ? h->max : 0;
}

uint64_t ocgc_hist_sum(const struct ocgc_hist *h)
{
  return h ? h->sum : 0;
}

uint64_t ocgc_hist_clamped(const struct ocgc_hist *h)
{
  return h ? h->clamped : 0;
}

/* rank = ceil(pct/100 * count), at least 1 and at most count.  pct such as
 * 99.9 has no exact binary form, so the product can land a hair above the
 * integer the caller meant (999.0000000000001 for 99.9% of 1000) and ceil
 * would step one rank too far: forgive an excess of a few ulps. */
static uint64_t rank_of(double pct, uint64_t count)
{
  double x, r;
  if (!(pct > 0)) pct = 0; /* NaN too */
  if (pct > 100) pct = 100;
  x = pct * (double)count / 100.0;
  r = ceil(x - x * 0x1p-46);
  if (r < 1) return 1;
  if (r >= (double)count) return count; /* also keeps the cast in range */
  return (uint64_t)r;
}

uint64_t ocgc_hist_percentile(const struct ocgc_hist *h, double pct)
{
  uint64_t rank, seen = 0, top;
  unsigned i, lo, hi;
  if (!h || !h->count) return 0;
  rank = rank_of(pct, h->count);
  lo = bucket_index(h->min);
  hi = bucket_index(h->max);
  for (i = lo; i < hi; i++) {
    seen = sat_add(seen, h->counts[i]);
    if (seen >= rank) break;
  }
  /* i == hi: the rank is in max's bucket (or the counts saturated). */
  top = bucket_top(i);
  return top < h->max ? top : h->max;
}

/* The values whose bucket reports (top capped at max) <= ns.  Never counts
 * a value above ns; misses a value v <= ns only when v's bucket straddles
 * ns, that is when v is within 0.1% below ns. */
uint64_t ocgc_hist_count_le(const struct ocgc_hist *h, uint64_t ns)
{
  uint64_t n = 0;
  unsigned i, lo, last;
  if (!h || !h->count) return 0;
  if (ns >= h->max) return h->count;
  if (ns < h->min) return 0;
  /* min <= ns < max <= an hour.  Below max's bucket the tops are not
   * capped, and index(ns) <= index(max), so the last bucket counted is
   * ns's own if ns is its top, else the one before. */
  last = bucket_index(ns);
  if (bucket_top(last) != ns) {
    if (last == 0) return 0;
    last--;
  }
  lo = bucket_index(h->min);
  for (i = lo; i <= last; i++) n = sat_add(n, h->counts[i]);
  return n;
}

/* ---- the 1-2-5 bounds (ocgc/hist.h) ---------------------------------------------- */

static const uint64_t bounds_125[OCGC_HIST_NBOUNDS] = {
#define DECADE(p) 1 * (p), 2 * (p), 5 * (p)
  DECADE(UINT64_C(1)),          DECADE(UINT64_C(10)),          DECADE(UINT64_C(100)),
  DECADE(UINT64_C(1000)),       DECADE(UINT64_C(10000)),       DECADE(UINT64_C(100000)),
  DECADE(UINT64_C(1000000)),    DECADE(UINT64_C(10000000)),    DECADE(UINT64_C(100000000)),
  DECADE(UINT64_C(1000000000)), DECADE(UINT64_C(10000000000)), DECADE(UINT64_C(100000000000)),
  DECADE(UINT64_C(1000000000000)),
#undef DECADE
};

const uint64_t *ocgc_hist_bounds(void)
{
  return bounds_125;
}

unsigned ocgc_hist_bucket(uint64_t ns)
{
  unsigned lo = 0, hi = OCGC_HIST_NBOUNDS - 1;
  while (lo < hi) { /* the first bound >= ns */
    unsigned mid = lo + (hi - lo) / 2;
    if (bounds_125[mid] >= ns) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
