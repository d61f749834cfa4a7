/* agg.c - the aggregator: events in, pauses, histograms, causes, counters.
 *
 * Invariants, per ring:
 * - begin/end events are paired on a stack; an end closes the innermost
 *   open span of its phase (spans above it, whose ends were lost, are
 *   dropped; an end whose begin was lost is ignored);
 * - a pause opens when a collection begins with no collection open and the
 *   previous pause ended more than pause_gap_ns before; otherwise the
 *   collection extends the current pause (a minor collection and the major
 *   slice right after it are one stop of the mutator).  A pause is recorded
 *   when the next one opens, at RING_STOP, or (provisionally, in the copy
 *   only) when a snapshot is taken;
 * - a cause event is claimed by the next collection that begins on its
 *   ring; a collection with none is "unknown";
 * - a collection is counted (counters, its kind's histogram, the cause
 *   table) when it ends, as the runtime counts it;
 * - after lost events a ring's open spans and pause are discarded: nothing
 *   is paired across a gap;
 * - a span that ends before it begins is counted as corrupt, never as a
 *   duration, and the poll that met it fails with OCGC_E_CORRUPT.
 * One aggregator must not be used by two threads at once. */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"

#define DEFAULT_PAUSE_GAP_NS 20000u

static void note_error(struct ocgc_agg *a, int err)
{
  if (a->error == 0) a->error = err;
}

static void record(struct ocgc_agg *a, struct ocgc_hist **h, uint64_t ns)
{
  if (*h == NULL && ocgc_hist_new(h) != 0) {
    note_error(a, -ENOMEM);
    return;
  }
  ocgc_hist_record(*h, ns);
}

static void close_pause(struct ocgc_agg *a, struct agg_ring *r)
{
  uint64_t ns = r->pause_end >= r->pause_begin ? r->pause_end - r->pause_begin : 0;
  ocgc_hist_record(a->pauses, ns);
  a->ev.pauses++;
  a->ev.gc_time_ns += ns;
  r->in_pause = 0;
}

static void collection_begins(struct ocgc_agg *a, struct agg_ring *r, uint64_t ts)
{
  if (r->collections_open++ > 0) return;
  if (r->in_pause && ts >= r->pause_end && ts - r->pause_end <= a->pause_gap_ns) return;
  if (r->in_pause) close_pause(a, r);
  r->in_pause = 1;
  r->pause_begin = r->pause_end = ts;
}

static void on_begin(struct ocgc_agg *a, struct agg_ring *r, const struct ocgc_event *ev)
{
  int kind = ocgc_event_kind(a->src, ev, NULL);
  struct agg_span *sp;
  if (r->depth >= AGG_MAX_DEPTH) return; /* deeper than any runtime nests: drop */
  sp = &r->stack[r->depth++];
  sp->phase = ev->id;
  sp->kind = kind;
  sp->begin = ev->timestamp;
  sp->cause = OCGC_CAUSE_UNKNOWN;
  if (kind >= 0) {
    if (r->pending_cause >= 0) sp->cause = r->pending_cause;
    r->pending_cause = -1;
    collection_begins(a, r, ev->timestamp);
  }
}

static void on_end(struct ocgc_agg *a, struct agg_ring *r, const struct ocgc_event *ev)
{
  struct agg_span sp;
  uint64_t ns;
  unsigned i = r->depth;
  while (i > 0 && r->stack[i - 1].phase != ev->id) i--;
  if (i == 0) return; /* its begin was lost */
  for (; r->depth > i; r->depth--)
    if (r->stack[r->depth - 1].kind >= 0 && r->collections_open > 0) r->collections_open--;
  sp = r->stack[--r->depth];
  if (ev->timestamp < sp.begin) {
    /* Ends before it begins: no clock does that, only a forged ring. */
    a->corrupt++;
    if (sp.kind >= 0 && r->collections_open > 0) r->collections_open--;
    return;
  }
  ns = ev->timestamp - sp.begin;
  if (sp.phase < AGG_MAX_PHASES) record(a, &a->phases[sp.phase], ns);
  if (sp.kind < 0) return;
  /* Counted when it ends, as the runtime counts it: a collection still
   * running at a snapshot is in none of the figures yet. */
  a->ev.collections[sp.kind]++;
  ocgc_hist_record(a->kinds[sp.kind], ns);
  {
    struct ocgc_cause_row *row = &a->causes[sp.kind][sp.cause];
    row->count++;
    row->total_ns += ns;
    if (ns > row->worst_ns) row->worst_ns = ns;
  }
  if (r->collections_open > 0 && --r->collections_open == 0) r->pause_end = ev->timestamp;
}

