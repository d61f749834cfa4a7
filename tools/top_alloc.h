/* top_alloc.h - `ocgc top`'s panel of the top allocating functions over
 * the last interval (tools/top_alloc.c): libocgc's allocation window
 * turned at each refresh, its functions by bytes allocated.  Private to
 * tools/. */
#ifndef OCGC_TOOLS_TOP_ALLOC_H
#define OCGC_TOOLS_TOP_ALLOC_H

#include <stdint.h>

#include "ocgc/consumer.h"

struct top_alloc {
  int has_profile;                   /* the ring keeps one (else: nothing to draw) */
  struct ocgc_symbols *syms;         /* the process's names, or NULL */
  struct ocgc_allocwindow *win;      /* its copy: the one at the last refresh */
  uint64_t prev_ns;                  /* cm_mono_ns() of it */
  struct ocgc_profile_functions *fns;/* the last window's, by flat alloc_space, or NULL */
  uint64_t window_ns;                /* its length */
  uint64_t rate_bytes;               /* the rate in force at its end */
  enum ocgc_mp_state state;
};

/* Begin: the first copy and the process's names (nothing if the ring has
 * no profile). */
void top_alloc_start(struct top_alloc *a, const struct ocgc_source *src, int pid);
/* At a refresh: the window since the last one (a copy that fails keeps the
 * last window).  [src] is the one given to top_alloc_start. */
void top_alloc_tick(struct top_alloc *a, const struct ocgc_source *src, uint64_t now_ns);
void top_alloc_free(struct top_alloc *a);

#endif /* OCGC_TOOLS_TOP_ALLOC_H */
