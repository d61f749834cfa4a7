/* metrics_slicework.c - the series that say why a stock OCaml 5.3+
 * process's major slices were long (ocgc/slicework.h): a histogram of the
 * work each slice set out to do, the runtime's own totals of work done and
 * asked, and the slices by what set their work.
 *
 * Invariants: a process whose ring wrote no slice's counters has none of
 * these series (never zeros that would say "no work"); the counters come
 * from what never goes back while one aggregator reads the process (the
 * largest totals read, sums: slicework.c), not from the watch's held
 * counters (watch.c), so a new aggregator of the same pid (an exec) starts
 * them again, a reset to Prometheus; the histogram's buckets are
 * cumulative and end with +Inf equal to _count. */

#include <inttypes.h>
#include <stdio.h>

#include "metrics_slicework.h"

/* A histogram in work units: the exposition's own writer is for seconds,
 * so its lines are written here as it writes them (name_bucket with le,
 * then name_sum and name_count). */
static void work_hist(struct ocgc_expo *e, const char *name, const struct ocgc_slicework *w,
                      struct ocgc_expo_label *l, unsigned nl)
{
  char bucket[96], sum[96], count[96], le[24];
  unsigned i;
  snprintf(bucket, sizeof bucket, "%s_bucket", name);
  snprintf(sum, sizeof sum, "%s_sum", name);
  snprintf(count, sizeof count, "%s_count", name);
  for (i = 0; i < OCGC_SLICEWORK_NBOUNDS; i++) {
    snprintf(le, sizeof le, "%" PRIu64, ocgc_slicework_bounds()[i]);
    l[nl] = (struct ocgc_expo_label){"le", le};
    ocgc_expo_u64(e, bucket, l, nl + 1, w->work_le[i]);
  }
  l[nl] = (struct ocgc_expo_label){"le", "+Inf"};
  ocgc_expo_u64(e, bucket, l, nl + 1, w->slices);
  ocgc_expo_u64(e, sum, l, nl, w->work);
  ocgc_expo_u64(e, count, l, nl, w->slices);
}

void metrics_slicework(struct ocgc_expo *e, const char *name, enum metrics_slicework_series which,
                       const struct ocgc_snapshot *snap, struct ocgc_expo_label *l, unsigned nl)
{
  struct ocgc_slicework w = OCGC_OPTS_INIT(struct ocgc_slicework);
  int d;
  if (snap == NULL || ocgc_snapshot_slicework(snap, &w) != 0) return;
  switch (which) {
  case MSW_WORK_HIST: work_hist(e, name, &w, l, nl); break;
  case MSW_DONE: ocgc_expo_u64(e, name, l, nl, w.work_done); break;
  case MSW_ASKED: ocgc_expo_u64(e, name, l, nl, w.work_asked); break;
  case MSW_DRIVERS:
    for (d = 0; d < (int)OCGC_SLICE_DRIVER_COUNT; d++) {
      l[nl] = (struct ocgc_expo_label){"driver", ocgc_slice_driver_name(d)};
      ocgc_expo_u64(e, name, l, nl + 1, w.by_driver[d]);
    }
    break;
  }
}
