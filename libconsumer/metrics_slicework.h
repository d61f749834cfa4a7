/* metrics_slicework.h - the series of a watched process's major-slice work
 * (metrics_slicework.c), for metrics.c's families (private). */
#ifndef OCGC_METRICS_SLICEWORK_H
#define OCGC_METRICS_SLICEWORK_H

#include "ocgc/consumer.h"

/* Which figure a family shows (its row's off in metrics.c). */
enum metrics_slicework_series {
  MSW_WORK_HIST = 0,   /* ocaml_gc_major_slice_work_units */
  MSW_DONE = 1,        /* ocaml_gc_major_work_done_units_total */
  MSW_ASKED = 2,       /* ocaml_gc_major_work_asked_units_total */
  MSW_DRIVERS = 3,     /* ocaml_gc_major_slice_drivers_total */
};

/* The samples of family [name] for the process whose snapshot is [snap],
 * labelled l[0..nl) (room for one more): nothing when its ring wrote no
 * slice's counters (OCaml 5.2, ocgc's runtime, no slice yet). */
void metrics_slicework(struct ocgc_expo *e, const char *name, enum metrics_slicework_series which,
                       const struct ocgc_snapshot *snap, struct ocgc_expo_label *l, unsigned nl);

#endif /* OCGC_METRICS_SLICEWORK_H */
