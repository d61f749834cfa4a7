/* ocgc/watch.h - watching processes: a set of processes (given by pid, or
 * every one with a ring on the host), each ring drained on a schedule of
 * its own so that none overflows between two reads, snapshotted, its
 * /proc figures read, and let go when its process is gone; what a
 * monitoring agent or an exporter keeps between two scrapes. */
#ifndef OCGC_PUBLIC_WATCH_H
#define OCGC_PUBLIC_WATCH_H

#include <ocgc/agg.h>
#include <ocgc/exit.h>
#include <ocgc/flight.h>
#include <ocgc/memprof.h>
#include <ocgc/process.h>
#include <ocgc/snapshot.h>
#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A set of watched processes (opaque). */
struct ocgc_watch;

/** The bounds a set keeps by default: at most this many processes, of them
 * at most OCGC_WATCH_MAX_PER_USER of one user, so that one user's
 * thousands of fake rings cannot take the slots of another's programs. */
#define OCGC_WATCH_MAX_PROCESSES 4096
#define OCGC_WATCH_MAX_PER_USER 1024
/** Each ring is drained often enough that about a quarter of it is written
 * between two drains, never more often than every ..._MIN_NS nor less
 * often than every ..._MAX_NS (a ring that wakes from idle loses at most
 * what it writes in that time). */
#define OCGC_WATCH_POLL_MIN_NS 10000000u   /* 10 ms */
#define OCGC_WATCH_POLL_MAX_NS 250000000u  /* 250 ms */
/** A ring whose read takes longer than this (a producer stopped in the
 * middle of a publication, or lying), or whose drain ends stuck on a held
 * seqlock, three times in a row, is left alone (100 ms, doubled each time
 * up to 60 s), its last figures kept and marked stale. */
#define OCGC_WATCH_SLOW_NS 50000000u       /* 50 ms */

/** A watched process as its last refresh read it.  The set's own memory,
 * read only: valid until the next call that changes the set
 * (ocgc_watch_add_pid, ocgc_watch_poll, ocgc_watch_refresh,
 * ocgc_watch_free), or during a callback. */
struct ocgc_watched {
  int pid;
  uint64_t start_ticks;       /**< with pid, its identity (/proc/PID/stat); a
                                   reused pid is another process */
  unsigned uid;               /**< the owner of /proc/PID when first watched */
  char program[80];           /**< its ring's program name, or /proc/PID/comm for
                                   stock rings: the process's own bytes, to escape */
  struct ocgc_source_info info;
  /** The last snapshot (NULL until a refresh has read it whole: nothing to
   * show yet).  Counted at opts.bounds_ns when they are given. */
  const struct ocgc_snapshot *snap;
  /** The counters of snap, each never less than at the refresh before: an
   * honest producer's only grow, and a lying one must not make a reader
   * see a counter go back.  events_lost counts from the moment the set
   * began to watch it: events in the ring then, overwritten before the
   * first reads reached them (ocgc_cursor_stats.lost_before), are not in
   * it. */
  struct ocgc_counters counters;
  int have_totals;            /**< totals read once (ocgc rings only) */
  struct ocgc_totals totals;  /**< the last consistent totals, the cause table never
                                   less than before */
  int have_config;            /**< config read (ocgc rings of ext_version >= 2) */
  struct ocgc_gc_config config;
  int have_written;           /**< written read once (ocgc rings only) */
  uint64_t written;           /**< events written into its rings, never less than before */
  struct ocgc_process_figures proc; /**< /proc/PID at the last refresh */
  /** 1: the figures are not from the last refresh (its ring was slow to
   * read, or is left alone after that, or the refresh ran out of time). */
  int stale;
  uint64_t poll_every_ns;     /**< its schedule now: the time between two drains */
  /** Its allocation profile's figures (ocgc rings of ext_version >= 5),
   * read at each refresh; the counts (samples, words, overflow_samples,
   * cut_samples, unfollowed, rate_changes) never less than before. */
  int have_memprof;
  struct ocgc_memprof_summary memprof;
  /** How it ended: filled before on_gone is called (known 0 and how
   * OCGC_EXIT_UNKNOWN while it lives). */
  struct ocgc_exit exit;
  /** Its memory cgroup as last read (at each refresh, and at its end). */
  struct ocgc_memcg memcg;
};

