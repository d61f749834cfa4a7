/* timeline.c - a window's history (ocgc/timeline.h): the pauses and the
 * rates over time, in memory fixed at ocgc_timeline_new().
 *
 * Why here and how: libocgc's aggregator answers what each pause is (its
 * kind and cause, on_pause) and what the events had counted by then; this
 * file only keeps a bounded picture of them, as an interval recorder keeps
 * histograms.  Rates come from the events' own times (the counts carried by
 * each pause, at its end), never from when we happened to poll: a ring
 * file read in one pass gives the same series as the live run it recorded.
 * Only the /proc figures of a live process are sampled at our polls.
 *
 * Invariants:
 * - bucket i covers [origin + i * width, + width); a time past the last
 *   bucket merges pairs of buckets and doubles the width until it fits,
 *   so the whole window always has TL_BUCKETS buckets at most; a time
 *   before the origin counts in bucket 0;
 * - a count is the difference between the counts a pause carries and the
 *   previous pause's (the first pause's: from zero, the aggregator's
 *   counts starting with its cursor), so sums over buckets are the
 *   aggregator's counts: nothing of the window is left out;
 * - where a count goes is where it happened, as far as the events tell:
 *   allocation happens between collections but is counted at the next
 *   minor one, so it is spread over [previous pause's end, this one's
 *   begin] (the mutator runs between pauses, not in them) in proportion
 *   to time (an even rate is the most the events say; a comb of
 *   everything at the pause would be a picture of the counting, not of
 *   the program); promotion and collections happen inside the
 *   pause, so they go to the bucket of its end; splits are exact (the
 *   parts add up to the count);
 * - pause_ns is time inside pauses: each pause lies at [begin, begin +
 *   duration] (its duration is the sum of its collections), clipped at
 *   bucket edges and at the origin, and only past the end of the time
 *   already counted (paused_to), so overlapping pauses (stock OCaml 5's
 *   domains) count once and pause_ns <= width: a share, never above 1;
 * - a bucket's heap is known only from a pause's figure, heap_t its time;
 *   a heap of 0 is "not known" (the aggregator's before any heap figure:
 *   no running OCaml program has an empty major heap) and never drawn;
 * - each bucket keeps its longest pause (top) and its most significant
 *   (rank: compaction over major_finish over major_slice over minor, then
 *   the longest), so past TL_EXACT pauses the rarest kind of each bucket
 *   is still among the marks, however many commoner ones flood it;
 * - every pause is in exact[] while total <= TL_EXACT; the TL_TOP longest
 *   are in top[] and each bucket's longest in its top, always, so the
 *   maximum and the tail (all pauses above the 1 - TL_TOP / total quantile)
 *   survive any flood; sample[] is a uniform sample of all (algorithm R,
 *   a fixed seed: the same input draws the same picture), so the body of
 *   the distribution still shows when only the tail is kept whole;
 * - a loss is known at its start (the newest event before it) and ends at
 *   the next event recorded; every bucket it covers says so, merged with
 *   the buckets, so loss periods cost nothing however many there are;
 * - a stop-the-world member (stock OCaml 5) grows the pause it joins, found
 *   among the TL_RECENT latest by its duration before. */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/interval.h"
#include "ocgc/timeline.h"
#include "opts.h"

#define TL_BUCKETS OCGC_TIMELINE_BUCKETS
#define TL_EXACT OCGC_TIMELINE_EXACT
#define TL_TOP OCGC_TIMELINE_TOP
#define TL_SAMPLE OCGC_TIMELINE_SAMPLE
#define TL_RECENT 16u   /* pauses a stop-the-world member may still grow */

/* A /proc sample's figures. */
struct proc_sample {
  uint64_t cpu_ns, ctx_switches, faults;
};

struct ocgc_timeline {
  uint64_t origin, width;     /* width 0: nothing recorded yet */
  struct ocgc_timeline_bucket b[TL_BUCKETS];
  uint64_t total;             /* pauses recorded (stop-the-world members not) */
  uint64_t max_ns;
  struct ocgc_timeline_mark exact[TL_EXACT];
  struct ocgc_timeline_mark top[TL_TOP]; /* a min-heap on ns */
  unsigned ntop;
  struct ocgc_timeline_mark sample[TL_SAMPLE]; /* reservoir sample (algorithm R) */
  uint64_t rng;               /* its xorshift state, fixed seed: reproducible */
  struct ocgc_timeline_mark recent[TL_RECENT];
  unsigned nrecent;
  uint64_t loss_from;         /* with loss_open: a loss since then */
  int loss_open;              /* events were lost: the next event ends the gap */
  int have_proc, live;
  struct ocgc_agg_pause last; /* the previous pause's counts (zero at first) */
  uint64_t last_end;          /* its end (0: none yet) */
  uint64_t paused_to;         /* pause time is counted up to here */
  uint64_t kind_pauses[OCGC_KIND_COUNT], unknown_pauses;
  struct proc_sample last_proc;
};

