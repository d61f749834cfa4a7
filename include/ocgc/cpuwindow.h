/* ocgc/cpuwindow.h - a CPU profile of a running process gathered over a
 * window: what every agent that profiles a process's CPU needs, so that
 * tools only present it (ocgc profile --cpu, ocgc run --cpu, serve's
 * /debug/pprof/profile).
 *
 * A window holds the process's sampler (ocgc/cpu.h), its symbolizer
 * (ocgc/symbols.h), its unwinder (ocgc/unwind.h), its profile
 * (ocgc/cpuprof.h) and, when given the process's ring, a cursor and
 * stream of its own over it (ocgc/cursor.h, ocgc/stream.h), so that each
 * sample in the collector gets the cause of the ring's collection at its
 * time.  The caller turns it every ocgc_cpuwindow_poll_ns() (the kernel's
 * rings hold some 15 samples each: a window not turned for longer loses
 * samples, counted in lost), then ends it and writes it.
 *
 * The rules it keeps:
 * - at each turn the ring is read before the samples, so every
 *   collection that began before the turn is given (or still open, and
 *   then the labelling stops at its begin) before the samples up to it
 *   are labelled;
 * - each sample's frames are looked up as it is added (its labels), so
 *   the files of a process that exits before the end are read while it
 *   lives and its profile is still named;
 * - the ring's share is of outermost collections within the window (from
 *   the sampler's open to the end), a collection of every domain counted
 *   once;
 * - bounded as its parts are (the sampler's threads and rings, the
 *   unwinder's files, the profile's rows and pending samples, the ring's
 *   drain within 20 ms a turn), whatever the target does.
 * Not thread-safe: one caller at a time.  It reads the target's memory
 * (its ring) and files: hold no lock of yours across a call. */
#ifndef OCGC_PUBLIC_CPUWINDOW_H
#define OCGC_PUBLIC_CPUWINDOW_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/cpu.h>
#include <ocgc/cpuprof.h>
#include <ocgc/symbols.h>
#include <ocgc/unwind.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ocgc_source;

/** Options of ocgc_cpuwindow_open (0 or NULL: the default). */
struct ocgc_cpuwindow_opts {
  size_t sz;                 /**< OCGC_OPTS_INIT */
  unsigned frequency_hz;     /**< samples a second of a thread's CPU time
                                  (default 100, Go's; 1 to 1000) */
  unsigned max_threads;      /**< threads sampled at once (the sampler's
                                  default 64; each holds a 256 KiB ring) */
  const struct ocgc_symbols_opts *symbols; /**< the symbolizer's bounds
                                  (NULL: its defaults) */
  uint64_t max_read_bytes;   /**< the unwinder's bytes of one file (0: its default) */
};

/** Which part of the opening failed (ocgc_cpuwindow_open's *failed). */
enum ocgc_cpuwindow_part {
  OCGC_CPUWINDOW_SAMPLER = 1, /**< perf_event_open: OCGC_E_PERF_DENIED is a
                                   refusal, ocgc_cpu_denied_hint() its line */
  OCGC_CPUWINDOW_FILES = 2,   /**< the process's executable files (names, CFI) */
  OCGC_CPUWINDOW_PROFILE = 3  /**< memory */
};

/** Figures of a window. */
struct ocgc_cpuwindow_stats {
  size_t sz;                 /**< OCGC_OPTS_INIT */
  int pid;
  unsigned frequency_hz;
  uint64_t window_ns;        /**< from the sampler's open to the end (or now) */
  uint64_t samples;          /**< added to the profile */
  uint64_t gc_samples;       /**< of them in the collector, by their stacks */
  uint64_t gc_unmatched;     /**< of those, at no ring collection */
  uint64_t overflow_samples; /**< in the profile's overflow rows */
  uint64_t lost;             /**< the kernel's: rings full between two turns */
  uint64_t threads_seen;     /**< threads sampled in all */
  int has_ring;              /**< 1: the ring was read (gc_cause known) */
  uint64_t ring_gc_ns;       /**< outermost collections' time within the window */
  int ended;                 /**< ocgc_cpuwindow_end was called */
  /** The collector's share of the CPU by the samples: gc_samples / samples
   * (0 without samples). */
  double gc_share_samples;
  /** The ring's: ring_gc_ns / window_ns, its collections' share of the
   * window's wall time (0 without a ring: has_ring says).  The two differ
   * where the program waits (for a CPU, for I/O): the ring's is of wall
   * time, the samples' of CPU time. */
  double gc_share_ring;
};

struct ocgc_cpuwindow;

/** Start sampling process [pid] ([start_time]: its start time as
 * ocgc/source.h's, 0: not checked; taken from [src] when it has one), its
 * collections read from [src] (borrowed: it must outlive the window; NULL:
 * gc_cause unknown).  0 and *out; else an error and, if [failed] is not
 * NULL, the part that failed: OCGC_E_PERF_DENIED (the sampler refused),
 * -ESRCH, OCGC_E_STALE, -ENOENT, -ENOMEM, -EINVAL. */
OCGC_API int ocgc_cpuwindow_open(int pid, uint64_t start_time, struct ocgc_source *src,
                                 const struct ocgc_cpuwindow_opts *opts,
                                 struct ocgc_cpuwindow **out, enum ocgc_cpuwindow_part *failed);

/** The time to wait between two turns, ns: 3 / frequency, within 5 to
 * 50 ms (a ring holds some 15 samples). */
OCGC_API uint64_t ocgc_cpuwindow_poll_ns(const struct ocgc_cpuwindow *w);

/** One turn: the ring read, then the samples, then the profile labelled
 * up to the ring's read.  0; OCGC_E_STALE once the process exec'd or is
 * gone (the samples before are in); -ENOMEM (the profile); another
 * negative error of the sampler.  After ocgc_cpuwindow_end: -EINVAL. */
OCGC_API int ocgc_cpuwindow_turn(struct ocgc_cpuwindow *w);

/** The end: the ring read a last time, every sample labelled.  Once; the
 * profile is then complete. */
OCGC_API void ocgc_cpuwindow_end(struct ocgc_cpuwindow *w);

/** Fill *out (its sz set by the caller).  0 or -EINVAL. */
OCGC_API int ocgc_cpuwindow_stats(const struct ocgc_cpuwindow *w,
                                  struct ocgc_cpuwindow_stats *out);

/** The window's profile and the symbolizer naming it (the window's:
 * valid until it is freed), for ocgc_cpuprof_rows, _folded, _pprof. */
OCGC_API const struct ocgc_cpuprof *ocgc_cpuwindow_profile(const struct ocgc_cpuwindow *w);
OCGC_API struct ocgc_symbols *ocgc_cpuwindow_names(const struct ocgc_cpuwindow *w);

/** The ended window as pprof (ocgc_cpuprof_pprof, its time the window's
 * begin and its duration the window's; [opts] may be NULL, and its time
 * and duration, if 0, are filled so).  0, -EINVAL (not ended), -ENOMEM,
 * -EFBIG. */
OCGC_API int ocgc_cpuwindow_pprof(const struct ocgc_cpuwindow *w,
                                  const struct ocgc_cpuprof_pprof_opts *opts,
                                  unsigned char **out, size_t *len);

/** Free [w] (not its ring source).  NULL is accepted. */
OCGC_API void ocgc_cpuwindow_free(struct ocgc_cpuwindow *w);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_CPUWINDOW_H */
