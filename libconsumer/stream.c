/* stream.c - the collection stream: the one place where spans are paired,
 * causes claimed and collections grouped into pauses (consumer.h states the
 * rules; every consumer, ocgc's tools and the aggregator, uses these).
 *
 * Invariants, per ring:
 * - stack[0..depth) are the open spans, outermost first; colls_open counts
 *   the collections among them, so a collection is outermost iff it began
 *   with colls_open == 0;
 * - a span leaves the stack exactly once: delivered (on_span, and
 *   on_collection if it is a collection that ended by its own event), or
 *   counted as corrupt when it would end before it began;
 * - a pause is open (in_pause) from the begin of the outermost collection
 *   that started it until it is delivered or dropped; its duration is the
 *   sum of the outermost collections that ended inside it, so it never
 *   exceeds the GC time they account for.  A cut outermost collection
 *   drops it: a pause of unknown extent is never recorded;
 * - a pending cause or join mark is consumed by the next collection begin
 *   on the ring, which takes it only at the mark's own timestamp.
 * Stock OCaml 5 files (docs/stock-ocaml5.md): a collection that every
 * domain ran is delivered once per domain but counted once (stw.c joins
 * the spans, collection_ends() marks all but the first stw_member); a
 * minor one is held (hold) until its ring's next event, or the end of the
 * MINOR_LEAVE_BARRIER that follows it, which extends it; a cause counter
 * waits for the next collection of the kind it asks for.
 * Ring states are allocated on a ring's first event: a stock file names 128
 * rings, most never used.  Nothing else grows with the input (stw.c keeps
 * a fixed history per kind). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "ocgc/consumer.h"
#include "stream.h"
#include "stw.h"

/* What a user-event slot means to the stream, looked up by name once. */

struct open_span {
  struct ocgc_span s;
  int outermost;              /* collections: none was open around it */
  uint64_t allocated, promoted, work;
};

struct ring_state {
  struct open_span stack[OCGC_STREAM_MAX_DEPTH];
  unsigned depth;
  unsigned too_deep;          /* begins past the stack: skip as many ends */
  unsigned colls_open;        /* collections on the stack */
  int have_cause, have_join;
  int cause;
  uint64_t cause_ts, join_ts;
  int in_pause;
  struct ocgc_pause pause;
  uint64_t last_ts;           /* newest timestamp met: where cuts end */
  uint64_t seq;
  int cause_later;            /* stock: the cause waits for a collection of cause_kind */
  int cause_kind;
  /* Stock: a minor collection that ended, held until the ring's next event
   * says whether a MINOR_LEAVE_BARRIER extends it, and until that ends
   * (stw.c). */
  enum { HOLD_NONE = 0, HOLD_LB_BEGIN, HOLD_LB_END } hold;
  struct ocgc_collection held;
  int held_outermost;
};

struct ocgc_stream {
  const struct ocgc_source *src;
  struct ocgc_stream_opts o;
  enum ocgc_pause_rule rule;
  unsigned nrings;
  struct ring_state **rings;  /* made on a ring's first event */
  struct ocgc_stream_stats stats;
  /* Stock OCaml 5 files: a collection of all domains counted once. */
  int stock;
  int leave_barrier_id, cycle_id; /* phase ids in the source's numbering, or -1 */
  uint64_t explicit_ids;          /* bit per phase id: an explicit_gc_* span */
  struct stw_table stw;
};

/* ---- what an event is to the stream ---------------------------------------- */

/* Marks are the producer's promise to mark every stop, made by registering
 * the mark's name with the rest of its names, before any collection.  An
 * ocgc producer registers its names in the first slots, contiguously; a
 * stock file has no ocgc extension and makes no such promise. */
