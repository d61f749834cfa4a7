/* ocgc_memprof.h - ocgc_memprof.c, as the rest of the producer sees it
 * (private to runtime/ocgc_*.c; the runtime's own sampling points see
 * caml/ocgc.h).  The hooks (ocgc_hooks.c) and the files that make the
 * ring file call in; ocgc_memprof.c calls none of them back. */
#ifndef CAML_OCGC_MEMPROF_H
#define CAML_OCGC_MEMPROF_H

#include <stdint.h>

#include "ocgc/wire.h"
#include "ocgc_mp_lease.h"

/* What it offers:
 *   mp_init: OCGC_MEMPROF's and OCGC_MEMPROF_RECYCLE's values (or NULL),
 *     at start, before the file;
 *   mp_attach: a new file's table [mp] (at creation, in a forked child
 *     too): filled, empty, saying the rate in force;
 *   mp_forked: in a forked child: the parent's table is not ours;
 *   mp_poll: at the end of each minor collection, inside a writing hook:
 *     the control word, acted on when new, and the lease slots
 *     (ocgc_mp_lease.c) while one is held;
 *   mp_program: the program's own Gc.Memprof started (1) or stopped (0);
 *   mp_rows_used: the table's rows in use (the overflow row and the
 *     stacks), for the exit's copy of the file. */
void caml_ocgc_mp_init(const char *env, const char *recycle);
unsigned caml_ocgc_mp_rows_used(void);
void caml_ocgc_mp_attach(struct ocgc_wire_mp *mp, uint64_t now);
void caml_ocgc_mp_forked(void);
void caml_ocgc_mp_program(int started);

/* mp_poll, inline: one load and compare at every minor collection's end.
 * [word] is the file's control word (NULL: no file), [seen] the last value
 * acted on; both owned by ocgc_memprof.c, which acts on a new value in
 * caml_ocgc_mp_act. */
struct caml_ocgc_mp_control {
  const uint64_t *word;
  uint64_t seen;
};
extern struct caml_ocgc_mp_control caml_ocgc_mp_control;
void caml_ocgc_mp_act(uint64_t c, uint64_t now);
void caml_ocgc_mp_lease_act(uint64_t now);

static inline void caml_ocgc_mp_poll(uint64_t now)
{
  const uint64_t *w = caml_ocgc_mp_control.word;
  uint64_t c;
  if (w == NULL) return;
  /* Acquire: pairs with the release of a writer that fills the word (a
   * single store: libocgc's ocgc_memprof_set_rate). */
  c = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  if (__builtin_expect(c != caml_ocgc_mp_control.seen, 0)) caml_ocgc_mp_act(c, now);
  /* the lease slots: a few relaxed loads while none is held */
  if (__builtin_expect(caml_ocgc_lease_due(), 0)) caml_ocgc_mp_lease_act(now);
}

#endif /* CAML_OCGC_MEMPROF_H */
