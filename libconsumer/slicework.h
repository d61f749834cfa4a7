/* slicework.h - the major slices' work counters of stock OCaml 5.3+ rings,
 * as the aggregator feeds them (agg.c) and its snapshots copy them
 * (snapshot.c) (private; the figures: ocgc/slicework.h). */
#ifndef OCGC_SLICEWORK_H
#define OCGC_SLICEWORK_H

#include "ocgc/consumer.h"

struct slicework;

/* A counter event [ev] of a stock ring of [src], read with at most [nrings]
 * rings followed: *sw is made at the first counter of a major slice (a
 * source whose numbering has none keeps a small one that ignores them);
 * other counters are ignored.  0 or -ENOMEM (the event is then ignored). */
int slicework_counter(struct slicework **sw, const struct ocgc_source *src, unsigned nrings,
                      const struct ocgc_event *ev);
/* A collection the stream delivered: a major slice's span gives its
 * ring's slice whose counters came before it its duration.  NULL sw: none. */
void slicework_collection(struct slicework *sw, const struct ocgc_collection *c);
/* Events were lost on [ring]: its slice being read is dropped. */
void slicework_lost(struct slicework *sw, unsigned ring);
void slicework_free(struct slicework *sw);
/* The figures of [sw] (NULL: none, slices 0) into *out, whole (sz set):
 * what a snapshot keeps (snapshot.c: ocgc_snapshot_slicework). */
void slicework_figures(const struct slicework *sw, struct ocgc_slicework *out);

#endif /* OCGC_SLICEWORK_H */
