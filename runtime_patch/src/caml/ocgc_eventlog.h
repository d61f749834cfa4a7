/* caml/ocgc_eventlog.h - the 4.13 eventlog probes (CAML_EV_BEGIN/END/COUNTER)
 * mapped onto the ocgc producer.  Included by the patched caml/eventlog.h
 * after its enums.  The mapping is inline so that, at the many sites where
 * the probe's id is a constant, it folds away: probes 5.2 has no use for
 * cost nothing, the others call the producer directly.  Added by ocgc. */
#ifndef CAML_OCGC_EVENTLOG_H
#define CAML_OCGC_EVENTLOG_H

#ifdef CAML_INTERNALS

#include "ocgc.h"

static inline void caml_ocgc_ev_span(int phase, int begin)
{
  switch (phase) {
  /* Gc.* calls that collect nothing by themselves */
  case EV_EXPLICIT_GC_SET: caml_ocgc_call(OCGC_PH_EXPLICIT_GC_SET, begin); break;
  case EV_EXPLICIT_GC_STAT: caml_ocgc_call(OCGC_PH_EXPLICIT_GC_STAT, begin); break;
  /* plain spans, with OCaml 5.2's ids */
  case EV_MAJOR_SWEEP: caml_ocgc_phase(OCGC_PH_MAJOR_SWEEP, begin); break;
  case EV_MAJOR_ROOTS: caml_ocgc_phase(OCGC_PH_MAJOR_MARK_ROOTS, begin); break;
  case EV_MAJOR_MARK: caml_ocgc_phase(OCGC_PH_MAJOR_MARK, begin); break;
  case EV_MINOR_LOCAL_ROOTS: caml_ocgc_phase(OCGC_PH_MINOR_LOCAL_ROOTS, begin); break;
  case EV_MINOR_FINALIZED: caml_ocgc_phase(OCGC_PH_MINOR_FINALIZED, begin); break;
  case EV_MINOR_REF_TABLES: caml_ocgc_phase(OCGC_PH_MINOR_REMEMBERED_SET, begin); break;
  /* Gc.* calls: every collection inside is "explicit" */
  case EV_EXPLICIT_GC_MINOR: caml_ocgc_explicit(OCGC_PH_EXPLICIT_GC_MINOR, begin); break;
  case EV_EXPLICIT_GC_MAJOR: caml_ocgc_explicit(OCGC_PH_EXPLICIT_GC_MAJOR, begin); break;
  case EV_EXPLICIT_GC_FULL_MAJOR: caml_ocgc_explicit(OCGC_PH_EXPLICIT_GC_FULL_MAJOR, begin); break;
  case EV_EXPLICIT_GC_COMPACT: caml_ocgc_explicit(OCGC_PH_EXPLICIT_GC_COMPACT, begin); break;
  case EV_EXPLICIT_GC_MAJOR_SLICE:
    caml_ocgc_explicit(OCGC_PH_EXPLICIT_GC_MAJOR_SLICE, begin); break;
  /* each probe pair wraps one do_compaction: one Gc compaction */
  case EV_COMPACT_MAIN:
  case EV_COMPACT_RECOMPACT: caml_ocgc_compaction(begin); break;
  /* EV_MINOR and EV_MAJOR wrap caml_gc_dispatch's calls only; their begin
   * is where it clears the runtime's request flag for that collection (the
   * MINOR and MAJOR_SLICE spans are written inside the collections). */
  case EV_MINOR: if (begin) caml_ocgc_dispatch_runs(CAML_OCGC_KIND_MINOR); break;
  case EV_MAJOR: if (begin) caml_ocgc_dispatch_runs(CAML_OCGC_KIND_MAJOR_SLICE); break;
  default: break;
  }
}

static inline void caml_ocgc_ev_counter(int counter)
{
  switch (counter) {
  case EV_C_FORCE_MINOR_MAKE_VECT:
    caml_ocgc_cause(CAML_OCGC_KIND_MINOR, CAML_OCGC_CAUSE_MAKE_VECT); break;
  case EV_C_FORCE_MINOR_SET_MINOR_HEAP_SIZE: caml_ocgc_resize_minor(); break;
  case EV_C_FORCE_MINOR_WEAK:
    caml_ocgc_cause(CAML_OCGC_KIND_MINOR, CAML_OCGC_CAUSE_WEAK); break;
  case EV_C_FORCE_MINOR_MEMPROF: /* followed by caml_gc_dispatch */
    caml_ocgc_alloc_trigger(CAML_OCGC_TRIGGER_MEMPROF); break;
  case EV_C_REQUEST_MAJOR_ALLOC_SHR:
    caml_ocgc_request(CAML_OCGC_KIND_MAJOR_SLICE, CAML_OCGC_CAUSE_ALLOC_SHR); break;
  case EV_C_REQUEST_MAJOR_ADJUST_GC_SPEED:
    caml_ocgc_request(CAML_OCGC_KIND_MAJOR_SLICE, CAML_OCGC_CAUSE_CUSTOM_MAJOR); break;
  case EV_C_REQUEST_MINOR_REALLOC_REF_TABLE:
    caml_ocgc_request(CAML_OCGC_KIND_MINOR, CAML_OCGC_CAUSE_REF_TABLE); break;
  case EV_C_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE:
    caml_ocgc_request(CAML_OCGC_KIND_MINOR, CAML_OCGC_CAUSE_EPHE_REF_TABLE); break;
  case EV_C_REQUEST_MINOR_REALLOC_CUSTOM_TABLE:
    caml_ocgc_request(CAML_OCGC_KIND_MINOR, CAML_OCGC_CAUSE_CUSTOM_TABLE); break;
  /* FORCE_MINOR_ALLOC_SMALL: caml_alloc_small_dispatch tells the producer
   * itself, with the allocation's origin (OCaml or C). */
  default: break;
  }
}

#endif /* CAML_INTERNALS */

#endif /* CAML_OCGC_EVENTLOG_H */