static enum ocgc_pause_rule choose_rule(const struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  unsigned slot;
  if (ocgc_source_info(src, &info) != 0 || !info.has_ext) return OCGC_PAUSE_NESTING;
  for (slot = 0; slot < OCGC_WIRE_USER_EVENTS; slot++) {
    const char *name = ocgc_source_user_name(src, slot);
    if (name == NULL) break;
    if (strcmp(name, OCGC_UEV_STOP_JOIN) == 0) return OCGC_PAUSE_MARKS;
  }
  return OCGC_PAUSE_NESTING;
}

/* ---- pauses ------------------------------------------------------------------ */

static void deliver_pause(struct ocgc_stream *st, struct ring_state *r)
{
  r->in_pause = 0;
  st->stats.pauses++;
  if (st->o.on_pause) st->o.on_pause(&r->pause, st->o.ctx);
}

/* An outermost collection begins at [ts]: it joins the open pause only when
 * the producer marked it so, at its own timestamp. */
static void outermost_begins(struct ocgc_stream *st, struct ring_state *r, unsigned ring,
                             uint64_t ts)
{
  int joins = st->rule == OCGC_PAUSE_MARKS && r->have_join && r->join_ts == ts && r->in_pause;
  r->have_join = 0;
  if (joins) return;
  if (r->in_pause) deliver_pause(st, r);
  memset(&r->pause, 0, sizeof r->pause);
  r->pause.ring = ring;
  r->pause.begin = r->pause.end = ts;
  r->pause.rule = st->rule;
  r->in_pause = 1;
}

static void outermost_ends(struct ocgc_stream *st, struct ring_state *r, const struct ocgc_span *s)
{
  if (!r->in_pause) return;
  if (s->cut != OCGC_CUT_NONE) {
    r->in_pause = 0; /* its extent is unknown: not a pause anyone measured */
    return;
  }
  r->pause.duration_ns += s->end - s->begin;
  r->pause.end = s->end;
  r->pause.collections++;
  if (st->rule == OCGC_PAUSE_NESTING) deliver_pause(st, r);
}

/* ---- stock OCaml 5: collections of every domain, causes ------------------------ */

static int stw_slot_of(int kind)
{
  return kind == OCGC_KIND_MINOR           ? STW_MINOR
         : kind == OCGC_KIND_MAJOR_FINISH  ? STW_MAJOR_FINISH
         : kind == OCGC_KIND_COMPACTION    ? STW_COMPACTION
                                           : -1;
}

/* A collection ended on ring r (its extent extended to [ext_end]): counted
 * once over the domains (stw.c) in stock files, then delivered, and so is
 * the pause it ends. */
static void collection_ends(struct ocgc_stream *st, struct ring_state *r,
                            struct ocgc_collection *c, int outermost, uint64_t ext_end)
{
  struct stw_join j = {0, 0, 0};
  int slot = stw_slot_of(c->span.kind);
  if (st->stock && slot >= 0 &&
      stw_join(&st->stw, (enum stw_slot)slot, c->span.ring, c->span.begin, ext_end,
               c->span.end - c->span.begin, c->span.cause, &j) != 0)
    st->stats.dropped++;
  c->stw_member = j.member;
  c->stw_prev_ns = j.prev_ns;
  c->stw_prev_cause = j.member ? j.prev_cause : -1;
  st->stats.collections++;
  if (st->o.on_collection) st->o.on_collection(c, st->o.ctx);
  if (!outermost) return;
  r->pause.stw_member = j.member;
  r->pause.stw_prev_ns = j.prev_ns;
  outermost_ends(st, r, &c->span);
}

static void release_held(struct ocgc_stream *st, struct ring_state *r, uint64_t ext_end)
{
  if (r->hold == HOLD_NONE) return;
  r->hold = HOLD_NONE;
  collection_ends(st, r, &r->held, r->held_outermost,
                  ext_end > r->held.span.end ? ext_end : r->held.span.end);
}

/* An event on a ring that holds a minor collection: its MINOR_LEAVE_BARRIER
 * extends it; anything else first releases it as it is. */
