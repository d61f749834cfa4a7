/* ocgc/interval.h - intervals: what happened between two moments of one
 * aggregator (the counters' growth, rates, the interval's own pauses). */
#ifndef OCGC_PUBLIC_INTERVAL_H
#define OCGC_PUBLIC_INTERVAL_H

#include <ocgc/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the cumulative counters of [newer] grew by since [older], into
 * *out: each count (collections, cycles, forced majors, bytes allocated,
 * promoted and allocated directly, GC time, pauses, events seen and lost)
 * as newer minus older, 0 where it went down (a different aggregator or
 * producer); the gauges (heap_bytes, top_heap_bytes), flags (exact,
 * lost_exact, pause_rule) and times (time_ns, first_event_ns,
 * last_event_ns) are the newer's.  *out may be either input.  The one
 * rule every interval uses. */
OCGC_API void ocgc_counters_growth(const struct ocgc_counters *older,
                                   const struct ocgc_counters *newer,
                                   struct ocgc_counters *out);

/** The time a snapshot's counters cover, and those counters. */
struct ocgc_coverage {
  size_t sz;                  /**< set by the caller: sizeof(struct ocgc_coverage) */
  int known;                  /**< 0: nothing says when (a stock file without events) */
  uint64_t start_ns, end_ns;  /**< producer clock */
  uint64_t wall_ns;           /**< end - start (0 if not later) */
  struct ocgc_counters counts; /**< the counters, grown since [base] when it is given */
};

/** What [snap] of [src] covers.  With [base] (an earlier snapshot of the
 * same aggregator): the window between the two, and the counters' growth
 * over it (ocgc_counters_growth).  Else the producer's whole life, from its
 * ring's making to its exit, or to now while it runs; a producer that died
 * without marking its ring (killed) has no exit time, so it ends at
 * [ended_ns] (when the caller saw it gone, producer clock; 0: unknown) or
 * at its last event if that is later; a stock OCaml 5 file, which says
 * nothing of time, from its first event to its last.  Fills *out as far
 * as out->sz says: 0, or -EINVAL. */
OCGC_API int ocgc_snapshot_coverage(const struct ocgc_source *src, const struct ocgc_snapshot *base,
                                    const struct ocgc_snapshot *snap, uint64_t ended_ns,
                                    struct ocgc_coverage *out);

/* ---- intervals: what happened in the last second ------------------------------ */

/** An interval recorder over an aggregator: each call to
 * ocgc_interval_next() ends the interval in progress and begins the next,
 * as HdrHistogram's interval recorder does.  Its pauses: each pause
 * counts once, in the interval in which the aggregator first counted it;
 * one that a later collection may still join counts at an interval's end
 * at its length so far (as a snapshot's pause count has it) and not again
 * when it ends, so the pauses of consecutive intervals add up to the
 * growth of the pause count.  An aggregator may have several recorders
 * (a screen's refresh and a per-second sparkline); free them before it
 * (one freed after is harmless, and useless). */
struct ocgc_interval;

/** What one interval held. */
struct ocgc_interval_figures {
  size_t sz;                   /**< set by the caller: sizeof(struct ocgc_interval_figures) */
  uint64_t start_ns, end_ns;   /**< the producer's clock at its ends (counters' time_ns) */
  struct ocgc_counters growth; /**< ocgc_counters_growth() of its ends */
  /** Rates over end_ns - start_ns; rates_known 0 (and every rate 0) when
   * that is not positive: a producer that exited just after the start
   * may have an exit time before it (the counts still add up). */
  struct ocgc_rates rates;
  int rates_known;
};

/** A recorder over [agg] whose first interval begins now: 0, -EINVAL or
 * -ENOMEM.  Memory: two pause histograms and a word per ring. */
OCGC_API int ocgc_interval_new(struct ocgc_agg *agg, struct ocgc_interval **out);
/** Take [iv] off its aggregator and free it.  NULL is accepted. */
OCGC_API void ocgc_interval_free(struct ocgc_interval *iv);
/** End the interval in progress now (read the aggregator first: drain
 * it), fill *out (as far as out->sz says), and begin the next.  Returns 0,
 * -EINVAL (also for a recorder whose aggregator was freed), or the error
 * of reading the producer's totals. */
OCGC_API int ocgc_interval_next(struct ocgc_interval *iv, struct ocgc_interval_figures *out);
/** The pauses of the interval last ended (empty before the first end);
 * valid until the next ocgc_interval_next(). */
OCGC_API const struct ocgc_hist *ocgc_interval_pauses(const struct ocgc_interval *iv);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_INTERVAL_H */
