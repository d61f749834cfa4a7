/* agg.h - the aggregator's state, shared by agg.c (events in) and the
 * files above it: snapshot.c (copies out), interval.c (a pause listener)
 * (private). */
#ifndef OCGC_AGG_H
#define OCGC_AGG_H

#include <stdint.h>

#include "ocgc/consumer.h"
#include "slicework.h"

#define AGG_MAX_PHASES OCGC_PHASE_MAX /* phase ids of every numbering fit */
#define AGG_RINGS 128 /* rings whose pauses get a kind (stock heaps: as many) */

/* Counts at the caller's fixed bounds (ocgc_agg_opts.bounds_ns): n[i]
 * values in (bounds[i-1], bounds[i]], n[nbounds] those above the last. */
struct agg_buckets {
  uint64_t count, sum;
  uint64_t n[OCGC_MAX_BOUNDS + 1];
};

/* The bounds, and the one place a value is counted at them. */
struct agg_bounds {
  uint64_t ns[OCGC_MAX_BOUNDS];
  unsigned n;                /* 0: no bucket counts */
  int only;                  /* no fine histograms of pauses and kinds */
};
void agg_buckets_add(const struct agg_bounds *bd, struct agg_buckets *b, uint64_t ns);
void agg_buckets_out(const struct agg_bounds *bd, const struct agg_buckets *b,
                     struct ocgc_bucket_counts *out);

/* One value recorded in [h] as [from] is now [to] (> from): a stop-the-world
 * collection of a stock OCaml 5 process whose longest domain's span grew
 * when another domain's was read (stw.c).  min is then exact to its bucket
 * only, if [from] was it. */
void hist_grow(struct ocgc_hist *h, uint64_t from, uint64_t to);
void agg_buckets_grow(const struct agg_bounds *bd, struct agg_buckets *b, uint64_t from,
                      uint64_t to);

/* What the aggregator counts from the events themselves (all files). */
struct agg_event_counts {
  /* The figures of the table (OCGC_COUNTER_FIELDS) that events give:
   * collections, major_cycles, forced_majors, the bytes, heap_bytes and
   * top_heap_bytes, gc_time_ns (the sum of the pauses), pauses, and
   * first_event_ns and last_event_ns (the oldest timestamp seen, 0 before
   * any, and the newest); the rest stay 0 (the cursor's, the stream's). */
  struct ocgc_counters c;
  /* Stock OCaml 5: each domain's heap words (pool, large) as its last
   * major cycle wrote them; the heap is their sum.  One pair per ring of
   * the file (at most AGG_RINGS), made only for stock files. */
  uint64_t (*ring_heap)[2];
};

/* One told of each pause the aggregator records (interval.c's recorders),
 * after the caller's on_pause and before the pause is counted: on the
 * aggregator's list from agg_listen to agg_unlisten.  An aggregator freed
 * first calls gone once and forgets it (so the listener lets go of the
 * aggregator): the aggregator never calls up into the files above it,
 * and none of them is left holding a freed one. */
struct agg_listener {
  void (*pause)(struct agg_listener *self, const struct ocgc_pause *p);
  void (*gone)(struct agg_listener *self);
  struct agg_listener *next; /* the aggregator's */
};
void agg_listen(struct ocgc_agg *a, struct agg_listener *l);
void agg_unlisten(struct ocgc_agg *a, struct agg_listener *l);

struct ocgc_agg {
  struct ocgc_source *src;
  struct ocgc_cursor *cur;
  struct ocgc_stream *stream;  /* spans, collections and pauses (stream.c) */
  struct ocgc_hist *pauses;
  struct ocgc_hist *kinds[OCGC_KIND_COUNT];
  struct ocgc_hist *phases[AGG_MAX_PHASES]; /* made on first sight */
  struct ocgc_cause_row causes[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS];
  struct agg_event_counts ev;
  int error;                 /* first allocation failure, reported by poll */
  int no_phases;             /* ocgc_agg_opts.no_phases: phases[] stays empty */
  struct agg_bounds bounds;  /* ocgc_agg_opts.bounds_ns */
  struct agg_buckets bpauses, bkinds[OCGC_KIND_COUNT];
  /* The producer's totals as last read consistently, for a snapshot taken
   * while the producer keeps them busy (snapshot.c). */
  struct ocgc_totals last_totals;
  uint64_t last_totals_ns;
  int have_totals;
  /* ocgc_agg_opts.on_pause and on_lost, and each ring's longest outermost
   * collection of the pause it is building (the pause's kind and cause). */
  ocgc_agg_pause_fn on_pause;
  ocgc_agg_lost_fn on_lost;
  void *cb_ctx;
  /* One per ring of the file, at most AGG_RINGS (nrings): an exporter
   * follows a thousand one-ring processes, and a table of 128 was a tenth
   * of its memory. */
  struct agg_building { int kind, cause; uint64_t ns; } *building;
  unsigned nrings;
  /* Its pause listeners (interval.c's recorders), the newest first. */
  struct agg_listener *listeners;
  int stock;                 /* a stock OCaml 5 file */
  uint64_t forced_ids;       /* stock: phase ids (bits) of Gc.full_major and Gc.compact */
  struct slicework *slicework; /* stock 5.3+: the major slices' work (slicework.c) */
};

/* What [a]'s events counted (exact 0), into *c (zeroed first). */
void agg_event_counters(const struct ocgc_agg *a, struct ocgc_counters *c);
/* The counters of [a] now, with the pauses that have ended but could
 * still grow (the stream's pending ones) counted, as a snapshot has them
 * (snapshot.c): 0 or an error. */
int agg_counters_now(struct ocgc_agg *a, struct ocgc_counters *c);


#endif /* OCGC_AGG_H */
