/* ocgc_stale.h - the sweep of dead processes' entries (ocgc_stale.c;
 * private to runtime/ocgc_*.c). */
#ifndef CAML_OCGC_STALE_H
#define CAML_OCGC_STALE_H

#include <sys/types.h>

/* Remove from the ring folder [dfd] what dead processes of this user left
 * behind (never a live process's ring; never our own pid's name, which the
 * caller replaces); [pidns] is ours (caml_ocgc_pidns). */
void caml_ocgc_sweep_stale(int dfd, pid_t self, unsigned long pidns);

#endif /* CAML_OCGC_STALE_H */
