/* top_slicework.h - the line of `ocgc top` that says why the major slices
 * of a stock OCaml 5.3+ process were long (tools/top_slicework.c).
 * Private to tools/. */
#ifndef OCGC_TOOLS_TOP_SLICEWORK_H
#define OCGC_TOOLS_TOP_SLICEWORK_H

#include <stddef.h>

#include "ocgc/consumer.h"

/* The line for [snap] into buf (n bytes, NUL-terminated, cut to fit):
 * 1, or 0 with buf empty when the ring wrote no slice's work counters
 * (ocgc's runtime, OCaml 5.2, no major slice yet): no line then. */
int top_slicework_line(const struct ocgc_snapshot *snap, char *buf, size_t n);

#endif /* OCGC_TOOLS_TOP_SLICEWORK_H */
