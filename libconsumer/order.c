/* order.c - a stream's spans in a viewer's order (ocgc/order.h).
 *
 * Invariants: a ring's open spans [0, nopen) were given early as begins,
 * their ends pending; while the ring's depth is nopen nothing is held, so
 * the spans of an open span given early stream out as their own subtrees
 * close.  Every span given closed has end >= begin.  held counts the
 * closed spans held in all rings, at most max_held + 1 before an early
 * give; a ring's array is at most max_held + 1 + OCGC_STREAM_MAX_DEPTH
 * spans (the open ones of an early give join it). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/order.h"
#include "opts.h"

#define KEEP_CAP 16     /* a ring's array at most this big outlives a flush */
#define MAX_RINGS 4096u

/* A held span, in 32 bytes. */
struct held {
  uint64_t begin, end, seq;
  int16_t cause;          /* enum ocgc_cause, or OCGC_CAUSE_NONE */
  uint16_t id;
  uint8_t depth;          /* < OCGC_STREAM_MAX_DEPTH */
  int8_t kind;            /* enum ocgc_kind, or OCGC_KIND_NONE */
  uint8_t flags;          /* USER, OPEN, and the cut (bits 2-3) */
};
#define F_USER 1u
#define F_OPEN 2u
#define CUT_SHIFT 2u

struct ring {
  unsigned nopen;
  struct held *done;
  size_t ndone, cap;
};

struct ocgc_span_order {
  struct ocgc_span_order_opts o;
  struct ring *rings;
  unsigned nrings;
  size_t held;
};

int ocgc_span_order_new(unsigned nrings, const struct ocgc_span_order_opts *opts,
                        struct ocgc_span_order **out)
{
  struct ocgc_span_order *o;
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if (nrings == 0 || nrings > MAX_RINGS) return -EINVAL;
  if ((o = calloc(1, sizeof *o)) == NULL) return -ENOMEM;
  if (opts_read(&o->o, sizeof o->o, opts) != 0 || o->o.on_span == NULL) {
    free(o);
    return -EINVAL;
  }
  if (o->o.max_held == 0) o->o.max_held = OCGC_SPAN_ORDER_MAX_HELD;
  if ((o->rings = calloc(nrings, sizeof *o->rings)) == NULL) {
    free(o);
    return -ENOMEM;
  }
  o->nrings = nrings;
  *out = o;
  return 0;
}

void ocgc_span_order_free(struct ocgc_span_order *o)
{
  unsigned i;
  if (o == NULL) return;
  for (i = 0; i < o->nrings; i++) free(o->rings[i].done);
  free(o->rings);
  free(o);
}

static void to_held(const struct ocgc_span *s, struct held *h)
{
  memset(h, 0, sizeof *h);
  h->begin = s->begin;
  h->end = s->end >= s->begin ? s->end : s->begin;
  h->seq = s->seq;
  h->cause = s->kind >= 0 && s->cause >= 0 && s->cause <= INT16_MAX ? (int16_t)s->cause
                                                                       : OCGC_CAUSE_NONE;
  h->kind = s->kind >= 0 && s->kind <= INT8_MAX ? (int8_t)s->kind : OCGC_KIND_NONE;
  h->id = (uint16_t)s->id;
  h->depth = (uint8_t)s->depth;
  h->flags = (uint8_t)((s->user ? F_USER : 0u) | ((unsigned)s->cut & 3u) << CUT_SHIFT);
}

static void from_held(const struct held *h, unsigned ring, struct ocgc_span *s)
{
  memset(s, 0, sizeof *s);
  s->ring = ring;
  s->user = (h->flags & F_USER) != 0;
  s->id = h->id;
  s->depth = h->depth;
  s->kind = h->kind;
  s->cause = h->cause;
  s->begin = h->begin;
  s->end = h->end;
  s->seq = h->seq;
  s->cut = (enum ocgc_span_cut)(h->flags >> CUT_SHIFT & 3u);
}

static int held_order(const void *a, const void *b)
{
  const struct held *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  return 0;
}

