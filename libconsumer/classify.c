/* classify.c - what an event means to ocgc: which cause it announces, which
 * collection span it begins or ends, what a user event's slot means.  The
 * one classifier: the stream, the aggregator and the commands ask it; and
 * which collection kind says most of a pause (ocgc_kind_outranks).
 *
 * Lookups are table-driven per source (phase ids by the source's numbering,
 * user slots by name, cached on first sight in the source's one slot map)
 * so that classifying costs a few loads per event on the aggregation path.
 * The tables are made here, on first use (the phase table again when the
 * source's numbering changed, as the attach's look at the executable may
 * do): the source never calls the classifier. */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

/* The kinds' spans by their phase's name, which 5.2 and 5.3 share while
 * the numbers differ: wire.h gives each kind's 5.2 phase id. */
static void ocgc_classify_init(struct ocgc_source *s)
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

/* A slot's meaning in the source's cache: a known cause c (< CAUSES) as c,
 * any other meaning m as CAUSES + m (an "ocgc.cause." name of a cause this
 * library does not know: CAUSES + OCGC_MEANS_CAUSE). */
#define CAUSES ((int)OCGC_CAUSE_SLOTS)

static int slot_value(const char *name)
{
  static const struct { const char *name; enum ocgc_meaning m; } known[] = {
    {OCGC_UEV_STOP_JOIN, OCGC_MEANS_STOP_JOIN},
    {OCGC_UEV_SLICE_WORK, OCGC_MEANS_SLICE_WORK},
    {OCGC_UEV_CYCLE_START, OCGC_MEANS_CYCLE_START},
    {OCGC_UEV_CYCLE_END, OCGC_MEANS_CYCLE_END},
    {OCGC_UEV_FORCED_MAJOR, OCGC_MEANS_FORCED_MAJOR},
    {OCGC_UEV_HEAP_GROW, OCGC_MEANS_HEAP_GROW},
    {OCGC_UEV_HEAP_SHRINK, OCGC_MEANS_HEAP_SHRINK},
    {OCGC_UEV_DIRECT_ALLOC, OCGC_MEANS_DIRECT_ALLOC},
  };
  const size_t pl = sizeof OCGC_UEV_CAUSE_PREFIX - 1;
  unsigned c, k;
  if (strncmp(name, OCGC_UEV_CAUSE_PREFIX, pl) == 0) {
    for (c = 0; c < OCGC_CAUSE_COUNT; c++)
      if (strcmp(name + pl, ocgc_cause_name(c)) == 0) return (int)c;
    return CAUSES + OCGC_MEANS_CAUSE;
  }
  for (k = 0; k < sizeof known / sizeof known[0]; k++)
    if (strcmp(name, known[k].name) == 0) return CAUSES + (int)known[k].m;
  return CAUSES + OCGC_MEANS_OTHER;
}

/* The cached value of [slot] (see CAUSES), looked up by name on first
 * sight; a slot not named yet is looked up again next time. */
static int slot_of(struct ocgc_source *s, unsigned slot)
{
  const char *name;
  int v;
  if (slot >= OCGC_WIRE_USER_EVENTS) return CAUSES + OCGC_MEANS_OTHER;
  if ((v = slotmap_get(&s->user_meaning, slot)) != SLOTMAP_UNSEEN) return v;
  if ((name = ocgc_source_user_name(s, slot)) == NULL) return CAUSES + OCGC_MEANS_OTHER;
  return slotmap_set(&s->user_meaning, slot, slot_value(name));
}

enum ocgc_meaning ocgc_event_meaning(const struct ocgc_source *src, const struct ocgc_event *ev)
{
  int v;
  if (src == NULL || ev == NULL || !ev->user) return OCGC_MEANS_OTHER;
  v = slot_of((struct ocgc_source *)src, ev->id); /* the cache is not state */
  return v < CAUSES ? OCGC_MEANS_CAUSE : (enum ocgc_meaning)(v - CAUSES);
}

int ocgc_event_cause(const struct ocgc_source *src, const struct ocgc_event *ev)
{
  int v;
  if (src == NULL || ev == NULL) return OCGC_CAUSE_NONE;
  if (ev->user) {
    if (ev->type != OCGC_USER_INT) return OCGC_CAUSE_NONE;
    v = slot_of((struct ocgc_source *)src, ev->id); /* the cache is not state */
    return v < CAUSES ? v : OCGC_CAUSE_NONE;
  }
  return ev->type == OCGC_RT_COUNTER ? counter_cause(ev->id) : OCGC_CAUSE_NONE;
}

int ocgc_event_kind(const struct ocgc_source *src, const struct ocgc_event *ev, int *begin)
{
  if (src == NULL || ev == NULL || ev->user) return OCGC_KIND_NONE;
  if (ev->type != OCGC_RT_BEGIN && ev->type != OCGC_RT_END) return OCGC_KIND_NONE;
  if (ev->id >= sizeof src->phase_kind) return OCGC_KIND_NONE;
  if (src->phase_kind_ids != (int)src->ids + 1) {
    struct ocgc_source *m = (struct ocgc_source *)src; /* the table is a cache */
    ocgc_classify_init(m);
    m->phase_kind_ids = (int)src->ids + 1;
  }
  if (begin != NULL) *begin = ev->type == OCGC_RT_BEGIN;
  return src->phase_kind[ev->id];
}

int ocgc_kind_outranks(int a, uint64_t a_ns, int b, uint64_t b_ns)
{
  if (a < 0 || a >= (int)OCGC_KIND_COUNT) return 0;
  if (b < 0 || b >= (int)OCGC_KIND_COUNT) return 1;
  return a != b ? a > b : a_ns > b_ns;
}