#define TL_WIDTH0 UINT64_C(1000000) /* 1 ms: 1 s in 1024 buckets at first */

int ocgc_timeline_new(struct ocgc_timeline **out)
{
  if (out == NULL) return -EINVAL;
  return (*out = calloc(1, sizeof **out)) != NULL ? 0 : -ENOMEM;
}

void ocgc_timeline_free(struct ocgc_timeline *tl)
{
  free(tl);
}

void ocgc_timeline_origin(struct ocgc_timeline *tl, uint64_t t)
{
  if (tl->width != 0) return;
  tl->origin = t;
  tl->width = TL_WIDTH0;
}

static void merge_bucket(struct ocgc_timeline_bucket *d, const struct ocgc_timeline_bucket *a, const struct ocgc_timeline_bucket *b)
{
  struct ocgc_timeline_bucket m = *a;
  unsigned k;
  m.pauses += b->pauses;
  m.pause_ns += b->pause_ns;
  if (b->max_ns > m.max_ns) m.max_ns = b->max_ns;
  m.alloc += b->alloc;
  m.promo += b->promo;
  for (k = 0; k < OCGC_KIND_COUNT; k++) m.coll[k] += b->coll[k];
  if (b->sample_t != 0) m.sample_t = b->sample_t;
  if (b->heap_t != 0) { m.heap_t = b->heap_t; m.heap = b->heap; m.top_heap = b->top_heap; }
  m.cpu_ns += b->cpu_ns;
  m.ctx += b->ctx;
  m.faults += b->faults;
  if (b->proc_t != 0) m.proc_t = b->proc_t;
  if (b->top.ns > m.top.ns) m.top = b->top;
  if (b->rank.ns != 0 && (m.rank.ns == 0 || ocgc_kind_outranks(b->rank.kind, b->rank.ns, m.rank.kind, m.rank.ns)))
    m.rank = b->rank;
  if (b->loss_to != 0) {
    if (m.loss_to == 0 || b->loss_from < m.loss_from) m.loss_from = b->loss_from;
    if (b->loss_to > m.loss_to) m.loss_to = b->loss_to;
  }
  *d = m;
}

/* Halve the resolution: pairs of buckets into one, width doubled. */
static void coarsen(struct ocgc_timeline *tl)
{
  unsigned i;
  for (i = 0; i < TL_BUCKETS / 2; i++) merge_bucket(&tl->b[i], &tl->b[2 * i], &tl->b[2 * i + 1]);
  memset(&tl->b[TL_BUCKETS / 2], 0, sizeof tl->b[0] * (TL_BUCKETS / 2));
  tl->width *= 2;
}

/* The bucket of time [t], coarsening as needed. */
static struct ocgc_timeline_bucket *bucket_at(struct ocgc_timeline *tl, uint64_t t)
{
  ocgc_timeline_origin(tl, t);
  if (t < tl->origin) return &tl->b[0];
  while ((t - tl->origin) / tl->width >= TL_BUCKETS) coarsen(tl);
  return &tl->b[(t - tl->origin) / tl->width];
}

/* ---- the longest pauses: a min-heap on duration ------------------------- */

static void heap_swap(struct ocgc_timeline_mark *a, struct ocgc_timeline_mark *b)
{
  struct ocgc_timeline_mark t = *a;
  *a = *b;
  *b = t;
}

static void heap_down(struct ocgc_timeline_mark *h, unsigned n, unsigned i)
{
  for (;;) {
    unsigned l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && h[l].ns < h[m].ns) m = l;
    if (r < n && h[r].ns < h[m].ns) m = r;
    if (m == i) return;
    heap_swap(&h[i], &h[m]);
    i = m;
  }
}

static void top_add(struct ocgc_timeline *tl, const struct ocgc_timeline_mark *m)
{
  unsigned i;
  if (tl->ntop == TL_TOP) {
    if (m->ns <= tl->top[0].ns) return;
    tl->top[0] = *m;
    heap_down(tl->top, tl->ntop, 0);
    return;
  }
  i = tl->ntop++;
  tl->top[i] = *m;
  while (i > 0 && tl->top[(i - 1) / 2].ns > tl->top[i].ns) {
    heap_swap(&tl->top[(i - 1) / 2], &tl->top[i]);
    i = (i - 1) / 2;
  }
}

