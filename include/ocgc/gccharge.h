/* ocgc/gccharge.h - the collector's CPU charged to the allocation sites
 * that cause it: an estimate, per stack of an allocation profile
 * (ocgc/memprof.h), of the CPU time the garbage collector spent because of
 * that stack's allocations.
 *
 * The model (docs/profiling.md, "GC CPU by allocation site"):
 * - minor collections happen because the minor heap fills: each stack is
 *   charged the minor-collection CPU in proportion to the bytes it
 *   allocated in the minor heap (kind minor);
 * - the major collector's work is paced by what enters the major heap
 *   (OCaml 4.x sizes each slice from the words allocated there since the
 *   last): each stack is charged the major CPU (marking, sweeping,
 *   cleaning, compaction) in proportion to its bytes that entered it:
 *   those promoted from the minor heap, those allocated there directly
 *   (kind major), unmarshalled (kind marshal), and a custom block's
 *   memory outside the heap (kind custom), which speeds the major
 *   collector as much.
 * Both CPU figures come from outside the profile (a CPU profile's samples
 * inside collections: ocgc/cpuprof.h), of the same window as the
 * allocation figures (a window, ocgc_memprof_delta, or both since the
 * start).  What the model leaves out, and so misleads on: the cost of a
 * minor collection is its survivors' copying and its roots, not the bytes
 * that died; a stack whose blocks all die young is charged for the
 * collections it brings on, not for the copying of others' survivors; the
 * major collector's marking is of the live heap, whoever made it. */
#ifndef OCGC_PUBLIC_GCCHARGE_H
#define OCGC_PUBLIC_GCCHARGE_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/memprof.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The collector's CPU over the profile's window, to charge. */
struct ocgc_gc_cpu {
  size_t sz;          /**< OCGC_OPTS_INIT */
  uint64_t minor_ns;  /**< in minor collections */
  uint64_t major_ns;  /**< in the major collector: mark, sweep, clean, compaction */
};

/** What a charge found. */
struct ocgc_gc_charge_sum {
  size_t sz;                 /**< OCGC_OPTS_INIT, set by the caller */
  uint64_t minor_words;      /**< the profile's minor-heap allocation (the minor base) */
  uint64_t major_words;      /**< its words that entered the major heap (the major base) */
  uint64_t charged_ns;       /**< charged to the stacks: the sum of out[] */
  uint64_t unattributed_ns;  /**< not charged: CPU of a kind whose base is 0 (the
                                  profile sampled nothing of that kind) */
};

/** Charge [cpu] to [p]'s stacks into out[0 .. p->nstacks) (ns, the
 * overflow row's share in out[0] as any other's), by the model above, each
 * share rounded so that the shares of one kind sum to its CPU exactly
 * (largest remainders).  *sum (may be NULL; its sz set) says the bases and
 * what was left uncharged.  Returns 0, -EINVAL or -ENOMEM. */
OCGC_API int ocgc_gc_charge(const struct ocgc_memprof *p, const struct ocgc_gc_cpu *cpu,
                            uint64_t *out, struct ocgc_gc_charge_sum *sum);

struct ocgc_cpuprof;

/** The collector's CPU in the samples of CPU profile [cp] (ocgc/cpuprof.h;
 * finish it first), each sample its period (1e9 / its frequency ns), into
 * *out (its sz set by the caller): minor_ns of gc_phase "minor", major_ns
 * of "major_mark", "major_sweep", "major_clean", "major" and
 * "compaction"; *other_ns (may be NULL) of "collector" (the collector's
 * dispatch or a Gc.* entry, in no phase: charged to nobody, since the
 * stack itself names the Gc call that ran it).  0 or -EINVAL. */
OCGC_API int ocgc_gc_cpu_of(const struct ocgc_cpuprof *cp, struct ocgc_gc_cpu *out,
                            uint64_t *other_ns);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_GCCHARGE_H */
