/* ocgc/stream.h - the collection stream: spans paired, causes claimed, pauses
 * built: the one model of a collection and a pause. */
#ifndef OCGC_PUBLIC_STREAM_H
#define OCGC_PUBLIC_STREAM_H

#include <ocgc/event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the collection stream: spans paired, causes claimed, pauses built ------ */

/* The one model of a collection and of a pause that every consumer (the
 * aggregator, ocgc trace and dump, an agent's own) stands on.  Feed it the
 * events of a cursor; it calls back with each span as it closes, each
 * collection (a span of a collection kind, with its cause and amounts) and
 * each pause.  The rules, per ring, whatever the producer wrote:
 * - a begin opens a span; an end closes the innermost open span of the
 *   same id (phase or user slot): spans above it never saw their end and
 *   close with it, cut OCGC_CUT_UNTERMINATED; an end with no open span of
 *   its id is counted (unmatched_ends) and dropped.  Begins deeper than
 *   OCGC_STREAM_MAX_DEPTH are counted (too_deep) and the next ends skipped;
 * - a cause event is claimed by the collection that begins next on its
 *   ring at the cause's own timestamp (the producer writes them together);
 *   in stock OCaml 5 files, whose runtime writes a FORCE_MINOR_* or
 *   REQUEST_* counter when it asks for a collection that begins later, by
 *   the next collection of the kind it asks for on its ring; a collection
 *   begun inside an explicit_gc_* span (Gc.minor, Gc.full_major, ...) is
 *   OCGC_CAUSE_EXPLICIT; a collection with none has OCGC_CAUSE_UNKNOWN
 *   (OCaml 5 records no cause for a scheduled major slice, a collection
 *   another domain asked for, or the end of a major cycle);
 * - stock OCaml 5 files: a collection of every domain at once is one
 *   collection (struct ocgc_collection's stw_member); a minor collection
 *   is delivered at its ring's next event (the end of its
 *   MINOR_LEAVE_BARRIER if one follows), ocgc_stream_settle() or
 *   ocgc_stream_finish();
 * - counters written inside a collection are its amounts;
 * - a pause is a stop of the mutator: a run of outermost collections, the
 *   rule chosen once per source (ocgc_stream_pause_rule()).  Its duration is
 *   the sum of its collections' durations, so the pauses' sum never exceeds
 *   the GC time and no pause outgrows the collections inside it;
 * - events lost on a ring cut its open spans (OCGC_CUT_LOST) at the ring's
 *   last timestamp and drop its pause being built (its extent is unknown):
 *   nothing pairs across the gap;
 * - a span that ends before it begins is counted (corrupt), never delivered.
 * Memory is fixed per ring; nothing grows with what the producer writes. */

#define OCGC_STREAM_MAX_DEPTH 64u /**< spans open at once on one ring */

/** Why a span closed without its own end event. */
enum ocgc_span_cut {
  OCGC_CUT_NONE = 0,         /**< its end event closed it */
  OCGC_CUT_LOST = 1,         /**< events were lost on its ring */
  OCGC_CUT_UNTERMINATED = 2, /**< a span around it ended first */
  OCGC_CUT_END = 3,          /**< still open at ocgc_stream_finish() */
};

/** A span of one ring. */
struct ocgc_span {
  unsigned ring;
  unsigned user;        /**< 1: a user span (id is its name slot) */
  unsigned id;          /**< phase id (the source's numbering) or user slot */
  unsigned depth;       /**< spans open around it on its ring */
  int kind;             /**< enum ocgc_kind if a collection, else OCGC_KIND_NONE */
  int cause;            /**< collections: enum ocgc_cause, OCGC_CAUSE_UNKNOWN
                             if none was announced; else OCGC_CAUSE_NONE */
  uint64_t begin, end;  /**< producer ns, end >= begin */
  uint64_t seq;         /**< begin order on its ring (orders equal begins) */
  enum ocgc_span_cut cut;
};

/** A collection that ran to its end, and what the producer said inside it. */
struct ocgc_collection {
  struct ocgc_span span;      /**< kind >= 0, cut == OCGC_CUT_NONE */
  int outermost;              /**< 1: no other collection was open around it */
  uint64_t allocated_bytes;   /**< minor_allocated counter inside it, or 0 */
  uint64_t promoted_bytes;    /**< minor_promoted counter inside it, or 0 */
  uint64_t slice_work_words;  /**< "ocgc.major_slice.work" inside it, or 0 */
  /** Stock OCaml 5 files: a minor collection, a finish of a major cycle or
   * a compaction stops every domain, and each domain writes its own span of
   * it in its own ring; each span is delivered (the per-domain durations),
   * and the first one read of a collection has stw_member 0, the others 1
   * (count the collection once: where stw_member is 0).  A domain's span
   * joins the collection whose spans it overlaps (a minor one extended to
   * the end of its MINOR_LEAVE_BARRIER, where every domain waits for the
   * last to arrive).  For a member, the collection's longest span and its
   * cause before it joined (the collection's duration is its longest
   * domain's span; its cause the first one a domain announced).  Always 0
   * (and OCGC_CAUSE_NONE) in ocgc files, whose runtime has one domain. */
  int stw_member;
  uint64_t stw_prev_ns;
  int stw_prev_cause;
};

