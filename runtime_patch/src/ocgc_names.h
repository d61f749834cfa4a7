/* ocgc_names.h - the user events the producer registers: their slots in the
 * file's name table and their names (private to runtime/ocgc_*.c).
 *
 * Readers find every user event by name (wire.h), so the slots are the
 * producer's own business; names are fixed when the file is made. */
#ifndef CAML_OCGC_NAMES_H
#define CAML_OCGC_NAMES_H

#include "ocgc/wire.h"

/* The user events besides the causes: X(SLOT, name) each, in slot order
 * after the causes' slots. */
#define CAML_OCGC_UEV_TABLE(X)                                                  \
  X(SLICE_WORK, OCGC_UEV_SLICE_WORK)                                            \
  X(CYCLE_START, OCGC_UEV_CYCLE_START)                                          \
  X(CYCLE_END, OCGC_UEV_CYCLE_END)                                              \
  X(FORCED_MAJOR, OCGC_UEV_FORCED_MAJOR)                                        \
  X(HEAP_GROW, OCGC_UEV_HEAP_GROW)                                              \
  X(HEAP_SHRINK, OCGC_UEV_HEAP_SHRINK)                                          \
  X(DIRECT_ALLOC, OCGC_UEV_DIRECT_ALLOC)                                        \
  X(STOP_JOIN, OCGC_UEV_STOP_JOIN)

#define CAML_OCGC_UEV_SLOT_(slot, name) CAML_OCGC_UEV_##slot,
enum caml_ocgc_uev {
  /* Slot of cause c: CAML_OCGC_UEV_CAUSES + c, named "ocgc.cause.<name>".
   * Causes that a 5.2 counter carries have their slot too, never written. */
  CAML_OCGC_UEV_CAUSES = 0,
  CAML_OCGC_UEV_AFTER_CAUSES_ = OCGC_CAUSE_COUNT - 1,
  CAML_OCGC_UEV_TABLE(CAML_OCGC_UEV_SLOT_)
  CAML_OCGC_UEV_COUNT
};
#undef CAML_OCGC_UEV_SLOT_

/* Name of slot i, for every i below CAML_OCGC_UEV_COUNT (ocgc_names.c). */
extern const char *const caml_ocgc_user_event_names[CAML_OCGC_UEV_COUNT];

#endif /* CAML_OCGC_NAMES_H */
