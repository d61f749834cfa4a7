/* timeline.h - what the HTML report draws over time (private to tools/;
 * code in timeline.c): the pauses themselves, downsampled in bounded
 * memory, and rates over time in fixed time buckets.
 *
 * Fed by the aggregator's on_pause and on_lost (libocgc answers what a
 * pause's kind and cause are and what the events counted until then; this
 * only keeps them) and, for a live process, by /proc samples.  Memory is
 * fixed at tl_new() whatever the target does: TL_BUCKETS time buckets
 * whose width doubles when the time outgrows them, the first TL_EXACT
 * pauses as they are, the TL_TOP longest pauses, the longest of each
 * bucket, a uniform sample of TL_SAMPLE pauses; loss periods are kept in
 * the buckets they cover. */
#ifndef OCGC_TOOLS_TIMELINE_H
#define OCGC_TOOLS_TIMELINE_H

#include <stdint.h>

#include "ocgc/consumer.h"

#define TL_BUCKETS 1024u
#define TL_EXACT 4000u  /* up to this many pauses, every one is drawn */
#define TL_TOP 2000u    /* past that: the longest ones (and each bucket's) */
#define TL_SAMPLE 1000u /* and a uniform sample of all, for the body's shape */
#define TL_RECENT 16u   /* pauses a stop-the-world member may still grow */

/* One pause as drawn. */
struct tl_mark {
  uint64_t t;    /* begin, producer clock */
  uint64_t ns;   /* duration */
  uint64_t seq;  /* its rank among the pauses recorded, from 0 */
  int kind;      /* enum ocgc_kind, or -1 */
  int cause;     /* enum ocgc_cause, or -1 */
};

/* A process's figures at one moment, for the live series. */
struct tl_proc {
  uint64_t cpu_ns, ctx_switches, faults;
};

/* One time bucket: [origin + i * width, + width). */
struct tl_bucket {
  uint64_t pauses, pause_ns, max_ns;
  /* event counts since the previous sample, and this bucket's last one */
  uint64_t alloc, promo, coll[OCGC_KIND_COUNT];
  uint64_t sample_t, heap, top_heap;  /* sample_t 0: no sample here */
  uint64_t cpu_ns, ctx, faults, proc_t; /* proc_t 0: no /proc sample */
  struct tl_mark top;                 /* its longest pause (top.ns 0: none) */
  uint64_t loss_from, loss_to;        /* events lost in [from, to] (to 0: none) */
};

struct timeline {
  uint64_t origin, width;     /* width 0: nothing recorded yet */
  struct tl_bucket b[TL_BUCKETS];
  uint64_t total;             /* pauses recorded (stop-the-world members not) */
  uint64_t max_ns;
  struct tl_mark exact[TL_EXACT];
  struct tl_mark top[TL_TOP];  /* a min-heap on ns */
  unsigned ntop;
  struct tl_mark sample[TL_SAMPLE]; /* reservoir sample (algorithm R) */
  uint64_t rng;                /* its xorshift state, fixed seed: reproducible */
  struct tl_mark recent[TL_RECENT];
  unsigned nrecent;
  uint64_t loss_from;         /* with loss_open: a loss since then */
  int loss_open;              /* events were lost: the next event ends the gap */
  int have_counts, have_proc, live;
  struct ocgc_agg_pause last;  /* the previous pause's counts */
  struct tl_proc last_proc;
};

/* A timeline (about 0.5 MB), empty; NULL if out of memory. */
struct timeline *tl_new(void);
void tl_free(struct timeline *tl);
/* Where time starts (producer clock), if nothing set it yet. */
void tl_origin(struct timeline *tl, uint64_t t);
/* The aggregator's callbacks (ctx: the timeline). */
void tl_on_pause(const struct ocgc_agg_pause *p, void *ctx);
void tl_on_lost(unsigned ring, uint64_t lost, int exact, uint64_t after_ns, void *ctx);
/* A /proc sample of a live process at [t] (CLOCK_MONOTONIC). */
void tl_proc_sample(struct timeline *tl, uint64_t t, const struct tl_proc *p);
/* The window ended at [t]: an open loss period ends there. */
void tl_end(struct timeline *tl, uint64_t t);

/* The marks to draw, in time order, into out[0..TL_MAX_MARKS) (every
 * pause while there were at most TL_EXACT; else the TL_TOP longest, each
 * bucket's longest and the sample, once each).  Returns how many. */
unsigned tl_marks(const struct timeline *tl, struct tl_mark *out);
#define TL_MAX_MARKS_ (TL_TOP + TL_BUCKETS + TL_SAMPLE)
#define TL_MAX_MARKS (TL_MAX_MARKS_ > TL_EXACT ? TL_MAX_MARKS_ : TL_EXACT)

/* Buckets in use: those up to the last that holds anything. */
unsigned tl_nbuckets(const struct timeline *tl);

/* The [i]th loss period (runs of buckets that lost events, a bucket's
 * width apart at least): 1 and *from, *to; 0 past the last. */
int tl_loss(const struct timeline *tl, unsigned i, uint64_t *from, uint64_t *to);

#endif /* OCGC_TOOLS_TIMELINE_H */
