/* ocgc/allocwindow.h - an allocation profile gathered over a window: what
 * every agent that reads a process's allocation profile over time needs
 * (ocgc profile, serve's /debug/pprof/allocs and /heap, top's panel, the
 * HTML report), so that tools only present it.  The twin of
 * ocgc/interval.h for allocation profiles, and of ocgc/cpuwindow.h.
 *
 * A window holds the last copy of the process's profile (ocgc/memprof.h)
 * and, when a rate was asked for it, the rate: a lease (ocgc_memprof_lease
 * _take), or, of a producer without leases, the rate switched by a request
 * (ocgc_memprof_request) and put back at the end.  Its course:
 *
 *   ocgc_allocwindow_open     the first copy; the rate asked (opts)
 *   ocgc_allocwindow_answer   polled until the producer applies the rate
 *   ocgc_allocwindow_renew    while the window runs, every poll or so
 *   ocgc_allocwindow_next     a copy now and the delta since the last one
 *   ocgc_allocwindow_end      the rate let go (free does it too)
 *
 * The rules it keeps:
 * - the rate asked is let go on every way out: ocgc_allocwindow_end, or
 *   ocgc_allocwindow_free whatever happened before (an error, a refusal,
 *   an answer never read); a lease its holder no longer renews (it was
 *   killed) lapses in the producer (10 s);
 * - a window with a rate begins when the producer has applied it, not when
 *   it was asked, so that no window holds samples of the old rate: the
 *   first copy is then taken again, but of a producer that did not sample
 *   before (then nothing of the old rate can be in it, and a copy taken
 *   again would miss the samples made since the rate was applied);
 * - a window is the difference of two copies of one table: a table that
 *   began anew (another program in the process) is OCGC_E_STALE, and the
 *   next window begins at the copy that found it;
 * - bounded: a copy as ocgc_memprof_read bounds it, tried again for
 *   busy_ns at most; the answer waited for answer_ns; the put-back of a
 *   switched rate waited for 2 s at most (only to report a refusal: the
 *   word written is the last, whatever the answer).
 * Not thread-safe: one caller at a time.  It reads the target's memory (its
 * ring): hold no lock of yours across a call.  It installs no signal
 * handler and waits only for a busy copy (busy_ns, in any call that
 * copies: _open, _answer once applied, _begin, _next) and in _end (the
 * put-back): the caller's loop sleeps between polls, and looks at its own
 * stop flag there. */
#ifndef OCGC_PUBLIC_ALLOCWINDOW_H
#define OCGC_PUBLIC_ALLOCWINDOW_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/memprof.h>
#include <ocgc/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ocgc_source;

/** Options of ocgc_allocwindow_open (0 or NULL: the default). */
struct ocgc_allocwindow_opts {
  size_t sz;            /**< OCGC_OPTS_INIT */
  uint64_t rate_bytes;  /**< a rate to sample at for the window
                             (OCGC_MP_RATE_MIN .. OCGC_MP_RATE_MAX); 0: none
                             asked, the window is of the rate in force */
  uint64_t answer_ns;   /**< how long ocgc_allocwindow_answer waits for the
                             producer to apply it (default 10 s) */
  uint64_t busy_ns;     /**< a copy the producer keeps busy (-EAGAIN) is
                             tried again for this long (0: once) */
  /** Nonzero (a signal handler's flag) ends the wait for the put-back's
   * answer (ocgc_allocwindow_end) early: the rate is written back all the
   * same.  May be NULL. */
  const volatile sig_atomic_t *stop;
};

/** How the window holds the rate asked (ocgc_allocwindow_stats). */
enum ocgc_allocwindow_rate {
  OCGC_ALLOCWINDOW_NO_RATE = 0,  /**< none asked, or a producer without
                                      leases that sampled at it already */
  OCGC_ALLOCWINDOW_LEASE = 1,    /**< a lease, released at the end */
  OCGC_ALLOCWINDOW_SWITCHED = 2  /**< a producer without leases: its rate
                                      switched, put back at the end */
};

/** Figures of a window. */
struct ocgc_allocwindow_stats {
  size_t sz;                   /**< OCGC_OPTS_INIT */
  enum ocgc_allocwindow_rate rate;
  uint64_t rate_bytes;         /**< asked (0: none) */
  uint64_t put_back_bytes;     /**< SWITCHED: the rate put back (0: off) */
  int answered;                /**< the producer applied the rate asked */
  int ended;                   /**< ocgc_allocwindow_end was called */
  uint64_t lease_lapses;       /**< renewals that found the lease lapsed */
  uint64_t copies;             /**< copies taken */
  uint64_t begin_ns;           /**< CLOCK_MONOTONIC of the copy the current
                                    window begins at */
};

struct ocgc_allocwindow;

