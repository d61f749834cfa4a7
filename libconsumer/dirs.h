/* dirs.h - what dirs.c knows of the ring folders besides the public
 * ocgc_default_dir() (private to libconsumer/). */
#ifndef OCGC_DIRS_H
#define OCGC_DIRS_H

#include <stdint.h>

/* Other users' ring folders of the default rule in the shared bases
 * (/dev/shm/ocgc-UID, /tmp/ocgc-UID, UID not the effective uid) that the
 * caller may not open: their rings cannot be seen, nor counted. */
uint64_t dirs_closed_others(void);

#endif /* OCGC_DIRS_H */
