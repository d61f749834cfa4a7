/* snapshot.c - copies of an aggregator's knowledge, and rates between two
 * (by rates.c's rule); the counters of an aggregator now (agg_counters_now,
 * which intervals take too).
 *
 * A snapshot owns its histograms (deep copies), so the caller may keep it
 * while the aggregator goes on.  Counters come from the producer's totals
 * when the file has them (exact even after loss), else from the events.
 * Time is the producer's CLOCK_MONOTONIC: "now" for a live producer (same
 * machine, same clock), its exit time or newest event otherwise. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agg.h"
#include "opts.h"
#include "clock.h"
#include "rates.h"
#include "source.h"
#include "stream.h"

struct ocgc_snapshot {
  struct ocgc_counters c;
  struct ocgc_hist *pauses;
  struct ocgc_hist *kinds[OCGC_KIND_COUNT];
  struct ocgc_hist *phases[AGG_MAX_PHASES];
  struct ocgc_cause_row causes[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS];
  struct agg_bounds bounds;   /* the aggregator's (bounds.n 0: none) */
  struct agg_buckets bpauses, bkinds[OCGC_KIND_COUNT];
  struct ocgc_slicework slicework; /* the major slices' work (slicework.c) */
};

/* *dst made if it is NULL: 0 or -ENOMEM. */
static int have_hist(struct ocgc_hist **dst)
{
  return *dst != NULL ? 0 : ocgc_hist_new(dst);
}

/* The producer's totals as the table's fields (OCGC_COUNTER_FIELDS),
 * by hand, not a loop over the counters' table: a mapping, field by field
 * (words to bytes, the finished cycles summed from the cause table), not
 * one rule for a kind; the figures the totals lack (pauses, events,
 * times) are fill_counters'. */
static void counters_from_totals(struct ocgc_counters *c, const struct ocgc_totals *t)
{
  unsigned k;
  c->sz = sizeof *c;
  c->collections[OCGC_KIND_MINOR] = t->minor_collections;
  c->collections[OCGC_KIND_MAJOR_SLICE] = t->major_slices;
  c->collections[OCGC_KIND_MAJOR_FINISH] = 0;
  for (k = 0; k < OCGC_CAUSE_SLOTS; k++)
    c->collections[OCGC_KIND_MAJOR_FINISH] += t->by_cause[OCGC_KIND_MAJOR_FINISH][k];
  c->collections[OCGC_KIND_COMPACTION] = t->compactions;
  c->major_cycles = t->major_collections;
  c->forced_majors = t->forced_major_collections;
  c->allocated_bytes = t->minor_words * 8;
  c->promoted_bytes = t->promoted_words * 8;
  c->direct_major_bytes = t->direct_major_words * 8;
  c->heap_bytes = t->heap_words * 8;
  c->top_heap_bytes = t->top_heap_words * 8;
  c->live_bytes = t->live_words * 8;
  c->gc_time_ns = t->gc_time_ns;
  c->exact = 1;
}

/* The time of counters taken from the events: the newest event's, or,
 * before any, now (the producer's clock is ours): a window that starts at
 * an aggregator's first snapshot starts at the attach, not at the clock's
 * origin (a stock file read from now on gave `ocgc stat` a first row over
 * the machine's uptime). */
static uint64_t events_time(const struct ocgc_agg *a)
{
  return a->ev.c.last_event_ns != 0 ? a->ev.c.last_event_ns : cm_mono_ns();
}

