/* interval.c - intervals: what happened between two moments of one
 * aggregator (its counters' growth, rates over the producer's clock, and
 * the interval's pauses), as HdrHistogram's interval recorder keeps the
 * values of each interval for the caller that asks "and in the last
 * second?"; and the coverage of a snapshot (the span of time its counters,
 * or their growth since a base, are over).  The rules of growth and rates
 * are rates.c's; the counters of now, snapshot.c's.
 *
 * Invariants:
 * - each pause counts once, in the interval in which the aggregator first
 *   counted it: a pause that a later collection may still join (the
 *   stream's pending pause) counts at an interval's end at its length so
 *   far, as a snapshot's pause count does, and not again when it ends
 *   (recognised by its ring and its begin): so the pauses of consecutive
 *   intervals add up to the growth of the pause count, and an interval's
 *   histogram is never a difference of two cumulative ones (which a
 *   pending pause that grew between them spoils);
 * - a recorder is one of its aggregator's pause listeners (agg.h) from
 *   ocgc_interval_new to ocgc_interval_free, told of each pause where the
 *   aggregator records it; an aggregator freed first tells it so (gone),
 *   and it is left detached, never dangling;
 * - memory is fixed after the recorder is made: two histograms and one
 *   word per ring. */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "opts.h"
#include "rates.h"
#include "source.h"
#include "stream.h"

#define NONE UINT64_MAX

struct ocgc_interval {
  struct agg_listener lis;       /* on the aggregator's list while agg is set */
  struct ocgc_agg *agg;          /* NULL once the aggregator was freed */
  struct ocgc_hist *cur;         /* pauses delivered in the current interval */
  struct ocgc_hist *done;        /* the pauses of the interval last ended */
  struct ocgc_counters start;    /* the counters at the current one's start */
  uint64_t *counted;             /* by ring: the begin of the pending pause
                                    already counted, NONE if none */
  unsigned nrings;
  /* the last pause recorded in cur, which another domain's part of the
   * same stop may lengthen (stock OCaml 5) */
  int last_here;
  uint64_t last_ns;
};

int ocgc_snapshot_coverage(const struct ocgc_source *src, const struct ocgc_snapshot *base,
                           const struct ocgc_snapshot *snap, uint64_t ended_ns,
                           struct ocgc_coverage *out)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_coverage o;
  const struct ocgc_counters *c = &o.counts;
  int ext;
  if (src == NULL || snap == NULL) return -EINVAL;
  memset(&o, 0, sizeof o);
  o.sz = sizeof o;
  o.counts.sz = sizeof o.counts;
  ext = ocgc_source_info(src, &info) == 0 && info.has_ext;
  ocgc_snapshot_counters(snap, &o.counts);
  if (base != NULL) {
    struct ocgc_counters b = OCGC_OPTS_INIT(struct ocgc_counters);
    ocgc_snapshot_counters(base, &b);
    ocgc_counters_growth(&b, &o.counts, &o.counts);
    o.start_ns = b.time_ns;
    o.end_ns = c->time_ns;
    o.known = 1;
  } else if (ext && info.created_ns != 0) {
    o.start_ns = info.created_ns;
    o.end_ns = c->time_ns > c->last_event_ns ? c->time_ns : c->last_event_ns;
    /* No exit written: the counters' time is "now", so end when the
     * caller saw it gone instead. */
    if (ended_ns != 0 && info.state != OCGC_STATE_EXITED && ended_ns < o.end_ns)
      o.end_ns = ended_ns > c->last_event_ns ? ended_ns : c->last_event_ns;
    o.known = 1;
  } else if (c->first_event_ns != 0) {
    o.start_ns = c->first_event_ns;
    o.end_ns = c->last_event_ns;
    o.known = 1;
  }
  o.wall_ns = o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0;
  return opts_write(out, &o, sizeof o);
}

/* Mark the pending pauses of now as counted, recording those not yet
 * counted into [h] (NULL: only mark: a recorder's start, whose pending
 * pauses the start counters count already). */