static void held_sees(struct ocgc_stream *st, struct ring_state *r, const struct ocgc_event *ev)
{
  int lb = !ev->user && (int)ev->id == st->leave_barrier_id;
  if (r->hold == HOLD_LB_BEGIN) {
    if (lb && ev->type == OCGC_RT_BEGIN) r->hold = HOLD_LB_END;
    else release_held(st, r, r->held.span.end);
  } else if (lb && ev->type == OCGC_RT_END) {
    release_held(st, r, ev->timestamp);
  } else if (!ev->user && ev->type == OCGC_RT_BEGIN && ocgc_event_kind(st->src, ev, NULL) >= 0) {
    release_held(st, r, r->last_ts);
  }
}

/* The kind of collection a stock runtime's cause counter asks for: the
 * FORCE_MINOR_* and REQUEST_MINOR_* counters a minor collection, the
 * REQUEST_MAJOR_* ones a major slice (of the domain that wrote it). */
static int cause_kind(int cause)
{
  return cause == OCGC_CAUSE_ALLOC_SHR || cause == OCGC_CAUSE_CUSTOM_MAJOR ? OCGC_KIND_MAJOR_SLICE
                                                                           : OCGC_KIND_MINOR;
}

/* Whether an explicit_gc_* span (Gc.minor, Gc.full_major, ...) is open. */
static int in_explicit(const struct ocgc_stream *st, const struct ring_state *r)
{
  unsigned i;
  for (i = 0; i < r->depth; i++)
    if (!r->stack[i].s.user && r->stack[i].s.id < 64 && ((st->explicit_ids >> r->stack[i].s.id) & 1))
      return 1;
  return 0;
}

/* The cause of a collection of [kind] beginning on ring r at [ts]. */
static int claim_cause(struct ocgc_stream *st, struct ring_state *r, int kind, uint64_t ts)
{
  int same_ts = r->have_cause && r->cause_ts == ts;
  int later = r->have_cause && r->cause_later && r->cause_kind == kind;
  int cause = same_ts || later ? r->cause : OCGC_CAUSE_UNKNOWN;
  /* Whatever it is, the next collection begin consumes a mark; a stock
   * cause waits for the kind it asks for. */
  if (same_ts || later || !r->cause_later) r->have_cause = 0;
  if (cause == OCGC_CAUSE_UNKNOWN && st->stock && in_explicit(st, r)) cause = OCGC_CAUSE_EXPLICIT;
  return cause;
}

/* ---- spans ------------------------------------------------------------------- */

/* Take the top span off ring r's stack, ending at [end]. */
static void close_top(struct ocgc_stream *st, struct ring_state *r, uint64_t end,
                      enum ocgc_span_cut cut)
{
  struct open_span *os = &r->stack[--r->depth];
  struct ocgc_span *s = &os->s;
  int coll = s->kind >= 0;
  if (coll) r->colls_open--;
  if (end < s->begin) {
    if (cut == OCGC_CUT_NONE) {
      /* No clock runs backwards: only a forged ring ends a span so. */
      st->stats.corrupt++;
      if (coll && os->outermost) r->in_pause = 0;
      return;
    }
    end = s->begin; /* cut at a timestamp that went back: a zero-length span */
  }
  s->end = end;
  s->cut = cut;
  st->stats.spans++;
  if (st->o.on_span) st->o.on_span(s, st->o.ctx);
  if (!coll) {
    if (st->stock && !s->user && (int)s->id == st->cycle_id && cut == OCGC_CUT_NONE) {
      struct stw_join j;
      if (stw_join(&st->stw, STW_CYCLE, s->ring, s->begin, end, end - s->begin, -1, &j) != 0)
        st->stats.dropped++;
    }
    return;
  }
  if (cut != OCGC_CUT_NONE) {
    if (os->outermost) outermost_ends(st, r, s);
    return;
  }
  {
    struct ocgc_collection c = {*s, os->outermost, os->allocated, os->promoted, os->work,
                                0, 0, -1};
    if (st->stock && s->kind == OCGC_KIND_MINOR) {
      r->held = c; /* until its MINOR_LEAVE_BARRIER says how long it waited */
      r->held_outermost = os->outermost;
      r->hold = HOLD_LB_BEGIN;
      return;
    }
    collection_ends(st, r, &c, os->outermost, end);
  }
}