/* Room for [extra] more spans in ring r's array: 0, or -ENOMEM. */
static int room(struct ocgc_span_order *o, struct ring *r, size_t extra)
{
  size_t need = r->ndone + extra, cap = r->cap ? r->cap : KEEP_CAP;
  size_t most = o->o.max_held + 1 + OCGC_STREAM_MAX_DEPTH;
  struct held *p;
  if (need <= r->cap) return 0;
  while (cap < need) cap *= 2;
  /* held <= max_held + 1 and the open spans of an early give: no more */
  if (cap > most && need <= most) cap = most;
  if ((p = realloc(r->done, cap * sizeof *p)) == NULL) return -ENOMEM;
  r->done = p;
  r->cap = cap;
  return 0;
}

void ocgc_span_order_flush(struct ocgc_span_order *o, unsigned ring)
{
  struct ring *r;
  size_t i;
  if (o == NULL || ring >= o->nrings) return;
  r = &o->rings[ring];
  if (r->ndone == 0) return; /* (done may still be NULL: qsort wants a pointer) */
  qsort(r->done, r->ndone, sizeof r->done[0], held_order);
  for (i = 0; i < r->ndone; i++) {
    struct ocgc_span s;
    from_held(&r->done[i], ring, &s);
    o->o.on_span(&s, (r->done[i].flags & F_OPEN) != 0, o->o.ctx);
    if (!(r->done[i].flags & F_OPEN)) o->held--;
  }
  r->ndone = 0;
  if (r->cap > KEEP_CAP) {
    /* Only a long tree needed it: give it back, so that the arrays of
     * all rings together stay within about twice max_held. */
    free(r->done);
    r->done = NULL;
    r->cap = 0;
  }
}

/* Too much is held: give ring [ring]'s held spans now, and the spans
 * still open around them as begins (their ends come when they close).
 * 0, or -ENOMEM (nothing given: they stay held). */
static int give_early(struct ocgc_span_order *o, const struct ocgc_stream *stream, unsigned ring)
{
  struct ring *r = &o->rings[ring];
  struct ocgc_span os;
  size_t nheld = r->ndone;
  unsigned k, depth = ocgc_stream_depth(stream, ring);
  if (depth < r->nopen) return 0;
  if (room(o, r, depth - r->nopen) != 0) return -ENOMEM;
  for (k = r->nopen; k < depth; k++) {
    if (ocgc_stream_open_span(stream, ring, k, &os) != 0) break;
    to_held(&os, &r->done[r->ndone]);
    r->done[r->ndone++].flags |= F_OPEN;
  }
  ocgc_span_order_flush(o, ring);
  if (o->o.on_early != NULL) o->o.on_early(ring, nheld, depth - r->nopen, o->o.ctx);
  r->nopen = depth;
  return 0;
}

/* The ring holding the most (there is one: held > 0). */
static unsigned fullest(const struct ocgc_span_order *o)
{
  unsigned i, best = 0;
  for (i = 1; i < o->nrings; i++)
    if (o->rings[i].ndone > o->rings[best].ndone) best = i;
  return best;
}

int ocgc_span_order_add(struct ocgc_span_order *o, const struct ocgc_stream *stream,
                        const struct ocgc_span *span, int no_early)
{
  struct ring *r;
  struct held h;
  if (o == NULL || span == NULL || span->ring >= o->nrings) return 0;
  r = &o->rings[span->ring];
  to_held(span, &h);
  if (h.depth < r->nopen) {
    /* Given as a begin: nothing is held inside it (depth was nopen), but
     * should something be, it must come before the end. */
    struct ocgc_span s;
    ocgc_span_order_flush(o, span->ring);
    from_held(&h, span->ring, &s);
    if (o->o.on_end != NULL) o->o.on_end(&s, o->o.ctx);
    r->nopen = h.depth;
    return 0;
  }
  if (room(o, r, 1) != 0) return -ENOMEM;
  r->done[r->ndone++] = h;
  o->held++;
  if (h.depth == r->nopen) ocgc_span_order_flush(o, span->ring); /* its whole tree is here */
  else if (o->held > o->o.max_held && !no_early) return give_early(o, stream, fullest(o));
  return 0;
}