static void take_pending(struct ocgc_interval *iv, struct ocgc_hist *h)
{
  struct ocgc_pause p;
  unsigned r;
  for (r = 0; r < iv->nrings; r++) {
    if (!ocgc_stream_pending_pause(iv->agg->stream, r, &p)) continue;
    if (iv->counted[r] == p.begin) continue;
    if (h != NULL) ocgc_hist_record(h, p.duration_ns);
    iv->counted[r] = p.begin;
  }
}

static struct ocgc_interval *of_listener(struct agg_listener *l)
{
  return (struct ocgc_interval *)(void *)((char *)l - offsetof(struct ocgc_interval, lis));
}

/* A pause the aggregator records, into the current interval. */
static void heard_pause(struct agg_listener *l, const struct ocgc_pause *p)
{
  struct ocgc_interval *iv = of_listener(l);
  if (p->ring < iv->nrings && iv->counted[p->ring] == p->begin) {
    iv->counted[p->ring] = NONE; /* counted while pending */
    return;
  }
  if (!p->stw_member) {
    ocgc_hist_record(iv->cur, p->duration_ns);
    iv->last_here = 1;
    iv->last_ns = p->duration_ns;
  } else if (iv->last_here && iv->last_ns == p->stw_prev_ns && p->duration_ns > p->stw_prev_ns) {
    hist_grow(iv->cur, p->stw_prev_ns, p->duration_ns);
    iv->last_ns = p->duration_ns;
  }
}

/* The aggregator is being freed: the recorder lets go of it. */
static void heard_gone(struct agg_listener *l)
{
  of_listener(l)->agg = NULL;
}

int ocgc_interval_new(struct ocgc_agg *agg, struct ocgc_interval **out)
{
  struct ocgc_interval *iv;
  int err = -ENOMEM;
  if (agg == NULL || out == NULL) return -EINVAL;
  *out = NULL;
  if ((iv = calloc(1, sizeof *iv)) == NULL) return -ENOMEM;
  iv->agg = agg;
  iv->nrings = (unsigned)agg->src->l.max_domains;
  iv->counted = malloc((iv->nrings ? iv->nrings : 1) * sizeof *iv->counted);
  if (iv->counted == NULL || (err = ocgc_hist_new(&iv->cur)) != 0 ||
      (err = ocgc_hist_new(&iv->done)) != 0 || (err = agg_counters_now(agg, &iv->start)) != 0) {
    iv->agg = NULL;
    ocgc_interval_free(iv);
    return err;
  }
  memset(iv->counted, 0xff, (iv->nrings ? iv->nrings : 1) * sizeof *iv->counted);
  take_pending(iv, NULL);
  iv->lis.pause = heard_pause;
  iv->lis.gone = heard_gone;
  agg_listen(agg, &iv->lis);
  *out = iv;
  return 0;
}

void ocgc_interval_free(struct ocgc_interval *iv)
{
  if (iv == NULL) return;
  if (iv->agg != NULL) agg_unlisten(iv->agg, &iv->lis);
  ocgc_hist_free(iv->cur);
  ocgc_hist_free(iv->done);
  free(iv->counted);
  free(iv);
}

int ocgc_interval_next(struct ocgc_interval *iv, struct ocgc_interval_figures *out)
{
  struct ocgc_interval_figures f;
  struct ocgc_counters now = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_hist *t;
  int err;
  if (iv == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  if (iv->agg == NULL) return -EINVAL;
  if ((err = agg_counters_now(iv->agg, &now)) != 0) return err;
  memset(&f, 0, sizeof f);
  f.sz = sizeof f;
  f.start_ns = iv->start.time_ns;
  f.end_ns = now.time_ns;
  f.growth.sz = sizeof f.growth;
  ocgc_counters_growth(&iv->start, &now, &f.growth);
  /* A producer that exited just after the start may have an exit time
   * before it: an empty interval, whose rates are 0 and whose counts still
   * add up. */
  f.rates_known = counters_rates(&iv->start, &now, &f.rates) == 0;
  t = iv->done;
  iv->done = iv->cur;
  iv->cur = t;
  ocgc_hist_reset(iv->cur);
  iv->last_here = 0;
  take_pending(iv, iv->done);
  iv->start = now;
  return opts_write(out, &f, sizeof f);
}

const struct ocgc_hist *ocgc_interval_pauses(const struct ocgc_interval *iv)
{
  return iv != NULL ? iv->done : NULL;
}
