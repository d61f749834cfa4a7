/* symbols_files.h - a symbolizer's mapped files opened for another reader
 * of them, the unwinder (private; symbols.c). */
#ifndef OCGC_SYMBOLS_FILES_H
#define OCGC_SYMBOLS_FILES_H

#include <stdint.h>

#include "ocgc/symbols.h"

/* Open the file of mapping [index] (of ocgc_symbols_mappings) as the
 * symbolizer opens it (never by the path the process wrote; a regular file
 * only).  Returns the descriptor (the caller's), or -1: none, or a
 * symbolizer of one file (ocgc_symbols_open_elf). */
int ocgc_symbols_open_mapping(struct ocgc_symbols *s, unsigned index);

/* The process [s] reads (0 for one file) and its start time (0: not checked). */
int ocgc_symbols_pid(const struct ocgc_symbols *s, uint64_t *start_time);

#endif /* OCGC_SYMBOLS_FILES_H */