/* ---- recording ------------------------------------------------------------ */

static uint64_t diff(uint64_t now, uint64_t before)
{
  return now > before ? now - before : 0;
}

/* [n] of the uint64_t at [off] of the buckets, spread over [from, to] in
 * proportion to each bucket's share of that time; the parts add up to n
 * (each bucket takes the difference of two cumulative floors). */
static void spread(struct ocgc_timeline *tl, uint64_t from, uint64_t to, uint64_t n, size_t off)
{
  uint64_t i, first, last, given = 0;
  if (n == 0) return;
  if (from < tl->origin) from = tl->origin;
  if (to <= from) {
    *(uint64_t *)((char *)bucket_at(tl, to) + off) += n;
    return;
  }
  last = (uint64_t)(bucket_at(tl, to - 1) - tl->b); /* first: it may coarsen */
  first = (uint64_t)(bucket_at(tl, from) - tl->b);
  for (i = first; i <= last; i++) {
    uint64_t end = tl->origin + (i + 1) * tl->width, upto = n;
    if (i < last && end < to) {
      double part = (double)n * ((double)(end - from) / (double)(to - from));
      upto = part >= (double)n ? n : (uint64_t)part;
    }
    if (upto < given) upto = given;
    *(uint64_t *)((char *)&tl->b[i] + off) += upto - given;
    given = upto;
  }
}

/* Time in a pause, [from, to): into the buckets it covers, clipped at
 * their edges, past what was counted already. */
static void pause_time(struct ocgc_timeline *tl, uint64_t from, uint64_t to)
{
  uint64_t i, first, last;
  if (from < tl->paused_to) from = tl->paused_to;
  if (from < tl->origin) from = tl->origin;
  if (to <= from) return;
  tl->paused_to = to;
  last = (uint64_t)(bucket_at(tl, to - 1) - tl->b);
  first = (uint64_t)(bucket_at(tl, from) - tl->b);
  for (i = first; i <= last; i++) {
    uint64_t start = tl->origin + i * tl->width, end = start + tl->width;
    tl->b[i].pause_ns += (to < end ? to : end) - (from > start ? from : start);
  }
}

/* A heap figure at [t]: kept if known and not older than its bucket's. */
static void heap_at(struct ocgc_timeline *tl, uint64_t t, uint64_t heap, uint64_t top)
{
  struct ocgc_timeline_bucket *b;
  if (heap == 0) return; /* not known: never drawn as an empty heap */
  b = bucket_at(tl, t);
  if (t == 0) t = 1;
  if (b->heap_t > t) return;
  b->heap_t = t;
  b->heap = heap;
  b->top_heap = top > heap ? top : heap;
}

/* The counts [p] carries, as differences from the last ones, each where
 * it happened (the file's top comment). */
static void take_counts(struct ocgc_timeline *tl, const struct ocgc_agg_pause *p)
{
  struct ocgc_counters g = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_timeline_bucket *b;
  uint64_t end = p->pause.end > 0 ? p->pause.end : 1, from;
  unsigned k;
  ocgc_counters_growth(&tl->last.counts, &p->counts, &g);
  /* by hand, not a loop over the table: a bucket keeps a few figures, each
   * placed its own way (allocation spread over the gap, the rest at the end) */
  from = tl->last_end != 0 ? tl->last_end : p->counts.first_event_ns;
  spread(tl, from < p->pause.begin ? from : p->pause.begin, p->pause.begin, g.allocated_bytes,
         offsetof(struct ocgc_timeline_bucket, alloc));
  b = bucket_at(tl, end);
  b->promo += g.promoted_bytes;
  for (k = 0; k < OCGC_KIND_COUNT; k++) b->coll[k] += g.collections[k];
  b->sample_t = end;
  heap_at(tl, end, p->counts.heap_bytes, p->counts.top_heap_bytes);
  tl->last = *p;
  if (end > tl->last_end) tl->last_end = end;
}

/* The gap since tl->loss_from ends at [t]: into every bucket it covers. */
static void close_loss(struct ocgc_timeline *tl, uint64_t t)
{
  uint64_t from = tl->loss_from, i, last;
  if (!tl->loss_open) return;
  tl->loss_open = 0;
  if (t < from) t = from;
  last = (uint64_t)(bucket_at(tl, t) - tl->b);  /* first: it may coarsen */
  for (i = (uint64_t)(bucket_at(tl, from) - tl->b); i <= last; i++) {
    struct ocgc_timeline_bucket *b = &tl->b[i];
    uint64_t start = tl->origin + i * tl->width, end = start + tl->width;
    uint64_t lf = from > start ? from : start, lt = t < end ? t : end;
    if (lt == 0) lt = 1;
    if (b->loss_to == 0 || lf < b->loss_from) b->loss_from = lf;
    if (lt > b->loss_to) b->loss_to = lt;
  }
}