static int user_meaning(struct ocgc_agg *a, unsigned slot)
{
  static const struct { const char *name; int meaning; } known[] = {
    {OCGC_UEV_CYCLE_END, AGG_USER_CYCLE_END},
    {OCGC_UEV_FORCED_MAJOR, AGG_USER_FORCED_MAJOR},
    {OCGC_UEV_HEAP_GROW, AGG_USER_HEAP},
    {OCGC_UEV_HEAP_SHRINK, AGG_USER_HEAP},
    {OCGC_UEV_DIRECT_ALLOC, AGG_USER_DIRECT_ALLOC},
  };
  const char *name;
  unsigned k;
  if (slot >= OCGC_WIRE_USER_EVENTS) return AGG_USER_NONE;
  if (a->user_meaning[slot] != AGG_USER_UNSEEN) return a->user_meaning[slot];
  name = ocgc_source_user_name(a->src, slot);
  if (name == NULL) return AGG_USER_NONE; /* not registered yet: look again */
  a->user_meaning[slot] = AGG_USER_NONE;
  for (k = 0; k < sizeof known / sizeof known[0]; k++)
    if (strcmp(name, known[k].name) == 0) a->user_meaning[slot] = (int8_t)known[k].meaning;
  return a->user_meaning[slot];
}

static void on_user(struct ocgc_agg *a, const struct ocgc_event *ev)
{
  if (ev->type != OCGC_USER_INT) return;
  switch (user_meaning(a, ev->id)) {
  case AGG_USER_CYCLE_END: a->ev.major_cycles++; break;
  case AGG_USER_FORCED_MAJOR: a->ev.forced_majors++; break;
  case AGG_USER_HEAP:
    a->ev.heap_bytes = ev->value * 8;
    if (a->ev.heap_bytes > a->ev.top_heap_bytes) a->ev.top_heap_bytes = a->ev.heap_bytes;
    break;
  case AGG_USER_DIRECT_ALLOC: a->ev.direct_major_bytes += ev->value * 8; break;
  default: break;
  }
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct ocgc_agg *a = ctx;
  struct agg_ring *r;
  int cause;
  if (ev->ring >= a->nrings) return 0;
  r = &a->rings[ev->ring];
  if (a->ev.first_ts == 0) a->ev.first_ts = ev->timestamp;
  if (ev->timestamp > a->ev.last_ts) a->ev.last_ts = ev->timestamp;
  if (ev->user) {
    if ((cause = ocgc_event_cause(a->src, ev)) >= 0) r->pending_cause = cause;
    else on_user(a, ev);
    return 0;
  }
  /* Spans first: they are most of the events and never announce a cause. */
  switch (ev->type) {
  case OCGC_RT_BEGIN: on_begin(a, r, ev); break;
  case OCGC_RT_END: on_end(a, r, ev); break;
  case OCGC_RT_COUNTER:
    if ((cause = ocgc_event_cause(a->src, ev)) >= 0) {
      r->pending_cause = cause;
      break;
    }
    /* MINOR_PROMOTED and MINOR_ALLOCATED keep their ids in 5.2 and 5.3 */
    if (ev->id == OCGC_CT_MINOR_ALLOCATED) a->ev.allocated_bytes += ev->value;
    else if (ev->id == OCGC_CT_MINOR_PROMOTED) a->ev.promoted_bytes += ev->value;
    break;
  case OCGC_RT_LIFECYCLE:
    if (ev->id == OCGC_LC_RING_STOP && r->in_pause && r->collections_open == 0)
      close_pause(a, r);
    break;
  default: break;
  }
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct ocgc_agg *a = ctx;
  struct agg_ring *r;
  (void)lost;
  (void)exact;
  if (ring >= a->nrings) return;
  r = &a->rings[ring];
  r->depth = 0;
  r->collections_open = 0;
  r->pending_cause = -1;
  r->in_pause = 0; /* its true extent is unknown: not recorded */
}

