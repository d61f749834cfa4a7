/* ocgc_hooks.h - what the ring file module (ocgc_file.c) asks of the hooks
 * (private to runtime/ocgc_*.c; the runtime's own hook sites see
 * caml/ocgc.h). */
#ifndef CAML_OCGC_HOOKS_H
#define CAML_OCGC_HOOKS_H

#include <stdint.h>

#include "ocgc/wire.h"
#include "ocgc_mp_lease.h"

/* The first events of a new ring (RING_START, and FORK_CHILD with the
 * parent's pid when parent_pid != 0) and its first totals, at time [at]. */
void caml_ocgc_started(uint64_t parent_pid, uint64_t at);

/* The last: RING_STOP, the final totals, state EXITED.  Called by the exit
 * handler once it is the ring's only writer. */
void caml_ocgc_stop(void);

/* The hooks' way into the mapping, for ocgc_memprof.c: nonzero when there
 * is a file to write (in a forked child, made now) and the exit handler has
 * not taken it over; a nonzero return must be paired with
 * caml_ocgc_writer_leave(). */
int caml_ocgc_writer_enter(void);
void caml_ocgc_writer_leave(void);

/* ocgc_memprof.c, as the rest of the producer sees it.
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

#endif /* CAML_OCGC_HOOKS_H */
