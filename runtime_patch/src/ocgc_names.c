/* ocgc_names.c - the user-event name table the producer writes into each
 * ring file: one name per slot of enum caml_ocgc_uev, every slot named (the
 * table is built from the same rows as the enum: wire.h's cause table and
 * CAML_OCGC_UEV_TABLE). */

#include "ocgc_names.h"

#define CAUSE_NAME(suffix, num, name, counter)                                 \
  [CAML_OCGC_UEV_CAUSES + OCGC_CAUSE_##suffix] = OCGC_UEV_CAUSE_PREFIX name,
#define EVENT_NAME(slot, name) [CAML_OCGC_UEV_##slot] = name,

const char *const caml_ocgc_user_event_names[CAML_OCGC_UEV_COUNT] = {
  OCGC_CAUSE_TABLE(CAUSE_NAME)
  CAML_OCGC_UEV_TABLE(EVENT_NAME)
};
