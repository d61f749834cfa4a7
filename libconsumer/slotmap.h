/* slotmap.h - what a user-event slot means to one reader (a cause, a
 * counter, a stream's join), looked up by its name once: a small value
 * per slot, "unseen" until set.  Shared by classify.c (the source's
 * causes), agg.c and stream.c.
 *
 * Made a page of SLOTMAP_PAGE slots at a time as slots are set: a program
 * names a handful of its 8,192 slots, and three whole tables cost every
 * source 24 KiB (an exporter of a thousand processes, 24 MiB).  A set that
 * cannot make its page leaves the slot unseen (looked up again). */
#ifndef OCGC_SLOTMAP_H
#define OCGC_SLOTMAP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/wire.h"

#define SLOTMAP_PAGE 128u
#define SLOTMAP_PAGES (OCGC_WIRE_USER_EVENTS / SLOTMAP_PAGE)
#define SLOTMAP_UNSEEN INT8_MIN

struct slotmap {
  int8_t *page[SLOTMAP_PAGES];
};

/* The value of [slot], or SLOTMAP_UNSEEN (also for a slot out of range). */
static inline int slotmap_get(const struct slotmap *m, unsigned slot)
{
  const int8_t *p;
  if (slot >= OCGC_WIRE_USER_EVENTS || (p = m->page[slot / SLOTMAP_PAGE]) == NULL)
    return SLOTMAP_UNSEEN;
  return p[slot % SLOTMAP_PAGE];
}

/* Set [slot] to [v] (not SLOTMAP_UNSEEN); returns v. */
static inline int slotmap_set(struct slotmap *m, unsigned slot, int v)
{
  int8_t **p;
  if (slot >= OCGC_WIRE_USER_EVENTS) return v;
  p = &m->page[slot / SLOTMAP_PAGE];
  if (*p == NULL) {
    if ((*p = malloc(SLOTMAP_PAGE)) == NULL) return v;
    memset(*p, SLOTMAP_UNSEEN, SLOTMAP_PAGE);
  }
  (*p)[slot % SLOTMAP_PAGE] = (int8_t)v;
  return v;
}

static inline void slotmap_free(struct slotmap *m)
{
  unsigned i;
  for (i = 0; i < SLOTMAP_PAGES; i++) free(m->page[i]);
  memset(m, 0, sizeof *m);
}

#endif /* OCGC_SLOTMAP_H */
