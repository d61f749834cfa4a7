/* ocgc/memprof.h - a process's allocation profile: what the patched runtime
 * samples, per call stack (allocated, promoted, freed), read from its ring
 * as one consistent copy, and the control that switches sampling on, off or
 * to another rate from outside.
 *
 * The producer samples each allocated word (headers included) with
 * probability 1 / W, W = rate_bytes / 8, and keeps for each call stack the
 * samples drawn and what they stand for (docs/wire-format.md, "The
 * allocation profile"): a figure's words are an unbiased estimate of the
 * words allocated (promoted, freed) there, with a standard deviation of
 * sqrt(words * W) words.  Counts only grow, from when sampling began in
 * the process: a window is the difference of two copies (as Go's memory
 * profile).
 *
 * In use is `live`, as of the last completed major marking (Go's heap
 * profile is "as of the most recently completed garbage collection"): a
 * sample counts once a marking that began after it was taken found its
 * block live, and stops counting when a marking finds it dead; a minor
 * sample that dies young never counts, nor does a sample the producer
 * could not follow (`unfollowed`).  So garbage the collector has not
 * reached yet never shows, and in use never exceeds what was allocated.
 * Never alloc - freed, but for a producer whose rows carry no `live`
 * (live_known 0: before the feature), where alloc - freed is the only
 * estimate, and holds garbage until a marking ends.
 *
 * A row may be recycled by the producer once nothing it counted is alive
 * and it has not changed for 5 minutes: its `generation` then differs, and
 * ocgc_memprof_delta counts it as a new stack from 0. */
#ifndef OCGC_PUBLIC_MEMPROF_H
#define OCGC_PUBLIC_MEMPROF_H

#include <ocgc/api.h>
#include <ocgc/source.h>
#include <ocgc/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Frames a stack of the copy holds at most (a producer's rows may hold
 * fewer: OCGC_MP_DEPTH today). */
#define OCGC_MEMPROF_MAX_DEPTH 128u

/** Sampled figures of one stack, as the producer counts them. */
struct ocgc_memprof_counts {
  uint64_t samples;      /**< draws */
  uint64_t words;        /**< the words they stand for (samples x W at each draw's rate) */
  uint64_t blocks_x1024; /**< the blocks they stand for, x 1024 */
};

/** One call stack of the copy. */
struct ocgc_memprof_stack {
  unsigned kind;        /**< enum ocgc_mp_kind: minor, major, custom, marshal */
  unsigned depth;       /**< frames[0 .. depth): return addresses, innermost first */
  unsigned alloc_index; /**< the block's place in a combined allocation */
  int cut;              /**< the stack was deeper than the producer keeps */
  int overflow;         /**< the overflow row: samples of stacks the full table
                             had no row for (no frames) */
  uint64_t frames[OCGC_MEMPROF_MAX_DEPTH];
  struct ocgc_memprof_counts alloc;    /**< allocated */
  struct ocgc_memprof_counts promoted; /**< minor samples that reached the major heap */
  struct ocgc_memprof_counts freed;    /**< found dead */
  /** In use: known live at the end of the last marking (a gauge; see the
   * top of this file).  In a window (ocgc_memprof_delta) live is newer's
   * and live_before older's, so the window's growth is the difference. */
  struct ocgc_memprof_counts live;
  struct ocgc_memprof_counts live_before; /**< 0 in a copy */
  int live_known;       /**< the producer keeps live; 0: in use is alloc - freed */
  uint64_t generation;  /**< the row's, grows when the producer recycles it */
};

