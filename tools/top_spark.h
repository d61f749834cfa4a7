/* top_spark.h - the last minute of `ocgc top` (tools/top_spark.c): once a
 * second, the pause p99 and the allocation rate of that second, kept in
 * rings of TOP_SPARK_SAMPLES, drawn as sparklines.  Private to tools/. */
#ifndef OCGC_TOOLS_TOP_SPARK_H
#define OCGC_TOOLS_TOP_SPARK_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/consumer.h"

#define TOP_SPARK_SAMPLES 60
#define TOP_SPARK_PERIOD_NS UINT64_C(1000000000)

/* The newest TOP_SPARK_SAMPLES values, oldest overwritten; a NaN value is
 * a sample with nothing to show (a second without a pause). */
struct top_ring {
  double v[TOP_SPARK_SAMPLES];
  unsigned head; /* where the next value goes */
  unsigned n;    /* values held, <= TOP_SPARK_SAMPLES */
};

struct top_spark {
  struct ocgc_interval *iv;          /* a second each */
  uint64_t next_ns;                  /* cm_mono_ns() of the next sample */
  uint64_t samples;                  /* taken so far */
  struct top_ring p99_ns, alloc_bps; /* pause p99 (ns), allocation (bytes/s) */
};

/* After the aggregator's first drain: what it read so far (the ring's
 * past) is no sample's; the first sample comes a period after [now_ns].
 * 0 or an error (ocgc_interval_new's). */
int top_spark_start(struct top_spark *s, struct ocgc_agg *agg, uint64_t now_ns);
/* A sample if its time has come (drain the aggregator first): 1 (a sample
 * was added), 0, or a negative error (ocgc_interval_next's). */
int top_spark_tick(struct top_spark *s, uint64_t now_ns);
/* Before the aggregator is freed. */
void top_spark_free(struct top_spark *s);
/* Add [v] to [r], over its oldest value once it holds TOP_SPARK_SAMPLES. */
void top_ring_push(struct top_ring *r, double v);
/* The newest value of [r] (NaN if none) and the largest of the newest
 * [width] (0 if none). */
double top_ring_last(const struct top_ring *r);
double top_ring_max(const struct top_ring *r, unsigned width);
/* The newest min(width, r->n) values of [r] as a sparkline into [out]
 * (NUL-terminated, cut at [size]): one character per value, its height
 * the value's share of the largest shown (8 levels: U+2581..U+2588 when
 * [utf8], else "_.-:=+*#"), a space for a NaN.  Returns the values drawn. */
unsigned top_spark_line(const struct top_ring *r, unsigned width, int utf8, char *out,
                        size_t size);

#endif /* OCGC_TOOLS_TOP_SPARK_H */
