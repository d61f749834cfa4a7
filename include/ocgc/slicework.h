/* ocgc/slicework.h - why a major slice of a stock OCaml 5.3+ program took
 * as long as it did: the work the runtime asked of each slice, from the
 * counters it writes before the slice (EV_C_MAJOR_HEAP_WORDS ..
 * EV_C_MAJOR_SLICE_BUDGET), accumulated by the aggregator and copied into
 * its snapshots.
 *
 * What the runtime writes (runtime/major_gc.c of OCaml 5.3 and 5.4,
 * update_major_slice_work): on each domain, at the start of every major
 * slice that is not opportunistic, nine counters in a row on that domain's
 * ring, just before the slice's EV_MAJOR_SLICE span begins (a slice that
 * ends a major cycle, Gc.full_major's, runs inside EV_MAJOR_FINISH_CYCLE):
 * - heap_words: the domain's major heap (pool and large words);
 * - allocated_words: words the domain allocated in the major heap since its
 *   previous slice (promoted and direct);
 * - alloc_work, dependent_work, extra_work: the GC work those words, the
 *   custom blocks' dependent memory and the extra resources
 *   (caml_alloc_custom_mem, caml_adjust_gc_speed) ask for, in work units
 *   (a unit is about a word marked or swept);
 * - work_counter, alloc_counter: the process's two running totals of work
 *   units (every domain's, from 0 at start): done by the GC, and asked for
 *   (each slice adds the largest of its three works);
 * - slice_target: the alloc counter the slice works towards (its work
 *   counter when the slice was given an explicit quantity);
 * - slice_budget: that quantity (Gc.major_slice n; 10,000,000 in the slices
 *   of a full major), 0 for the slices the runtime triggers itself.
 * The slice then does max(target - work counter, budget) units, in chunks,
 * unless interrupted (get_major_slice_work): that figure, its work, is what
 * makes a slice long, and is what these figures count.  OCaml 5.2 has none
 * of these counters, nor does ocgc's own runtime: a source without them has
 * no figures (-ENODATA), never zeros. */
#ifndef OCGC_PUBLIC_SLICEWORK_H
#define OCGC_PUBLIC_SLICEWORK_H

#include <ocgc/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What set a slice's work: its explicit budget when that was the larger,
 * else the largest of the three works its domain asked for since its
 * previous slice (ties go to the first: allocation, dependent, extra);
 * none when all were 0 (the slice works off what other domains asked). */
enum ocgc_slice_driver {
  OCGC_SLICE_DRIVER_NONE = 0,
  OCGC_SLICE_DRIVER_ALLOCATION = 1, /**< major-heap allocation (alloc_work) */
  OCGC_SLICE_DRIVER_DEPENDENT = 2,  /**< custom blocks' dependent memory */
  OCGC_SLICE_DRIVER_EXTRA = 3,      /**< extra resources (custom blocks' mem, Gc speed) */
  OCGC_SLICE_DRIVER_BUDGET = 4,     /**< an explicit quantity (Gc.major_slice, full major) */
  OCGC_SLICE_DRIVER_COUNT = 5
};

/** The name of a driver ("none", "allocation", "dependent", "extra",
 * "budget"), NULL for another value.  Static. */
OCGC_API const char *ocgc_slice_driver_name(int driver);

/** One major slice: its nine counters as written, and what they mean. */
struct ocgc_major_slice {
  unsigned ring;              /**< the domain's ring */
  int driver;                 /**< enum ocgc_slice_driver */
  uint64_t time_ns;           /**< the producer's clock at its counters */
  uint64_t duration_ns;       /**< its EV_MAJOR_SLICE span; 0: not read */
  uint64_t heap_words;
  uint64_t allocated_words;
  uint64_t alloc_work, dependent_work, extra_work;  /**< work units */
  uint64_t work_counter, alloc_counter, target;     /**< the runtime's totals, units */
  int64_t budget;             /**< units; 0: a slice the runtime triggered */
  /** max(target - work_counter, budget): the units it set out to do; 0
   * when the GC was ahead of what was asked (alloc_counter - work_counter
   * says by how much). */
  int64_t work;
};

/** The bounds of the histogram of slices' work, in work units (ascending,
 * OCGC_SLICEWORK_NBOUNDS of them): one per decade from 100 to 10^8. */
#define OCGC_SLICEWORK_NBOUNDS 7

/** What the slices read so far say (since the aggregator began to read). */
struct ocgc_slicework {
  size_t sz; /**< set by the caller: sizeof(struct ocgc_slicework) (OCGC_OPTS_INIT) */
  uint64_t slices;            /**< slices whose nine counters were read whole */
  uint64_t timed;             /**< of those, the ones whose span was read too */
  /** Slices by what set their work (enum ocgc_slice_driver). */
  uint64_t by_driver[OCGC_SLICE_DRIVER_COUNT];
  uint64_t allocated_words;   /**< sums over the slices (saturating) */
  uint64_t alloc_work, dependent_work, extra_work;
  uint64_t budget;            /**< the explicit budgets' sum */
  uint64_t work;              /**< the slices' work, those above 0 (saturating) */
  /** work_le[i]: slices whose work was at most bounds[i] (cumulative);
   * slices counts them all. */
  uint64_t work_le[OCGC_SLICEWORK_NBOUNDS];
  /** The runtime's own totals, the largest read: the work units the GC
   * did, and the ones it was asked for, since the process began (every
   * domain's).  asked - done is how far the GC is behind. */
  uint64_t work_done, work_asked;
  struct ocgc_major_slice last;     /**< the newest slice read (by its time) */
  struct ocgc_major_slice longest;  /**< the longest of the timed ones (0s if none) */
};

/** The slices' bounds (OCGC_SLICEWORK_NBOUNDS values, work units); static. */
OCGC_API const uint64_t *ocgc_slicework_bounds(void);

/** What [snap] says of the major slices' work, into *out (filled as far as
 * out->sz says): 0; -EINVAL for a NULL argument or an out->sz too small
 * for its sz; -ENODATA when no slice's counters were read (OCaml 5.2,
 * ocgc's runtime, or no major slice yet: *out zeroed past sz). */
OCGC_API int ocgc_snapshot_slicework(const struct ocgc_snapshot *snap,
                                     struct ocgc_slicework *out);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_SLICEWORK_H */