static void cut_all(struct ocgc_stream *st, struct ring_state *r, enum ocgc_span_cut cut)
{
  while (r->depth > 0) close_top(st, r, r->last_ts, cut);
  r->too_deep = 0;
}

static void span_begins(struct ocgc_stream *st, struct ring_state *r, const struct ocgc_event *ev)
{
  int kind = ev->user ? -1 : ocgc_event_kind(st->src, ev, NULL);
  struct open_span *os;
  if (kind >= 0) {
    int cause = claim_cause(st, r, kind, ev->timestamp);
    if (r->colls_open == 0) outermost_begins(st, r, ev->ring, ev->timestamp);
    else r->have_join = 0;
    if (r->depth < OCGC_STREAM_MAX_DEPTH) {
      r->stack[r->depth].s.cause = cause;
      r->stack[r->depth].outermost = r->colls_open == 0;
    }
  }
  if (r->depth >= OCGC_STREAM_MAX_DEPTH) {
    r->too_deep++;
    st->stats.too_deep++;
    if (kind >= 0 && r->colls_open == 0) r->in_pause = 0; /* never ends: no pause */
    return;
  }
  os = &r->stack[r->depth++];
  os->s.ring = ev->ring;
  os->s.user = ev->user != 0;
  os->s.id = ev->id;
  os->s.depth = r->depth - 1;
  os->s.kind = kind;
  if (kind == OCGC_KIND_NONE) os->s.cause = OCGC_CAUSE_NONE;
  os->s.begin = os->s.end = ev->timestamp;
  os->s.seq = r->seq++;
  os->s.cut = OCGC_CUT_NONE;
  os->allocated = os->promoted = os->work = 0;
  if (kind >= 0) r->colls_open++;
}

static void span_ends(struct ocgc_stream *st, struct ring_state *r, const struct ocgc_event *ev)
{
  unsigned i = r->depth;
  unsigned user = ev->user != 0;
  if (r->too_deep > 0) { r->too_deep--; return; }
  while (i > 0 && (r->stack[i - 1].s.id != ev->id || r->stack[i - 1].s.user != user)) i--;
  if (i == 0) {
    st->stats.unmatched_ends++; /* its begin was lost, or came before we looked */
    return;
  }
  while (r->depth > i) close_top(st, r, ev->timestamp, OCGC_CUT_UNTERMINATED);
  close_top(st, r, ev->timestamp, OCGC_CUT_NONE);
}

/* The innermost open collection, to which an amount belongs, or NULL. */
static struct open_span *innermost_collection(struct ring_state *r)
{
  unsigned i = r->depth;
  while (i > 0 && r->stack[i - 1].s.kind < 0) i--;
  return i > 0 ? &r->stack[i - 1] : NULL;
}

static void on_counter(struct ocgc_stream *st, struct ring_state *r, const struct ocgc_event *ev)
{
  struct open_span *c;
  int cause = ocgc_event_cause(st->src, ev);
  if (cause >= 0) {
    r->have_cause = 1;
    r->cause = cause;
    r->cause_ts = ev->timestamp;
    /* A stock runtime writes it when it asks for the collection, which
     * begins later (at the domain's next poll). */
    r->cause_later = st->stock;
    r->cause_kind = cause_kind(cause);
    return;
  }
  /* MINOR_ALLOCATED and MINOR_PROMOTED keep their ids in 5.2 and 5.3 */
  if (ev->id != OCGC_CT_MINOR_ALLOCATED && ev->id != OCGC_CT_MINOR_PROMOTED) return;
  if ((c = innermost_collection(r)) == NULL) return;
  if (ev->id == OCGC_CT_MINOR_ALLOCATED) c->allocated += ev->value;
  else c->promoted += ev->value;
}

