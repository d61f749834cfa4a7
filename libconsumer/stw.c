/* stw.c - counting a stop-the-world collection of a stock OCaml 5 process
 * once.
 *
 * OCaml 5 runs a minor collection, the end of a major cycle (and the
 * minor collection inside it), a forced finish of a cycle and a compaction
 * on every domain at once, and every domain writes its own span of it in
 * its own ring: a sum over rings counts one collection once per domain
 * (issue 12: 4,880 minors for Gc.quick_stat's 2,440).  Two spans of two
 * rings are one collection when their intervals overlap: every domain
 * begins its span before it arrives at the collection's barrier, and ends
 * what it waits for there (stream.c extends a minor span to its
 * MINOR_LEAVE_BARRIER) after the last one arrived, so all the spans of a
 * collection hold that instant; and no domain begins the next collection
 * before every one left this one.  A ring has one span per collection.
 *
 * Invariants: groups of a slot are sorted by begin and disjoint in time;
 * at most STW_HISTORY are kept (the oldest forgotten: a ring read more
 * than that many collections behind another would count its spans again);
 * a span of a ring past STW_MAX_RINGS is counted alone. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/wire.h"
#include "stw.h"

static int has_ring(const struct stw_group *g, unsigned ring)
{
  return (g->rings[ring / 64] >> (ring % 64)) & 1u;
}

/* The group of [slot] that [begin, end] overlaps and [ring] is not in
 * yet, or NULL.  Newest first: the ring read last is at most a history
 * behind. */
static struct stw_group *find(struct stw_table *t, enum stw_slot slot, unsigned ring,
                              uint64_t begin, uint64_t end)
{
  unsigned i = t->n[slot];
  while (i > 0) {
    struct stw_group *g = &t->g[slot][--i];
    if (g->end < begin) break; /* older ones end earlier still */
    if (g->begin <= end && !has_ring(g, ring)) return g;
  }
  return NULL;
}

/* Room for a group beginning at [begin], in order: its slot. */
static struct stw_group *insert(struct stw_table *t, enum stw_slot slot, uint64_t begin)
{
  struct stw_group *a = t->g[slot];
  unsigned i;
  if (t->n[slot] == STW_HISTORY) {
    memmove(a, a + 1, (STW_HISTORY - 1) * sizeof *a);
    t->n[slot]--;
  }
  i = t->n[slot];
  while (i > 0 && a[i - 1].begin > begin) i--;
  memmove(a + i + 1, a + i, (t->n[slot] - i) * sizeof *a);
  t->n[slot]++;
  memset(&a[i], 0, sizeof a[i]);
  return &a[i];
}

int stw_join(struct stw_table *t, enum stw_slot slot, unsigned ring, uint64_t begin,
             uint64_t end, uint64_t dur, int cause, struct stw_join *out)
{
  struct stw_group *g;
  memset(out, 0, sizeof *out);
  if (ring >= STW_MAX_RINGS) { t->groups[slot]++; return 0; }
  if (t->g[slot] == NULL && (t->g[slot] = calloc(STW_HISTORY, sizeof *t->g[slot])) == NULL) {
    t->groups[slot]++;
    return -ENOMEM;
  }
  if ((g = find(t, slot, ring, begin, end)) != NULL) {
    out->member = 1;
    out->prev_ns = g->longest;
    out->prev_cause = g->cause;
    if (g->cause == OCGC_CAUSE_UNKNOWN) g->cause = cause;
  } else {
    g = insert(t, slot, begin);
    g->begin = begin;
    g->end = end;
    g->cause = cause;
    t->groups[slot]++;
  }
  if (begin < g->begin) g->begin = begin;
  if (end > g->end) g->end = end;
  if (dur > g->longest) g->longest = dur;
  g->rings[ring / 64] |= UINT64_C(1) << (ring % 64);
  return 0;
}

void stw_free(struct stw_table *t)
{
  unsigned s;
  for (s = 0; s < STW_SLOTS; s++) free(t->g[s]);
}
