/* ocgc/timeline.h - a window's history in memory fixed at its making: the
 * pauses themselves (every one up to a bound, then the longest, each time
 * bucket's longest and a uniform sample), and per time bucket the pauses,
 * the collections, the bytes allocated and promoted, the heap, the events
 * lost and a live process's CPU, switches and faults: what a picture of a
 * window draws over time (ocgc's HTML report draws it).
 *
 * Fed by an aggregator's callbacks (ocgc_agg_opts.on_pause and on_lost,
 * ctx the timeline): libocgc's aggregator says what each pause is and
 * what the events had counted by then; the timeline keeps a bounded
 * picture of it.  Rates come from the events' own times, never from when
 * the caller polled, so a ring file read in one pass gives the series of
 * the live run it recorded; only /proc figures are sampled by the caller. */
#ifndef OCGC_PUBLIC_TIMELINE_H
#define OCGC_PUBLIC_TIMELINE_H

#include <ocgc/agg.h>
#include <ocgc/process.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A timeline (opaque; about 0.5 MB). */
struct ocgc_timeline;

/** Time buckets, at most: the first 1 ms wide, the width doubling (pairs
 * merged) whenever a time past the last comes. */
#define OCGC_TIMELINE_BUCKETS 1024u
#define OCGC_TIMELINE_EXACT 4000u  /**< up to this many pauses, every one is kept */
#define OCGC_TIMELINE_TOP 2000u    /**< past that: the longest ones (and each bucket's) */
#define OCGC_TIMELINE_SAMPLE 1000u /**< and a uniform sample of all (a fixed seed) */
/** The marks ocgc_timeline_marks() gives, at most. */
#define OCGC_TIMELINE_MAX_MARKS                                                              \
  (OCGC_TIMELINE_TOP + 2 * OCGC_TIMELINE_BUCKETS + OCGC_TIMELINE_SAMPLE > OCGC_TIMELINE_EXACT \
       ? OCGC_TIMELINE_TOP + 2 * OCGC_TIMELINE_BUCKETS + OCGC_TIMELINE_SAMPLE                 \
       : OCGC_TIMELINE_EXACT)

/** One pause kept. */
struct ocgc_timeline_mark {
  uint64_t t;    /**< its begin, producer clock */
  uint64_t ns;   /**< its duration (a stop-the-world member grows it) */
  uint64_t seq;  /**< its rank among the pauses recorded, from 0 */
  int kind;      /**< enum ocgc_kind of its most significant collection
                      (ocgc_agg_pause.kind), or OCGC_KIND_NONE */
  int cause;     /**< enum ocgc_cause, or OCGC_CAUSE_NONE */
};

/** One time bucket: [origin + i * width, + width).  Counts are the
 * differences between the counts successive pauses carry (the first
 * pause's from the aggregator's start), so sums over buckets are
 * differences of counts, and each is put where it happened:
 * - bytes allocated happen between collections, and the producer counts
 *   them at the next minor collection: they are spread over the time from
 *   the previous pause's end (the first: the first event read, or the
 *   origin) to this one's begin (the program does not allocate while
 *   stopped), in proportion to each bucket's share of that time;
 * - bytes promoted and collections happen inside the pause: they are in
 *   the bucket of its end;
 * - pause time is the time inside pauses, each pause laid at [begin,
 *   begin + duration] and clipped at the buckets' edges, overlaps counted
 *   once (pause_ns <= width always: a share of the bucket's wall time);
 * - the heap is a gauge, known only once an event said it (a heap change,
 *   as the aggregator's pauses carry it): heap_t 0 means no figure in
 *   this bucket, never a heap of 0. */
