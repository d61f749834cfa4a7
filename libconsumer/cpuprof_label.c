/* cpuprof_label.c - a CPU sample's GC labels (cpuprof_label.h): which of
 * the runtime's collector functions a frame is, what a stack's frames say
 * of the phase, and the ring's collection at the sample's time.
 *
 * The names are the runtime's own, OCaml 4.13/4.14 (runtime/minor_gc.c,
 * major_gc.c, compact.c, gc_ctrl.c, as this build's libasmrun has them;
 * mark_slice, sweep_slice and clean_slice are static but kept in the
 * symbol table) and OCaml 5.x (caml_empty_minor_heap_promote, the
 * stop-the-world minor and cycle functions, mark, caml_sweep, ephe_mark,
 * ephe_sweep).  A refining frame (mark, sweep, clean) counts only inside a
 * major frame: a program's own function named "mark" is no collector.
 *
 * Invariants: no state; a stack of n frames is looked at once, n bounded
 * by the unwinder (OCGC_UNWIND_MAX_DEPTH). */

#include <string.h>

#include "cpuprof_label.h"
#include "ocgc/event.h"
#include "ocgc/wire.h"

struct role_name {
  const char *name;
  unsigned char role;
};

static const struct role_name roles[] = {
  /* minor collection: 4.x, then 5.x */
  {"caml_empty_minor_heap", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_oldify_one", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_oldify_mopup", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_oldify_local_roots", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_empty_minor_heap_promote", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_empty_minor_heap_no_major_slice_from_stw", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_stw_empty_minor_heap", ROLE_PHASE(OCGC_GC_MINOR)},
  {"caml_empty_minor_heaps_once", ROLE_PHASE(OCGC_GC_MINOR)},
  /* major slice or cycle */
  {"caml_major_collection_slice", ROLE_PHASE(OCGC_GC_MAJOR)},
  {"caml_finish_major_cycle", ROLE_PHASE(OCGC_GC_MAJOR)},
  {"major_collection_slice", ROLE_PHASE(OCGC_GC_MAJOR)},
  {"stw_cycle_all_domains", ROLE_PHASE(OCGC_GC_MAJOR)},
  /* compaction */
  {"caml_compact_heap", ROLE_PHASE(OCGC_GC_COMPACTION)},
  {"caml_compact_heap_maybe", ROLE_PHASE(OCGC_GC_COMPACTION)},
  {"do_compaction", ROLE_PHASE(OCGC_GC_COMPACTION)},
  /* the collector's dispatch: its phase is the ring's collection's */
  {"caml_gc_dispatch", ROLE_PHASE(OCGC_GC_COLLECTOR)},
  {"caml_minor_collection", ROLE_PHASE(OCGC_GC_COLLECTOR)},
  {"caml_poll_gc_work", ROLE_PHASE(OCGC_GC_COLLECTOR)},
  /* a major phase's parts */
  {"mark_slice", ROLE_REFINE(OCGC_GC_MAJOR_MARK)},
  {"mark_slice_darken", ROLE_REFINE(OCGC_GC_MAJOR_MARK)},
  {"caml_darken_all_roots_slice", ROLE_REFINE(OCGC_GC_MAJOR_MARK)},
  {"caml_empty_mark_stack", ROLE_REFINE(OCGC_GC_MAJOR_MARK)},
  {"mark", ROLE_REFINE(OCGC_GC_MAJOR_MARK)},
  {"ephe_mark", ROLE_REFINE(OCGC_GC_MAJOR_MARK)},
  {"sweep_slice", ROLE_REFINE(OCGC_GC_MAJOR_SWEEP)},
  {"caml_sweep", ROLE_REFINE(OCGC_GC_MAJOR_SWEEP)},
  {"ephe_sweep", ROLE_REFINE(OCGC_GC_MAJOR_SWEEP)},
  {"clean_slice", ROLE_REFINE(OCGC_GC_MAJOR_CLEAN)},
  {"caml_ephe_clean_partial", ROLE_REFINE(OCGC_GC_MAJOR_CLEAN)},
  /* the Gc module's externals */
  {"caml_gc_minor", ROLE_CALL(OCGC_GC_CALL_MINOR)},
  {"caml_gc_major_slice", ROLE_CALL(OCGC_GC_CALL_MAJOR_SLICE)},
  {"caml_gc_major", ROLE_CALL(OCGC_GC_CALL_MAJOR)},
  {"caml_gc_full_major", ROLE_CALL(OCGC_GC_CALL_FULL_MAJOR)},
  {"caml_gc_compaction", ROLE_CALL(OCGC_GC_CALL_COMPACT)},
};

