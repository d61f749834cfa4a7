/* ocgc/hist.h - histograms of durations: log-linear, 1 ns to 1 hour at 3
 * significant digits, mergeable, fixed memory; and the one bucket scheme
 * (1-2-5) every picture and export of them uses. */
#ifndef OCGC_PUBLIC_HIST_H
#define OCGC_PUBLIC_HIST_H

#include <ocgc/api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- histograms ----------------------------------------------------------------- */

/** A log-linear histogram of durations in nanoseconds, 1 ns to 1 hour at 3
 * significant digits (every recorded value is reported within 0.1%), in
 * fixed memory; mergeable.  Values above an hour are recorded as an hour
 * and counted in ocgc_hist_clamped(). */
struct ocgc_hist;

/** Allocate an empty histogram (about 267 KB, once).  Returns 0, -EINVAL
 * or -ENOMEM. */
OCGC_API int ocgc_hist_new(struct ocgc_hist **out);
/** Free [h].  NULL is accepted. */
OCGC_API void ocgc_hist_free(struct ocgc_hist *h);
/** Empty [h] (its memory kept).  NULL is accepted. */
OCGC_API void ocgc_hist_reset(struct ocgc_hist *h);
/** Record one value of [ns] nanoseconds (above an hour: an hour, counted
 * in ocgc_hist_clamped()).  O(1); NULL is accepted (nothing done). */
OCGC_API void ocgc_hist_record(struct ocgc_hist *h, uint64_t ns);
/** Record [ns] [n] times. */
OCGC_API void ocgc_hist_record_n(struct ocgc_hist *h, uint64_t ns, uint64_t n);
/** dst += src.  Returns 0, or -EINVAL if either is NULL. */
OCGC_API int ocgc_hist_merge(struct ocgc_hist *dst, const struct ocgc_hist *src);
/** dst = src.  Returns 0, or -EINVAL if either is NULL. */
OCGC_API int ocgc_hist_copy(struct ocgc_hist *dst, const struct ocgc_hist *src);
/** Values recorded (0 for NULL). */
OCGC_API uint64_t ocgc_hist_count(const struct ocgc_hist *h);
/** Exact smallest and largest values recorded (0 when empty), and their
 * sum (saturating at UINT64_MAX). */
OCGC_API uint64_t ocgc_hist_min(const struct ocgc_hist *h);
OCGC_API uint64_t ocgc_hist_max(const struct ocgc_hist *h);
OCGC_API uint64_t ocgc_hist_sum(const struct ocgc_hist *h);
/** Values recorded above an hour (each counted as an hour). */
OCGC_API uint64_t ocgc_hist_clamped(const struct ocgc_hist *h);
/** The value below which [pct] percent (0..100) of the values fall: the
 * highest value equivalent to the bucket holding that rank, never above
 * ocgc_hist_max(); 0 when empty.  percentile(0) can be up to 0.1% above
 * the true minimum: ocgc_hist_min() is exact. */
OCGC_API uint64_t ocgc_hist_percentile(const struct ocgc_hist *h, double pct);
/** How many recorded values are <= [ns] (as the buckets can tell, within
 * 0.1%): for cumulative exports such as Prometheus's le buckets. */
OCGC_API uint64_t ocgc_hist_count_le(const struct ocgc_hist *h, uint64_t ns);

/** dst -= src, bucket by bucket: what was recorded into [dst] since [src]
 * was copied from it (ocgc_hist_copy), e.g. one interval's values from two
 * cumulative snapshots: copy the newer, subtract the older, then read
 * percentiles, counts and buckets of the interval alone, exact to bucket
 * precision (0.1%).  count, sum and clamped subtract exactly (a figure that
 * had saturated at UINT64_MAX stays there).  min and max of the difference
 * are exact when the interval holds a new smallest (largest) value, the
 * common case for a max worth reading; otherwise only their bucket is
 * known, and min is that bucket's lowest value (at most 0.1% below the
 * truth) and max its highest (at most 0.1% above), never beyond dst's own
 * min and max.  src == dst empties dst.  Returns 0; -EINVAL if either is
 * NULL; -ERANGE, leaving dst unchanged, if src cannot be an earlier copy
 * of dst (a bucket, the count, sum or clamped of src above dst's, or its
 * min below or max above dst's). */
OCGC_API int ocgc_hist_sub(struct ocgc_hist *dst, const struct ocgc_hist *src);

/** Iteration over the non-empty buckets of a histogram, in increasing
 * order: for a Prometheus histogram (an le bucket per line, cumulative) or
 * a drawn one.  For each bucket, count_le(highest) == cumulative and, when
 * lowest > 0, count_le(lowest - 1) == cumulative - count; the last
 * bucket's cumulative is ocgc_hist_count().  The histogram must not change
 * during the iteration.  Usage:
 *   struct ocgc_hist_iter it;
 *   ocgc_hist_iter_init(&it, h);
 *   while (ocgc_hist_iter_next(&it)) use(it.lowest, it.highest, it.count);
 */
struct ocgc_hist_iter {
  uint64_t lowest;     /**< the bucket's lowest equivalent value, ns */
  uint64_t highest;    /**< its highest equivalent value (not capped at
                            ocgc_hist_max(): the bucket's own bound) */
  uint64_t count;      /**< values in it (> 0) */
  uint64_t cumulative; /**< values in it and in every bucket below it */
  /* Private: set by ocgc_hist_iter_init(). */
  const struct ocgc_hist *priv_hist;
  unsigned priv_next, priv_end;
};
/** Start an iteration over [h] (NULL: an empty one).  Returns 0, or
 * -EINVAL if [it] is NULL. */
OCGC_API int ocgc_hist_iter_init(struct ocgc_hist_iter *it, const struct ocgc_hist *h);
/** Move to the next non-empty bucket: 1 and its fields in *it, or 0 once
 * past the last (then again 0). */
OCGC_API int ocgc_hist_iter_next(struct ocgc_hist_iter *it);

/* ---- the buckets every picture of a histogram uses ---------------------------- */

/** The one bucket scheme ocgc draws and exports histograms with: `ocgc
 * top`'s bars, the HTML report's histograms and `ocgc serve`'s Prometheus
 * le buckets (ocgc_expo_bounds_ns() is a run of these bounds).  Bound i is
 * 1, 2 or 5 (by i % 3) times 10^(i / 3) ns: three a decade, from 1 ns
 * (bound 0) to 5000 s (bound 38, past the hour a histogram holds).  A value
 * v is in bucket i when bound(i - 1) < v <= bound(i) (bucket 0: v <= 1 ns):
 * Prometheus's le, a bound is the largest value of its bucket, so the
 * differences of ocgc_hist_count_le() at consecutive bounds are the
 * buckets' counts (within the histogram's 0.1%).
 * Why 1-2-5: round bounds that read at a glance (20us, 500ms), no step
 * wider than x2.5 (a log axis shows the shape), and few enough that a
 * terminal's rows and a scrape's lines hold the range that matters. */
#define OCGC_HIST_NBOUNDS 39u

/** The bounds in ns, ascending: OCGC_HIST_NBOUNDS of them (static memory). */
OCGC_API const uint64_t *ocgc_hist_bounds(void);

/** The bucket [ns] is in: the smallest i with ns <= bound(i);
 * OCGC_HIST_NBOUNDS - 1 for a value above the last bound. */
OCGC_API unsigned ocgc_hist_bucket(uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_HIST_H */
