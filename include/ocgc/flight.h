/* ocgc/flight.h - a flight recorder: a watched process's recent history
 * in seconds (not in ring words: a busy program overwrites its ring in
 * milliseconds), and recordings of it, made when it dies without its
 * producer's exit mark or when a trigger fires, that outlive it.
 *
 * A recording is a ring file (docs/wire-format.md) whose bytes are the
 * process's ring as it was at the recording (its last events, its exact
 * totals, its allocation profile table), followed by a flight block that
 * says what the format lacks: why it was made, how the process ended, its
 * identity, its memory and memory cgroup at the end, and its history.  So
 * every reader of ring files reads one (`ocgc report --file`, `trace`,
 * `dump`); ocgc_flight_read() reads the block. */
#ifndef OCGC_PUBLIC_FLIGHT_H
#define OCGC_PUBLIC_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/agg.h>
#include <ocgc/api.h>
#include <ocgc/exit.h>
#include <ocgc/process.h>
#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A history's window by default, and at most (seconds). */
#define OCGC_FLIGHT_WINDOW_S 60u
#define OCGC_FLIGHT_MAX_WINDOW_S 3600u

/** One second of a process's history: [t, t + 1 s) of the producer's
 * clock (CLOCK_MONOTONIC).  Pauses, collections and bytes are put in the
 * second their pause ended; gauges are the last figure read in it. */
struct ocgc_flight_second {
  uint64_t t;                       /**< its start, ns, a multiple of 1e9 */
  uint64_t pauses, pause_ns, max_ns; /**< pauses ended here, their time, the longest */
  uint64_t coll[OCGC_KIND_COUNT];   /**< collections by kind */
  uint64_t alloc, promo;            /**< bytes allocated and promoted, as counted at
                                         the collections ending here */
  uint64_t heap, top_heap;          /**< the major heap, bytes, at its last pause
                                         (0: no figure in this second) */
  uint64_t lost;                    /**< events lost here */
  uint64_t rss;                     /**< resident memory at its last sample (0: none) */
  uint64_t cg_usage;                /**< memory cgroup usage at its last sample (0: none) */
  uint32_t cause[OCGC_CAUSE_COUNT]; /**< pauses by the cause of their most significant
                                         collection */
};

/** A process's history (opaque): its last window_s seconds, in memory
 * fixed at its making (ocgc_flight_hist_size). */
struct ocgc_flight_hist;

/** A history of the last [window_s] seconds (1 to OCGC_FLIGHT_MAX_WINDOW_S,
 * 0: OCGC_FLIGHT_WINDOW_S): 0, -EINVAL, or -ENOMEM. */
OCGC_API int ocgc_flight_hist_new(unsigned window_s, struct ocgc_flight_hist **out);
OCGC_API void ocgc_flight_hist_free(struct ocgc_flight_hist *h); /**< NULL: nothing */
/** The memory a history of [window_s] seconds takes, in bytes (0: a window
 * past the bound), all of it taken at ocgc_flight_hist_new(): window_s x
 * (sizeof(struct ocgc_flight_second) + 8) and a header, some 13 KiB for
 * the default window. */
OCGC_API size_t ocgc_flight_hist_size(unsigned window_s);
/** An ocgc_agg_pause_fn (ctx: the history): put in the second of the
 * pause's end, the counts as the growth since the previous pause's (the
 * first's from zero).  A time older than the window is dropped; a later
 * one slides the window; one more than an hour past the caller's
 * CLOCK_MONOTONIC (a lying producer, or a file of another boot) is
 * dropped rather than allowed to slide every real second out. */
OCGC_API void ocgc_flight_hist_on_pause(const struct ocgc_agg_pause *p, void *ctx);
/** An ocgc_agg_lost_fn (ctx: the history). */
OCGC_API void ocgc_flight_hist_on_lost(unsigned ring, uint64_t lost, int exact,
                                       uint64_t after_ns, void *ctx);
/** The process's memory at [t] (CLOCK_MONOTONIC): its /proc figures
 * (NULL: none) and memory cgroup (NULL or not known: none). */
OCGC_API void ocgc_flight_hist_sample(struct ocgc_flight_hist *h, uint64_t t,
                                      const struct ocgc_process_figures *f,
                                      const struct ocgc_memcg *m);
