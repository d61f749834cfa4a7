/* ocgc/drain.h - draining: reading until caught up with a producer, within
 * bounds of events, time and a stop flag. */
#ifndef OCGC_PUBLIC_DRAIN_H
#define OCGC_PUBLIC_DRAIN_H

#include <signal.h>

#include <ocgc/agg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- draining: reading until caught up, within bounds ------------------------ */

/** How far a drain may go.  A drain polls until its reader has caught up
 * with the producer (stats.behind 0), and ends sooner at the first of
 * these, so that no producer, however fast or stuck, keeps the caller
 * from its screen, its signals or its next target. */
struct ocgc_drain_opts {
  size_t sz;                  /**< sizeof(struct ocgc_drain_opts) */
  /** Events passed (seen, skipped or lost) at most; 0: the source's
   * ocgc_source_drain_bound(), which reads a whole file. */
  uint64_t max_events;
  /** CLOCK_MONOTONIC time (ns) after which no further poll starts; 0:
   * none.  A drain of a live producer wants one: one that writes as fast
   * as we read holds a drain for max_events, seconds on a big ring. */
  uint64_t deadline_ns;
  /** Nonzero (a signal handler's flag) ends the drain after the poll in
   * progress, so within one poll's budget (10 ms by default).  May be NULL. */
  const volatile sig_atomic_t *stop;
};

/** What a drain did. */
struct ocgc_drain_result {
  size_t sz;                  /**< set by the caller: sizeof(struct ocgc_drain_result) */
  uint64_t passed;            /**< events passed (seen, skipped or lost) */
  uint64_t polls;             /**< polls made */
  int caught_up;              /**< 1: it ended at the producer's tails */
  /** 1: it ended behind with a last poll that passed nothing: a producer
   * holding its seqlock (stopped mid-publication, or lying), as opposed to
   * one that merely writes much.  Come back to it later, not at once. */
  int stuck;
};

/** Poll [agg] until it has caught up, within [opts] (NULL: a whole ring's
 * worth of events, no deadline, no stop flag; an unknown option: -EINVAL),
 * and also after 100 polls in a row that passed nothing or one that a
 * seqlock held past the library's wait ended with nothing passed.  Fills
 * *out if it is not NULL (one whose sz is below sz itself: -EINVAL before
 * any poll).  Returns 0, or the first poll's error (the
 * events before it are counted, as ocgc_agg_poll()). */
OCGC_API int ocgc_agg_drain(struct ocgc_agg *agg, const struct ocgc_drain_opts *opts,
                            struct ocgc_drain_result *out);
/** The same for a cursor. */
OCGC_API int ocgc_cursor_drain(struct ocgc_cursor *cur, const struct ocgc_drain_opts *opts,
                               struct ocgc_drain_result *out);
/** The drain bound of [src]: four times the events its rings can hold (two
 * words each at least), so that a whole file is read and a producer
 * writing as fast as we read cannot hold a drain beyond that. */
OCGC_API uint64_t ocgc_source_drain_bound(const struct ocgc_source *src);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_DRAIN_H */
