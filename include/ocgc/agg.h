/* ocgc/agg.h - the aggregator: a cursor and a collection stream in;
 * histograms, causes, pauses and counters out. */
#ifndef OCGC_PUBLIC_AGG_H
#define OCGC_PUBLIC_AGG_H

#include <ocgc/cursor.h>
#include <ocgc/stream.h>
#include <ocgc/hist.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- aggregation ------------------------------------------------------------------- */

/** An aggregator reads a source through its own cursor and collection
 * stream, and keeps: pauses (as the stream builds them: one stop of the
 * mutator each), a histogram per collection kind and per phase, a cause
 * table, and counters (exact from the producer's totals in ocgc files; from
 * the events in stock files). */
struct ocgc_agg;

/** How a field of struct ocgc_counters behaves, the rule each user applies
 * to all the fields of one kind (OCGC_COUNTER_FIELDS). */
enum ocgc_counter_kind {
  /** Only grows (an honest producer's): a growth subtracts it, a watch
   * never shows it less than before, a program sums it. */
  OCGC_COUNTER_MONOTONE = 0,
  /** A level (the heap): a growth keeps the newer's. */
  OCGC_COUNTER_GAUGE = 1,
  /** A moment of the producer's clock, ns: a growth keeps the newer's. */
  OCGC_COUNTER_TIME = 2,
  /** A flag or a small enum (int): a growth keeps the newer's. */
  OCGC_COUNTER_FLAG = 3
};

/** Every field of struct ocgc_counters after sz, in order, X(kind, type,
 * name, dim, unit) each: its enum ocgc_counter_kind (without the
 * OCGC_COUNTER_ prefix), its C type, its name, its array bound ([N], or
 * empty for one value) and its unit ("bytes", "ns", or "" for a number of
 * things).  The struct is made from it, so a loop over it sees every field;
 * adding a figure is a row at the end (the layout is ABI: never reorder)
 * plus its printing where it is shown by hand.  Bytes and times are
 * cumulative since the producer started (ocgc files) or since the cursor's
 * start (stock). */
#define OCGC_COUNTER_FIELDS(X)                                                  \
  /* producer clock: last update seen */                                        \
  X(TIME, uint64_t, time_ns, , "ns")                                            \
  /* collections by kind (enum ocgc_kind) */                                    \
  X(MONOTONE, uint64_t, collections, [OCGC_KIND_COUNT], "")                     \
  /* major cycles completed */                                                  \
  X(MONOTONE, uint64_t, major_cycles, , "")                                     \
  X(MONOTONE, uint64_t, forced_majors, , "")                                    \
  /* minor heap allocation */                                                   \
  X(MONOTONE, uint64_t, allocated_bytes, , "bytes")                             \
  X(MONOTONE, uint64_t, promoted_bytes, , "bytes")                              \
  X(MONOTONE, uint64_t, direct_major_bytes, , "bytes")                          \
  X(GAUGE, uint64_t, heap_bytes, , "bytes")                                     \
  X(GAUGE, uint64_t, top_heap_bytes, , "bytes")                                 \
  /* time inside outermost collections (stock files: the sum of the pauses  */ \
  /* seen) */                                                                   \
  X(MONOTONE, uint64_t, gc_time_ns, , "ns")                                     \
  /* pauses seen by this aggregator */                                          \
  X(MONOTONE, uint64_t, pauses, , "")                                           \
  X(MONOTONE, uint64_t, events_seen, , "")                                      \
  X(MONOTONE, uint64_t, events_lost, , "")                                      \
  X(FLAG, int, lost_exact, , "")                                                \
  /* 1: from the producer's totals */                                           \
  X(FLAG, int, exact, , "")                                                     \
  /* Collections this aggregator saw complete in the events, by kind: with  */ \
  /* nothing lost, their growth equals that of collections[] (a cross-check */ \
  /* of the producer's totals against its events). */                          \
  X(MONOTONE, uint64_t, event_collections, [OCGC_KIND_COUNT], "")               \
  /* Producer timestamps of the oldest and newest events this aggregator    */ \
  /* read (0 before any): the span of time its histograms cover. */            \
  X(TIME, uint64_t, first_event_ns, , "ns")                                     \
  X(TIME, uint64_t, last_event_ns, , "ns")                                      \
  /* How the pauses were told apart (enum ocgc_pause_rule). */                  \
  X(FLAG, int, pause_rule, , "")                                                \
  /* The heap after GC: the major heap not free when the last major cycle   */ \
  /* ended (the producer's totals, live_words x 8), a gauge; 0 until a      */ \
  /* cycle ends, and for stock files and producers before ext_version 4. */    \
  X(GAUGE, uint64_t, live_bytes, , "bytes")