/** How a set chooses and reads its processes. */
struct ocgc_watch_opts {
  size_t sz;                  /**< sizeof(struct ocgc_watch_opts) */
  /** Nonzero: every process with a ring (else only those of
   * ocgc_watch_add_pid).  New ones are found two ways:
   * - told by inotify: the ring folders are watched (dir when given; else
   *   the caller's default folders, ocgc_default_dir(), and, when the
   *   caller sees every user's processes (ocgc_sees_every_user()), every
   *   user's folders of the same rule, /dev/shm/ocgc-UID, /tmp/ocgc-UID,
   *   /run/user/UID/ocgc, and the bases where such a folder may be made
   *   later); a new entry (PID.events, .ocgc-ring.NS.PID) names a pid,
   *   whose ring is opened at once by that pid (ocgc_source_open_pid()'s
   *   proof; the entry itself is never opened), in the next
   *   ocgc_watch_poll(): see ocgc_watch_fd().  So a process is watched
   *   from its ring's first events, and a short-lived one is read to its
   *   end (README.md states the shortest life counted);
   * - listed (ocgc_list(): every process's maps) once a second, and at
   *   once when inotify lost events (its queue overflowed, a folder past
   *   the bound of 256 watches or the kernel's): what notifications cannot
   *   tell, rings of processes whose folder is not watched (stock OCaml 5
   *   rings outside dir, another pid namespace's, another user's folder
   *   without the privilege), a ring not yet whole when it was named.
   * Each name costs at most one /proc/PID/stat read and one open attempt
   * (none for a process watched, refused or tried within the last
   * second); at most 256 names are read per poll, the rest at the next. */
  int all;
  /** Rings are DIR/PID.events (OCAML_RUNTIME_EVENTS_DIR), not found in the
   * processes' maps; NULL: the maps. */
  const char *dir;
  /** all: only the processes of user [uid]. */
  int only_uid;
  unsigned uid;
  /** all: whether a process of this program name (its own bytes, at most
   * 127) is to be watched; NULL: every one.  One that is not is asked
   * again only after a minute. */
  int (*select)(const char *program, void *ctx);
  /** 0: OCGC_WATCH_MAX_PROCESSES and OCGC_WATCH_MAX_PER_USER.  Past them a
   * new process is refused (counted), unless a watched ring keeps failing:
   * then it gives its place to the new one (evicted). */
  unsigned max_processes, max_per_user;
  /** Count pauses and collections at these fixed upper bounds only
   * (ascending, ns; see ocgc_agg_opts.bounds_ns), with no fine histograms
   * and no phases: a few hundred bytes per process.  NULL: the
   * aggregator's defaults. */
  const uint64_t *bounds_ns;
  unsigned nbounds;
  /** Nonzero: also sum the processes by program (their name cut to 32
   * bytes), for ocgc_watch_expose() (ocgc/expo.h): counters summed over a
   * program's processes, living and gone (a process that goes is read a
   * last time and its figures kept; one watched again is not counted
   * twice), never less than before; gauges over the living ones.  At most
   * 512 programs have series of their own: a new one takes the place of
   * the one whose processes all went longest ago, else it shares one
   * labelled "(other programs)". */
  int by_program;
  /** Asked before each ring's read: nonzero ends ocgc_watch_poll() early
   * (someone waits for the caller).  May be NULL. */
  int (*yield)(void *ctx);
  /** A read of [w]'s ring failed with [err] (counted in errors): called
   * once per process, the first time. */
  void (*on_error)(const struct ocgc_watched *w, int err, void *ctx);
  /** [w] is watched from now on (called once it is in the set). */
  void (*on_added)(const struct ocgc_watched *w, void *ctx);
  /** [w] leaves the set (gone, or evicted): with it given (or by_program),
   * the set first reads its ring a last time (unless backed off), so that
   * what an exit wrote last is in its figures.  w->exit says how it ended
   * (gone_ns 0: it left alive, evicted or exec'd) and w->memcg its cgroup
   * read once more: a process seen gone whose end the kernel has not told
   * yet (not yet a zombie, not reaped) stays in the set, its last figures
   * kept, and is asked again every 20 ms for up to a second before it
   * leaves, its end then unknown; nothing waits for it. */
  void (*on_gone)(const struct ocgc_watched *w, void *ctx);
  void *ctx;                  /**< given to every callback above, and on_recorded */
  /* ---- the flight recorder (ocgc/flight.h, docs/flight-recorder.md) ---- */
  /** Nonzero: keep each process's history of its last flight_window_s
   * seconds (at most OCGC_FLIGHT_MAX_WINDOW_S; ocgc_flight_hist_size()
   * bytes each), its memory sampled once a second. */
  unsigned flight_window_s;
  /** Recordings go into this folder (the caller's, open while the set
   * lives; NULL: none): of a process that ends without its producer's
   * exit mark (for a stock OCaml 5 ring, whose runtime writes none: one a
   * signal ended), and of a living one when a trigger below fires or
   * ocgc_watch_record() asks; each but the asked within the folder's
   * cooldown per program. */
  struct ocgc_flight_dir *flight_dir;
  /** Triggers (0: off): a pause longer than flight_pause_ns; the major
   * heap grown faster than flight_heap_growth bytes a second, over the
   * last 10 s of its history; its memory cgroup's usage above
   * flight_memcg_pct percent of its limit. */
  uint64_t flight_pause_ns;
  uint64_t flight_heap_growth;
  unsigned flight_memcg_pct;
  /** A recording of [w] for [reason] (enum ocgc_flight_reason) was made
   * into the file [name] of the folder (err 0), or not (name NULL, err:
   * -EAGAIN in the program's cooldown, else why).  May be NULL. */
  void (*on_recorded)(const struct ocgc_watched *w, int reason, const char *name, int err,
                      void *ctx);
  /** all: process [pid] was not watched because its ring is a stock OCaml
   * 5 ring of a release newer than every event numbering known
   * (OCGC_E_IDS_UNKNOWN; counted in unknown_release): [ocaml_version] is
   * what its executable says ("" if it could not be read again).  Called
   * the first time the set meets that process, not at each try: the memo
   * of processes tried lately keeps that it was told (no more memory per
   * process); one pushed out of it by 1,024 newer tries may be told again.
   * At most 4 such calls a second in all (one past them is told when met
   * again).  May be NULL. */
  void (*on_unknown_release)(int pid, const char *ocaml_version, void *ctx);
};

