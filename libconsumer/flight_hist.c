/* flight_hist.c - a process's recent history in seconds (ocgc/flight.h):
 * the last window_s one-second buckets of its pauses, collections, bytes,
 * heap, loss and memory, in memory fixed at ocgc_flight_hist_new().
 *
 * Why seconds and not ring words: a busy program overwrites its ring in
 * milliseconds, so what a recording can say of the minute before a death
 * is what a watch kept as it read.  Fed as a timeline is (timeline.c), by
 * an aggregator's on_pause and on_lost; the /proc and cgroup figures by
 * the caller's samples.
 *
 * Invariants:
 * - second s (t in [s * 10^9, (s + 1) * 10^9), producer clock) lives in
 *   slot s % window while it is one of the window's seconds; key[slot] is
 *   s + 1 (0: empty), so a slot left by a second that slid out of the
 *   window is found stale and cleared when it is next used, and never read;
 * - newest is the latest second any figure was put in; the window is
 *   (newest - window, newest]: a time before it is dropped, a later time
 *   slides it forward (every second that passes out of it is dropped);
 * - a lying producer's clock cannot break the bounds (a slot index is
 *   always below window), nor wipe the history with one absurd time: a
 *   time more than OCGC_FLIGHT_MAX_AHEAD_S past the caller's own
 *   CLOCK_MONOTONIC (a live producer's clock is ours) is dropped;
 * - counts are the growth of the counts successive pauses carry
 *   (ocgc_counters_growth, as timeline.c takes them), so a sum over the
 *   seconds is the aggregator's count over them; a stop-the-world member
 *   (stock OCaml 5) grows the pause it joins instead of counting one more. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ocgc/flight.h"
#include "ocgc/interval.h"
#include "opts.h"

#define NS_PER_S UINT64_C(1000000000)
/* A producer time this far past our own clock is a lie (or another boot's
 * file): dropped, not allowed to slide the window over every real second. */
#define OCGC_FLIGHT_MAX_AHEAD_S UINT64_C(3600)

struct ocgc_flight_hist {
  unsigned window;
  int have;                   /* newest is set */
  uint64_t newest;            /* the newest second (index, t / 10^9) */
  struct ocgc_counters last;  /* the previous pause's counts (zero at first) */
  uint64_t *key;              /* window entries: second + 1, 0 empty */
  struct ocgc_flight_second *sec; /* window entries */
};

size_t ocgc_flight_hist_size(unsigned window_s)
{
  if (window_s == 0) window_s = OCGC_FLIGHT_WINDOW_S;
  if (window_s > OCGC_FLIGHT_MAX_WINDOW_S) return 0;
  return sizeof(struct ocgc_flight_hist) +
         (size_t)window_s * (sizeof(uint64_t) + sizeof(struct ocgc_flight_second));
}

int ocgc_flight_hist_new(unsigned window_s, struct ocgc_flight_hist **out)
{
  struct ocgc_flight_hist *h;
  if (out == NULL || window_s > OCGC_FLIGHT_MAX_WINDOW_S) return -EINVAL;
  if (window_s == 0) window_s = OCGC_FLIGHT_WINDOW_S;
  /* one block: the whole of ocgc_flight_hist_size(), nothing later */
  if ((h = calloc(1, ocgc_flight_hist_size(window_s))) == NULL) return -ENOMEM;
  h->window = window_s;
  h->key = (uint64_t *)(h + 1);
  h->sec = (struct ocgc_flight_second *)(h->key + window_s);
  h->last.sz = sizeof h->last;
  *out = h;
  return 0;
}

void ocgc_flight_hist_free(struct ocgc_flight_hist *h)
{
  free(h);
}

/* The bucket of time [t], the window slid forward as needed; NULL: t is
 * older than the window, or absurd. */
static struct ocgc_flight_second *second_at(struct ocgc_flight_hist *h, uint64_t t)
{
  uint64_t s = t / NS_PER_S, now = cm_mono_ns() / NS_PER_S;
  unsigned slot;
  if (s > now + OCGC_FLIGHT_MAX_AHEAD_S) return NULL;
  if (!h->have || s > h->newest) {
    h->newest = s;
    h->have = 1;
  } else if (h->newest - s >= h->window) {
    return NULL; /* slid out already */
  }
  slot = (unsigned)(s % h->window);
  if (h->key[slot] != s + 1) { /* empty, or a second that left the window */
    memset(&h->sec[slot], 0, sizeof h->sec[slot]);
    h->sec[slot].t = s * NS_PER_S;
    h->key[slot] = s + 1;
  }
  return &h->sec[slot];
}