/* Row helpers (not API). */
#define OCGC_ROW_COUNTER_MEMBER_(kind, type, name, dim, unit) type name dim;
#define OCGC_ROW_COUNTER_ONE_(kind, type, name, dim, unit) +1
/* A monotone count, a gauge or a time is one or more uint64_t words (the
 * loops over the table read them so); a flag is an int. */
#define OCGC_ROW_COUNTER_WORDS_(kind, type, name, dim, unit)                   \
  OCGC_STATIC_ASSERT(OCGC_COUNTER_##kind == OCGC_COUNTER_FLAG                   \
                         ? sizeof(((struct ocgc_counters *)0)->name) == sizeof(int)  \
                         : sizeof(((struct ocgc_counters *)0)->name) % 8 == 0,  \
                     "counter " #name ": a flag is an int, the rest 64-bit words");

/** Counters at one moment: the fields of OCGC_COUNTER_FIELDS. */
struct ocgc_counters {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_counters) (OCGC_OPTS_INIT) */
  OCGC_COUNTER_FIELDS(OCGC_ROW_COUNTER_MEMBER_)
};
/** Fields in OCGC_COUNTER_FIELDS. */
#define OCGC_COUNTER_NFIELDS (0 OCGC_COUNTER_FIELDS(OCGC_ROW_COUNTER_ONE_))

OCGC_COUNTER_FIELDS(OCGC_ROW_COUNTER_WORDS_)
/* A new row trips this on purpose: then bump it, and add the figure where
 * it is printed by hand (the comments "by hand, not a loop over the
 * counters' table" in tools/ and libconsumer/ say where). */
OCGC_STATIC_ASSERT(OCGC_COUNTER_NFIELDS == 20, "a new counter: also its printing where it is "
                                               "printed by hand");
#if SIZE_MAX == UINT64_MAX
/* The layout the struct had before the table (LP64): ABI, unchanged. */
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, time_ns) == 8, "c.time_ns");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, collections) == 16, "c.collections");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, major_cycles) == 48, "c.major_cycles");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, forced_majors) == 56, "c.forced_majors");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, allocated_bytes) == 64, "c.allocated");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, promoted_bytes) == 72, "c.promoted");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, direct_major_bytes) == 80, "c.direct");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, heap_bytes) == 88, "c.heap");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, top_heap_bytes) == 96, "c.top_heap");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, gc_time_ns) == 104, "c.gc_time_ns");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, pauses) == 112, "c.pauses");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, events_seen) == 120, "c.events_seen");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, events_lost) == 128, "c.events_lost");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, lost_exact) == 136, "c.lost_exact");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, exact) == 140, "c.exact");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, event_collections) == 144, "c.event_coll");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, first_event_ns) == 176, "c.first_event");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, last_event_ns) == 184, "c.last_event");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, pause_rule) == 192, "c.pause_rule");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_counters, live_bytes) == 200, "c.live_bytes");
OCGC_STATIC_ASSERT(sizeof(struct ocgc_counters) == 208, "struct ocgc_counters is 208 bytes");
#endif

/** A pause as the aggregator records it (ocgc_agg_opts.on_pause), with
 * what the aggregator had counted from the events when it ended. */
struct ocgc_agg_pause {
  struct ocgc_pause pause;    /**< the stream's pause (stw_member: see there) */
  /** The kind (enum ocgc_kind) and cause (enum ocgc_cause) of its most
   * significant collection (ocgc_kind_outranks(): a compaction over a
   * finished major cycle over a slice over a minor one, then the longest,
   * nested collections included), or OCGC_KIND_NONE and OCGC_CAUSE_NONE
   * when none was seen (a ring past the 128th). */
  int kind, cause;
  /** What the events read so far counted (exact 0: not the producer's
   * totals, so that the growth between two pauses, ocgc_counters_growth(),
   * is what happened between them, whatever the source): collections by
   * kind, bytes allocated in and promoted from the minor heap, the heap
   * and its top as last reported (0 while not known: before any heap
   * figure; a cursor that starts now on an ocgc ring starts from the
   * producer's totals); pauses as before this one. */
  struct ocgc_counters counts;
};
typedef void (*ocgc_agg_pause_fn)(const struct ocgc_agg_pause *p, void *ctx);
typedef void (*ocgc_agg_lost_fn)(unsigned ring, uint64_t lost, int exact, uint64_t after_ns,
                                 void *ctx);

