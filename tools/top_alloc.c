/* top_alloc.c - `ocgc top`'s panel of the top allocating functions over
 * the last interval (top_alloc.h).
 *
 * What it owns: two copies of the profile and the functions of their
 * window (libocgc: ocgc_memprof_delta, ocgc_profile_functions, the same
 * rules as `ocgc profile` and pprof), and the process's names, read once
 * at the start.  Memory: two copies (at most 8,192 stacks) and the last
 * window's functions, fixed after the start.
 *
 * Invariants: a window is the difference of two copies of one table, so
 * a table that began anew (OCGC_E_STALE: a new program in the process)
 * starts a new window rather than showing a difference of two tables;
 * nothing here switches sampling. */

#include <string.h>

#include "clock.h"
#include "top_alloc.h"

void top_alloc_start(struct top_alloc *a, const struct ocgc_source *src, int pid)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  memset(a, 0, sizeof *a);
  if (ocgc_memprof_read(src, &a->prev) != 0) return;
  a->has_profile = 1;
  a->prev_ns = cm_mono_ns();
  a->state = a->prev->state;
  a->rate_bytes = a->prev->rate_bytes;
  if (ocgc_source_info(src, &info) != 0) info.start_time = 0;
  if (ocgc_symbols_open_pid(pid, info.start_time, NULL, &a->syms) != 0) a->syms = NULL;
}

void top_alloc_tick(struct top_alloc *a, const struct ocgc_source *src, uint64_t now_ns)
{
  struct ocgc_memprof *now = NULL, *window = NULL;
  struct ocgc_profile_functions *fns = NULL;
  if (!a->has_profile || ocgc_memprof_read(src, &now) != 0) return;
  if (ocgc_memprof_delta(a->prev, now, &window) == 0 &&
      ocgc_profile_functions(window, a->syms, OCGC_PV_ALLOC_SPACE, &fns) == 0) {
    ocgc_profile_functions_free(a->fns);
    a->fns = fns;
    a->window_ns = now_ns - a->prev_ns;
  }
  a->state = now->state;
  a->rate_bytes = now->rate_bytes;
  ocgc_memprof_free(window);
  ocgc_memprof_free(a->prev);
  a->prev = now;
  a->prev_ns = now_ns;
}

void top_alloc_free(struct top_alloc *a)
{
  ocgc_memprof_free(a->prev);
  ocgc_profile_functions_free(a->fns);
  ocgc_symbols_close(a->syms);
  memset(a, 0, sizeof *a);
}