unsigned cpuprof_frame_role(const char *name)
{
  size_t i, n;
  const char *dot;
  if (name == NULL) return ROLE_NONE;
  /* GCC's clones: "sweep_slice.part.0" is sweep_slice. */
  dot = strchr(name, '.');
  n = dot ? (size_t)(dot - name) : strlen(name);
  for (i = 0; i < sizeof roles / sizeof roles[0]; i++)
    if (strlen(roles[i].name) == n && memcmp(roles[i].name, name, n) == 0) return roles[i].role;
  return ROLE_NONE;
}

enum ocgc_gc_phase cpuprof_stack_phase(const unsigned char *r, unsigned n, enum ocgc_gc_call *call)
{
  enum ocgc_gc_phase phase = OCGC_GC_MUTATOR, refine = OCGC_GC_MUTATOR;
  enum ocgc_gc_call c = OCGC_GC_CALL_NONE;
  unsigned i;
  for (i = 0; i < n; i++) {
    unsigned k = ROLE_KIND(r[i]), a = ROLE_ARG(r[i]);
    if (k == ROLE_REFINE(0) && refine == OCGC_GC_MUTATOR && phase == OCGC_GC_MUTATOR)
      refine = (enum ocgc_gc_phase)a;
    else if (k == ROLE_PHASE(0) && phase == OCGC_GC_MUTATOR)
      phase = (enum ocgc_gc_phase)a;
    else if (k == ROLE_CALL(0) && c == OCGC_GC_CALL_NONE)
      c = (enum ocgc_gc_call)a;
  }
  if (phase == OCGC_GC_MAJOR && refine != OCGC_GC_MUTATOR) phase = refine;
  if (phase == OCGC_GC_MUTATOR && c != OCGC_GC_CALL_NONE) phase = OCGC_GC_COLLECTOR;
  if (call != NULL) *call = phase == OCGC_GC_MUTATOR ? OCGC_GC_CALL_NONE : c;
  return phase;
}

const struct cpuprof_coll *cpuprof_coll_at(const struct cpuprof_coll *c, size_t n, uint64_t t)
{
  const struct cpuprof_coll *best = NULL;
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t b = c[i].begin > CPUPROF_SPAN_SLACK_NS ? c[i].begin - CPUPROF_SPAN_SLACK_NS : 0;
    if (t < b || t > c[i].end + CPUPROF_SPAN_SLACK_NS) continue;
    /* Nested collections (a compaction inside a finished cycle): the
     * innermost, the one begun last, says what runs. */
    if (best == NULL || c[i].begin > best->begin) best = &c[i];
  }
  return best;
}

static enum ocgc_gc_phase kind_phase(int kind)
{
  switch (kind) {
  case OCGC_KIND_MINOR: return OCGC_GC_MINOR;
  case OCGC_KIND_MAJOR_SLICE:
  case OCGC_KIND_MAJOR_FINISH: return OCGC_GC_MAJOR;
  case OCGC_KIND_COMPACTION: return OCGC_GC_COMPACTION;
  default: return OCGC_GC_COLLECTOR;
  }
}

int cpuprof_label(enum ocgc_gc_phase stack_phase, const struct cpuprof_coll *c, size_t n,
                  uint64_t t, enum ocgc_gc_phase *phase, int *cause)
{
  const struct cpuprof_coll *in;
  *phase = stack_phase;
  if (stack_phase == OCGC_GC_MUTATOR) {
    /* Whatever the ring says: a collection at this time ran on another
     * thread (the one holding the runtime lock), or this stack is cut. */
    *cause = OCGC_CAUSE_NONE;
    return 1;
  }
  if ((in = cpuprof_coll_at(c, n, t)) == NULL) {
    *cause = OCGC_CAUSE_UNKNOWN;
    return 0;
  }
  *cause = in->cause >= 0 ? in->cause : OCGC_CAUSE_UNKNOWN;
  if (stack_phase == OCGC_GC_COLLECTOR) *phase = kind_phase(in->kind);
  return 1;
}