/** What the set did, since it was made unless said otherwise. */
struct ocgc_watch_stats {
  size_t sz;                  /**< set by the caller: sizeof(struct ocgc_watch_stats) */
  uint64_t processes;         /**< watched now */
  uint64_t errors;            /**< opens, drains, snapshots and listings that failed */
  uint64_t polls;             /**< drains of a ring, by schedule or by refresh */
  uint64_t evicted;           /**< watched rings that kept failing, let go for a new one */
  uint64_t refused;           /**< all: processes the last listing found and could not
                                   watch (bounds, or an open that failed) */
  uint64_t unreadable;        /**< all: processes with a ring in dir (only with dir)
                                   whose maps the last listing could not read */
  uint64_t stale;             /**< processes whose figures the last refresh did not read */
  uint64_t refresh_ns;        /**< how long the last refresh took */
  /** all: processes whose ring's entry a folder showed (inotify) but that
   * were gone before their ring could be opened: never read.  (A name put
   * in a watched folder by its owner for a pid that is not running counts
   * too: each pid once a second at most.) */
  uint64_t missed;
  uint64_t notified;          /**< all: processes watched from a folder's notification */
  /** all: processes the last listing found and could not watch because
   * their ring is a stock OCaml 5 ring of a release newer than every event
   * numbering known (OCGC_E_IDS_UNKNOWN): counted in refused too.  A
   * reader told their numbering (ocgc_attach_opts.ids: the commands'
   * --ids) reads them. */
  uint64_t unknown_release;
};

