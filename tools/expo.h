/* expo.h - the Prometheus text exposition writer (format 0.0.4) of
 * `ocgc serve` (private to tools/; code in expo.c): families with their
 * # HELP and # TYPE lines, samples with escaped labels, exact numbers, and
 * histograms from an ocgc_hist over fixed buckets chosen for GC pauses.
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

struct expo {
  expo_put_fn put;
  void *ctx;
};

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

void expo_init(struct expo *e, expo_put_fn put, void *ctx);

/* "# HELP name help" ("\\" and newlines escaped) and "# TYPE name type"
 * (type: "counter", "gauge", "histogram" ...). */
void expo_family(struct expo *e, const char *name, const char *type, const char *help);

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

/* The samples of histogram [h] (nanoseconds) under family [name]:
 * cumulative name_bucket{...,le="..."} for each of expo_buckets_ns and
 * +Inf, name_sum (seconds) and name_count.  NULL [h]: an empty histogram. */
void expo_hist(struct expo *e, const char *name, const struct expo_label *labels,
               size_t nlabels, const struct ocgc_hist *h);

/* [ns] as seconds, exactly, into buf (at least 32 bytes); returns buf. */
const char *expo_seconds(uint64_t ns, char *buf, size_t n);

#endif /* OCGC_TOOLS_EXPO_H */
