/* ocgc_hooks.h - what the files that make the ring file (ocgc_lifecycle.c,
 * ocgc_start.c) ask of the hooks (private to runtime/ocgc_*.c; the
 * runtime's own hook sites see caml/ocgc.h). */
#ifndef CAML_OCGC_HOOKS_H
#define CAML_OCGC_HOOKS_H

#include <stdint.h>

/* The first events of a new ring (RING_START, and FORK_CHILD with the
 * parent's pid when parent_pid != 0) and its first totals, at time [at]. */
void caml_ocgc_started(uint64_t parent_pid, uint64_t at);

/* The last: RING_STOP, the final totals, state EXITED.  Called by the exit
 * handler once it is the ring's only writer. */
void caml_ocgc_stop(void);

#endif /* CAML_OCGC_HOOKS_H */
