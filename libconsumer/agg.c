/* agg.c - the aggregator: a cursor and a collection stream in, histograms,
 * causes, pauses and counters out.
 *
 * What it owns is counting: how spans pair, what a collection's cause is
 * and what a pause is are the stream's rules (stream.c), taken whole.
 * Invariants:
 * - a collection is counted (counters, its kind's histogram, the cause
 *   table) when the stream delivers it, i.e. when it ends, as the runtime
 *   counts it: one still running at a snapshot is in none of the figures;
 * - a phase's histogram holds the spans that ended by their own end event;
 * - a pause is recorded when the stream delivers it; a snapshot adds the
 *   one a ring is building, in its copy only; the caller's on_pause sees
 *   each delivered pause once, with the kind and cause of its most
 *   significant collection (ocgc_kind_outranks; nested ones too, since a
 *   compaction may run inside another; tracked per ring while the pause
 *   is built) and
 *   the event counts as of then: the questions a timeline asks, answered
 *   here so that no caller pairs collections with pauses again;
 * - a poll in which the stream met a span that ended before it began
 *   fails with OCGC_E_CORRUPT (the rest of the poll counts);
 * - stock OCaml 5: a collection of every domain is counted at its first
 *   domain's span; another domain's only raises its duration to the
 *   longest (hist_grow) and may give it its cause (member_joins); major
 *   cycles come from the stream, forced majors from explicit spans, the
 *   heap from each domain's last heap counters; the major slices' work
 *   counters (5.3+) go to slicework.c, with the slices' spans;
 * - the events' heap is a gauge: from the heap changes read, and, for a
 *   cursor that starts now on an ocgc ring, from the producer's totals at
 *   the start (the changes before it are not read); 0 only while unknown.
 * - it calls up into no file above it: a pause reaches interval.c's
 *   recorders through the list of pause listeners (agg_listen), in the
 *   order they joined it, newest first, after the caller's on_pause;
 *   a listener is told once that the aggregator goes (gone), then forgotten.
 * One aggregator must not be used by two threads at once. */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "agg.h"
#include "source.h"
#include "stream.h"

static void note_error(struct ocgc_agg *a, int err)
{
  if (a->error == 0) a->error = err;
}

