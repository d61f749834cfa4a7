/* ocgc/expo.h - the Prometheus exposition: a writer of the text format
 * 0.0.4 and of OpenMetrics 1.0.0 (families with their # HELP and # TYPE
 * lines, samples with escaped labels, exact numbers, histograms over fixed
 * buckets chosen for GC pauses), the choice between them from a scraper's
 * Accept header, and the metrics of a watch (ocgc/watch.h): the series
 * `ocgc serve` exports, so that an agent exporting them says the same
 * thing under the same names (as HdrHistogram_c's library prints its own
 * percentiles).
 *
 * Callers write the same calls for both formats; the differences (family
 * names of counters and infos, escaping in HELP, the closing # EOF) are
 * the writer's.  The text goes to a sink in pieces.  A family's samples
 * must all follow its ocgc_expo_family() call (the format wants a family's
 * lines together): loop over families outside, over processes inside. */
#ifndef OCGC_PUBLIC_EXPO_H
#define OCGC_PUBLIC_EXPO_H

#include <ocgc/agg.h>
#include <ocgc/watch.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The sink of the text: [n] bytes at [s] (not NUL-terminated). */
typedef void (*ocgc_put_fn)(void *ctx, const char *s, size_t n);

enum ocgc_expo_format {
  OCGC_EXPO_TEXT = 0,       /**< text/plain; version=0.0.4 */
  OCGC_EXPO_OPENMETRICS = 1 /**< application/openmetrics-text; version=1.0.0 */
};

/** A writer: no resources, set up by ocgc_expo_init(); its fields are the
 * library's. */
struct ocgc_expo {
  ocgc_put_fn put;
  void *ctx;
  enum ocgc_expo_format format;
};

/** A label: name (the caller's: [a-zA-Z_][a-zA-Z0-9_]*, not checked) and
 * value (any bytes: escaped and made valid UTF-8 by the writer, control
 * characters written as U+FFFD; NULL: the label is left out). */
struct ocgc_expo_label {
  const char *name;
  const char *value;
};

#define OCGC_EXPO_MAX_LABELS 8 /**< labels of one sample, le included */

/** The histogram buckets' upper bounds: 1 us to 10 s in libocgc's one
 * bucket scheme (ocgc_hist_bounds(): 1, 2 and 5 per decade, as `ocgc top`
 * and the HTML report draw them), then +Inf. */
#define OCGC_EXPO_NBUCKETS 22
/** Those bounds in ns (OCGC_EXPO_NBUCKETS of them, ascending): give them
 * as ocgc_agg_opts.bounds_ns (or ocgc_watch_opts.bounds_ns) to count
 * exactly at them. */
OCGC_API const uint64_t *ocgc_expo_bounds_ns(void);

/** The Content-Type of a format's responses (static). */
OCGC_API const char *ocgc_expo_content_type(enum ocgc_expo_format f);

/** The format to answer a request whose Accept header is [accept] (NULL:
 * no header) with: the supported media range of highest q (OpenMetrics on
 * a tie, as the scraper that lists it first prefers it), text when
 * nothing supported is acceptable (a scraper reads text whatever it
 * asked).  The header is a client's bytes: read forward, within the
 * string. */
OCGC_API enum ocgc_expo_format ocgc_expo_negotiate(const char *accept);

OCGC_API void ocgc_expo_init(struct ocgc_expo *e, ocgc_put_fn put, void *ctx,
                             enum ocgc_expo_format f);

/** "# HELP name help" (escaped) and "# TYPE name type".  [type] is
 * "counter" (name ends in _total), "gauge", "histogram" or "info" (name
 * ends in _info, value 1); [name] is the samples' name in both formats.
 * In OpenMetrics the family of a counter or an info is named without its
 * suffix; in text an info is a gauge. */
OCGC_API void ocgc_expo_family(struct ocgc_expo *e, const char *name, const char *type,
                               const char *help);

/** The end of an exposition: "# EOF" in OpenMetrics, nothing in text. */
OCGC_API void ocgc_expo_finish(struct ocgc_expo *e);

/** One sample line "name{labels} value", the integer exact.  [nlabels] at
 * most OCGC_EXPO_MAX_LABELS - 1. */
OCGC_API void ocgc_expo_u64(struct ocgc_expo *e, const char *name,
                            const struct ocgc_expo_label *labels, size_t nlabels, uint64_t v);
/** [v] as Prometheus reads it: the shortest exact form, +Inf, -Inf, NaN. */
OCGC_API void ocgc_expo_double(struct ocgc_expo *e, const char *name,
                               const struct ocgc_expo_label *labels, size_t nlabels, double v);
/** [ns] nanoseconds as seconds, exactly ("1.5", "0.000000001", "3"). */
OCGC_API void ocgc_expo_ns(struct ocgc_expo *e, const char *name,
                           const struct ocgc_expo_label *labels, size_t nlabels, uint64_t ns);

/** The samples of a histogram under family [name], from bucket counts
 * taken at ocgc_expo_bounds_ns() (exact at each bound): cumulative
 * name_bucket{...,le="..."} for each bound and +Inf, name_sum (seconds)
 * and name_count.  Counts of another number of bounds: nothing written. */
OCGC_API void ocgc_expo_buckets(struct ocgc_expo *e, const char *name,
                                const struct ocgc_expo_label *labels, size_t nlabels,
                                const struct ocgc_bucket_counts *b);

/** [ns] as seconds, exactly, into buf (at least 32 bytes); returns buf. */
OCGC_API const char *ocgc_expo_seconds(uint64_t ns, char *buf, size_t n);

/** The program label of every series of a watch: at most this many bytes
 * of the program's name (cut between characters, then U+2026), so that no
 * process's share of an exposition depends on what it calls itself. */
#define OCGC_EXPO_LABEL_MAX 32

/** The families of [w] as its last refresh read it (the processes that
 * have been read whole), one after the other: ocaml_gc_* (pauses and
 * collections as histograms, collections by kind and cause, cycles, GC
 * time, bytes allocated and promoted, heap, GC settings), ocaml_runtime_info,
 * ocgc_ring_events*, ocaml_process_*; per process (labels pid and program)
 * or, for a watch made with by_program, per program.  Every counter from
 * what only grows (the watch's held counters), every figure a process cannot
 * give (stock OCaml 5 rings have no heap; another user's descriptors) left
 * out, never written as 0.  The caller writes its own families after it,
 * then ocgc_expo_finish().  docs/serve.md lists the series. */
OCGC_API void ocgc_watch_expose(const struct ocgc_watch *w, struct ocgc_expo *e);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_EXPO_H */