/** A consistent copy of a process's profile. */
struct ocgc_memprof {
  enum ocgc_mp_state state;  /**< off, on, aside (the program's Gc.Memprof runs),
                                  unavailable (bytecode) */
  uint64_t rate_bytes;       /**< mean bytes between samples in force, 0: off */
  uint64_t rate_since_ns;    /**< CLOCK_MONOTONIC when it took that value */
  uint64_t rate_changes;     /**< times the rate changed (OCGC_MEMPROF's included) */
  uint64_t samples, words;   /**< all samples and their words, the overflow row's included */
  uint64_t overflow_samples; /**< samples counted in the overflow row */
  uint64_t cut_samples;      /**< samples whose stack was cut */
  uint64_t unfollowed;       /**< sampled blocks never followed (too many at once):
                                  their promotion and death are not counted */
  uint64_t followed;         /**< sampled blocks followed now */
  uint64_t table_rows;       /**< the producer's table: rows, the overflow row included */
  uint64_t control_seen;     /**< the last control word the producer acted on */
  enum ocgc_mp_control_result control_result; /**< what it did with it */
  uint64_t control_refused;  /**< control words refused (out of bounds) */
  /* The leases (ocgc_memprof_lease_take): */
  uint64_t base_rate;        /**< the rate without leases: OCGC_MEMPROF's or the last
                                  control word's, 0 off */
  int rate_leased;           /**< rate_bytes is a lease's (finer than base_rate) */
  unsigned leases_alive;     /**< the slots the producer counts alive (bit i: slot i) */
  int lease_pid[OCGC_MP_LEASE_SLOTS]; /**< each slot's holder as it wrote itself (0 free;
                                  written by readers: for display only) */
  uint64_t lease_refused;    /**< slot words refused (a rate out of bounds) */
  uint64_t lease_ns;         /**< the producer's lease; 0: a producer without leases */
  int live_known;            /**< rows carry live (OCGC_MP_FEATURE_LIVE) */
  uint64_t live_cycle;       /**< markings ended: live is as of the last */
  uint64_t live_cycle_ns;    /**< CLOCK_MONOTONIC when it ended (0: none yet) */
  size_t nstacks;            /**< stack[0] is the overflow row, then one per stack */
  struct ocgc_memprof_stack *stack;
};

/** Copy [src]'s profile into a new *out (free with ocgc_memprof_free).
 * Returns 0; -ENODATA when the file has none (a stock OCaml 5 file, or one
 * of ext_version < 5); OCGC_E_CORRUPT when its table's geometry is not one
 * a producer writes (more than 16,384 rows, rows too small for their
 * frames); -EAGAIN when the producer kept it busy (it died or stopped
 * mid-update, or samples so often that no copy completes between two of
 * its samples: try again later); -ENOMEM; OCGC_E_TRUNCATED.  A copy is at
 * most 16 MiB (the rows in use: 9.2 MiB for a producer's full table),
 * tried at most 10,000 times, and a seq held odd is waited for 2 ms at
 * most. */
OCGC_API int ocgc_memprof_read(const struct ocgc_source *src, struct ocgc_memprof **out);

/** The figures of a process's profile without its stacks: what a monitor
 * reads at every scrape (a few hundred bytes, not the table). */
struct ocgc_memprof_summary {
  size_t sz;                 /**< set by the caller: OCGC_OPTS_INIT */
  enum ocgc_mp_state state;
  uint64_t rate_bytes;       /**< in force, 0: off */
  uint64_t rate_changes;
  uint64_t samples, words;   /**< all samples and their words, from when sampling began */
  uint64_t overflow_samples; /**< samples the full table had no row for */
  uint64_t cut_samples;
  uint64_t unfollowed;
  uint64_t stacks;           /**< stack rows in use */
  uint64_t table_rows;       /**< the table's rows, the overflow row included */
};

/** Read [src]'s profile figures into *out, under the table's seqlock as
 * ocgc_memprof_read (the same errors, and the same bounds on the
 * geometry), copying its header only. */
OCGC_API int ocgc_memprof_summary(const struct ocgc_source *src,
                                  struct ocgc_memprof_summary *out);

/** Free a copy.  NULL is accepted. */
OCGC_API void ocgc_memprof_free(struct ocgc_memprof *p);

/** A window: what [newer] counted since [older], two copies of one
 * process's table (older may be NULL: everything since sampling began).
 * Into a new *out (free with ocgc_memprof_free): the header of [newer]
 * with samples, words, overflow_samples, cut_samples, unfollowed and
 * rate_changes made differences; the overflow row always, then the stacks
 * with something counted in the window (alloc, promoted, freed or live
 * changed), each with its three differences, live and live_before.  A row
 * whose generation differs between the copies was recycled: a new stack,
 * counted from 0.  Returns 0; -EINVAL; -ENOMEM; OCGC_E_STALE when the
 * copies are not of one table (a stack changed place in one generation, a
 * count or a generation went back, older has more stacks: another
 * process, or a forked child's new table). */
OCGC_API int ocgc_memprof_delta(const struct ocgc_memprof *older,
                                const struct ocgc_memprof *newer, struct ocgc_memprof **out);