/** A window over [src]'s profile (borrowed: it must outlive the window)
 * beginning now: its first copy, and the rate of [opts] asked.  0 and
 * *out; else nothing is held and: the errors of ocgc_memprof_read (-ENODATA
 * no profile, -EAGAIN busy for busy_ns, ...); with a rate: -ENOTSUP (a
 * bytecode program: never sampled), -EBUSY (every lease slot held:
 * holders[i], if not NULL, receives each slot's holder pid as it wrote
 * itself), -EACCES or -EPERM (not allowed to ask: only the file's owner or
 * root), -ERANGE (a rate out of bounds), the other errors of
 * ocgc_memprof_lease_take and ocgc_memprof_request; -EINVAL. */
OCGC_API int ocgc_allocwindow_open(const struct ocgc_source *src,
                                   const struct ocgc_allocwindow_opts *opts,
                                   struct ocgc_allocwindow **out,
                                   int holders[OCGC_MP_LEASE_SLOTS]);

/** Whether the producer applied the rate asked (a copy read to know, the
 * lease renewed meanwhile): 1 in force (also when none was asked), and
 * the window begins now (see the rules above); 0 not yet (the producer
 * reads it at the end of its next minor collection: poll again);
 * -ETIMEDOUT not within answer_ns (a program that collects no more
 * allocates nothing to sample); -ERANGE refused; -ENOTSUP a bytecode
 * program; -ECANCELED another request was read after ours (it will never
 * be answered); OCGC_E_STALE the process is gone; an error of a copy.
 * After 1, 1 again. */
OCGC_API int ocgc_allocwindow_answer(struct ocgc_allocwindow *w);

/** Keep the lease while the window runs: renewed when a second passed
 * since the last renewal, else nothing (call it at every poll).  0; 1 when
 * it had lapsed (this process was stopped for longer than the producer's
 * lease) and was taken again; -EBUSY when it had lapsed and every slot is
 * held now (the samples meanwhile are at the rates in force: each copy
 * says them).  0 without a lease. */
OCGC_API int ocgc_allocwindow_renew(struct ocgc_allocwindow *w);

/** The window begins now: its copy taken again (when the caller starts
 * something beside it that took time to open).  0 or an error of the copy
 * (the earlier copy kept). */
OCGC_API int ocgc_allocwindow_begin(struct ocgc_allocwindow *w);

/** End the window in progress and begin the next: a copy now, and into
 * *window (if not NULL; the caller's, free with ocgc_memprof_free) what it
 * counted since the window's copy (ocgc_memprof_delta); the copy now is
 * the next window's.  0; OCGC_E_STALE when the two are not one table's
 * (another program in the process): no *window, and the next window
 * begins at the copy now all the same; any other error (of the copy, or
 * -ENOMEM): nothing changed. */
OCGC_API int ocgc_allocwindow_next(struct ocgc_allocwindow *w, struct ocgc_memprof **window);

/** The window's copy (the first, or the one ocgc_allocwindow_next took
 * last): the cumulative profile, from when sampling began (for /heap-like
 * uses).  Valid until the next call on [w].  NULL for NULL. */
OCGC_API const struct ocgc_memprof *ocgc_allocwindow_copy(const struct ocgc_allocwindow *w);

/** What [newer] (a copy of the same process taken elsewhere: its last,
 * kept when it exited) counted since the window's copy, into a new
 * *window (ocgc_memprof_delta's errors).  The window is not changed. */
OCGC_API int ocgc_allocwindow_since(const struct ocgc_allocwindow *w,
                                    const struct ocgc_memprof *newer,
                                    struct ocgc_memprof **window);

/** Let the rate asked go: the lease released (the producer goes back to
 * its base rate, or the finest of other windows' leases, at its next minor
 * collection), or the rate switched put back to what was in force before
 * (waited for 2 s at most, or until opts' stop, only to report how it was
 * answered).  Returns 0,
 * or the put-back's error: -ERANGE, -ENOTSUP, -ECANCELED (another request
 * came after it) as ocgc_allocwindow_answer says them, an error of
 * ocgc_memprof_request.  Not read within the 2 s is not an error (the word
 * written is the producer's last).  Once: 0 after. */
OCGC_API int ocgc_allocwindow_end(struct ocgc_allocwindow *w);

/** Fill *out (its sz set by the caller).  0 or -EINVAL. */
OCGC_API int ocgc_allocwindow_stats(const struct ocgc_allocwindow *w,
                                    struct ocgc_allocwindow_stats *out);

/** ocgc_allocwindow_end if not done, then free [w] (not its source).
 * NULL is accepted. */
OCGC_API void ocgc_allocwindow_free(struct ocgc_allocwindow *w);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_ALLOCWINDOW_H */