struct ocgc_agg_opts {
  size_t sz;                  /**< sizeof(struct ocgc_agg_opts) */
  enum ocgc_cursor_start start; /**< where its cursor starts */
  uint64_t poll_max_events;   /**< its cursor's budget (struct ocgc_cursor_opts) */
  uint64_t poll_max_ns;
  /** 1: keep no histogram per runtime phase (ocgc_snapshot_phase() is then
   * empty), for callers that want only pauses and collection kinds, such
   * as an exporter: less work per event and per snapshot. */
  int no_phases;
  /** Bounds in ns (strictly ascending, at most OCGC_MAX_BOUNDS) at which the
   * aggregator also counts pauses and collections of each kind, exactly (a
   * value counts under every bound it is <= to), for callers whose
   * histograms have fixed buckets, such as a Prometheus exporter:
   * ocgc_snapshot_pause_buckets() and ocgc_snapshot_kind_buckets().  The
   * array is copied.  NULL with nbounds 0: none. */
  const uint64_t *bounds_ns;
  unsigned nbounds;
  /** 1 (with bounds_ns): count pauses and collections only so, with no
   * fine histogram of them (ocgc_snapshot_pauses() and ocgc_snapshot_kind()
   * are then empty): a few bytes per histogram instead of 267 KB, which
   * stay in the cache, and no copy of them in a snapshot. */
  int bounds_only;
  /** Called with each pause as the aggregator records it, once, in the
   * order the stream delivers them (struct ocgc_agg_pause): for a caller
   * that keeps the pauses themselves, such as a timeline.  May be NULL. */
  ocgc_agg_pause_fn on_pause;
  /** Called when events were lost on a ring (ocgc_lost_fn's figures, and
   * after_ns: the newest timestamp read before the gap).  May be NULL. */
  ocgc_agg_lost_fn on_lost;
  void *ctx;                  /**< passed to on_pause and on_lost */
};

/** Most bounds ocgc_agg_opts.bounds_ns may hold. */
#define OCGC_MAX_BOUNDS 32

/** Make an aggregator over [src] (which must outlive it), with its own
 * cursor from opts->start ([opts] may be NULL: from the oldest event, no
 * bounds, every phase).  Returns 0 and sets *out (the caller's, freed with
 * ocgc_agg_free()), or -EINVAL (a NULL argument, an unknown option, bounds
 * not strictly ascending or more than OCGC_MAX_BOUNDS), -ENOMEM, or the
 * cursor's error (OCGC_E_TRUNCATED ...). */
OCGC_API int ocgc_agg_new(struct ocgc_source *src, const struct ocgc_agg_opts *opts,
                          struct ocgc_agg **out);
/** Free [agg] and its cursor and histograms (not its source; snapshots and
 * interval recorders are the caller's: free recorders first).  NULL is
 * accepted. */
OCGC_API void ocgc_agg_free(struct ocgc_agg *agg);
/** Read and aggregate what was written since the last poll, within the
 * cursor's budget.  Returns the number of events read, or a negative error
 * as ocgc_cursor_poll(), and OCGC_E_CORRUPT also when a span of the poll
 * ended before it began (it is dropped; the rest of the poll counts). */
OCGC_API int64_t ocgc_agg_poll(struct ocgc_agg *agg);

/** Nothing more will be read (the producer ended, or the caller's window
 * did): every ring's last pause that no collection holds open is recorded
 * (and given to on_pause) and open spans are dropped, as
 * ocgc_stream_finish() does.  A snapshot counts those pauses already, so
 * its figures do not change; call it once, after the last poll (later
 * polls would meet ends without their begins).  Returns 0, -EINVAL, or
 * the first allocation failure. */
OCGC_API int ocgc_agg_finish(struct ocgc_agg *agg);

/** The statistics of the aggregator's cursor (behind: poll again at once),
 * with corrupt also counting the impossible spans it dropped. */
OCGC_API void ocgc_agg_cursor_stats(const struct ocgc_agg *agg, struct ocgc_cursor_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_AGG_H */