/** The seconds held, oldest first, into out[0..max): how many (at most the
 * window; seconds with nothing in them are not given). */
OCGC_API unsigned ocgc_flight_hist_seconds(const struct ocgc_flight_hist *h,
                                           struct ocgc_flight_second *out, unsigned max);

/** Why a recording was made. */
enum ocgc_flight_reason {
  OCGC_FLIGHT_DEATH = 1,       /**< the process ended without its producer's exit mark */
  OCGC_FLIGHT_PAUSE = 2,       /**< a pause longer than the trigger's bound */
  OCGC_FLIGHT_HEAP_GROWTH = 3, /**< the heap grew faster than the trigger's bound */
  OCGC_FLIGHT_MEMORY = 4,      /**< its memory cgroup above the trigger's share of its limit */
  OCGC_FLIGHT_DEMAND = 5       /**< asked for (`ocgc flight`, POST /debug/flight) */
};
/** "death", "pause", "heap_growth", "memory", "demand"; "unknown". */
OCGC_API const char *ocgc_flight_reason_name(int reason);

/** What a recording says beside its ring. */
struct ocgc_flight_meta {
  size_t sz;                  /**< sizeof(struct ocgc_flight_meta) (OCGC_OPTS_INIT) */
  int reason;                 /**< enum ocgc_flight_reason */
  char detail[128];           /**< the trigger in words ("pause 212 ms > 100 ms"), or "" */
  struct ocgc_exit exit;      /**< how it ended (reason DEATH), else all 0 */
  int pid;
  uint64_t start_ticks;       /**< with pid, its identity (/proc/PID/stat) */
  char program[80];           /**< as the watch names it: the target's bytes, to escape */
  char exe[256];              /**< its executable's path when first watched, cut ("" unknown):
                                   the target's bytes, to escape */
  char build_id[64];          /**< its executable's GNU build id, hex ("" none) */
  uint64_t rss_bytes;         /**< resident memory at the last read while it lived (0: unknown) */
  struct ocgc_memcg memcg;    /**< its memory cgroup at the end (known 0: none) */
  uint64_t recorded_ns;       /**< CLOCK_REALTIME when the recording was made */
  uint64_t window_s;          /**< the history's window */
};

/** The largest recording ocgc_flight_write() makes: a ring file larger
 * than this is not copied (-EFBIG). */
#define OCGC_FLIGHT_MAX_BYTES (64u << 20)

/** Write a recording of [src] to [fd] from its current offset: the ring
 * file as it is now, up to the end of its name table (bounded by
 * OCGC_FLIGHT_MAX_BYTES), its seqlocked totals, loss records and
 * allocation profile read consistently, then the flight block with [m]
 * and [h]'s seconds ([h] NULL: none).  A live ring may be caught mid-event
 * (its readers check every event); zero runs are skipped with lseek()
 * where [fd] can seek, so the recording is as sparse as the ring.
 * Returns 0, or -errno, -EFBIG, OCGC_E_TRUNCATED (the caller's file is
 * then partial: remove it). */
OCGC_API int ocgc_flight_write(int fd, const struct ocgc_source *src,
                               const struct ocgc_flight_hist *h,
                               const struct ocgc_flight_meta *m);

/** Fill [m] (as far as m->sz says) from the flight block of [src], a ring
 * file opened from a recording: 0, -ENOENT (a ring file, not a recording),
 * or OCGC_E_CORRUPT (a block that does not hold together). */
OCGC_API int ocgc_flight_read(const struct ocgc_source *src, struct ocgc_flight_meta *m);
/** The history of a recording, oldest first, into out[0..max): how many
 * (0 for a file without a flight block). */
OCGC_API unsigned ocgc_flight_read_seconds(const struct ocgc_source *src,
                                           struct ocgc_flight_second *out, unsigned max);

/** What a recording says of a process that is alive now: its executable's
 * path and build id into m->exe and m->build_id, read through /proc/PID
 * (each byte of the file bounded, no link of the target's followed; a
 * file that is not an ELF file libocgc reads gives the path alone).  With
 * m->start_ticks set, the process must still be that one (else
 * OCGC_E_STALE).  0 or -errno (-ESRCH: no such process). */
OCGC_API int ocgc_flight_ident(int pid, struct ocgc_flight_meta *m);