int ocgc_agg_open_pause(const struct ocgc_agg *a, unsigned ring, uint64_t *ns)
{
  const struct agg_ring *r;
  if (ring >= a->nrings) return 0;
  r = &a->rings[ring];
  if (!r->in_pause || r->collections_open > 0) return 0;
  *ns = r->pause_end >= r->pause_begin ? r->pause_end - r->pause_begin : 0;
  return 1;
}

int ocgc_agg_new(struct ocgc_source *src, const struct ocgc_agg_opts *opts,
                 struct ocgc_agg **out)
{
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_source_info info;
  struct ocgc_agg *a;
  unsigned i, k;
  int err;

  if (src == NULL || out == NULL) return -EINVAL;
  if (opts != NULL) memcpy(&o, opts, opts->sz < sizeof o ? opts->sz : sizeof o);
  if ((err = ocgc_source_info(src, &info)) != 0) return err;
  a = calloc(1, sizeof *a);
  if (a == NULL) return -ENOMEM;
  a->src = src;
  a->pause_gap_ns = o.pause_gap_ns ? o.pause_gap_ns : DEFAULT_PAUSE_GAP_NS;
  a->nrings = (unsigned)info.max_domains;
  a->rings = calloc(a->nrings, sizeof *a->rings);
  memset(a->user_meaning, AGG_USER_UNSEEN, sizeof a->user_meaning);
  err = a->rings == NULL ? -ENOMEM : ocgc_hist_new(&a->pauses);
  for (k = 0; k < OCGC_KIND_COUNT && err == 0; k++) err = ocgc_hist_new(&a->kinds[k]);
  if (err) { ocgc_agg_free(a); return err; }
  for (i = 0; i < a->nrings; i++) a->rings[i].pending_cause = -1;
  co.start = o.start;
  if (o.sz >= offsetof(struct ocgc_agg_opts, poll_max_ns) + sizeof o.poll_max_ns) {
    co.poll_max_events = o.poll_max_events;
    co.poll_max_ns = o.poll_max_ns;
  }
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = a;
  if ((err = ocgc_cursor_new(src, &co, &a->cur)) != 0) { ocgc_agg_free(a); return err; }
  *out = a;
  return 0;
}

void ocgc_agg_free(struct ocgc_agg *a)
{
  unsigned k;
  if (a == NULL) return;
  ocgc_cursor_free(a->cur);
  ocgc_hist_free(a->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++) ocgc_hist_free(a->kinds[k]);
  for (k = 0; k < AGG_MAX_PHASES; k++) ocgc_hist_free(a->phases[k]);
  free(a->rings);
  free(a);
}

int64_t ocgc_agg_poll(struct ocgc_agg *a)
{
  int64_t n;
  uint64_t corrupt;
  if (a == NULL) return -EINVAL;
  corrupt = a->corrupt;
  n = ocgc_cursor_poll(a->cur, 0);
  if (n >= 0 && a->error) return a->error;
  if (n >= 0 && a->corrupt != corrupt) return OCGC_E_CORRUPT;
  return n;
}

void ocgc_agg_cursor_stats(const struct ocgc_agg *a, struct ocgc_cursor_stats *out)
{
  if (a == NULL || out == NULL) return;
  ocgc_cursor_stats(a->cur, out);
  out->corrupt += a->corrupt;
}
