/* ocgc/snapshot.h - snapshots: copies of an aggregator's knowledge that the
 * caller keeps, and the rates between two. */
#ifndef OCGC_PUBLIC_SNAPSHOT_H
#define OCGC_PUBLIC_SNAPSHOT_H

#include <ocgc/agg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A cause table row: collections of a kind with a cause. */
struct ocgc_cause_row {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_cause_row) (OCGC_OPTS_INIT) */
  uint64_t count;
  uint64_t total_ns;             /**< time in those collections */
  uint64_t worst_ns;             /**< longest of them */
};

/** A snapshot: a copy of everything the aggregator knows now, which the
 * caller keeps as long as it likes (compare two for rates). */
struct ocgc_snapshot;

/** Copy what the aggregator knows now.  A producer that keeps its totals
 * busy for the whole read does not make this fail: the counters are then
 * its last consistent totals (time_ns says when they were read), or the
 * events' own counts (exact 0) if none was ever read. */
OCGC_API int ocgc_agg_snapshot(struct ocgc_agg *agg, struct ocgc_snapshot **out);
/** Fixed-bucket counts (ocgc_agg_opts.bounds_ns) of a snapshot. */
struct ocgc_bucket_counts {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_bucket_counts) (OCGC_OPTS_INIT) */
  uint64_t count;                /**< values (saturating) */
  uint64_t sum_ns;               /**< their sum (saturating) */
  unsigned nbounds;              /**< the aggregator's */
  uint64_t le[OCGC_MAX_BOUNDS];  /**< le[i]: values <= bounds_ns[i] (cumulative) */
};
/** The pauses' bucket counts (with a pause that could still grow counted,
 * as in ocgc_snapshot_pauses()): 0, -EINVAL, or -ENODATA if the aggregator
 * was given no bounds. */
OCGC_API int ocgc_snapshot_pause_buckets(const struct ocgc_snapshot *snap,
                                         struct ocgc_bucket_counts *out);
/** The same for the collections of kind [kind] (enum ocgc_kind). */
OCGC_API int ocgc_snapshot_kind_buckets(const struct ocgc_snapshot *snap, unsigned kind,
                                        struct ocgc_bucket_counts *out);

/** Bring *snap up to date with [agg] as ocgc_agg_snapshot() would, reusing
 * its memory (no allocation once it has every histogram [agg] has: for a
 * caller that snapshots often, such as an exporter at each scrape).  A NULL
 * *snap is made.  On error *snap holds what it held before. */
OCGC_API int ocgc_agg_snapshot_update(struct ocgc_agg *agg, struct ocgc_snapshot **snap);
/** Free [snap] and its histograms.  NULL is accepted. */
OCGC_API void ocgc_snapshot_free(struct ocgc_snapshot *snap);
/** Copy [snap]'s counters into *out (nothing if either is NULL). */
OCGC_API void ocgc_snapshot_counters(const struct ocgc_snapshot *snap, struct ocgc_counters *out);
/** Pause durations; never NULL. */
OCGC_API const struct ocgc_hist *ocgc_snapshot_pauses(const struct ocgc_snapshot *snap);
/** Durations of the collections of one kind; NULL for a bad kind. */
OCGC_API const struct ocgc_hist *ocgc_snapshot_kind(const struct ocgc_snapshot *snap,
                                                   unsigned kind);
/** Phase ids are below this in every numbering (5.2, 5.3). */
#define OCGC_PHASE_MAX 64u

/** Durations of a phase (the source's id numbering); NULL if never seen. */
OCGC_API const struct ocgc_hist *ocgc_snapshot_phase(const struct ocgc_snapshot *snap,
                                                    unsigned phase);
/** Row of the cause table; 0, or -EINVAL for a bad kind or cause. */
OCGC_API int ocgc_snapshot_cause(const struct ocgc_snapshot *snap, unsigned kind,
                                 unsigned cause, struct ocgc_cause_row *out);

/** Rates between two moments of one aggregator (two snapshots, or an
 * interval's ends), over the producer's clock. */
struct ocgc_rates {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_rates) (OCGC_OPTS_INIT) */
  double seconds;                          /**< producer time between them */
  double collections_per_s[OCGC_KIND_COUNT];
  double major_cycles_per_s;
  double allocated_bytes_per_s, promoted_bytes_per_s;
  double promotion_ratio;                  /**< promoted / allocated */
  double gc_time_share;                    /**< GC time / elapsed, 0..1 */
  uint64_t heap_bytes;                     /**< at the newer snapshot */
};
/** The rates between two snapshots of the same aggregator: 0, or -EINVAL
 * (*out all 0) if [newer] is not later than [older]. */
OCGC_API int ocgc_snapshot_rates(const struct ocgc_snapshot *older,
                                 const struct ocgc_snapshot *newer, struct ocgc_rates *out);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_SNAPSHOT_H */