static void on_span(const struct ocgc_span *s, void *ctx)
{
  struct ocgc_agg *a = ctx;
  if (s->user || s->cut != OCGC_CUT_NONE || s->id >= AGG_MAX_PHASES) return;
  /* OCaml 5 counts a forced major when Gc.full_major or Gc.compact ends,
   * on the domain that called it. */
  if (a->stock && s->id < 64 && ((a->forced_ids >> s->id) & 1)) a->ev.c.forced_majors++;
  if (a->no_phases) return;
  if (a->phases[s->id] == NULL && ocgc_hist_new(&a->phases[s->id]) != 0) {
    note_error(a, -ENOMEM);
    return;
  }
  ocgc_hist_record(a->phases[s->id], s->end - s->begin);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

void agg_buckets_add(const struct agg_bounds *bd, struct agg_buckets *b, uint64_t ns)
{
  unsigned i = 0;
  while (i < bd->n && ns > bd->ns[i]) i++;
  b->n[i] = add_sat(b->n[i], 1);
  b->count = add_sat(b->count, 1);
  b->sum = add_sat(b->sum, ns);
}

void agg_buckets_out(const struct agg_bounds *bd, const struct agg_buckets *b,
                     struct ocgc_bucket_counts *out)
{
  uint64_t cum = 0;
  unsigned i;
  memset(out, 0, sizeof *out);
  out->sz = sizeof *out;
  out->count = b->count;
  out->sum_ns = b->sum;
  out->nbounds = bd->n;
  for (i = 0; i < bd->n; i++) out->le[i] = cum = add_sat(cum, b->n[i]);
}

void agg_buckets_grow(const struct agg_bounds *bd, struct agg_buckets *b, uint64_t from,
                      uint64_t to)
{
  unsigned i = 0, j = 0;
  while (i < bd->n && from > bd->ns[i]) i++;
  while (j < bd->n && to > bd->ns[j]) j++;
  if (b->n[i] == 0 || b->n[i] == UINT64_MAX) return;
  b->n[i]--;
  b->n[j]++;
  if (b->sum != UINT64_MAX) b->sum = add_sat(b->sum - (from < b->sum ? from : b->sum), to);
}

/* A pause or a collection of [ns] into the fine histogram [h] and the
 * bucket counts [b], as the options say. */
static void agg_record(struct ocgc_agg *a, struct ocgc_hist *h, struct agg_buckets *b, uint64_t ns)
{
  if (!a->bounds.only) ocgc_hist_record(h, ns);
  if (a->bounds.n > 0) agg_buckets_add(&a->bounds, b, ns);
}

/* A value recorded as [from] is [to] now (stw.c's longest domain grew). */
static void agg_grow(struct ocgc_agg *a, struct ocgc_hist *h, struct agg_buckets *b,
                     uint64_t from, uint64_t to)
{
  if (to <= from) return;
  if (!a->bounds.only) hist_grow(h, from, to);
  if (a->bounds.n > 0) agg_buckets_grow(&a->bounds, b, from, to);
}

/* Another domain's span of a stop-the-world collection already counted:
 * the collection's duration is its longest domain's span, its cause the
 * first one a domain announced. */
static void member_joins(struct ocgc_agg *a, const struct ocgc_collection *c, uint64_t ns)
{
  unsigned kind = (unsigned)c->span.kind;
  int before = c->stw_prev_cause, after;
  uint64_t prev = c->stw_prev_ns, now = ns > prev ? ns : prev;
  struct ocgc_cause_row *was, *is;
  if (before < 0 || (unsigned)before >= OCGC_CAUSE_SLOTS) return;
  after = before == OCGC_CAUSE_UNKNOWN ? c->span.cause : before;
  agg_grow(a, a->kinds[kind], &a->bkinds[kind], prev, now);
  was = &a->causes[kind][before];
  is = &a->causes[kind][after];
  if (was != is && was->count > 0) {
    was->count--;
    was->total_ns -= prev < was->total_ns ? prev : was->total_ns;
    is->count++;
    is->total_ns += now;
  } else {
    is->total_ns += now - prev;
  }
  if (now > is->worst_ns) is->worst_ns = now;
}

static void on_collection(const struct ocgc_collection *c, void *ctx)
{
  struct ocgc_agg *a = ctx;
  unsigned kind = (unsigned)c->span.kind, cause = (unsigned)c->span.cause;
  uint64_t ns = c->span.end - c->span.begin;
  struct ocgc_cause_row *row;
  if (kind >= OCGC_KIND_COUNT || cause >= OCGC_CAUSE_SLOTS) return;
  slicework_collection(a->slicework, c);
  if (c->stw_member) { member_joins(a, c, ns); return; }
  if (c->span.ring < a->nrings &&
      !ocgc_kind_outranks(a->building[c->span.ring].kind, a->building[c->span.ring].ns, (int)kind, ns)) {
    a->building[c->span.ring].kind = (int)kind;
    a->building[c->span.ring].cause = (int)cause;
    a->building[c->span.ring].ns = ns;
  }
  row = &a->causes[kind][cause];
  a->ev.c.collections[kind]++;
  agg_record(a, a->kinds[kind], &a->bkinds[kind], ns);
  row->count++;
  row->total_ns += ns;
  if (ns > row->worst_ns) row->worst_ns = ns;
}

void agg_event_counters(const struct ocgc_agg *a, struct ocgc_counters *c)
{
  *c = a->ev.c; /* the figures the events give (agg.h), the rest 0 */
  c->sz = sizeof *c;
  memcpy(c->event_collections, c->collections, sizeof c->event_collections);
  c->time_ns = c->last_event_ns;
  c->exact = 0;
}

/* The pause to the caller's on_pause, with its kind and cause: its most
 * significant collection's (a member's own span on its ring). */
static void tell_pause(struct ocgc_agg *a, const struct ocgc_pause *p)
{
  struct ocgc_agg_pause ap;
  int known = p->ring < a->nrings && a->building[p->ring].kind != OCGC_KIND_NONE;
  memset(&ap, 0, sizeof ap);
  ap.pause = *p;
  ap.kind = known ? a->building[p->ring].kind : OCGC_KIND_NONE;
  ap.cause = known ? a->building[p->ring].cause : OCGC_CAUSE_NONE;
  agg_event_counters(a, &ap.counts);
  a->on_pause(&ap, a->cb_ctx);
}

static void on_pause(const struct ocgc_pause *p, void *ctx)
{
  struct ocgc_agg *a = ctx;
  struct agg_listener *l;
  if (a->on_pause != NULL) tell_pause(a, p);
  for (l = a->listeners; l != NULL; l = l->next) l->pause(l, p);
  if (p->ring < a->nrings) {
    a->building[p->ring].kind = OCGC_KIND_NONE;
    a->building[p->ring].cause = OCGC_CAUSE_NONE;
    a->building[p->ring].ns = 0;
  }
  if (p->stw_member) {
    /* the stop of every domain, counted at its first domain's pause */
    if (p->duration_ns <= p->stw_prev_ns) return;
    agg_grow(a, a->pauses, &a->bpauses, p->stw_prev_ns, p->duration_ns);
    a->ev.c.gc_time_ns += p->duration_ns - p->stw_prev_ns;
    return;
  }
  agg_record(a, a->pauses, &a->bpauses, p->duration_ns);
  a->ev.c.pauses++;
  a->ev.c.gc_time_ns += p->duration_ns;
}

static void on_user(struct ocgc_agg *a, const struct ocgc_event *ev)
{
  if (ev->type != OCGC_USER_INT) return;
  switch (ocgc_event_meaning(a->src, ev)) {
  case OCGC_MEANS_CYCLE_END: a->ev.c.major_cycles++; break;
  case OCGC_MEANS_FORCED_MAJOR: a->ev.c.forced_majors++; break;
  case OCGC_MEANS_HEAP_GROW:
  case OCGC_MEANS_HEAP_SHRINK:
    a->ev.c.heap_bytes = ev->value * 8;
    if (a->ev.c.heap_bytes > a->ev.c.top_heap_bytes) a->ev.c.top_heap_bytes = a->ev.c.heap_bytes;
    break;
  case OCGC_MEANS_DIRECT_ALLOC: a->ev.c.direct_major_bytes += ev->value * 8; break;
  default: break;
  }
}

/* OCaml 5 writes each domain's pool and large words at the end of a major
 * cycle (same ids in 5.2 and 5.3): the heap is their sum over domains,
 * as Gc.quick_stat's heap_words then. */
#define CT_MAJOR_HEAP_POOL_WORDS 11u  /* OCaml 5's EV_C_MAJOR_HEAP_POOL_WORDS */
#define CT_MAJOR_HEAP_LARGE_WORDS 13u /* EV_C_MAJOR_HEAP_LARGE_WORDS */

static void stock_heap(struct ocgc_agg *a, const struct ocgc_event *ev)
{
  unsigned r, which = ev->id == CT_MAJOR_HEAP_POOL_WORDS    ? 0
                      : ev->id == CT_MAJOR_HEAP_LARGE_WORDS ? 1
                                                            : 2;
  uint64_t words = 0;
  if (which == 2 || a->ev.ring_heap == NULL || ev->ring >= a->nrings) return;
  a->ev.ring_heap[ev->ring][which] = ev->value;
  for (r = 0; r < a->nrings; r++)
    words = add_sat(words, add_sat(a->ev.ring_heap[r][0], a->ev.ring_heap[r][1]));
  a->ev.c.heap_bytes = words > UINT64_MAX / 8 ? UINT64_MAX : words * 8;
  if (a->ev.c.heap_bytes > a->ev.c.top_heap_bytes) a->ev.c.top_heap_bytes = a->ev.c.heap_bytes;
}

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct ocgc_agg *a = ctx;
  if (a->ev.c.first_event_ns == 0) a->ev.c.first_event_ns = ev->timestamp;
  if (ev->timestamp > a->ev.c.last_event_ns) a->ev.c.last_event_ns = ev->timestamp;
  ocgc_stream_event(a->stream, ev);
  if (ev->user) {
    if (ocgc_event_cause(a->src, ev) < 0) on_user(a, ev);
  } else if (ev->type == OCGC_RT_COUNTER) {
    /* MINOR_PROMOTED and MINOR_ALLOCATED keep their ids in 5.2 and 5.3;
     * by hand, not a loop over the counters' table: a runtime counter's
     * id says which field it adds to, and the table knows no ids */
    if (ev->id == OCGC_CT_MINOR_ALLOCATED) a->ev.c.allocated_bytes += ev->value;
    else if (ev->id == OCGC_CT_MINOR_PROMOTED) a->ev.c.promoted_bytes += ev->value;
    else if (a->stock) {
      stock_heap(a, ev);
      note_error(a, slicework_counter(&a->slicework, a->src, a->nrings, ev));
    }
  }
  return 0;
}