static int fill_counters(struct ocgc_agg *a, struct ocgc_counters *c, uint64_t open_pauses,
                         uint64_t open_ns)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  int err = ocgc_source_info(a->src, &info);
  if (err) return err;
  if (info.has_ext && (err = ocgc_source_totals(a->src, &t)) == 0) {
    counters_from_totals(c, &t);
    c->time_ns = info.state == OCGC_STATE_RUNNING ? cm_mono_ns()
                 : info.exited_ns > a->ev.c.last_event_ns ? info.exited_ns : a->ev.c.last_event_ns;
    a->last_totals = t;
    a->last_totals_ns = c->time_ns;
    a->have_totals = 1;
  } else if (info.has_ext && err == -EAGAIN && a->have_totals) {
    /* The producer kept its totals busy for the whole read: the last
     * consistent ones, as of when they were read (rates stay right). */
    counters_from_totals(c, &a->last_totals);
    c->time_ns = a->last_totals_ns;
  } else if (info.has_ext && err == -EAGAIN) {
    agg_event_counters(a, c);
    c->time_ns = events_time(a);
  } else if (info.has_ext && err != -ENODATA) {
    return err;
  } else {
    agg_event_counters(a, c);
    c->major_cycles += stream_stw_cycles(a->stream); /* stock OCaml 5 */
    c->gc_time_ns += open_ns; /* as the pause histogram of the copy has them */
    c->time_ns = events_time(a);
  }
  memcpy(c->event_collections, a->ev.c.collections, sizeof c->event_collections);
  c->first_event_ns = a->ev.c.first_event_ns;
  c->last_event_ns = a->ev.c.last_event_ns;
  c->pauses = a->ev.c.pauses + open_pauses;
  c->pause_rule = ocgc_stream_pause_rule(a->stream);
  ocgc_cursor_stats(a->cur, &st);
  c->events_seen = st.seen;
  c->events_lost = st.lost;
  c->lost_exact = st.lost_exact;
  return 0;
}

/* Make every histogram of [s] that [a] has and [s] lacks: 0 or -ENOMEM
 * (the new ones empty: [s] still says what it said). */
static int snapshot_room(const struct ocgc_agg *a, struct ocgc_snapshot *s)
{
  unsigned k;
  int err = 0;
  /* bounds_only: the pauses and kinds are only bucket counts (NULL is an
   * empty histogram to every reader). */
  if (!a->bounds.only) err = have_hist(&s->pauses);
  for (k = 0; k < OCGC_KIND_COUNT && err == 0 && !a->bounds.only; k++) err = have_hist(&s->kinds[k]);
  for (k = 0; k < AGG_MAX_PHASES && err == 0; k++)
    if (a->phases[k] != NULL) err = have_hist(&s->phases[k]);
  return err;
}

int agg_counters_now(struct ocgc_agg *a, struct ocgc_counters *c)
{
  struct ocgc_pause p;
  uint64_t open = 0, open_ns = 0;
  unsigned r;
  memset(c, 0, sizeof *c);
  c->sz = sizeof *c;
  for (r = 0; r < (unsigned)a->src->l.max_domains; r++)
    if (ocgc_stream_pending_pause(a->stream, r, &p)) {
      open++;
      open_ns += p.duration_ns;
    }
  return fill_counters(a, c, open, open_ns);
}

/* Copy [a]'s histograms and causes into [s], which has room for them
 * (snapshot_room); the pending pauses go into the copy's pause histogram,
 * as snapshot_counters counted them.  Cannot fail. */
static void snapshot_fill(const struct ocgc_agg *a, struct ocgc_snapshot *s, unsigned rings)
{
  struct ocgc_pause p;
  unsigned k, r;
  if (s->pauses != NULL) ocgc_hist_copy(s->pauses, a->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    if (s->kinds[k] != NULL) ocgc_hist_copy(s->kinds[k], a->kinds[k]);
  s->bounds = a->bounds;
  s->bpauses = a->bpauses;
  memcpy(s->bkinds, a->bkinds, sizeof s->bkinds);
  for (k = 0; k < AGG_MAX_PHASES; k++) {
    if (a->phases[k] != NULL) ocgc_hist_copy(s->phases[k], a->phases[k]);
    else ocgc_hist_reset(s->phases[k]);
  }
  for (r = 0; r < rings; r++)
    if (ocgc_stream_pending_pause(a->stream, r, &p)) {
      ocgc_hist_record(s->pauses, p.duration_ns);
      if (s->bounds.n > 0) agg_buckets_add(&s->bounds, &s->bpauses, p.duration_ns);
    }
  memcpy(s->causes, a->causes, sizeof s->causes);
}

int ocgc_agg_snapshot_update(struct ocgc_agg *a, struct ocgc_snapshot **snap)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_snapshot *s;
  int err;
  if (a == NULL || snap == NULL) return -EINVAL;
  if ((err = ocgc_source_info(a->src, &info)) != 0) return err;
  if ((err = agg_counters_now(a, &c)) != 0) return err;
  s = *snap != NULL ? *snap : calloc(1, sizeof *s);
  if (s == NULL) return -ENOMEM;
  if ((err = snapshot_room(a, s)) != 0) {
    if (*snap == NULL) ocgc_snapshot_free(s);
    return err;
  }
  snapshot_fill(a, s, (unsigned)info.max_domains);
  slicework_figures(a->slicework, &s->slicework);
  s->c = c;
  *snap = s;
  return 0;
}