struct ocgc_timeline_bucket {
  uint64_t pauses, pause_ns, max_ns;  /**< pauses begun here, time in pauses here, the longest */
  uint64_t alloc, promo;              /**< bytes allocated and promoted */
  uint64_t coll[OCGC_KIND_COUNT];     /**< collections by kind */
  uint64_t sample_t;                  /**< time of its last pause's end (0: none here) */
  uint64_t heap, top_heap;            /**< the heap as of heap_t (when heap_t is not 0) */
  uint64_t cpu_ns, ctx, faults;       /**< a live process's, since the sample before */
  uint64_t proc_t;                    /**< time of its last /proc sample (0: none) */
  struct ocgc_timeline_mark top;      /**< its longest pause (top.ns 0: none) */
  uint64_t loss_from, loss_to;        /**< events were lost in [from, to] (to 0: none) */
  uint64_t heap_t;                    /**< time of its last heap figure (0: none here) */
  /** Its pause of the most significant kind (the longest of them), kept
   * among the marks like top, so a rare kind shows whatever the flood;
   * rank.ns 0: none. */
  struct ocgc_timeline_mark rank;
};

/** What a timeline holds as a whole. */
struct ocgc_timeline_info {
  size_t sz;                  /**< set by the caller: sizeof(struct ocgc_timeline_info) */
  uint64_t origin;            /**< bucket 0 begins here (producer clock) */
  uint64_t width;             /**< a bucket's width in ns (0: nothing recorded yet) */
  unsigned nbuckets;          /**< buckets in use: up to the last that holds anything */
  uint64_t pauses;            /**< pauses recorded (stop-the-world members not) */
  uint64_t max_ns;            /**< the longest */
  int live;                   /**< /proc samples were given */
  /** Pauses recorded by their kind (ocgc_timeline_mark.kind), and those
   * of no known kind: every kind seen, for a legend. */
  uint64_t kind_pauses[OCGC_KIND_COUNT], unknown_pauses;
};

/** An empty timeline: 0, or -ENOMEM. */
OCGC_API int ocgc_timeline_new(struct ocgc_timeline **out);
OCGC_API void ocgc_timeline_free(struct ocgc_timeline *tl); /**< NULL: nothing */

/** Where time starts (producer clock), unless something set it already
 * (a pause sets it to the first event its counts started with, or to its
 * own begin; a loss to its time). */
OCGC_API void ocgc_timeline_origin(struct ocgc_timeline *tl, uint64_t t);

/** An ocgc_agg_pause_fn (ctx: the timeline). */
OCGC_API void ocgc_timeline_on_pause(const struct ocgc_agg_pause *p, void *ctx);
/** An ocgc_agg_lost_fn (ctx: the timeline): a loss is known at its start
 * and ends at the next pause, or at ocgc_timeline_end(). */
OCGC_API void ocgc_timeline_on_lost(unsigned ring, uint64_t lost, int exact, uint64_t after_ns,
                                    void *ctx);
/** A live process's /proc figures at [t] (CLOCK_MONOTONIC: for a live
 * process the producer's clock): CPU time (user and system), context
 * switches (both kinds) and page faults (both kinds), as differences from
 * the sample before. */
OCGC_API void ocgc_timeline_proc_sample(struct ocgc_timeline *tl, uint64_t t,
                                        const struct ocgc_process_figures *f);
/** The window ended at [t]: an open loss ends there. */
OCGC_API void ocgc_timeline_end(struct ocgc_timeline *tl, uint64_t t);

/** Fill *out as far as out->sz says: 0, or -EINVAL. */
OCGC_API int ocgc_timeline_info(const struct ocgc_timeline *tl, struct ocgc_timeline_info *out);
/** Bucket [i] (below OCGC_TIMELINE_BUCKETS, else NULL): the timeline's
 * memory, valid until it records again. */
OCGC_API const struct ocgc_timeline_bucket *ocgc_timeline_bucket(const struct ocgc_timeline *tl,
                                                                 unsigned i);
/** The pauses to draw, in time order, into out[0..OCGC_TIMELINE_MAX_MARKS)
 * (every pause while there were at most OCGC_TIMELINE_EXACT; else the
 * OCGC_TIMELINE_TOP longest, each bucket's longest and its most
 * significant, and the sample, once each): how many. */
OCGC_API unsigned ocgc_timeline_marks(const struct ocgc_timeline *tl,
                                      struct ocgc_timeline_mark *out);
/** The [i]th loss period (a run of buckets that lost events): 1 with
 * *from and *to, 0 past the last. */
OCGC_API int ocgc_timeline_loss(const struct ocgc_timeline *tl, unsigned i, uint64_t *from,
                                uint64_t *to);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_TIMELINE_H */
