/* ocgc/event.h - events as a cursor delivers them, and what an event means
 * (the cause it announces, the collection it begins or ends). */
#ifndef OCGC_PUBLIC_EVENT_H
#define OCGC_PUBLIC_EVENT_H

#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- events ---------------------------------------------------------------- */

/** One decoded event.  Pointers are valid only during the callback. */
struct ocgc_event {
  uint64_t timestamp;       /**< CLOCK_MONOTONIC ns of the producer */
  unsigned ring;            /**< ring (domain) index */
  unsigned user;            /**< 1 for a user event */
  unsigned type;            /**< enum ocgc_wire_rt_type or ocgc_wire_user_type */
  unsigned id;              /**< runtime id (phase, counter, lifecycle) or user slot */
  uint64_t value;           /**< counter, lifecycle data, user int/span value; else 0 */
  const uint64_t *payload;  /**< words after the timestamp */
  unsigned payload_words;
  const char *name;         /**< user events: the slot's name, or NULL */
};

/** Called for each event; return nonzero to stop the poll after it. */
typedef int (*ocgc_event_fn)(const struct ocgc_event *ev, void *ctx);

/** Called when events were overwritten before this cursor read them: [lost]
 * events on [ring]; [exact] is 1 for ocgc files (counted by the producer)
 * and 0 for stock files (estimated from the words lost). */
typedef void (*ocgc_lost_fn)(unsigned ring, uint64_t lost, int exact, void *ctx);

/* ---- what an event means ---------------------------------------------------- */

/** No collection kind, no cause: what an event that announces none, a span
 * that is no collection, or a pause whose collection was not seen has (the
 * real ones, enum ocgc_kind and enum ocgc_cause, are all >= 0). */
enum {
  OCGC_KIND_NONE = -1,
  OCGC_CAUSE_NONE = -1,
};

/** The cause (enum ocgc_cause) an event announces, or OCGC_CAUSE_NONE if it
 * announces none: a 5.2 cause counter or an "ocgc.cause.*" user event.  A cause event
 * comes just before the collection it caused, at the same timestamp. */
OCGC_API int ocgc_event_cause(const struct ocgc_source *src, const struct ocgc_event *ev);

/** What a user event means to ocgc, by its slot's name (wire.h's
 * OCGC_UEV_*): one meaning a slot, looked up once per source, the one
 * classifier the stream, the aggregator and every command use. */
enum ocgc_meaning {
  OCGC_MEANS_OTHER = 0,    /**< no meaning to ocgc (a program's own event, a
                                runtime event, a slot not yet named) */
  OCGC_MEANS_CAUSE,        /**< "ocgc.cause.*": the cause of the collection that
                                begins next (ocgc_event_cause() says which) */
  OCGC_MEANS_STOP_JOIN,    /**< the next collection continues this stop */
  OCGC_MEANS_SLICE_WORK,   /**< a major slice's work, in words */
  OCGC_MEANS_CYCLE_START,  /**< a major cycle began (its number) */
  OCGC_MEANS_CYCLE_END,    /**< a major cycle ended (major_collections) */
  OCGC_MEANS_FORCED_MAJOR, /**< a forced major ended (forced_major_collections) */
  OCGC_MEANS_HEAP_GROW,    /**< the major heap grew (its words) */
  OCGC_MEANS_HEAP_SHRINK,  /**< the major heap shrank (its words) */
  OCGC_MEANS_DIRECT_ALLOC, /**< words allocated straight in the major heap */
};

/** What user event [ev] of [src] means (OCGC_MEANS_OTHER for a runtime
 * event, or NULL arguments). */
OCGC_API enum ocgc_meaning ocgc_event_meaning(const struct ocgc_source *src,
                                              const struct ocgc_event *ev);

/** The collection kind (enum ocgc_kind) whose span this event begins or ends
 * (then *begin is 1 or 0), or OCGC_KIND_NONE. */
OCGC_API int ocgc_event_kind(const struct ocgc_source *src, const struct ocgc_event *ev,
                             int *begin);

/** Whether a collection of kind [a] that lasted [a_ns] says more of the
 * pause it is in than one of kind [b] that lasted [b_ns]: a compaction
 * over a finished major cycle over a major slice over a minor collection
 * (enum ocgc_kind's order: the later kind works on more of the heap and is
 * the rarer), then the longer, and any kind over OCGC_KIND_NONE.  A
 * pause's kind (ocgc_agg_pause.kind, ocgc_timeline_mark.kind) is its
 * highest collection so ranked: a compaction, which a program asks for
 * rarely and the runtime runs after finishing a major cycle in the same
 * stop, is seen even when that finish took longer. */
OCGC_API int ocgc_kind_outranks(int a, uint64_t a_ns, int b, uint64_t b_ns);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_EVENT_H */