int ocgc_agg_snapshot(struct ocgc_agg *a, struct ocgc_snapshot **out)
{
  if (out == NULL) return -EINVAL;
  *out = NULL;
  return ocgc_agg_snapshot_update(a, out);
}

void ocgc_snapshot_free(struct ocgc_snapshot *s)
{
  unsigned k;
  if (s == NULL) return;
  ocgc_hist_free(s->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++) ocgc_hist_free(s->kinds[k]);
  for (k = 0; k < AGG_MAX_PHASES; k++) ocgc_hist_free(s->phases[k]);
  free(s);
}

int ocgc_snapshot_slicework(const struct ocgc_snapshot *s, struct ocgc_slicework *out)
{
  int err;
  if (s == NULL || out == NULL) return -EINVAL;
  if ((err = opts_write(out, &s->slicework, sizeof s->slicework)) != 0) return err;
  return s->slicework.slices > 0 ? 0 : -ENODATA;
}

void ocgc_snapshot_counters(const struct ocgc_snapshot *s, struct ocgc_counters *out)
{
  if (s != NULL && out != NULL && out->sz >= sizeof out->sz)
    (void)opts_write(out, &s->c, sizeof s->c);
}

int ocgc_snapshot_pause_buckets(const struct ocgc_snapshot *s, struct ocgc_bucket_counts *out)
{
  struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
  if (s == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  if (s->bounds.n == 0) return -ENODATA;
  agg_buckets_out(&s->bounds, &s->bpauses, &b);
  return opts_write(out, &b, sizeof b);
}

int ocgc_snapshot_kind_buckets(const struct ocgc_snapshot *s, unsigned kind,
                               struct ocgc_bucket_counts *out)
{
  struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
  if (s == NULL || out == NULL || out->sz < sizeof out->sz || kind >= OCGC_KIND_COUNT)
    return -EINVAL;
  if (s->bounds.n == 0) return -ENODATA;
  agg_buckets_out(&s->bounds, &s->bkinds[kind], &b);
  return opts_write(out, &b, sizeof b);
}

const struct ocgc_hist *ocgc_snapshot_pauses(const struct ocgc_snapshot *s)
{
  return s ? s->pauses : NULL;
}

const struct ocgc_hist *ocgc_snapshot_kind(const struct ocgc_snapshot *s, unsigned kind)
{
  return s && kind < OCGC_KIND_COUNT ? s->kinds[kind] : NULL;
}

const struct ocgc_hist *ocgc_snapshot_phase(const struct ocgc_snapshot *s, unsigned phase)
{
  return s && phase < AGG_MAX_PHASES ? s->phases[phase] : NULL;
}

int ocgc_snapshot_cause(const struct ocgc_snapshot *s, unsigned kind, unsigned cause,
                        struct ocgc_cause_row *out)
{
  struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
  if (s == NULL || out == NULL || out->sz < sizeof out->sz || kind >= OCGC_KIND_COUNT ||
      cause >= OCGC_CAUSE_SLOTS)
    return -EINVAL;
  row = s->causes[kind][cause];
  row.sz = sizeof row;
  return opts_write(out, &row, sizeof row);
}

int ocgc_snapshot_rates(const struct ocgc_snapshot *older, const struct ocgc_snapshot *newer,
                        struct ocgc_rates *out)
{
  struct ocgc_rates r = OCGC_OPTS_INIT(struct ocgc_rates);
  int err;
  if (older == NULL || newer == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  err = counters_rates(&older->c, &newer->c, &r);
  (void)opts_write(out, &r, sizeof r);
  return err;
}
