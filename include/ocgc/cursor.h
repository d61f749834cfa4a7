/* ocgc/cursor.h - cursors: reading the events of every ring of a source, with
 * loss counted and every poll bounded. */
#ifndef OCGC_PUBLIC_CURSOR_H
#define OCGC_PUBLIC_CURSOR_H

#include <ocgc/event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- cursors: reading events ------------------------------------------------ */

struct ocgc_cursor;

enum ocgc_cursor_start {
  OCGC_START_OLDEST = 0, /**< from the oldest event still in the ring */
  OCGC_START_NOW = 1,    /**< only events written after the cursor was made */
};

struct ocgc_cursor_opts {
  size_t sz;                     /**< sizeof(struct ocgc_cursor_opts) */
  enum ocgc_cursor_start start;
  ocgc_event_fn on_event;        /**< may be NULL (then events are only counted) */
  ocgc_lost_fn on_lost;          /**< may be NULL */
  void *ctx;                     /**< passed to the callbacks */
  size_t batch_words;            /**< copy buffer per poll, 0 = 16 Ki words
                                      (what a poll copied past 16 KiB is
                                      given back to the system after it) */
  /** The budget of one ocgc_cursor_poll(), so that no writer, however fast
   * or hostile, can hold a poll: it delivers at most poll_max_events events
   * (0: 1 Mi) and returns once poll_max_ns of CLOCK_MONOTONIC have passed
   * (0: 10 ms; checked every 64 events and between batches, so a slow
   * callback stretches it by up to 64 calls).  Set them to UINT64_MAX for
   * no limit.  A poll cut short says so in ocgc_cursor_stats.behind. */
  uint64_t poll_max_events;
  uint64_t poll_max_ns;
};

/** Make a cursor over every ring of [src].  O(1) per ring whatever the
 * writer does: an OCGC_START_NOW cursor of an ocgc file starts at the
 * oldest event and counts those before the tail of now as skipped while
 * its polls pass them.  Against a live producer that holds its seqlock
 * (2 ms, as for ocgc_cursor_poll), the cursor is still made, without exact counts
 * (lost_exact 0, loss estimated as for stock files).  The source must
 * outlive it. */
OCGC_API int ocgc_cursor_new(struct ocgc_source *src, const struct ocgc_cursor_opts *opts,
                             struct ocgc_cursor **out);
/** Free [cur] (not its source).  NULL is accepted. */
OCGC_API void ocgc_cursor_free(struct ocgc_cursor *cur);

/** Read what the producers have written since the last poll, calling the
 * callbacks, at most [max_events] events (0: the budget's limit) and within
 * the cursor's budget.  Returns the number of events delivered, or a
 * negative error: OCGC_E_CORRUPT (an invalid event, a tail that moved back,
 * a count no honest writer makes; the cursor skips to the ring's tail,
 * never backwards, and counts the rest as lost) or OCGC_E_TRUNCATED.  A
 * producer holding its seqlock for 2 ms (stopped or preempted in the
 * middle of a publication, or lying) only ends the poll early
 * (stats.busy_polls): come back to it later rather than at once, since
 * the next poll would wait as long.  When a poll stops before the tails
 * (the budget, the limit, a callback or an error), stats.behind is 1:
 * poll again. */
OCGC_API int64_t ocgc_cursor_poll(struct ocgc_cursor *cur, uint64_t max_events);

/** What a cursor has accounted for, over all rings since it was made. */
struct ocgc_cursor_stats {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_cursor_stats) (OCGC_OPTS_INIT) */
  uint64_t seen;       /**< events delivered */
  uint64_t lost;       /**< events overwritten before being read */
  uint64_t skipped;    /**< ocgc files: events written before the cursor's
                            start (OCGC_START_NOW), or overwritten before the
                            cursor existed (OCGC_START_OLDEST); then
                            seen + lost + skipped == events written, once
                            the cursor has read up to the tail */
  int lost_exact;      /**< 1 if lost is exact (ocgc files) */
  uint64_t lost_words; /**< words overwritten before being read */
  int behind;          /**< the last poll stopped before the tail of some ring */
  uint64_t cut_polls;  /**< polls ended by the budget (poll_max_*) */
  uint64_t corrupt;    /**< impossible data met (each also counted as lost) */
  uint64_t busy_polls; /**< polls ended early by a producer holding its seqlock */
  /** Of lost, the events that were in the ring (below its tail) when the
   * cursor was made and that the writer overwrote before the cursor
   * reached them: a full ring being written as an OCGC_START_OLDEST cursor
   * begins at its oldest event.  A reader that counts its own loss from
   * the moment it came (an exporter's loss counter) subtracts them.  Exact
   * for ocgc files, unless a loss spans the tail of then (split by words). */
  uint64_t lost_before;
};
/** Copy [cur]'s statistics into *out (nothing if either is NULL). */
OCGC_API void ocgc_cursor_stats(const struct ocgc_cursor *cur, struct ocgc_cursor_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_CURSOR_H */
