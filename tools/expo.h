/* expo.h - the exposition writer of `ocgc serve` (private to tools/; code
 * in expo.c), in the Prometheus text format 0.0.4 or in OpenMetrics 1.0.0:
 * families with their # HELP and # TYPE lines, samples with escaped labels,
 * exact numbers, and histograms over fixed buckets chosen for GC pauses.  Callers write the same calls for both formats; the
 * differences (family names of counters and infos, escaping in HELP, the
 * closing # EOF) are expo.c's.
 *
 * The text goes to a sink (expo_put_fn) in pieces.  A family's samples must
 * all follow its expo_family() call (the format wants a family's lines
 * together): callers loop over families outside, over processes inside. */
#ifndef OCGC_TOOLS_EXPO_H
#define OCGC_TOOLS_EXPO_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/consumer.h"

typedef void (*expo_put_fn)(void *ctx, const char *s, size_t n);

enum expo_format {
  EXPO_TEXT,       /* text/plain; version=0.0.4 */
  EXPO_OPENMETRICS /* application/openmetrics-text; version=1.0.0 */
};

struct expo {
  expo_put_fn put;
  void *ctx;
  enum expo_format format;
};

/* The Content-Type of a format's responses. */
const char *expo_content_type(enum expo_format f);

/* The format to answer a request whose Accept header is [accept] (NULL: no
 * header) with: the supported media range of highest q (OpenMetrics on a
 * tie, as the scraper that lists it first prefers it), text when nothing
 * supported is acceptable (a scraper reads text whatever it asked). */
enum expo_format expo_negotiate(const char *accept);

/* A label: name (ours: [a-zA-Z_][a-zA-Z0-9_]*, not checked) and value (any
 * bytes: escaped, and made valid UTF-8, by the writer). */
struct expo_label {
  const char *name;
  const char *value;
};

#define EXPO_MAX_LABELS 8 /* labels of one sample, le included */

/* The histogram buckets' upper bounds in nanoseconds, 1 us to 10 s
 * (1, 2.5, 5 per decade), then +Inf. */
#define EXPO_NBUCKETS 22
extern const uint64_t expo_buckets_ns[EXPO_NBUCKETS];

void expo_init(struct expo *e, expo_put_fn put, void *ctx, enum expo_format f);

/* "# HELP name help" (escaped) and "# TYPE name type".  [type] is
 * "counter" (name ends in _total), "gauge", "histogram" or "info" (name
 * ends in _info, value 1); [name] is the samples' name in both formats.  In
 * OpenMetrics the family of a counter or an info is named without its
 * suffix; in text an info is a gauge. */
void expo_family(struct expo *e, const char *name, const char *type, const char *help);

/* The end of an exposition: "# EOF" in OpenMetrics, nothing in text. */
void expo_finish(struct expo *e);

/* One sample line "name{labels} value".  [nlabels] <= EXPO_MAX_LABELS - 1;
 * labels with a NULL value are left out. */
void expo_u64(struct expo *e, const char *name, const struct expo_label *labels,
              size_t nlabels, uint64_t v);
/* [v] as Prometheus reads it: shortest exact form, +Inf, -Inf, NaN. */
void expo_double(struct expo *e, const char *name, const struct expo_label *labels,
                 size_t nlabels, double v);
/* [ns] nanoseconds as seconds, exactly ("1.5", "0.000000001", "3"). */
void expo_ns(struct expo *e, const char *name, const struct expo_label *labels,
             size_t nlabels, uint64_t ns);

/* The samples of a histogram under family [name], from the bucket counts
 * of an aggregator whose bounds were expo_buckets_ns
 * (ocgc_agg_opts.bounds_ns, exact at each bound): cumulative
 * name_bucket{...,le="..."} for each bound and +Inf, name_sum (seconds)
 * and name_count. */
void expo_buckets(struct expo *e, const char *name, const struct expo_label *labels,
                  size_t nlabels, const struct ocgc_bucket_counts *b);

/* [ns] as seconds, exactly, into buf (at least 32 bytes); returns buf. */
const char *expo_seconds(uint64_t ns, char *buf, size_t n);

#endif /* OCGC_TOOLS_EXPO_H */