static void on_user(struct ocgc_stream *st, struct ring_state *r, const struct ocgc_event *ev)
{
  struct open_span *c;
  int cause;
  switch (ev->type) {
  case OCGC_USER_SPAN_BEGIN: span_begins(st, r, ev); return;
  case OCGC_USER_SPAN_END: span_ends(st, r, ev); return;
  case OCGC_USER_UNIT:
    if (ocgc_event_meaning(st->src, ev) == OCGC_MEANS_STOP_JOIN) {
      r->have_join = 1;
      r->join_ts = ev->timestamp;
    }
    return;
  case OCGC_USER_INT:
    if ((cause = ocgc_event_cause(st->src, ev)) >= 0) {
      r->have_cause = 1;
      r->cause = cause;
      r->cause_ts = ev->timestamp;
      r->cause_later = 0;
    } else if (ocgc_event_meaning(st->src, ev) == OCGC_MEANS_SLICE_WORK &&
               (c = innermost_collection(r)) != NULL) {
      c->work += ev->value;
    }
    return;
  default: return;
  }
}

/* ---- the API ------------------------------------------------------------------- */

static struct ring_state *ring_of(struct ocgc_stream *st, unsigned ring)
{
  if (ring >= st->nrings) return NULL;
  if (st->rings[ring] == NULL) st->rings[ring] = calloc(1, sizeof *st->rings[ring]);
  return st->rings[ring];
}

void ocgc_stream_settle(struct ocgc_stream *st)
{
  unsigned i;
  if (st == NULL) return;
  for (i = 0; i < st->nrings; i++) {
    struct ring_state *r = st->rings[i];
    /* read to its tail, and no leave barrier began: none will */
    if (r != NULL && r->hold == HOLD_LB_BEGIN) release_held(st, r, r->held.span.end);
  }
}

/* Phase ids the stock rules look for, in the source's numbering. */
static void find_phases(struct ocgc_stream *st, enum ocgc_ids ids)
{
  unsigned id;
  const char *n;
  st->leave_barrier_id = st->cycle_id = -1;
  for (id = 0; id < 64 && (n = ocgc_phase_name(ids, id)) != NULL; id++) {
    if (strcmp(n, "minor_leave_barrier") == 0) st->leave_barrier_id = (int)id;
    if (strcmp(n, "major_gc_cycle_domains") == 0) st->cycle_id = (int)id;
    if (strncmp(n, "explicit_gc_", 12) == 0) st->explicit_ids |= UINT64_C(1) << id;
  }
}

uint64_t stream_stw_cycles(const struct ocgc_stream *st)
{
  return st != NULL ? st->stw.groups[STW_CYCLE] : 0;
}

int ocgc_stream_new(const struct ocgc_source *src, const struct ocgc_stream_opts *opts,
                    struct ocgc_stream **out)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_stream *st;
  int err;
  if (src == NULL || out == NULL) return -EINVAL;
  if ((err = ocgc_source_info(src, &info)) != 0) return err;
  if ((st = calloc(1, sizeof *st)) == NULL) return -ENOMEM;
  st->o.sz = sizeof st->o;
  if (opts_read(&st->o, sizeof st->o, opts) != 0) {
    free(st);
    return -EINVAL;
  }
  st->src = src;
  st->nrings = (unsigned)info.max_domains;
  st->rule = choose_rule(src);
  st->stock = !info.has_ext;
  find_phases(st, info.ids);
  if ((st->rings = calloc(st->nrings ? st->nrings : 1, sizeof *st->rings)) == NULL) {
    free(st);
    return -ENOMEM;
  }
  *out = st;
  return 0;
}