/* A stop-the-world member: the pause it joins grows from prev to ns. */
static void grow(struct ocgc_timeline *tl, const struct ocgc_pause *p)
{
  unsigned i = tl->nrecent, j;
  struct ocgc_timeline_mark *m = NULL;
  while (i > 0 && m == NULL)
    if (tl->recent[--i].ns == p->stw_prev_ns) m = &tl->recent[i];
  if (m == NULL) return;
  m->ns = p->duration_ns;
  if (m->seq < TL_EXACT) tl->exact[m->seq].ns = m->ns;
  for (j = 0; j < TL_SAMPLE && j < tl->total; j++)
    if (tl->sample[j].seq == m->seq) tl->sample[j].ns = m->ns;
  for (j = 0; j < tl->ntop; j++)
    if (tl->top[j].seq == m->seq) { tl->top[j].ns = m->ns; heap_down(tl->top, tl->ntop, j); break; }
  pause_time(tl, m->t + p->stw_prev_ns, m->t + p->duration_ns);
  {
    struct ocgc_timeline_bucket *b = bucket_at(tl, m->t);
    if (m->ns > b->max_ns) b->max_ns = m->ns;
    if (b->top.seq == m->seq) b->top.ns = m->ns;
    if (b->rank.seq == m->seq) b->rank.ns = m->ns;
  }
  if (m->ns > tl->max_ns) tl->max_ns = m->ns;
}

static void sample_add(struct ocgc_timeline *tl, const struct ocgc_timeline_mark *m)
{
  uint64_t j;
  if (m->seq < TL_SAMPLE) { tl->sample[m->seq] = *m; return; }
  if (tl->rng == 0) tl->rng = UINT64_C(0x9e3779b97f4a7c15);
  tl->rng ^= tl->rng << 13;
  tl->rng ^= tl->rng >> 7;
  tl->rng ^= tl->rng << 17;
  if ((j = tl->rng % (m->seq + 1)) < TL_SAMPLE) tl->sample[j] = *m;
}

static void remember(struct ocgc_timeline *tl, const struct ocgc_timeline_mark *m)
{
  if (tl->nrecent == TL_RECENT) {
    memmove(tl->recent, tl->recent + 1, sizeof tl->recent[0] * (TL_RECENT - 1));
    tl->nrecent--;
  }
  tl->recent[tl->nrecent++] = *m;
}

void ocgc_timeline_on_pause(const struct ocgc_agg_pause *p, void *ctx)
{
  struct ocgc_timeline *tl = ctx;
  struct ocgc_timeline_mark m = {p->pause.begin, p->pause.duration_ns, tl->total, p->kind, p->cause};
  struct ocgc_timeline_bucket *b;
  /* nothing set the origin: time starts with the first event read, where
   * the counts of the first pause start (not at that pause) */
  if (p->counts.first_event_ns != 0 && p->counts.first_event_ns < p->pause.begin)
    ocgc_timeline_origin(tl, p->counts.first_event_ns);
  close_loss(tl, p->pause.begin);
  take_counts(tl, p);
  if (p->pause.stw_member) {
    if (p->pause.duration_ns > p->pause.stw_prev_ns) grow(tl, &p->pause);
    return;
  }
  pause_time(tl, m.t, m.t + m.ns);
  b = bucket_at(tl, m.t);
  b->pauses++;
  if (m.ns > b->max_ns) b->max_ns = m.ns;
  if (b->top.ns == 0 || m.ns > b->top.ns) b->top = m;
  if (b->rank.ns == 0 || ocgc_kind_outranks(m.kind, m.ns, b->rank.kind, b->rank.ns)) b->rank = m;
  if (m.kind >= 0 && m.kind < (int)OCGC_KIND_COUNT) tl->kind_pauses[m.kind]++;
  else tl->unknown_pauses++;
  if (m.ns > tl->max_ns) tl->max_ns = m.ns;
  if (tl->total < TL_EXACT) tl->exact[tl->total] = m;
  top_add(tl, &m);
  sample_add(tl, &m);
  remember(tl, &m);
  tl->total++;
}

