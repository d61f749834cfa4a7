/* attach.h - a source's owner: the process it was found in (private; the
 * public side is ocgc_source_open_pid() and ocgc_source_check_alive()). */
#ifndef OCGC_ATTACH_H
#define OCGC_ATTACH_H

#include <stdint.h>

#include "source.h"

/* Remember that [src] is the ring of process [pid], whose /proc start time
 * read after the file was opened is [start] (start_ok 0: it was gone). */
void ocgc_source_set_owner(struct ocgc_source *src, int pid, int start_ok, uint64_t start);
/* The owner maps the ring at [start, end) (seen in its maps at the open):
 * ocgc_source_check_alive() looks for that mapping, to see an exec. */
void ocgc_source_set_mapping(struct ocgc_source *src, unsigned long start, unsigned long end);

/* Whether [src] is the ring of the live process [pid] (set as owner for a
 * stock file): an ocgc file's identity names it and says running; a stock
 * file is still mapped by it (which reads its maps).  0, OCGC_E_STALE, or
 * another error. */
int ocgc_source_check_owner(const struct ocgc_source *src, int pid);

/* A seqlock read of an ocgc file gave up (-EAGAIN): the seq stayed odd or
 * kept changing.  A producer killed between making a seq odd and making it
 * even again leaves it odd for ever, so once the producer is dead what it
 * left is final and is read as it is: returns 1 (and sets s->gone, which
 * the seqlock readers of words.c and cursor.c look at) if it is dead, else
 * 0.  The readers' caller asks it, after a read: the read itself never
 * checks liveness.  Call it outside any guard (it reads the extension
 * block and /proc). */
int ocgc_source_seq_stuck(struct ocgc_source *s);

/* ocgc_source_open_pid(pid, {.dir = dir}) in one attempt: a ring not
 * there yet, or not whole, is an error at once (OCGC_E_NORING,
 * OCGC_E_CORRUPT), not waited for: what a watch opens for every name it
 * is told of, so that no name costs it a wait. */
int attach_open_pid_once(int pid, const char *dir, struct ocgc_source **out);

#endif /* OCGC_ATTACH_H */
