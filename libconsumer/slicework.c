/* slicework.c - the work the runtime asked of each major slice of a stock
 * OCaml 5.3+ program (ocgc/slicework.h says what each counter means), read
 * from the nine counters it writes before the slice, and what they add up
 * to: sums, a histogram of the slices' work, the runtime's own totals, the
 * newest slice and the longest one.
 *
 * Invariants:
 * - a slice is counted when its nine counters were read in the runtime's
 *   order (MAJOR_HEAP_WORDS first, MAJOR_SLICE_BUDGET last) on one ring,
 *   with nothing lost between: a counter out of that order, or a loss on
 *   the ring, drops the slice being read (a slice is never made of two);
 * - the ids are those of the source's numbering, by name (ocgc_counter_name):
 *   a numbering without them (5.2) never counts one, whatever a ring holds;
 * - a slice's duration is its ring's next MAJOR_SLICE span that begins at
 *   or after its counters; each span times one slice at most;
 * - memory: the state (made at the first slice counter) and one record per
 *   ring that wrote one, at most nrings (AGG_RINGS) of them; nothing grows
 *   with the events;
 * - the runtime's totals (work done, asked) are the largest read, so they
 *   never go back however the rings are interleaved; sums saturate.
 * Called by the aggregator's thread only (agg.c), copied by snapshot.c
 * (which keeps the copy and hands it out: ocgc_snapshot_slicework); it
 * calls neither back. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slicework.h"

#define SW_FIRST 17u /* EV_C_MAJOR_HEAP_WORDS in 5.3 and 5.4 */
#define SW_COUNT 9u  /* .. EV_C_MAJOR_SLICE_BUDGET */

/* The nine, in the order update_major_slice_work writes them. */
static const char *const sw_names[SW_COUNT] = {
  "major_heap_words",   "major_allocated_words", "major_allocated_work",
  "major_dependent_work", "major_extra_work",    "major_work_counter",
  "major_alloc_counter", "major_slice_target",  "major_slice_budget",
};
enum { V_HEAP, V_ALLOCATED, V_ALLOC_WORK, V_DEP_WORK, V_EXTRA_WORK, V_WORK_CTR,
       V_ALLOC_CTR, V_TARGET, V_BUDGET };

static const uint64_t sw_bounds[OCGC_SLICEWORK_NBOUNDS] = {
  100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
};

struct sw_ring {
  unsigned next;              /* counters of the slice being read so far */
  uint64_t v[SW_COUNT];
  int pending;                /* a slice read whole, waiting for its span */
  struct ocgc_major_slice slice;
};

struct slicework {
  int off;                    /* the numbering has no slice counters */
  unsigned nrings;
  struct sw_ring **rings;     /* nrings pointers, each made at first use */
  struct ocgc_slicework f;
};

const char *ocgc_slice_driver_name(int driver)
{
  static const char *const names[OCGC_SLICE_DRIVER_COUNT] = {"none", "allocation", "dependent",
                                                             "extra", "budget"};
  return driver >= 0 && driver < (int)OCGC_SLICE_DRIVER_COUNT ? names[driver] : NULL;
}