/** Make an empty set with [opts] (NULL: defaults; -EINVAL for an unknown
 * option).  Returns 0 or -errno. */
OCGC_API int ocgc_watch_new(const struct ocgc_watch_opts *opts, struct ocgc_watch **out);

/** Watch process [pid], its ring found as opts.dir says, from the oldest
 * event it holds (a pid the caller names is watched whatever the bounds,
 * which are for the processes opts.all finds).  Returns 0 (also when it is
 * watched already), the attach error (ocgc_source_open_pid()), or
 * -ENOMEM.  It has figures after the next ocgc_watch_refresh().  The
 * process is followed while it lives: when it execs (same pid and start
 * time, a new ring), the old image's ring leaves the set and the new
 * image's joins it (within about a second of its making, named as its
 * new program), as often as it execs; once the process is gone it is
 * forgotten. */
OCGC_API int ocgc_watch_add_pid(struct ocgc_watch *w, int pid);

/** A descriptor (epoll, close-on-exec, the set's own: do not close it)
 * that is readable when the set has work now: a ring folder's new entry
 * (opts.all), or a watched process that died (a pidfd held on each).  A caller polls it
 * (poll, epoll, select; readable, never written) beside its schedule and
 * calls ocgc_watch_poll() as soon as it is readable: that poll reads what
 * is ready (with no wait) and opens the new rings.  Level-triggered: it
 * stays readable until that poll has read it (in bounded slices: a flood
 * of names takes several polls), so wait for one poll to end before
 * polling it again.  -1 only when no epoll set could be made:
 * ocgc_watch_poll()'s schedule and listing alone. */
OCGC_API int ocgc_watch_fd(const struct ocgc_watch *w);

/** Drain the rings whose turn has come at [now_ns] (CLOCK_MONOTONIC), open
 * the rings the folders named (all: ocgc_watch_fd()), look for new
 * processes (all: at most once a second) and let go of those
 * that are gone (once their end is known: on_gone).  Returns the time of the next turn (at most
 * OCGC_WATCH_POLL_MAX_NS away), or now_ns when yield asked it to stop.
 * Call it between refreshes, so that no ring overflows. */
OCGC_API uint64_t ocgc_watch_poll(struct ocgc_watch *w, uint64_t now_ns);

/** Bring every process's figures up to date until [deadline_ns]
 * (CLOCK_MONOTONIC): drain its ring (bounded), snapshot it, read its /proc
 * figures; a process that is gone leaves.  A ring left alone (slow) or
 * not reached by the deadline keeps its last figures, marked stale.  What
 * fails is counted in errors. */
OCGC_API void ocgc_watch_refresh(struct ocgc_watch *w, uint64_t deadline_ns);

/** The watched process after [prev] (NULL: the first), or NULL after the
 * last.  The order is the set's (newest first). */
OCGC_API const struct ocgc_watched *ocgc_watch_next(const struct ocgc_watch *w,
                                                    const struct ocgc_watched *prev);

/** Collections of kind [kind] and cause [cause] of [p]: the producer's exact
 * table (ocgc rings), else what its events showed (stock rings). */
OCGC_API uint64_t ocgc_watched_collections(const struct ocgc_watched *p, unsigned kind,
                                           unsigned cause);
/** Events its runtime wrote (ocgc rings), else the events read. */
OCGC_API uint64_t ocgc_watched_events(const struct ocgc_watched *p);

/** A recording of the watched process [pid] now (opts.flight_dir; the
 * newest entry of that pid), its ring read first so that its last events
 * are in it; not subject to the cooldown.  Returns 0 and the file's name
 * in name[0..n), -ESRCH (not watched), -ENOENT (no folder), or the
 * folder's error. */
OCGC_API int ocgc_watch_record(struct ocgc_watch *w, int pid, char *name, size_t n);

/** Fill *out as far as out->sz says: 0, or -EINVAL. */
OCGC_API int ocgc_watch_stats(const struct ocgc_watch *w, struct ocgc_watch_stats *out);

/** Close every source and free the set (NULL: nothing).  on_gone is not
 * called. */
OCGC_API void ocgc_watch_free(struct ocgc_watch *w);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_WATCH_H */
