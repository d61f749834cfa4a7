/* ocgc/cpuprof.h - a CPU profile: the samples of ocgc/cpu.h, unwound by
 * ocgc/unwind.h, folded into rows of identical (stack, labels) with a
 * count, each sample labelled with what the garbage collector was doing on
 * its thread at its time, and written as pprof (gzipped profile.proto) or
 * folded stacks.
 *
 * The labels (pprof string labels, as Go's):
 * - gc_phase: "mutator" outside any collection, else the collector's
 *   phase (enum ocgc_gc_phase);
 * - gc_cause: the cause of the collection the sample is in (the names of
 *   ocgc_cause_name(), "unknown" when the ring has no collection at the
 *   sample's time), absent for the mutator;
 * - gc_call: the Gc function the program called ("Gc.full_major", ...),
 *   when the collection runs inside one.
 * The join: the STACK says whether the sampled thread is inside the
 * collector, and in which phase (a frame of the runtime's collector
 * functions: caml_empty_minor_heap, caml_major_collection_slice and its
 * mark_slice, sweep_slice, clean_slice, caml_compact_heap, ...; OCaml
 * 4.13/4.14's names and 5.x's), and the RING says why: the collection
 * (ocgc/stream.h, ocgc_cpuprof_collection) whose span holds the sample's
 * time, both on CLOCK_MONOTONIC.  So a sample of another thread (one in a
 * blocking section) while a collection runs is the mutator's, and the
 * ring needs no thread id.  A collection's span arrives once it ends, so a
 * sample in the collector waits (pending, bounded) until the ring has been
 * read past its time (ocgc_cpuprof_settle) or the profile is finished.
 *
 * Bounded: at most max_rows rows (default 4096, at most 65536; a sample
 * of a new stack past it counts in the overflow row of its labels, one
 * frame "(ocgc-table-full)"), OCGC_UNWIND_MAX_DEPTH frames a row, at most
 * max_pending samples waiting for the ring (default 4096; past it the
 * oldest is labelled with what is known), at most 4096 collections held
 * (those older than every sample still to come are let go at each
 * settle).  Not thread-safe: one caller at a time. */
#ifndef OCGC_PUBLIC_CPUPROF_H
#define OCGC_PUBLIC_CPUPROF_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/symbols.h>
#include <ocgc/unwind.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the collector was doing in a sample, by its stack. */
enum ocgc_gc_phase {
  OCGC_GC_MUTATOR = 0,     /**< "mutator": no collector frame */
  OCGC_GC_MINOR = 1,       /**< "minor": emptying the minor heap */
  OCGC_GC_MAJOR_MARK = 2,  /**< "major_mark": a major slice's (or a finished
                                cycle's) marking */
  OCGC_GC_MAJOR_SWEEP = 3, /**< "major_sweep" */
  OCGC_GC_MAJOR_CLEAN = 4, /**< "major_clean": ephemerons cleaned */
  OCGC_GC_MAJOR = 5,       /**< "major": a major slice or cycle, outside those three */
  OCGC_GC_COMPACTION = 6,  /**< "compaction" */
  OCGC_GC_COLLECTOR = 7,   /**< "collector": the collector's dispatch or a
                                Gc.* entry, in no phase above */
  OCGC_GC_PHASE_COUNT = 8
};

/** "mutator", "minor", ...; NULL out of range. */
OCGC_API const char *ocgc_gc_phase_name(enum ocgc_gc_phase p);

/** The Gc function a collection runs in (gc_call). */
enum ocgc_gc_call {
  OCGC_GC_CALL_NONE = 0,
  OCGC_GC_CALL_MINOR,       /**< "Gc.minor" */
  OCGC_GC_CALL_MAJOR_SLICE, /**< "Gc.major_slice" */
  OCGC_GC_CALL_MAJOR,       /**< "Gc.major" */
  OCGC_GC_CALL_FULL_MAJOR,  /**< "Gc.full_major" */
  OCGC_GC_CALL_COMPACT,     /**< "Gc.compact" */
  OCGC_GC_CALL_COUNT
};

/** "Gc.minor", ...; NULL for none or out of range. */
OCGC_API const char *ocgc_gc_call_name(enum ocgc_gc_call c);

/** Options of ocgc_cpuprof_new (0: the default). */
struct ocgc_cpuprof_opts {
  size_t sz;            /**< OCGC_OPTS_INIT */
  unsigned frequency_hz; /**< the sampler's (the period: 1e9 / it ns; default 100) */
  unsigned max_rows;    /**< default 4096, at most 65536 */
  unsigned max_pending; /**< default 4096, at most 65536 */
};

/** One row: its samples, its labels and its stack. */
struct ocgc_cpuprof_row {
  uint64_t samples;
  enum ocgc_gc_phase phase;
  int cause;                 /**< enum ocgc_cause; OCGC_CAUSE_NONE for the mutator */
  enum ocgc_gc_call call;
  int overflow;              /**< 1: the table was full: no stack */
  enum ocgc_unwind_end end;  /**< how its stack ended */
  unsigned depth;
  const uint64_t *frames;    /**< innermost first: frames[0] the sampled
                                  instruction, then return addresses */
};

