/* classify.c - what an event means to ocgc: which cause it announces, which
 * collection span it begins or ends.
 *
 * Lookups are table-driven per source (phase ids by the source's numbering,
 * user slots by name, cached on first sight) so that classifying costs a
 * few loads per event on the aggregation path. */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

/* The kinds' spans by their phase's name, which 5.2 and 5.3 share while
 * the numbers differ: wire.h gives each kind's 5.2 phase id. */
void ocgc_classify_init(struct ocgc_source *s)
{
#define KIND_PHASE(suffix, num, name, phase) [OCGC_KIND_##suffix] = phase,
  static const unsigned phases[OCGC_KIND_COUNT] = {OCGC_KIND_TABLE(KIND_PHASE)};
#undef KIND_PHASE
  unsigned id, k;
  for (id = 0; id < sizeof s->phase_kind; id++) {
    const char *n = ocgc_phase_name(s->ids, id);
    s->phase_kind[id] = OCGC_KIND_NONE;
    for (k = 0; n != NULL && k < OCGC_KIND_COUNT; k++)
      if (strcmp(n, ocgc_phase_name(OCGC_IDS_52, phases[k])) == 0) s->phase_kind[id] = (int8_t)k;
  }
}

/* Cause counters are numbered alike in 5.2 and 5.3: a table, built once
 * from wire.h's ocgc_cause_counter(), since this runs for every counter. */
static int8_t counter_causes[32];
static pthread_once_t counter_causes_once = PTHREAD_ONCE_INIT;

static void build_counter_causes(void)
{
  unsigned c;
  memset(counter_causes, OCGC_CAUSE_NONE, sizeof counter_causes);
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    int id = ocgc_cause_counter(c);
    if (id >= 0 && id < (int)sizeof counter_causes) counter_causes[id] = (int8_t)c;
  }
}

static int counter_cause(unsigned id)
{
  pthread_once(&counter_causes_once, build_counter_causes);
  return id < sizeof counter_causes ? counter_causes[id] : OCGC_CAUSE_NONE;
}

static int user_cause(struct ocgc_source *s, unsigned slot)
{
  const char *name;
  unsigned c;
  int v;
  if (slot >= OCGC_WIRE_USER_EVENTS) return OCGC_CAUSE_NONE;
  if ((v = slotmap_get(&s->user_cause, slot)) != SLOTMAP_UNSEEN) return v;
  name = ocgc_source_user_name(s, slot);
  if (name == NULL) return OCGC_CAUSE_NONE; /* not registered yet: look again next time */
  v = OCGC_CAUSE_NONE;
  if (strncmp(name, OCGC_UEV_CAUSE_PREFIX, sizeof OCGC_UEV_CAUSE_PREFIX - 1) == 0)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (strcmp(name + sizeof OCGC_UEV_CAUSE_PREFIX - 1, ocgc_cause_name(c)) == 0) v = (int)c;
  return slotmap_set(&s->user_cause, slot, v);
}

int ocgc_event_cause(const struct ocgc_source *src, const struct ocgc_event *ev)
{
  if (src == NULL || ev == NULL) return OCGC_CAUSE_NONE;
  if (ev->user) {
    if (ev->type != OCGC_USER_INT) return OCGC_CAUSE_NONE;
    return user_cause((struct ocgc_source *)src, ev->id); /* the cache is not state */
  }
  return ev->type == OCGC_RT_COUNTER ? counter_cause(ev->id) : OCGC_CAUSE_NONE;
}

int ocgc_event_kind(const struct ocgc_source *src, const struct ocgc_event *ev, int *begin)
{
  if (src == NULL || ev == NULL || ev->user) return OCGC_KIND_NONE;
  if (ev->type != OCGC_RT_BEGIN && ev->type != OCGC_RT_END) return OCGC_KIND_NONE;
  if (ev->id >= sizeof src->phase_kind) return OCGC_KIND_NONE;
  if (begin != NULL) *begin = ev->type == OCGC_RT_BEGIN;
  return src->phase_kind[ev->id];
}