/* ---- A folder of recordings -------------------------------------------- */

/** A folder recordings go into (opaque): the bounds on its files, the
 * cooldown per program, the names. */
struct ocgc_flight_dir;

/** The bounds of a folder by default. */
#define OCGC_FLIGHT_DIR_PER_PROGRAM 8u          /**< recordings of one program */
#define OCGC_FLIGHT_DIR_FILES 128u              /**< recordings in all */
#define OCGC_FLIGHT_DIR_BYTES (1024ull << 20)   /**< their bytes in all (1 GiB) */
#define OCGC_FLIGHT_DIR_COOLDOWN_NS 60000000000ull /**< per program, between two (60 s) */
/** The programs whose last recording's time is kept for the cooldown, at
 * most (then the one recorded longest ago is forgotten). */
#define OCGC_FLIGHT_DIR_PROGRAMS 1024u
/** Entries of a folder read when it is opened, at most. */
#define OCGC_FLIGHT_DIR_SCAN 65536u

struct ocgc_flight_dir_opts {
  size_t sz;                  /**< sizeof(struct ocgc_flight_dir_opts) (OCGC_OPTS_INIT) */
  unsigned per_program;       /**< 0: OCGC_FLIGHT_DIR_PER_PROGRAM */
  unsigned files;             /**< 0: OCGC_FLIGHT_DIR_FILES */
  uint64_t bytes;             /**< 0: OCGC_FLIGHT_DIR_BYTES */
  /** Between two recordings of one program (any reason but
   * OCGC_FLIGHT_DEMAND): 0, OCGC_FLIGHT_DIR_COOLDOWN_NS; 1: none. */
  uint64_t cooldown_ns;
};

/** What a folder did since it was opened. */
struct ocgc_flight_dir_stats {
  size_t sz;                  /**< set by the caller (OCGC_OPTS_INIT) */
  uint64_t recorded[OCGC_FLIGHT_DEMAND + 1]; /**< recordings made, by reason */
  uint64_t cooled;            /**< not made: the program's cooldown */
  uint64_t failed;            /**< not made: a write or a file that failed, a ring too large */
  uint64_t removed;           /**< older recordings removed to keep the bounds */
  uint64_t files, bytes;      /**< recordings in the folder now (ours: named so) */
};

/** Open the folder [path] (made by the operator; its last component not a
 * link; not writable by others): recordings already there count in its
 * bounds (the oldest past them are removed), and temporary files a
 * previous run left are removed.  0, or -errno (-EPERM: writable by
 * others). */
OCGC_API int ocgc_flight_dir_open(const char *path, const struct ocgc_flight_dir_opts *opts,
                                  struct ocgc_flight_dir **out);
OCGC_API void ocgc_flight_dir_close(struct ocgc_flight_dir *d); /**< NULL: nothing */

/** Record [src] (ocgc_flight_write) into the folder, as
 * PROGRAM-PID-YYYYMMDDTHHMMSSZ-REASON.ocgcrec (PROGRAM: m->program's
 * letters, digits and ._+ kept, others _, cut at 32), mode 0600, made
 * under a temporary name and renamed into place (never over a file, never
 * through a link).  Older recordings of the program, then of any, are
 * removed first to keep the bounds.  Within the program's cooldown
 * nothing is written; a recording starts the cooldown.  One of reason
 * OCGC_FLIGHT_DEMAND does neither.  Returns 0 and
 * the file's name (not its path) in name[0..n), -EAGAIN in the cooldown,
 * or -errno. */
OCGC_API int ocgc_flight_dir_record(struct ocgc_flight_dir *d, const struct ocgc_source *src,
                                    const struct ocgc_flight_hist *h,
                                    const struct ocgc_flight_meta *m, char *name, size_t n);
/** Whether a recording of [program] would be made now (not in its
 * cooldown), for a trigger that asks before gathering what it records. */
OCGC_API int ocgc_flight_dir_ready(const struct ocgc_flight_dir *d, const char *program,
                                   int reason);
/** Fill *out as far as out->sz says: 0, or -EINVAL. */
OCGC_API int ocgc_flight_dir_stats(const struct ocgc_flight_dir *d,
                                   struct ocgc_flight_dir_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_FLIGHT_H */
