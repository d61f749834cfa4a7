/* ocgc_writer.c - the state the writers share with the files that make
 * the ring file (struct caml_ocgc_file, ocgc_writer.h), the switch the
 * runtime's hook sites test (caml_ocgc_enabled, caml/ocgc.h), and the
 * writers' way in, out of line, for the allocation profile.
 *
 * Invariants: only the files above the writers (ocgc_file.c,
 * ocgc_lifecycle.c, ocgc_start.c) change caml_ocgc_file, on the mutator
 * thread with the runtime lock held, in the fork's child handler, or in
 * the exit handler once it owns the ring; the writers read it.
 * caml_ocgc_enabled is stored relaxed: it pairs with the relaxed load of
 * caml/ocgc.h's CAML_OCGC (a hook site that still sees 1 meets the
 * guard, ocgc_ring.h). */

#define CAML_INTERNALS
#include <stdint.h>

#include "caml/ocgc.h"
#include "ocgc_writer.h"

int caml_ocgc_enabled = 0;
struct caml_ocgc_file caml_ocgc_file = {.memfd = -1};

int caml_ocgc_writer_enter(void) { return caml_ocgc_writer_begin() != 0; }
void caml_ocgc_writer_leave(void) { caml_ocgc_hook_leave(); }
