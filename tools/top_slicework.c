/* top_slicework.c - one line of `ocgc top` under the pause histograms,
 * for a stock OCaml 5.3+ process: the longest major slice read and the
 * work it set out to do (GC work units, about a word marked or swept),
 * what set that work (allocation, dependent memory, extra resources, an
 * explicit budget, or none of its own: work other domains or earlier
 * slices left), the newest slice the same way, and how far the GC is
 * behind or ahead of what was asked of it (the runtime's own totals).
 * The figures are libocgc's (ocgc_snapshot_slicework); nothing here is a
 * target's string.  No line for a ring without those counters. */

#include <inttypes.h>
#include <stdio.h>

#include "common.h"
#include "top_slicework.h"

/* "8.72ms for 29718, set by none" of one slice, at buf[at]: the new end. */
static size_t slice(char *buf, size_t n, size_t at, const char *what,
                    const struct ocgc_major_slice *s)
{
  char d[32];
  int k;
  if (at >= n) return at;
  k = snprintf(buf + at, n - at, "%s %s for %" PRId64 ", set by %s", what,
               s->duration_ns != 0 ? cm_fmt_ns(d, sizeof d, s->duration_ns) : "-", s->work,
               ocgc_slice_driver_name(s->driver));
  return k < 0 ? n : at + (size_t)k;
}

int top_slicework_line(const struct ocgc_snapshot *snap, char *buf, size_t n)
{
  struct ocgc_slicework w = OCGC_OPTS_INIT(struct ocgc_slicework);
  size_t at;
  int k;
  if (n == 0) return 0;
  buf[0] = '\0';
  if (snap == NULL || ocgc_snapshot_slicework(snap, &w) != 0) return 0;
  k = snprintf(buf, n, "major slices' work (units): ");
  at = k < 0 ? n : (size_t)k;
  if (w.longest.duration_ns != 0) at = slice(buf, n, at, "longest", &w.longest);
  if (at < n && w.longest.duration_ns != 0) at += (size_t)snprintf(buf + at, n - at, "; ");
  at = slice(buf, n, at, "last", &w.last);
  if (at < n)
    snprintf(buf + at, n - at, "; GC %s by %" PRIu64, w.work_done >= w.work_asked ? "ahead" : "behind",
             w.work_done >= w.work_asked ? w.work_done - w.work_asked : w.work_asked - w.work_done);
  return 1;
}
