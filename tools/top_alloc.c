/* top_alloc.c - `ocgc top`'s panel of the top allocating functions over
 * the last interval (top_alloc.h).
 *
 * What it owns: the functions of each refresh's window (libocgc's
 * ocgc/allocwindow.h: a copy at each refresh, the delta since the one
 * before; ocgc_profile_functions: the same rules as `ocgc profile` and
 * pprof), and the process's names, read once at the start.  Memory: two
 * copies (at most 8,192 stacks) and the last window's functions, fixed
 * after the start.
 *
 * Invariants: a table that began anew (OCGC_E_STALE: a new program in the
 * process) starts a new window (the library's rule) and keeps the last
 * window's functions on the screen; nothing here asks a rate. */

#include <string.h>

#include "clock.h"
#include "top_alloc.h"

void top_alloc_start(struct top_alloc *a, const struct ocgc_source *src, int pid)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  memset(a, 0, sizeof *a);
  if (ocgc_allocwindow_open(src, NULL, &a->win, NULL) != 0) return;
  a->has_profile = 1;
  a->prev_ns = cm_mono_ns();
  a->state = ocgc_allocwindow_copy(a->win)->state;
  a->rate_bytes = ocgc_allocwindow_copy(a->win)->rate_bytes;
  if (ocgc_source_info(src, &info) != 0) info.start_time = 0;
  if (ocgc_symbols_open_pid(pid, info.start_time, NULL, &a->syms) != 0) a->syms = NULL;
}

void top_alloc_tick(struct top_alloc *a, const struct ocgc_source *src, uint64_t now_ns)
{
  struct ocgc_memprof *window = NULL;
  struct ocgc_profile_functions *fns = NULL;
  int err;
  (void)src; /* the window's, given at the start */
  if (!a->has_profile) return;
  /* a copy that fails keeps the window going; one of another table
   * (OCGC_E_STALE) begins the next, the last window's functions kept */
  if ((err = ocgc_allocwindow_next(a->win, &window)) != 0 && err != OCGC_E_STALE) return;
  if (window != NULL && ocgc_profile_functions(window, a->syms, OCGC_PV_ALLOC_SPACE, &fns) == 0) {
    ocgc_profile_functions_free(a->fns);
    a->fns = fns;
    a->window_ns = now_ns - a->prev_ns;
  }
  a->state = ocgc_allocwindow_copy(a->win)->state;
  a->rate_bytes = ocgc_allocwindow_copy(a->win)->rate_bytes;
  ocgc_memprof_free(window);
  a->prev_ns = now_ns;
}

void top_alloc_free(struct top_alloc *a)
{
  ocgc_allocwindow_free(a->win);
  ocgc_profile_functions_free(a->fns);
  ocgc_symbols_close(a->syms);
  memset(a, 0, sizeof *a);
}