static void on_lost(unsigned ring, uint64_t lost, int exact, void *ctx)
{
  struct ocgc_agg *a = ctx;
  if (a->on_lost != NULL) a->on_lost(ring, lost, exact, a->ev.c.last_event_ns, a->cb_ctx);
  ocgc_stream_lost(a->stream, ring);
  slicework_lost(a->slicework, ring);
  if (ring < a->nrings) { /* the pause being built is dropped */
    a->building[ring].kind = OCGC_KIND_NONE;
    a->building[ring].cause = OCGC_CAUSE_NONE;
    a->building[ring].ns = 0;
  }
}

static int make_stream(struct ocgc_agg *a)
{
  struct ocgc_stream_opts so = OCGC_OPTS_INIT(struct ocgc_stream_opts);
  so.on_span = on_span;
  so.on_collection = on_collection;
  so.on_pause = on_pause;
  so.ctx = a;
  return ocgc_stream_new(a->src, &so, &a->stream);
}

/* The bounds of [o], checked (strictly ascending, at most OCGC_MAX_BOUNDS,
 * bounds_only only with bounds): 0 or -EINVAL. */
static int take_bounds(struct ocgc_agg *a, const struct ocgc_agg_opts *o)
{
  unsigned i;
  if (o->nbounds > OCGC_MAX_BOUNDS || (o->nbounds > 0 && o->bounds_ns == NULL) ||
      (o->bounds_only && o->nbounds == 0))
    return -EINVAL;
  for (i = 0; i < o->nbounds; i++) {
    if (i > 0 && o->bounds_ns[i] <= o->bounds_ns[i - 1]) return -EINVAL;
    a->bounds.ns[i] = o->bounds_ns[i];
  }
  a->bounds.n = o->nbounds;
  a->bounds.only = o->bounds_only != 0;
  return 0;
}