void ocgc_flight_hist_on_pause(const struct ocgc_agg_pause *p, void *ctx)
{
  struct ocgc_flight_hist *h = ctx;
  struct ocgc_counters g = OCGC_OPTS_INIT(struct ocgc_counters);
  struct ocgc_flight_second *b;
  unsigned k;
  if (h == NULL || p == NULL) return;
  ocgc_counters_growth(&h->last, &p->counts, &g);
  h->last = p->counts;
  h->last.sz = sizeof h->last;
  if ((b = second_at(h, p->pause.end)) == NULL) return; /* its counts are not kept */
  /* by hand, not a loop over the table: a second is a fixed wire record
   * (struct ocgc_wire_flight_second) of a few figures, under names of its own */
  for (k = 0; k < OCGC_KIND_COUNT; k++) b->coll[k] += g.collections[k];
  b->alloc += g.allocated_bytes;
  b->promo += g.promoted_bytes;
  if (p->counts.heap_bytes != 0) { /* 0: not known yet, never an empty heap */
    b->heap = p->counts.heap_bytes;
    b->top_heap = p->counts.top_heap_bytes > b->heap ? p->counts.top_heap_bytes : b->heap;
  }
  if (p->pause.stw_member) {
    /* it grows the pause it joined (counted already) from stw_prev_ns */
    if (p->pause.duration_ns > p->pause.stw_prev_ns)
      b->pause_ns += p->pause.duration_ns - p->pause.stw_prev_ns;
    if (p->pause.duration_ns > b->max_ns) b->max_ns = p->pause.duration_ns;
    return;
  }
  b->pauses++;
  b->pause_ns += p->pause.duration_ns;
  if (p->pause.duration_ns > b->max_ns) b->max_ns = p->pause.duration_ns;
  if (p->cause >= 0 && p->cause < (int)OCGC_CAUSE_COUNT) b->cause[p->cause]++;
}

void ocgc_flight_hist_on_lost(unsigned ring, uint64_t lost, int exact, uint64_t after_ns, void *ctx)
{
  struct ocgc_flight_hist *h = ctx;
  struct ocgc_flight_second *b;
  (void)ring;
  (void)exact;
  if (h == NULL || lost == 0 || (b = second_at(h, after_ns)) == NULL) return;
  b->lost = lost > UINT64_MAX - b->lost ? UINT64_MAX : b->lost + lost;
}

void ocgc_flight_hist_sample(struct ocgc_flight_hist *h, uint64_t t,
                             const struct ocgc_process_figures *f, const struct ocgc_memcg *m)
{
  struct ocgc_flight_second *b;
  if (h == NULL || (f == NULL && (m == NULL || !m->known))) return;
  if ((b = second_at(h, t)) == NULL) return;
  if (f != NULL && f->rss_bytes != 0) b->rss = f->rss_bytes;
  if (m != NULL && m->known && m->usage != 0) b->cg_usage = m->usage;
}

static int empty(const struct ocgc_flight_second *s)
{
  struct ocgc_flight_second z;
  memset(&z, 0, sizeof z);
  z.t = s->t;
  return memcmp(&z, s, sizeof z) == 0;
}

unsigned ocgc_flight_hist_seconds(const struct ocgc_flight_hist *h, struct ocgc_flight_second *out,
                                  unsigned max)
{
  uint64_t s, first;
  unsigned n = 0;
  if (h == NULL || out == NULL || !h->have) return 0;
  first = h->newest >= h->window - 1 ? h->newest - (h->window - 1) : 0;
  for (s = first; s <= h->newest && n < max; s++) {
    unsigned slot = (unsigned)(s % h->window);
    if (h->key[slot] != s + 1 || empty(&h->sec[slot])) continue;
    out[n++] = h->sec[slot];
  }
  return n;
}
