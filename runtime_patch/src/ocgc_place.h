/* ocgc_place.h - where the producer's own mappings go (private to
 * runtime/ocgc_*.c): out of the way of the program's, so that the ring
 * moves none of them (ocgc_place.c says why and how). */
#ifndef CAML_OCGC_PLACE_H
#define CAML_OCGC_PLACE_H

#include <stddef.h>
#include <sys/types.h>

/* mmap(2) of [len] bytes, as mmap(NULL, len, prot, flags, fd, off) would,
 * but at an address far from the program's mappings when one is free
 * there (never replacing a mapping); else where the kernel puts it.
 * Returns MAP_FAILED (errno set) as mmap does.  [flags] must not hold
 * MAP_FIXED or MAP_FIXED_NOREPLACE. */
void *caml_ocgc_place_map(size_t len, int prot, int flags, int fd, off_t off);

/* In a forked child, once its parent's ring is unmapped: the next mapping
 * tries the first spot again (the parent's ring's, now free). */
void caml_ocgc_place_forked(void);

#endif /* CAML_OCGC_PLACE_H */