void ocgc_timeline_on_lost(unsigned ring, uint64_t lost, int exact, uint64_t after_ns, void *ctx)
{
  struct ocgc_timeline *tl = ctx;
  (void)ring;
  (void)exact;
  if (lost == 0 || tl->loss_open) return;
  ocgc_timeline_origin(tl, after_ns);
  tl->loss_from = after_ns;
  tl->loss_open = 1;
}

void ocgc_timeline_proc_sample(struct ocgc_timeline *tl, uint64_t t,
                               const struct ocgc_process_figures *f)
{
  struct ocgc_timeline_bucket *b = bucket_at(tl, t);
  struct proc_sample p;
  p.cpu_ns = f->utime_ns + f->stime_ns;
  p.ctx_switches = f->have_ctxt ? f->voluntary_ctxt + f->involuntary_ctxt : 0;
  p.faults = f->minflt + f->majflt;
  tl->live = 1;
  if (tl->have_proc) {
    b->cpu_ns += diff(p.cpu_ns, tl->last_proc.cpu_ns);
    b->ctx += diff(p.ctx_switches, tl->last_proc.ctx_switches);
    b->faults += diff(p.faults, tl->last_proc.faults);
    b->proc_t = t;
  }
  tl->last_proc = p;
  tl->have_proc = 1;
}

void ocgc_timeline_end(struct ocgc_timeline *tl, uint64_t t)
{
  close_loss(tl, t);
}

/* ---- reading -------------------------------------------------------------- */

static int by_time(const void *a, const void *b)
{
  const struct ocgc_timeline_mark *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_seq(const void *a, const void *b)
{
  const struct ocgc_timeline_mark *x = a, *y = b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

unsigned ocgc_timeline_marks(const struct ocgc_timeline *tl, struct ocgc_timeline_mark *out)
{
  unsigned n = 0, i, u;
  if (tl->total <= TL_EXACT) {
    memcpy(out, tl->exact, sizeof out[0] * tl->total);
    n = (unsigned)tl->total;
  } else {
    memcpy(out, tl->top, sizeof out[0] * tl->ntop);
    n = tl->ntop;
    for (i = 0; i < TL_BUCKETS; i++) {
      if (tl->b[i].top.ns != 0) out[n++] = tl->b[i].top;
      if (tl->b[i].rank.ns != 0) out[n++] = tl->b[i].rank;
    }
    memcpy(out + n, tl->sample, sizeof out[0] * TL_SAMPLE);
    n += TL_SAMPLE;
    qsort(out, n, sizeof out[0], by_seq); /* then once each */
    for (i = u = 0; i < n; i++)
      if (u == 0 || out[u - 1].seq != out[i].seq) out[u++] = out[i];
    n = u;
  }
  qsort(out, n, sizeof out[0], by_time);
  return n;
}

static unsigned nbuckets(const struct ocgc_timeline *tl)
{
  unsigned n = TL_BUCKETS;
  while (n > 0 && tl->b[n - 1].pauses == 0 && tl->b[n - 1].sample_t == 0 &&
         tl->b[n - 1].proc_t == 0 && tl->b[n - 1].loss_to == 0 && tl->b[n - 1].heap_t == 0 &&
         tl->b[n - 1].pause_ns == 0 && tl->b[n - 1].alloc == 0)
    n--;
  return n;
}

int ocgc_timeline_info(const struct ocgc_timeline *tl, struct ocgc_timeline_info *out)
{
  struct ocgc_timeline_info o;
  if (tl == NULL) return -EINVAL;
  memset(&o, 0, sizeof o);
  o.sz = sizeof o;
  o.origin = tl->origin;
  o.width = tl->width;
  o.nbuckets = nbuckets(tl);
  o.pauses = tl->total;
  o.max_ns = tl->max_ns;
  o.live = tl->live;
  memcpy(o.kind_pauses, tl->kind_pauses, sizeof o.kind_pauses);
  o.unknown_pauses = tl->unknown_pauses;
  return opts_write(out, &o, sizeof o);
}

const struct ocgc_timeline_bucket *ocgc_timeline_bucket(const struct ocgc_timeline *tl, unsigned i)
{
  return tl != NULL && i < TL_BUCKETS ? &tl->b[i] : NULL;
}

int ocgc_timeline_loss(const struct ocgc_timeline *tl, unsigned i, uint64_t *from, uint64_t *to)
{
  unsigned k = 0, run = 0;
  while (k < TL_BUCKETS) {
    if (tl->b[k].loss_to == 0) { k++; continue; }
    *from = tl->b[k].loss_from;
    while (k < TL_BUCKETS && tl->b[k].loss_to != 0) *to = tl->b[k++].loss_to;
    if (run++ == i) return 1;
  }
  return 0;
}
