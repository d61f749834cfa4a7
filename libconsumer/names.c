/* names.c - names of OCaml runtime-event ids, per id numbering.
 *
 * OCaml 5.2 is the numbering ocgc's producer writes by default.  OCaml 5.3
 * inserted the memprof phases (and MAJOR_MEMPROF_CLEAN) and added counters
 * 17..25 while keeping format version 1, so a stock file's ids depend on
 * which OCaml wrote it.  OCaml 5.4 appended EMPTY_MINOR and
 * MINOR_EPHE_CLEAN to 5.3's phases; its counters and lifecycles are 5.3's.
 * Each table names exactly its release's ids (an id past its end has no
 * name), as that release's caml/runtime_events.h numbers them:
 * tests/ocaml5/ocaml5_ids.sh compares them, id by id, with the header of
 * each OCaml 5 root, and the 5.2 table is wire.h's (test_wire).  Names are
 * the ids' own, lower-case, without "EV_" or "EV_C_". */

#include <stddef.h>

#include "ocgc/consumer.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const phases_52[] = {
  "explicit_gc_set", "explicit_gc_stat", "explicit_gc_minor", "explicit_gc_major",
  "explicit_gc_full_major", "explicit_gc_compact", "major", "major_sweep",
  "major_mark_roots", "major_mark", "minor", "minor_local_roots",
  "minor_finalized", "explicit_gc_major_slice", "finalise_update_first",
  "finalise_update_last", "interrupt_remote", "major_ephe_mark",
  "major_ephe_sweep", "major_finish_marking", "major_gc_cycle_domains",
  "major_gc_phase_change", "major_gc_stw", "major_mark_opportunistic",
  "major_slice", "major_finish_cycle", "minor_clear", "minor_finalizers_oldify",
  "minor_global_roots", "minor_leave_barrier", "stw_api_barrier", "stw_handler",
  "stw_leader", "major_finish_sweeping", "minor_finalizers_admin",
  "minor_remembered_set", "minor_remembered_set_promote",
  "minor_local_roots_promote", "domain_condition_wait",
  "domain_resize_heap_reservation", "compact", "compact_evacuate",
  "compact_forward", "compact_release",
};

static const char *const phases_53[] = {
  "explicit_gc_set", "explicit_gc_stat", "explicit_gc_minor", "explicit_gc_major",
  "explicit_gc_full_major", "explicit_gc_compact", "major", "major_sweep",
  "major_mark_roots", "major_memprof_roots", "major_mark", "minor",
  "minor_local_roots", "minor_memprof_roots", "minor_memprof_clean",
  "minor_finalized", "explicit_gc_major_slice", "finalise_update_first",
  "finalise_update_last", "interrupt_remote", "major_ephe_mark",
  "major_ephe_sweep", "major_finish_marking", "major_gc_cycle_domains",
  "major_gc_phase_change", "major_gc_stw", "major_mark_opportunistic",
  "major_slice", "major_finish_cycle", "minor_clear", "minor_finalizers_oldify",
  "minor_global_roots", "minor_leave_barrier", "stw_api_barrier", "stw_handler",
  "stw_leader", "major_finish_sweeping", "major_memprof_clean",
  "minor_finalizers_admin", "minor_remembered_set",
  "minor_remembered_set_promote", "minor_local_roots_promote",
  "domain_condition_wait", "domain_resize_heap_reservation", "compact",
  "compact_evacuate", "compact_forward", "compact_release",
};

/* 5.4: 5.3's phases (the first 48 ids, which must stay equal: the
 * assertion below) and two appended. */
static const char *const phases_54_tail[] = {"empty_minor", "minor_ephe_clean"};
#define PHASES_53 48u
_Static_assert(sizeof phases_53 / sizeof phases_53[0] == PHASES_53, "5.3 has 48 phases");

static const char *const counters[] = {
  "force_minor_alloc_small", "force_minor_make_vect",
  "force_minor_set_minor_heap_size", "force_minor_memprof", "minor_promoted",
  "minor_allocated", "request_major_alloc_shr", "request_major_adjust_gc_speed",
  "request_minor_realloc_ref_table", "request_minor_realloc_ephe_ref_table",
  "request_minor_realloc_custom_table", "major_heap_pool_words",
  "major_heap_pool_live_words", "major_heap_large_words",
  "major_heap_pool_frag_words", "major_heap_pool_live_blocks",
  "major_heap_large_blocks",
  /* 5.3 onwards */
  "major_heap_words", "major_allocated_words", "major_allocated_work",
  "major_dependent_work", "major_extra_work", "major_work_counter",
  "major_alloc_counter", "major_slice_target", "major_slice_budget",
};
#define COUNTERS_52 17u

static const char *const lifecycles[] = {
  "ring_start", "ring_stop", "ring_pause", "ring_resume", "fork_parent",
  "fork_child", "domain_spawn", "domain_terminate",
};

const char *ocgc_phase_name(enum ocgc_ids ids, unsigned id)
{
  if (ids == OCGC_IDS_54 && id >= PHASES_53)
    return id - PHASES_53 < COUNT(phases_54_tail) ? phases_54_tail[id - PHASES_53] : NULL;
  if (ids == OCGC_IDS_53 || ids == OCGC_IDS_54) return id < COUNT(phases_53) ? phases_53[id] : NULL;
  return id < COUNT(phases_52) ? phases_52[id] : NULL;
}

const char *ocgc_counter_name(enum ocgc_ids ids, unsigned id)
{
  unsigned n = ids == OCGC_IDS_53 || ids == OCGC_IDS_54 ? (unsigned)COUNT(counters) : COUNTERS_52;
  return id < n ? counters[id] : NULL;
}

const char *ocgc_lifecycle_name(unsigned id)
{
  return id < COUNT(lifecycles) ? lifecycles[id] : NULL;
}