/** How a source's collections are grouped into pauses. */
enum ocgc_pause_rule {
  /** The producer marks the collections that continue a stop
   * (OCGC_UEV_STOP_JOIN): a pause is exactly one stop of the mutator. */
  OCGC_PAUSE_MARKS = 1,
  /** No marks (stock OCaml 5, ocgc before 0.2): only nesting proves that
   * two collections are one stop, so each outermost collection is a pause
   * of its own. */
  OCGC_PAUSE_NESTING = 2,
};

/** A pause: one stop of the mutator on one ring. */
struct ocgc_pause {
  unsigned ring;
  uint64_t begin, end;        /**< its first collection's begin, last one's end */
  uint64_t duration_ns;       /**< sum of its outermost collections' durations */
  unsigned collections;       /**< outermost collections in it */
  enum ocgc_pause_rule rule;
  /** Stock OCaml 5: 1 when its collection's stop of every domain was
   * already delivered as another domain's pause (ocgc_collection's
   * stw_member); stw_prev_ns is the longest of those before it.  A
   * stop-the-world pause counts once, as long as its longest domain's. */
  int stw_member;
  uint64_t stw_prev_ns;
};

typedef void (*ocgc_span_fn)(const struct ocgc_span *span, void *ctx);
typedef void (*ocgc_collection_fn)(const struct ocgc_collection *coll, void *ctx);
typedef void (*ocgc_pause_fn)(const struct ocgc_pause *pause, void *ctx);

struct ocgc_stream_opts {
  size_t sz;                        /**< sizeof(struct ocgc_stream_opts) */
  ocgc_span_fn on_span;             /**< each span as it closes, collections
                                         included, cut ones too; may be NULL */
  ocgc_collection_fn on_collection; /**< each collection that ended; may be NULL */
  ocgc_pause_fn on_pause;           /**< each pause once it can grow no more;
                                         may be NULL */
  void *ctx;
};

struct ocgc_stream;

/** A stream over the rings of [src] (which must outlive it).  Returns 0,
 * -EINVAL or -ENOMEM. */
OCGC_API int ocgc_stream_new(const struct ocgc_source *src, const struct ocgc_stream_opts *opts,
                             struct ocgc_stream **out);
/** Free [st], dropping what it holds open (no callback).  NULL is accepted. */
OCGC_API void ocgc_stream_free(struct ocgc_stream *st);
/** Feed one event, in its ring's order (a cursor's on_event). */
OCGC_API void ocgc_stream_event(struct ocgc_stream *st, const struct ocgc_event *ev);
/** Events were lost on [ring] (a cursor's on_lost). */
OCGC_API void ocgc_stream_lost(struct ocgc_stream *st, unsigned ring);
/** Every ring was read to its tail (after a cursor poll whose stats say
 * behind 0): in stock OCaml 5 files a minor collection is held until its
 * ring's next event says whether a MINOR_LEAVE_BARRIER extends it (see
 * struct ocgc_collection's stw_member); one with nothing after it (one
 * domain, a program that waits) is delivered now.  The aggregator calls
 * it after each such poll. */
OCGC_API void ocgc_stream_settle(struct ocgc_stream *st);
/** Nothing more will come: cut every open span (OCGC_CUT_END) and deliver
 * each ring's last pause if no collection was open in it. */
OCGC_API void ocgc_stream_finish(struct ocgc_stream *st);
/** The rule this source's pauses follow. */
OCGC_API enum ocgc_pause_rule ocgc_stream_pause_rule(const struct ocgc_stream *st);
/** The pause ring [ring] is building, if it is complete as far as anyone
 * can tell now (no collection open; a later collection may still join it):
 * 1 and *out, else 0.  For a snapshot of the moment. */
OCGC_API int ocgc_stream_pending_pause(const struct ocgc_stream *st, unsigned ring,
                                       struct ocgc_pause *out);
/** Spans open on [ring] now (0..OCGC_STREAM_MAX_DEPTH). */
OCGC_API unsigned ocgc_stream_depth(const struct ocgc_stream *st, unsigned ring);
/** The [i]th open span of [ring], outermost first (end is the ring's last
 * timestamp): 0, or -EINVAL past the depth. */
OCGC_API int ocgc_stream_open_span(const struct ocgc_stream *st, unsigned ring, unsigned i,
                                   struct ocgc_span *out);

/** What a stream has met, all rings together. */
struct ocgc_stream_stats {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_stream_stats) (OCGC_OPTS_INIT) */
  uint64_t spans;          /**< spans delivered (cut ones included) */
  uint64_t collections;    /**< collections delivered */
  uint64_t pauses;         /**< pauses delivered */
  uint64_t unmatched_ends; /**< ends with no open span of their id */
  uint64_t too_deep;       /**< begins past OCGC_STREAM_MAX_DEPTH */
  uint64_t corrupt;        /**< spans that ended before they began */
  uint64_t dropped;        /**< events not followed for want of memory */
};
/** Copy [st]'s statistics into *out (nothing if either is NULL). */
OCGC_API void ocgc_stream_stats(const struct ocgc_stream *st, struct ocgc_stream_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_STREAM_H */