/** Ask the producer of [src] to sample at [rate_bytes] (0: stop; else from
 * OCGC_MP_RATE_MIN to OCGC_MP_RATE_MAX) for good: writes the control word,
 * which the producer reads at the end of its next minor collection and
 * answers in control_seen and control_result.  It sets the base rate: a
 * live lease finer than it (ocgc_memprof_lease_take) stays in force until
 * it ends.  Only a process that may write the
 * ring file may ask: its owner (the program's own user) or root; the file
 * is reopened for writing through this process's own descriptor, never by
 * a path the target names.  *word (may be NULL) receives the control word
 * written: the request is answered once a copy's control_seen equals it.
 * Returns 0; -ERANGE (a rate out of bounds); -ENODATA (no profile);
 * -EACCES or -EPERM (not allowed); OCGC_E_STALE (the file is not the one
 * opened any more); -errno. */
OCGC_API int ocgc_memprof_request(const struct ocgc_source *src, uint64_t rate_bytes,
                                  uint64_t *word);

/** How copy [p] answers the request that wrote control word [word]
 * (ocgc_memprof_request's *word): 1 applied (its rate is the base rate,
 * in force unless a live lease is finer: p->rate_leased; if
 * p->state is OCGC_MP_ASIDE the program's own Gc.Memprof runs and no
 * sample is taken until it stops); 0 not read yet (the producer reads the
 * word at the end of its next minor collection: a program that allocates
 * nothing may take long); -ERANGE refused (a rate out of bounds: nothing
 * changed); -ENOTSUP (a bytecode program: never sampled); OCGC_E_STALE
 * (another request was read since: [word] will never be answered). */
OCGC_API int ocgc_memprof_answer(const struct ocgc_memprof *p, uint64_t word);

/** "off", "on", "aside", "unavailable" (enum ocgc_mp_state); "off" for a
 * value no producer writes. */
OCGC_API const char *ocgc_memprof_state_name(enum ocgc_mp_state state);

/** "minor", "major", "custom", "marshal" (enum ocgc_mp_kind): where a
 * sampled block was made; "unknown" for a value no producer writes. */
OCGC_API const char *ocgc_memprof_kind_name(unsigned kind);

/** A rate lease: a rate asked for a while (docs/profiling.md, "The rate
 * as a lease").  The producer samples at the finest (fewest bytes) of its
 * base rate and of the leases alive; a lease stays alive while its holder
 * renews it (ocgc_memprof_lease_renew, every second or so) and ends when
 * released (ocgc_memprof_lease_end) or, if its holder died, lease_ns
 * (10 s) after the producer last saw it renewed, at the producer's first
 * minor collection past that.  So two windows join, and none outlives
 * its holder. */
struct ocgc_memprof_lease;

/** Take a lease of [rate_bytes] (OCGC_MP_RATE_MIN .. OCGC_MP_RATE_MAX) on
 * [src]'s producer: one of its OCGC_MP_LEASE_SLOTS slots claimed with a
 * compare-and-swap through a shared mapping of the file, reopened for
 * writing through this process's own descriptor (only the file's owner or
 * root may).  Returns 0 and *out; -EBUSY when every slot is held
 * (holders[i], if not NULL, receives each slot's holder pid as it wrote
 * itself); -ENOTSUP when the producer has no leases (lease_ns 0: use
 * ocgc_memprof_request) or the file is not a sealed ring (it may shrink
 * under a mapping); -ERANGE; -ENODATA; -EACCES or -EPERM; OCGC_E_STALE
 * (the file is not the one opened any more); -ENOMEM; -errno. */
OCGC_API int ocgc_memprof_lease_take(const struct ocgc_source *src, uint64_t rate_bytes,
                                     struct ocgc_memprof_lease **out,
                                     int holders[OCGC_MP_LEASE_SLOTS]);

/** Renew [l]: 0; 1 when its slot had been freed meanwhile (its holder was
 * stopped for longer than the lease) and another was claimed; -EBUSY
 * when none was free (the lease is lost); -EINVAL. */
OCGC_API int ocgc_memprof_lease_renew(struct ocgc_memprof_lease *l);

/** Whether copy [p] shows lease [l] in force: 1 (its slot is alive, and
 * the rate in force is its or finer); 0 not yet (the producer reads the
 * slots at the end of its next minor collection); -ENOTSUP (a bytecode
 * program). */
OCGC_API int ocgc_memprof_lease_answer(const struct ocgc_memprof *p,
                                       const struct ocgc_memprof_lease *l);

/** [l]'s slot (0 .. OCGC_MP_LEASE_SLOTS - 1), or -1 for NULL. */
OCGC_API int ocgc_memprof_lease_slot(const struct ocgc_memprof_lease *l);

/** Release [l] (its slot freed unless the producer freed it already) and
 * free it.  NULL is accepted. */
OCGC_API void ocgc_memprof_lease_end(struct ocgc_memprof_lease *l);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_MEMPROF_H */