const uint64_t *ocgc_slicework_bounds(void)
{
  return sw_bounds;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Whether [src]'s numbering names the nine at SW_FIRST.. in order. */
static int numbering_has(const struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  unsigned i;
  if (ocgc_source_info(src, &info) != 0) return 0;
  for (i = 0; i < SW_COUNT; i++) {
    const char *n = ocgc_counter_name(info.ids, SW_FIRST + i);
    if (n == NULL || strcmp(n, sw_names[i]) != 0) return 0;
  }
  return 1;
}

static int make(struct slicework **out, const struct ocgc_source *src, unsigned nrings)
{
  struct slicework *sw = calloc(1, sizeof *sw);
  if (sw == NULL) return -ENOMEM;
  sw->off = !numbering_has(src) || nrings == 0;
  if (!sw->off && (sw->rings = calloc(nrings, sizeof *sw->rings)) == NULL) {
    free(sw);
    return -ENOMEM;
  }
  sw->nrings = sw->off ? 0 : nrings;
  sw->f.sz = sizeof sw->f;
  *out = sw;
  return 0;
}

/* What set the slice's work (ocgc/slicework.h: enum ocgc_slice_driver). */
static int driver(const struct ocgc_major_slice *s)
{
  int64_t lag = (int64_t)(s->target - s->work_counter);
  uint64_t most = s->alloc_work;
  int d = OCGC_SLICE_DRIVER_ALLOCATION;
  if (s->budget > 0 && s->budget >= lag) return OCGC_SLICE_DRIVER_BUDGET;
  if (s->dependent_work > most) { most = s->dependent_work; d = OCGC_SLICE_DRIVER_DEPENDENT; }
  if (s->extra_work > most) { most = s->extra_work; d = OCGC_SLICE_DRIVER_EXTRA; }
  return most == 0 ? OCGC_SLICE_DRIVER_NONE : d;
}

/* The nine of ring [r] read whole, the last at [ns]: one slice counted. */
static void slice_read(struct slicework *sw, struct sw_ring *rs, unsigned r, uint64_t ns)
{
  struct ocgc_slicework *f = &sw->f;
  struct ocgc_major_slice *s = &rs->slice;
  int64_t lag;
  unsigned i;
  memset(s, 0, sizeof *s);
  s->ring = r;
  s->time_ns = ns;
  s->heap_words = rs->v[V_HEAP];
  s->allocated_words = rs->v[V_ALLOCATED];
  s->alloc_work = rs->v[V_ALLOC_WORK];
  s->dependent_work = rs->v[V_DEP_WORK];
  s->extra_work = rs->v[V_EXTRA_WORK];
  s->work_counter = rs->v[V_WORK_CTR];
  s->alloc_counter = rs->v[V_ALLOC_CTR];
  s->target = rs->v[V_TARGET];
  s->budget = (int64_t)rs->v[V_BUDGET];
  /* the runtime's diffmod: its counters may wrap, their distance may not */
  lag = (int64_t)(s->target - s->work_counter);
  s->work = lag > s->budget ? lag : s->budget;
  s->driver = driver(s);
  rs->pending = 1;

  f->slices = add_sat(f->slices, 1);
  f->by_driver[s->driver] = add_sat(f->by_driver[s->driver], 1);
  f->allocated_words = add_sat(f->allocated_words, s->allocated_words);
  f->alloc_work = add_sat(f->alloc_work, s->alloc_work);
  f->dependent_work = add_sat(f->dependent_work, s->dependent_work);
  f->extra_work = add_sat(f->extra_work, s->extra_work);
  if (s->budget > 0) f->budget = add_sat(f->budget, (uint64_t)s->budget);
  if (s->work > 0) f->work = add_sat(f->work, (uint64_t)s->work);
  for (i = 0; i < OCGC_SLICEWORK_NBOUNDS; i++)
    if (s->work <= 0 || (uint64_t)s->work <= sw_bounds[i]) f->work_le[i] = add_sat(f->work_le[i], 1);
  if (s->work_counter > f->work_done) f->work_done = s->work_counter;
  if (s->alloc_counter > f->work_asked) f->work_asked = s->alloc_counter;
  if (f->slices == 1 || ns >= f->last.time_ns) f->last = *s;
}

int slicework_counter(struct slicework **swp, const struct ocgc_source *src, unsigned nrings,
                      const struct ocgc_event *ev)
{
  struct slicework *sw = *swp;
  struct sw_ring *rs;
  unsigned idx;
  int err;
  if (ev->id < SW_FIRST || ev->id >= SW_FIRST + SW_COUNT) return 0;
  if (sw == NULL) {
    if ((err = make(swp, src, nrings)) != 0) return err;
    sw = *swp;
  }
  if (sw->off || ev->ring >= sw->nrings) return 0;
  idx = ev->id - SW_FIRST;
  rs = sw->rings[ev->ring];
  if (rs == NULL) {
    if (idx != 0) return 0; /* a ring's first slice read from its start only */
    if ((rs = sw->rings[ev->ring] = calloc(1, sizeof *rs)) == NULL) return -ENOMEM;
  }
  if (idx != rs->next) { /* out of order: the slice being read is dropped */
    rs->next = 0;
    if (idx != 0) return 0;
  }
  rs->v[idx] = ev->value;
  if (++rs->next < SW_COUNT) return 0;
  rs->next = 0;
  slice_read(sw, rs, ev->ring, ev->timestamp);
  return 0;
}

void slicework_collection(struct slicework *sw, const struct ocgc_collection *c)
{
  struct sw_ring *rs;
  struct ocgc_slicework *f;
  if (sw == NULL || sw->off || c->span.kind != OCGC_KIND_MAJOR_SLICE || c->span.ring >= sw->nrings)
    return;
  rs = sw->rings[c->span.ring];
  if (rs == NULL || !rs->pending || c->span.begin < rs->slice.time_ns) return;
  f = &sw->f;
  rs->pending = 0;
  rs->slice.duration_ns = c->span.end - c->span.begin;
  f->timed = add_sat(f->timed, 1);
  if (f->last.ring == rs->slice.ring && f->last.time_ns == rs->slice.time_ns)
    f->last.duration_ns = rs->slice.duration_ns;
  if (rs->slice.duration_ns > f->longest.duration_ns) f->longest = rs->slice;
}

void slicework_lost(struct slicework *sw, unsigned ring)
{
  if (sw == NULL || sw->off || ring >= sw->nrings || sw->rings[ring] == NULL) return;
  sw->rings[ring]->next = 0;
  sw->rings[ring]->pending = 0;
}

void slicework_free(struct slicework *sw)
{
  unsigned r;
  if (sw == NULL) return;
  for (r = 0; r < sw->nrings; r++) free(sw->rings[r]);
  free(sw->rings);
  free(sw);
}

void slicework_figures(const struct slicework *sw, struct ocgc_slicework *out)
{
  if (sw != NULL) {
    *out = sw->f;
  } else {
    memset(out, 0, sizeof *out);
    out->sz = sizeof *out;
  }
}