/* What the stock rules look for, in the source's numbering. */
static void stock_ids(struct ocgc_agg *a)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  const char *n;
  unsigned id;
  if (ocgc_source_info(a->src, &info) != 0 || info.has_ext) return;
  a->stock = 1;
  for (id = 0; id < 64 && (n = ocgc_phase_name(info.ids, id)) != NULL; id++)
    if (strcmp(n, "explicit_gc_full_major") == 0 || strcmp(n, "explicit_gc_compact") == 0)
      a->forced_ids |= UINT64_C(1) << id;
}

/* A cursor that starts now reads none of the heap changes before it, and
 * a program whose heap is steady writes no other: the heap its pauses
 * carry starts as the producer's totals say it is (a gauge, so this is
 * the heap at the window's start, not a count to difference), rather than
 * an unknown that a picture would draw as an empty heap. */
static void heap_from_totals(struct ocgc_agg *a)
{
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  if (ocgc_source_totals(a->src, &t) != 0 || t.heap_words == 0) return;
  a->ev.c.heap_bytes = t.heap_words > UINT64_MAX / 8 ? UINT64_MAX : t.heap_words * 8;
  a->ev.c.top_heap_bytes = t.top_heap_words > UINT64_MAX / 8 ? UINT64_MAX : t.top_heap_words * 8;
  if (a->ev.c.top_heap_bytes < a->ev.c.heap_bytes) a->ev.c.top_heap_bytes = a->ev.c.heap_bytes;
}

int ocgc_agg_new(struct ocgc_source *src, const struct ocgc_agg_opts *opts,
                 struct ocgc_agg **out)
{
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_agg *a;
  unsigned k;
  int err;