/** Figures of a profile. */
struct ocgc_cpuprof_stats {
  size_t sz;                  /**< OCGC_OPTS_INIT */
  uint64_t samples;           /**< added */
  uint64_t gc_samples;        /**< of them, in the collector (by their stack) */
  uint64_t gc_unmatched;      /**< of those, with no ring collection at their
                                   time (gc_cause "unknown") */
  uint64_t ring_only;         /**< samples outside the collector by their stack
                                   taken while a ring collection ran (another
                                   thread's, or a stack cut short) */
  uint64_t pending;           /**< waiting for the ring now */
  uint64_t overflow_samples;  /**< in overflow rows */
  uint64_t collections;       /**< given by ocgc_cpuprof_collection */
  uint64_t collections_dropped; /**< let go while maybe still needed (the bound) */
  size_t rows;
};

struct ocgc_cpuprof;

/** A new profile whose frames [names] names (borrowed: it must outlive
 * the profile; NULL: every sample is the mutator's).  0, -EINVAL, -ENOMEM. */
OCGC_API int ocgc_cpuprof_new(struct ocgc_symbols *names, const struct ocgc_cpuprof_opts *opts,
                              struct ocgc_cpuprof **out);

/** Add a sample taken at [time_ns] (CLOCK_MONOTONIC: ocgc_cpu_sample's)
 * whose stack is [st].  0, -EINVAL, -ENOMEM. */
OCGC_API int ocgc_cpuprof_add(struct ocgc_cpuprof *p, uint64_t time_ns,
                              const struct ocgc_unwind_stack *st);

/** A collection of the ring: its kind (enum ocgc_kind), its cause (enum
 * ocgc_cause or OCGC_CAUSE_UNKNOWN), its span (the producer's ns,
 * CLOCK_MONOTONIC).  0, -EINVAL. */
OCGC_API int ocgc_cpuprof_collection(struct ocgc_cpuprof *p, int kind, int cause,
                                     uint64_t begin_ns, uint64_t end_ns);

/** The ring has been read, and every collection that began before
 * [until_ns] has been given: the samples before it are labelled. */
OCGC_API void ocgc_cpuprof_settle(struct ocgc_cpuprof *p, uint64_t until_ns);

/** Label every sample still waiting, with what is known. */
OCGC_API void ocgc_cpuprof_finish(struct ocgc_cpuprof *p);

/** The rows, in the order first seen (*rows valid until the next add,
 * settle or finish).  Returns their number. */
OCGC_API size_t ocgc_cpuprof_rows(const struct ocgc_cpuprof *p,
                                  const struct ocgc_cpuprof_row **rows);

/** Fill *out (its sz set by the caller).  0 or -EINVAL. */
OCGC_API int ocgc_cpuprof_stats(const struct ocgc_cpuprof *p, struct ocgc_cpuprof_stats *out);

/** Options of ocgc_cpuprof_pprof (0: the default). */
struct ocgc_cpuprof_pprof_opts {
  size_t sz;           /**< OCGC_OPTS_INIT */
  int64_t time_ns;     /**< when the profile began (CLOCK_REALTIME ns), 0: not said */
  int64_t duration_ns; /**< the window's length */
  int no_gzip;         /**< nonzero: the protobuf as it is */
  size_t max_bytes;    /**< a larger profile fails with -EFBIG (default 64 MiB) */
  int absolute_addresses; /**< as struct ocgc_pprof_opts's (ocgc/profile.h) */
  const char *comment; /**< NULL, or a comment written after the library's
                            (as it is: the caller escapes what a target
                            chose in it) */
};

/** Write [p]'s rows (finish it first) as pprof, Go's CPU profile: sample
 * types samples/count and cpu/nanoseconds (samples x period), period_type
 * cpu/nanoseconds, period 1e9 / frequency; string labels gc_phase,
 * gc_cause, gc_call; frames as allocation profiles write them (ocgc/profile.h:
 * names by [names], escaped; no address of the process unless asked); a
 * stack that ends unwound partly has an outermost frame
 * "(unwinding-stopped)", one with no user registers the one frame
 * "(no-user-stack)", the overflow row "(ocgc-table-full)".  Into a new
 * buffer *out of *len bytes (free() it).  0, -EINVAL, -ENOMEM, -EFBIG. */
OCGC_API int ocgc_cpuprof_pprof(const struct ocgc_cpuprof *p, struct ocgc_symbols *names,
                                const struct ocgc_cpuprof_pprof_opts *opts, unsigned char **out,
                                size_t *len);

/** [p]'s rows as folded lines ("outer;...;inner COUNT", the frames named
 * and escaped as ocgc_profile_folded's, the same made-up frames), rows of
 * one stack and different labels on lines of their own (flame graph
 * scripts add them).  With [by_phase], each line's outermost frame is
 * "[gc_phase]" (e.g. "[minor]"), so a flame graph splits by phase.  Into
 * a new NUL-terminated buffer.  0, -EINVAL, -ENOMEM, -EFBIG (64 MiB). */
OCGC_API int ocgc_cpuprof_folded(const struct ocgc_cpuprof *p, struct ocgc_symbols *names,
                                 int by_phase, char **out, size_t *len);

/** Free [p].  NULL is accepted. */
OCGC_API void ocgc_cpuprof_free(struct ocgc_cpuprof *p);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_CPUPROF_H */