void ocgc_stream_free(struct ocgc_stream *st)
{
  unsigned i;
  if (st == NULL) return;
  for (i = 0; i < st->nrings; i++) free(st->rings[i]);
  free(st->rings);
  stw_free(&st->stw);
  free(st);
}

void ocgc_stream_event(struct ocgc_stream *st, const struct ocgc_event *ev)
{
  struct ring_state *r;
  if (st == NULL || ev == NULL || ev->ring >= st->nrings) return;
  if ((r = ring_of(st, ev->ring)) == NULL) {
    st->stats.dropped++;
    return;
  }
  if (ev->timestamp > r->last_ts) r->last_ts = ev->timestamp;
  if (r->hold != HOLD_NONE) held_sees(st, r, ev);
  if (ev->user) {
    on_user(st, r, ev);
    return;
  }
  switch (ev->type) {
  case OCGC_RT_BEGIN: span_begins(st, r, ev); break;
  case OCGC_RT_END: span_ends(st, r, ev); break;
  case OCGC_RT_COUNTER: on_counter(st, r, ev); break;
  case OCGC_RT_LIFECYCLE:
    /* The ring's writer stopped: its last stop is over. */
    if (ev->id == OCGC_LC_RING_STOP && r->in_pause && r->colls_open == 0)
      deliver_pause(st, r);
    break;
  default: break;
  }
}

void ocgc_stream_lost(struct ocgc_stream *st, unsigned ring)
{
  struct ring_state *r;
  if (st == NULL || ring >= st->nrings || (r = st->rings[ring]) == NULL) return;
  release_held(st, r, r->held.span.end);
  r->in_pause = 0; /* before the cuts: a lost stretch ends no pause */
  cut_all(st, r, OCGC_CUT_LOST);
  r->have_cause = r->have_join = 0;
}

void ocgc_stream_finish(struct ocgc_stream *st)
{
  unsigned i;
  if (st == NULL) return;
  for (i = 0; i < st->nrings; i++) {
    struct ring_state *r = st->rings[i];
    if (r == NULL) continue;
    release_held(st, r, r->last_ts);
    if (r->in_pause && r->colls_open == 0) deliver_pause(st, r);
    cut_all(st, r, OCGC_CUT_END);
    r->have_cause = r->have_join = 0;
  }
}

enum ocgc_pause_rule ocgc_stream_pause_rule(const struct ocgc_stream *st)
{
  return st != NULL ? st->rule : OCGC_PAUSE_NESTING;
}

int ocgc_stream_pending_pause(const struct ocgc_stream *st, unsigned ring, struct ocgc_pause *out)
{
  const struct ring_state *r;
  if (st == NULL || out == NULL || ring >= st->nrings || (r = st->rings[ring]) == NULL) return 0;
  if (!r->in_pause || r->colls_open > 0 || r->pause.collections == 0) return 0;
  *out = r->pause;
  return 1;
}

unsigned ocgc_stream_depth(const struct ocgc_stream *st, unsigned ring)
{
  if (st == NULL || ring >= st->nrings || st->rings[ring] == NULL) return 0;
  return st->rings[ring]->depth;
}

int ocgc_stream_open_span(const struct ocgc_stream *st, unsigned ring, unsigned i,
                          struct ocgc_span *out)
{
  const struct ring_state *r;
  if (st == NULL || out == NULL || ring >= st->nrings || (r = st->rings[ring]) == NULL ||
      i >= r->depth)
    return -EINVAL;
  *out = r->stack[i].s;
  out->end = r->last_ts > out->begin ? r->last_ts : out->begin;
  return 0;
}

void ocgc_stream_stats(const struct ocgc_stream *st, struct ocgc_stream_stats *out)
{
  struct ocgc_stream_stats s = OCGC_OPTS_INIT(struct ocgc_stream_stats);
  if (st == NULL || out == NULL || out->sz < sizeof out->sz) return;
  s = st->stats;
  s.sz = sizeof s;
  (void)opts_write(out, &s, sizeof s);
}