  if (src == NULL || out == NULL || opts_read(&o, sizeof o, opts) != 0) return -EINVAL;
  a = calloc(1, sizeof *a);
  if (a == NULL) return -ENOMEM;
  a->src = src;
  stock_ids(a);
  a->nrings = src->l.max_domains < AGG_RINGS ? (unsigned)src->l.max_domains : AGG_RINGS;
  a->building = calloc(a->nrings, sizeof *a->building);
  if (a->stock) a->ev.ring_heap = calloc(a->nrings, sizeof *a->ev.ring_heap);
  if (a->building == NULL || (a->stock && a->ev.ring_heap == NULL)) {
    ocgc_agg_free(a);
    return -ENOMEM;
  }
  for (k = 0; k < a->nrings; k++) {
    a->building[k].kind = OCGC_KIND_NONE;
    a->building[k].cause = OCGC_CAUSE_NONE;
  }
  err = ocgc_hist_new(&a->pauses);
  for (k = 0; k < OCGC_KIND_COUNT && err == 0; k++) err = ocgc_hist_new(&a->kinds[k]);
  if (err == 0) err = make_stream(a);
  if (err) { ocgc_agg_free(a); return err; }
  co.start = o.start;
  co.poll_max_events = o.poll_max_events;
  co.poll_max_ns = o.poll_max_ns;
  a->no_phases = o.no_phases != 0;
  if ((err = take_bounds(a, &o)) != 0) {
    ocgc_agg_free(a);
    return err;
  }
  a->on_pause = o.on_pause;
  a->on_lost = o.on_lost;
  a->cb_ctx = o.ctx;
  co.on_event = on_event;
  co.on_lost = on_lost;
  co.ctx = a;
  if ((err = ocgc_cursor_new(src, &co, &a->cur)) != 0) { ocgc_agg_free(a); return err; }
  if (o.start == OCGC_START_NOW && !a->stock) heap_from_totals(a);
  *out = a;
  return 0;
}

void agg_listen(struct ocgc_agg *a, struct agg_listener *l)
{
  l->next = a->listeners;
  a->listeners = l;
}

void agg_unlisten(struct ocgc_agg *a, struct agg_listener *l)
{
  struct agg_listener **pp;
  for (pp = &a->listeners; *pp != NULL; pp = &(*pp)->next)
    if (*pp == l) {
      *pp = l->next;
      l->next = NULL;
      return;
    }
}

void ocgc_agg_free(struct ocgc_agg *a)
{
  struct agg_listener *l, *next;
  unsigned k;
  if (a == NULL) return;
  for (l = a->listeners; l != NULL; l = next) { /* each lets go of a */
    next = l->next;
    l->next = NULL;
    l->gone(l);
  }
  a->listeners = NULL;
  ocgc_cursor_free(a->cur);
  ocgc_stream_free(a->stream);
  ocgc_hist_free(a->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++) ocgc_hist_free(a->kinds[k]);
  for (k = 0; k < AGG_MAX_PHASES; k++) ocgc_hist_free(a->phases[k]);
  free(a->building);
  free(a->ev.ring_heap);
  slicework_free(a->slicework);
  free(a);
}

static uint64_t stream_corrupt(const struct ocgc_agg *a)
{
  struct ocgc_stream_stats ss = OCGC_OPTS_INIT(struct ocgc_stream_stats);
  ocgc_stream_stats(a->stream, &ss);
  return ss.corrupt;
}

int64_t ocgc_agg_poll(struct ocgc_agg *a)
{
  int64_t n;
  uint64_t corrupt;
  if (a == NULL) return -EINVAL;
  corrupt = stream_corrupt(a);
  n = ocgc_cursor_poll(a->cur, 0);
  if (n >= 0) {
    struct ocgc_cursor_stats cs = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
    ocgc_cursor_stats(a->cur, &cs);
    if (!cs.behind) ocgc_stream_settle(a->stream);
  }
  if (n >= 0 && a->error) return a->error;
  if (n >= 0 && stream_corrupt(a) != corrupt) return OCGC_E_CORRUPT;
  return n;
}

int ocgc_agg_finish(struct ocgc_agg *a)
{
  if (a == NULL) return -EINVAL;
  ocgc_stream_finish(a->stream);
  return a->error;
}

void ocgc_agg_cursor_stats(const struct ocgc_agg *a, struct ocgc_cursor_stats *out)
{
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  if (a == NULL || out == NULL || out->sz < sizeof out->sz) return;
  ocgc_cursor_stats(a->cur, &st);
  st.corrupt += stream_corrupt(a);
  (void)opts_write(out, &st, sizeof st);
}
