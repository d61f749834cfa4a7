/* ocgc/consumer.h - libocgc, the reader of OCaml runtime-event rings.
 *
 * libocgc reads the shared-memory ring files written by the ocgc-patched
 * OCaml 4.13/4.14 runtime and by stock OCaml 5, from outside the process.
 *
 * Conventions (as in libbpf):
 * - every symbol starts with ocgc_ / OCGC_;
 * - functions that can fail return 0 (or a count) on success and a negative
 *   error code on failure: -errno for system errors, OCGC_E_* for the rest;
 *   ocgc_strerror() turns either into a sentence;
 * - option structs start with `size_t sz` = sizeof the struct the caller was
 *   compiled with, so they can grow without breaking the ABI (use
 *   OCGC_OPTS_INIT).  Every constructor reads them one way: a field past
 *   the caller's sz is 0 (its default); a caller's struct larger than the
 *   library's must be zero past the library's end, else the call fails
 *   with -EINVAL (a newer caller asking for what this library does not
 *   know is told, not ignored), as libbpf's OPTS_VALID.  Output structs
 *   that start with sz (ocgc_drain_result, ocgc_interval_figures, ...)
 *   are filled as far as the caller's sz says;
 * - "none" is a named value (OCGC_KIND_NONE, OCGC_CAUSE_NONE), never a
 *   bare -1;
 * - handles are opaque; one handle must not be used by two threads at once,
 *   but any number of handles, in any number of threads or processes, may
 *   read the same ring.
 * - the file belongs to another process and is treated as hostile: every
 *   offset, length and id read from it is checked before use.
 */
#ifndef OCGC_CONSUMER_H
#define OCGC_CONSUMER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <ocgc/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef OCGC_API
#define OCGC_API __attribute__((visibility("default")))
#endif

/* ---- errors ---------------------------------------------------------------- */

enum ocgc_error {
  OCGC_E_CORRUPT = -4001,   /**< not a valid ring file (bad header or event) */
  OCGC_E_VERSION = -4002,   /**< a ring file of a version this library does not read */
  OCGC_E_NORING = -4003,    /**< the process has no ring */
  OCGC_E_STALE = -4004,     /**< the ring's process is gone or has exited */
  OCGC_E_TRUNCATED = -4005, /**< the file shrank after it was opened */
};

/** A sentence for a negative error code (OCGC_E_* or -errno).  Never NULL;
 * the string is static. */
OCGC_API const char *ocgc_strerror(int err);

/* ---- Signals: none taken --------------------------------------------------- */

/* A ring file belongs to another process, which may truncate it at any
 * moment; a load from a mapped page past a file's new end raises SIGBUS.
 * libocgc never makes such a load: it maps only ocgc's own rings (memfds
 * sealed against shrinking, on tmpfs, whose pages stay), and copies every
 * word of any other file (stock OCaml 5 rings, --dir files) with pread(2),
 * which fails where a load would fault; a file that shrank reads as
 * OCGC_E_TRUNCATED.  So libocgc installs no signal handler and needs none
 * from its host: the process's signal dispositions stay the host's. */

/* ---- sources: an opened ring file ------------------------------------------ */

struct ocgc_source;

/** Which numbering of runtime ids the file uses: OCaml 5.3 inserted phases
 * and counters while keeping format version 1. */
enum ocgc_ids {
  OCGC_IDS_AUTO = 0, /**< ocgc files: what their extension block says (OCGC_IDS); stock
                          files opened by pid: by the OCaml version of the process's
                          executable (5.2.x: 5.2; 5.3 and later: 5.3); else 5.2 */
  OCGC_IDS_52 = 1,
  OCGC_IDS_53 = 2,
};

struct ocgc_open_opts {
  size_t sz;          /**< sizeof(struct ocgc_open_opts) */
  enum ocgc_ids ids;  /**< id numbering, OCGC_IDS_AUTO by default */
};

#ifdef __cplusplus /* zeroed, then sz: C++ before 20 has no designated initializers */
#define OCGC_OPTS_INIT(type) \
  ([]() -> type { type ocgc_o_{}; ocgc_o_.sz = sizeof(type); return ocgc_o_; }())
#else
#define OCGC_OPTS_INIT(type) {.sz = sizeof(type)}
#endif

/** Open and map the ring file at [path] read-only and validate its header
 * (and extension block, when present).  [opts] may be NULL.
 * Returns 0 and sets *out, or a negative error (-ENOENT, -EACCES,
 * OCGC_E_CORRUPT, OCGC_E_VERSION, ...). */
OCGC_API int ocgc_source_open_path(const char *path, const struct ocgc_open_opts *opts,
                                   struct ocgc_source **out);

/** Unmap and free.  NULL is accepted. */
OCGC_API void ocgc_source_close(struct ocgc_source *src);

/** Facts about a source, from its header and extension block. */
struct ocgc_source_info {
  uint64_t max_domains;       /**< rings in the file */
  uint64_t ring_words;        /**< words per ring */
  uint64_t file_size;         /**< its size at open */
  int has_ext;                /**< 1: written by ocgc (exact totals and loss) */
  enum ocgc_ids ids;          /**< id numbering in use */
  /* The rest is valid only when has_ext. */
  uint64_t pid;               /**< producer pid */
  uint64_t start_time;        /**< /proc/PID/stat start time of the producer */
  char boot_id[40];           /**< boot the producer ran in */
  int64_t realtime_offset_ns; /**< add to a timestamp to get CLOCK_REALTIME */
  uint64_t created_ns;        /**< CLOCK_MONOTONIC at creation */
  uint64_t state;             /**< enum ocgc_ext_state, read with acquire */
  uint64_t exited_ns;         /**< CLOCK_MONOTONIC at exit, or 0 */
  uint64_t flags;             /**< enum ocgc_ext_flags */
  char ocaml_version[16];
  char ocgc_version[16];
  char program[64];
};

/** Fill *info (the state fields are read fresh at each call). */
OCGC_API int ocgc_source_info(const struct ocgc_source *src, struct ocgc_source_info *info);

/** Who chose the id numbering a source is read with. */
enum ocgc_ids_origin {
  OCGC_IDS_FROM_EXT = 1,    /**< an ocgc file: its extension block says (the
                                 caller's ids are ignored) */
  OCGC_IDS_FROM_EXE = 2,    /**< a stock file opened by pid: the OCaml version
                                 in the process's executable (/proc/PID/exe) */
  OCGC_IDS_ASSUMED = 3,     /**< a stock file nothing told about: 5.2 assumed */
  OCGC_IDS_FROM_CALLER = 4, /**< a stock file: the caller's opts.ids */
};

/** The numbering of a source and where it came from. */
struct ocgc_ids_info {
  size_t sz;                    /**< sizeof(struct ocgc_ids_info) (OCGC_OPTS_INIT) */
  enum ocgc_ids ids;            /**< OCGC_IDS_52 or OCGC_IDS_53 */
  enum ocgc_ids_origin origin;
  char ocaml_version[16];       /**< OCGC_IDS_FROM_EXE: the version found
                                     ("5.3.0"), else "" */
  /** OCGC_IDS_ASSUMED for a source opened by pid: why its executable told
   * nothing (-ENOENT: no version in it, -EMEDIUMTYPE: on a FUSE mount, not
   * read, -ETIME/-EFBIG: past the bounds, OCGC_E_STALE: the process went,
   * -errno), else 0.  A stock OCaml 5 executable holds "The OCaml runtime,
   * version X.Y.Z" (bytecode) or Sys.ocaml_version (native); at most
   * 64 MiB and 500 ms of it are read, once, at ocgc_source_open_pid(). */
  int exe_err;
};

/** Fill *out (out->sz set by the caller; older and newer structs work):
 * 0, or -EINVAL. */
OCGC_API int ocgc_source_ids(const struct ocgc_source *src, struct ocgc_ids_info *out);

/** Cumulative totals from the extension block (see struct ocgc_wire_totals),
 * read consistently.  Returns -ENODATA for stock OCaml 5 files, which have
 * none, and -EAGAIN if the producer kept them busy (it died mid-update). */
struct ocgc_totals {
  uint64_t minor_collections, major_collections, compactions, forced_major_collections;
  uint64_t major_slices, minor_words, promoted_words, major_words, direct_major_words;
  uint64_t heap_words, top_heap_words, heap_chunks;
  uint64_t gc_time_ns, kind_time_ns[OCGC_KIND_COUNT], updated_ns;
  uint64_t by_cause[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS];
};
OCGC_API int ocgc_source_totals(const struct ocgc_source *src, struct ocgc_totals *out);

/** The GC settings of the producer (what Gc.get says), as of its last
 * collection or heap change: a Gc.set shows once the next collection ends.
 * Files of ocgc 0.x before the settings were recorded, and stock OCaml 5
 * files, have none: -ENODATA.  Each field is read whole; the four are not
 * read as one consistent set (each is a setting of its own). */
struct ocgc_gc_config {
  size_t sz;                  /**< sizeof(struct ocgc_gc_config) (OCGC_OPTS_INIT) */
  uint64_t minor_heap_words;  /**< minor_heap_size */
  uint64_t space_overhead;    /**< space_overhead, percent */
  uint64_t max_overhead;      /**< max_overhead, percent (1000000: never compact) */
  uint64_t allocation_policy; /**< allocation_policy: 0 next, 1 first, 2 best fit */
};
OCGC_API int ocgc_source_gc_config(const struct ocgc_source *src, struct ocgc_gc_config *out);

/** Events written so far into ring [ring] (ocgc files; -ENODATA for stock). */
OCGC_API int ocgc_source_written(const struct ocgc_source *src, unsigned ring, uint64_t *out);

/** The name of user event slot [id], or NULL if the slot is empty or not a
 * valid string.  Valid while the source is open. */
OCGC_API const char *ocgc_source_user_name(const struct ocgc_source *src, unsigned id);

/* ---- events ---------------------------------------------------------------- */

/** One decoded event.  Pointers are valid only during the callback. */
struct ocgc_event {
  uint64_t timestamp;       /**< CLOCK_MONOTONIC ns of the producer */
  unsigned ring;            /**< ring (domain) index */
  unsigned user;            /**< 1 for a user event */
  unsigned type;            /**< enum ocgc_wire_rt_type or ocgc_wire_user_type */
  unsigned id;              /**< runtime id (phase, counter, lifecycle) or user slot */
  uint64_t value;           /**< counter, lifecycle data, user int/span value; else 0 */
  const uint64_t *payload;  /**< words after the timestamp */
  unsigned payload_words;
  const char *name;         /**< user events: the slot's name, or NULL */
};

/** Called for each event; return nonzero to stop the poll after it. */
typedef int (*ocgc_event_fn)(const struct ocgc_event *ev, void *ctx);

/** Called when events were overwritten before this cursor read them: [lost]
 * events on [ring]; [exact] is 1 for ocgc files (counted by the producer)
 * and 0 for stock files (estimated from the words lost). */
typedef void (*ocgc_lost_fn)(unsigned ring, uint64_t lost, int exact, void *ctx);

/* ---- what an event means ---------------------------------------------------- */

/** No collection kind, no cause: what an event that announces none, a span
 * that is no collection, or a pause whose collection was not seen has (the
 * real ones, enum ocgc_kind and enum ocgc_cause, are all >= 0). */
enum {
  OCGC_KIND_NONE = -1,
  OCGC_CAUSE_NONE = -1,
};

/** The cause (enum ocgc_cause) an event announces, or OCGC_CAUSE_NONE if it
 * announces none: a 5.2 cause counter or an "ocgc.cause.*" user event.  A cause event
 * comes just before the collection it caused, at the same timestamp. */
OCGC_API int ocgc_event_cause(const struct ocgc_source *src, const struct ocgc_event *ev);

/** The collection kind (enum ocgc_kind) whose span this event begins or ends
 * (then *begin is 1 or 0), or OCGC_KIND_NONE. */
OCGC_API int ocgc_event_kind(const struct ocgc_source *src, const struct ocgc_event *ev,
                             int *begin);

/* ---- cursors: reading events ------------------------------------------------ */

struct ocgc_cursor;

enum ocgc_cursor_start {
  OCGC_START_OLDEST = 0, /**< from the oldest event still in the ring */
  OCGC_START_NOW = 1,    /**< only events written after the cursor was made */
};

struct ocgc_cursor_opts {
  size_t sz;                     /**< sizeof(struct ocgc_cursor_opts) */
  enum ocgc_cursor_start start;
  ocgc_event_fn on_event;        /**< may be NULL (then events are only counted) */
  ocgc_lost_fn on_lost;          /**< may be NULL */
  void *ctx;                     /**< passed to the callbacks */
  size_t batch_words;            /**< copy buffer per poll, 0 = 16 Ki words
                                      (what a poll copied past 16 KiB is
                                      given back to the system after it) */
  /** The budget of one ocgc_cursor_poll(), so that no writer, however fast
   * or hostile, can hold a poll: it delivers at most poll_max_events events
   * (0: 1 Mi) and returns once poll_max_ns of CLOCK_MONOTONIC have passed
   * (0: 10 ms; checked every 64 events and between batches, so a slow
   * callback stretches it by up to 64 calls).  Set them to UINT64_MAX for
   * no limit.  A poll cut short says so in ocgc_cursor_stats.behind. */
  uint64_t poll_max_events;
  uint64_t poll_max_ns;
};

/** Make a cursor over every ring of [src].  O(1) per ring whatever the
 * writer does: an OCGC_START_NOW cursor of an ocgc file starts at the
 * oldest event and counts those before the tail of now as skipped while
 * its polls pass them.  Against a live producer that holds its seqlock
 * (2 ms, as for ocgc_cursor_poll), the cursor is still made, without exact counts
 * (lost_exact 0, loss estimated as for stock files).  The source must
 * outlive it. */
OCGC_API int ocgc_cursor_new(struct ocgc_source *src, const struct ocgc_cursor_opts *opts,
                             struct ocgc_cursor **out);
OCGC_API void ocgc_cursor_free(struct ocgc_cursor *cur);

/** Read what the producers have written since the last poll, calling the
 * callbacks, at most [max_events] events (0: the budget's limit) and within
 * the cursor's budget.  Returns the number of events delivered, or a
 * negative error: OCGC_E_CORRUPT (an invalid event, a tail that moved back,
 * a count no honest writer makes; the cursor skips to the ring's tail,
 * never backwards, and counts the rest as lost) or OCGC_E_TRUNCATED.  A
 * producer holding its seqlock for 2 ms (stopped or preempted in the
 * middle of a publication, or lying) only ends the poll early
 * (stats.busy_polls): come back to it later rather than at once, since
 * the next poll would wait as long.  When a poll stops before the tails
 * (the budget, the limit, a callback or an error), stats.behind is 1:
 * poll again. */
OCGC_API int64_t ocgc_cursor_poll(struct ocgc_cursor *cur, uint64_t max_events);

/** What a cursor has accounted for, over all rings since it was made. */
struct ocgc_cursor_stats {
  uint64_t seen;       /**< events delivered */
  uint64_t lost;       /**< events overwritten before being read */
  uint64_t skipped;    /**< ocgc files: events written before the cursor's
                            start (OCGC_START_NOW), or overwritten before the
                            cursor existed (OCGC_START_OLDEST); then
                            seen + lost + skipped == events written, once
                            the cursor has read up to the tail */
  int lost_exact;      /**< 1 if lost is exact (ocgc files) */
  uint64_t lost_words; /**< words overwritten before being read */
  int behind;          /**< the last poll stopped before the tail of some ring */
  uint64_t cut_polls;  /**< polls ended by the budget (poll_max_*) */
  uint64_t corrupt;    /**< impossible data met (each also counted as lost) */
  uint64_t busy_polls; /**< polls ended early by a producer holding its seqlock */
};
OCGC_API void ocgc_cursor_stats(const struct ocgc_cursor *cur, struct ocgc_cursor_stats *out);

/* ---- attaching to a process ------------------------------------------------------ */

struct ocgc_attach_opts {
  size_t sz;            /**< sizeof(struct ocgc_attach_opts) */
  const char *dir;      /**< look for DIR/PID.events instead of searching
                             /proc/PID/maps (NULL: search the maps) */
  unsigned wait_ms;     /**< wait up to this long for a ring still being
                             created (0: default 200 ms) */
  enum ocgc_ids ids;    /**< as in struct ocgc_open_opts */
  int allow_stale;      /**< 1: open an exited or orphaned ring anyway */
};

/** Find the ring file process [pid] has mapped (a path ending in
 * ".events" in /proc/PID/maps), so any folder works, including OCaml 5's
 * default of the process's working directory.  Writes the path to
 * path[0..n).  Returns 0, -ESRCH (no such process), -EACCES (not allowed
 * to read its maps), OCGC_E_NORING (it maps no ring), -ENAMETOOLONG. */
OCGC_API int ocgc_find_ring(int pid, char *path, size_t n);

/** Find the ring of process [pid] as ocgc_find_ring() does, and open it:
 * returns a read-only descriptor (O_CLOEXEC) of the very file the process
 * maps (checked by device and inode, so a path or fd entry the process
 * changed meanwhile is never used), which the caller closes; writes a path
 * that named it to path[0..n) (NULL: not wanted).  The path may be a
 * /proc/PID/fd/N or /proc/PID/map_files entry: ocgc's producer keeps its
 * ring in a memfd and publishes only a link to it.  Errors as
 * ocgc_find_ring().  The descriptor says nothing of whether the ring is
 * still that process's: see ocgc_source_check_alive(). */
OCGC_API int ocgc_open_ring(int pid, char *path, size_t n);

/** Open the ring of the live process [pid] (found as ocgc_find_ring() does,
 * or as DIR/PID.events), after checking that the file belongs to that very
 * process: for ocgc files the pid, the /proc start time and the boot id in
 * the extension block must match, and the state must be running; a stock
 * OCaml 5 file, and any file found in DIR (anyone who can read a ring can
 * copy its identity), must be mapped (shared, writable) by that process
 * (when its maps can be read: another user's may not be).  The
 * source remembers the process (pid and start time, read after the open)
 * and the file (device and inode) for ocgc_source_check_alive().  Errors:
 * -ESRCH, -EACCES, OCGC_E_NORING, OCGC_E_STALE (exited, or the pid now
 * names another process, or no longer maps a stock file),
 * OCGC_E_CORRUPT, OCGC_E_VERSION. */
OCGC_API int ocgc_source_open_pid(int pid, const struct ocgc_attach_opts *opts,
                                  struct ocgc_source **out);

/** Whether the ring's producer is still alive and still its producer: 0 if
 * so, OCGC_E_STALE if not, another negative error if it cannot be told.
 * - ocgc files: the live process the extension block names (pid, start
 *   time, boot id), whose state says running, and, opened by
 *   ocgc_source_open_pid(), which still maps the ring where it did (one
 *   look at /proc/PID/map_files: an exec keeps pid and start time but
 *   drops the ring, whose runtime never wrote its exit; when another
 *   user's process may not be looked into, the identity alone tells);
 * - stock OCaml 5 files opened by ocgc_source_open_pid(): the very process
 *   it was opened from (same pid and start time) still maps that very file
 *   (device and inode in its /proc/PID/maps; if its maps may not be read,
 *   as another user's, the start time alone tells);
 * - stock files opened by path: -ENODATA (no identity to check).
 * Reads /proc (a few small files; the maps for a stock file): call it once
 * per refresh, not per event. */
OCGC_API int ocgc_source_check_alive(const struct ocgc_source *src);

/* ---- listing: the processes that write rings, the folders rings go to ----- */

/** Folder [i] of the caller's default ring folders, in the order ocgc's
 * producer prefers them (the same rule as runtime_patch/src/ocgc_file.c
 * default_dir(), with the effective uid and secure_getenv()):
 *   $XDG_RUNTIME_DIR/ocgc, if XDG_RUNTIME_DIR is an absolute path to a
 *     folder owned by the effective uid;
 *   /dev/shm/ocgc-EUID, if /dev/shm is a folder;
 *   /tmp/ocgc-EUID.
 * A candidate whose condition fails is left out, so folder 0 is where a
 * program started now with the caller's environment puts its ring, and the
 * later ones are where a program of the same user started elsewhere (no
 * XDG_RUNTIME_DIR: a service, su) puts it: read them all to find every ring
 * of this user.  A folder is given whether or not it exists.  Writes the
 * path to buf[0..n) and returns 0; -ENOENT past the last folder (so loop
 * until it); -ENAMETOOLONG; -EINVAL for a NULL buf or n == 0. */
OCGC_API int ocgc_default_dir(unsigned i, char *buf, size_t n);

/** How a listed process's ring stands, as ocgc_source_open_pid() would
 * judge it. */
enum ocgc_list_state {
  OCGC_LIST_RUNNING = 0,    /**< it writes this ring: attachable */
  OCGC_LIST_EXITED = 1,     /**< an ocgc file whose producer says it exited */
  OCGC_LIST_STALE = 2,      /**< an ocgc file that names a dead process or
                                 another one (a forked child still mapping
                                 its parent's ring) */
  OCGC_LIST_UNREADABLE = 3, /**< the ring cannot be read now (err): corrupt,
                                 or a stock file whose header is not yet written */
};

/** A process that maps a ring.  Everything is valid only during the
 * callback. */
struct ocgc_list_entry {
  int pid;
  uint64_t start_time;        /**< its /proc/PID/stat start time (with the
                                   pid, its identity within this boot) */
  const char *path;           /**< a path that named the ring when it was
                                   opened, as ocgc_open_ring() gives it (maybe
                                   /proc/PID/fd/N or /proc/PID/map_files/...) */
  uint64_t dev, ino;          /**< the ring file's device and inode */
  int has_ext;                /**< 1: an ocgc file; 0: stock OCaml 5 (or
                                   unreadable) */
  enum ocgc_list_state state;
  int err;                    /**< OCGC_LIST_UNREADABLE: why; else 0 */
  /** ocgc files: the program its extension block names (maybe empty);
   * other rings: /proc/PID/comm.  Untrusted bytes of the target's choosing
   * (any byte but NUL, no encoding promised), not escaped: escape them
   * before printing them to a terminal or into JSON. */
  const char *program;
  /** The ring, opened (NULL when unreadable), for ocgc_source_info(),
   * ocgc_source_written() ...; ocgc_source_check_alive() knows its process,
   * as for a source from ocgc_source_open_pid().  Closed after the
   * callback: to follow the process, ocgc_source_open_pid(pid). */
  struct ocgc_source *src;
};

/** Called once per listed process; return nonzero to end the listing. */
typedef int (*ocgc_list_fn)(const struct ocgc_list_entry *e, void *ctx);

/** What a listing met. */
struct ocgc_list_stats {
  uint64_t processes; /**< processes in /proc looked at */
  uint64_t listed;    /**< callbacks made */
  uint64_t vanished;  /**< gone, a zombie, or the pid reused, before or
                           while they were read: skipped */
  uint64_t denied;    /**< their maps may not be read (another user's,
                           unless root): skipped */
  uint64_t failed;    /**< could not be read for another reason: skipped */
};

/** List the processes of this host (of the caller's /proc) that write a
 * ring: each whose memory map holds one, found and opened as
 * ocgc_open_ring() does (the caller's own process too, if it writes one),
 * calling [fn] once for each, in /proc's order.  Each process's maps are
 * read once.  Returns the number listed (fn's calls), or a negative error:
 * -EINVAL (fn NULL), -ENOMEM, or /proc's -errno.  [stats] (may be NULL)
 * says what was skipped.  Not a snapshot of one instant: processes start
 * and end while it reads. */
OCGC_API int ocgc_list(ocgc_list_fn fn, void *ctx, struct ocgc_list_stats *stats);

/** Options of ocgc_list_opts(). */
struct ocgc_list_opts {
  size_t sz;            /**< sizeof(struct ocgc_list_opts) */
  /** Called with each process's pid and start time before its maps are
   * read; nonzero skips it (no maps read, no ring opened, no callback):
   * what an agent that already follows a process passes, so that a
   * listing every second costs nothing for the processes it knows
   * (one with 60,000 mappings costs 0.2 s a read).  NULL: none skipped. */
  int (*skip)(int pid, uint64_t start_time, void *ctx);
  /** Called for each process whose memory map may not be read (another
   * user's, without CAP_SYS_PTRACE; counted in stats.denied), with its pid
   * and start time.  Whether it has a ring cannot be told from its maps;
   * an agent may look for one where it can (a folder of rings it may
   * list, as `ocgc serve --dir` does).  NULL: none. */
  void (*denied)(int pid, uint64_t start_time, void *ctx);
};

/** ocgc_list() with options (NULL: as ocgc_list()); [ctx] is passed to
 * both opts->skip and [fn]. */
OCGC_API int ocgc_list_opts(const struct ocgc_list_opts *opts, ocgc_list_fn fn, void *ctx,
                            struct ocgc_list_stats *stats);

/* ---- the collection stream: spans paired, causes claimed, pauses built ------ */

/* The one model of a collection and of a pause that every consumer (the
 * aggregator, ocgc trace and dump, an agent's own) stands on.  Feed it the
 * events of a cursor; it calls back with each span as it closes, each
 * collection (a span of a collection kind, with its cause and amounts) and
 * each pause.  The rules, per ring, whatever the producer wrote:
 * - a begin opens a span; an end closes the innermost open span of the
 *   same id (phase or user slot): spans above it never saw their end and
 *   close with it, cut OCGC_CUT_UNTERMINATED; an end with no open span of
 *   its id is counted (unmatched_ends) and dropped.  Begins deeper than
 *   OCGC_STREAM_MAX_DEPTH are counted (too_deep) and the next ends skipped;
 * - a cause event is claimed by the collection that begins next on its
 *   ring at the cause's own timestamp (the producer writes them together);
 *   in stock OCaml 5 files, whose runtime writes a FORCE_MINOR_* or
 *   REQUEST_* counter when it asks for a collection that begins later, by
 *   the next collection of the kind it asks for on its ring; a collection
 *   begun inside an explicit_gc_* span (Gc.minor, Gc.full_major, ...) is
 *   OCGC_CAUSE_EXPLICIT; a collection with none has OCGC_CAUSE_UNKNOWN
 *   (OCaml 5 records no cause for a scheduled major slice, a collection
 *   another domain asked for, or the end of a major cycle);
 * - stock OCaml 5 files: a collection of every domain at once is one
 *   collection (struct ocgc_collection's stw_member); a minor collection
 *   is delivered at its ring's next event (the end of its
 *   MINOR_LEAVE_BARRIER if one follows), ocgc_stream_settle() or
 *   ocgc_stream_finish();
 * - counters written inside a collection are its amounts;
 * - a pause is a stop of the mutator: a run of outermost collections, the
 *   rule chosen once per source (ocgc_stream_pause_rule()).  Its duration is
 *   the sum of its collections' durations, so the pauses' sum never exceeds
 *   the GC time and no pause outgrows the collections inside it;
 * - events lost on a ring cut its open spans (OCGC_CUT_LOST) at the ring's
 *   last timestamp and drop its pause being built (its extent is unknown):
 *   nothing pairs across the gap;
 * - a span that ends before it begins is counted (corrupt), never delivered.
 * Memory is fixed per ring; nothing grows with what the producer writes. */

#define OCGC_STREAM_MAX_DEPTH 64u /**< spans open at once on one ring */

/** Why a span closed without its own end event. */
enum ocgc_span_cut {
  OCGC_CUT_NONE = 0,         /**< its end event closed it */
  OCGC_CUT_LOST = 1,         /**< events were lost on its ring */
  OCGC_CUT_UNTERMINATED = 2, /**< a span around it ended first */
  OCGC_CUT_END = 3,          /**< still open at ocgc_stream_finish() */
};

/** A span of one ring. */
struct ocgc_span {
  unsigned ring;
  unsigned user;        /**< 1: a user span (id is its name slot) */
  unsigned id;          /**< phase id (the source's numbering) or user slot */
  unsigned depth;       /**< spans open around it on its ring */
  int kind;             /**< enum ocgc_kind if a collection, else OCGC_KIND_NONE */
  int cause;            /**< collections: enum ocgc_cause, OCGC_CAUSE_UNKNOWN
                             if none was announced; else OCGC_CAUSE_NONE */
  uint64_t begin, end;  /**< producer ns, end >= begin */
  uint64_t seq;         /**< begin order on its ring (orders equal begins) */
  enum ocgc_span_cut cut;
};

/** A collection that ran to its end, and what the producer said inside it. */
struct ocgc_collection {
  struct ocgc_span span;      /**< kind >= 0, cut == OCGC_CUT_NONE */
  int outermost;              /**< 1: no other collection was open around it */
  uint64_t allocated_bytes;   /**< minor_allocated counter inside it, or 0 */
  uint64_t promoted_bytes;    /**< minor_promoted counter inside it, or 0 */
  uint64_t slice_work_words;  /**< "ocgc.major_slice.work" inside it, or 0 */
  /** Stock OCaml 5 files: a minor collection, a finish of a major cycle or
   * a compaction stops every domain, and each domain writes its own span of
   * it in its own ring; each span is delivered (the per-domain durations),
   * and the first one read of a collection has stw_member 0, the others 1
   * (count the collection once: where stw_member is 0).  A domain's span
   * joins the collection whose spans it overlaps (a minor one extended to
   * the end of its MINOR_LEAVE_BARRIER, where every domain waits for the
   * last to arrive).  For a member, the collection's longest span and its
   * cause before it joined (the collection's duration is its longest
   * domain's span; its cause the first one a domain announced).  Always 0
   * (and OCGC_CAUSE_NONE) in ocgc files, whose runtime has one domain. */
  int stw_member;
  uint64_t stw_prev_ns;
  int stw_prev_cause;
};

/** How a source's collections are grouped into pauses. */
enum ocgc_pause_rule {
  /** The producer marks the collections that continue a stop
   * (OCGC_UEV_STOP_JOIN): a pause is exactly one stop of the mutator. */
  OCGC_PAUSE_MARKS = 1,
  /** No marks (stock OCaml 5, ocgc before 0.2): only nesting proves that
   * two collections are one stop, so each outermost collection is a pause
   * of its own. */
  OCGC_PAUSE_NESTING = 2,
};

/** A pause: one stop of the mutator on one ring. */
struct ocgc_pause {
  unsigned ring;
  uint64_t begin, end;        /**< its first collection's begin, last one's end */
  uint64_t duration_ns;       /**< sum of its outermost collections' durations */
  unsigned collections;       /**< outermost collections in it */
  enum ocgc_pause_rule rule;
  /** Stock OCaml 5: 1 when its collection's stop of every domain was
   * already delivered as another domain's pause (ocgc_collection's
   * stw_member); stw_prev_ns is the longest of those before it.  A
   * stop-the-world pause counts once, as long as its longest domain's. */
  int stw_member;
  uint64_t stw_prev_ns;
};

typedef void (*ocgc_span_fn)(const struct ocgc_span *span, void *ctx);
typedef void (*ocgc_collection_fn)(const struct ocgc_collection *coll, void *ctx);
typedef void (*ocgc_pause_fn)(const struct ocgc_pause *pause, void *ctx);

struct ocgc_stream_opts {
  size_t sz;                        /**< sizeof(struct ocgc_stream_opts) */
  ocgc_span_fn on_span;             /**< each span as it closes, collections
                                         included, cut ones too; may be NULL */
  ocgc_collection_fn on_collection; /**< each collection that ended; may be NULL */
  ocgc_pause_fn on_pause;           /**< each pause once it can grow no more;
                                         may be NULL */
  void *ctx;
};

struct ocgc_stream;

/** A stream over the rings of [src] (which must outlive it).  Returns 0,
 * -EINVAL or -ENOMEM. */
OCGC_API int ocgc_stream_new(const struct ocgc_source *src, const struct ocgc_stream_opts *opts,
                             struct ocgc_stream **out);
OCGC_API void ocgc_stream_free(struct ocgc_stream *st);
/** Feed one event, in its ring's order (a cursor's on_event). */
OCGC_API void ocgc_stream_event(struct ocgc_stream *st, const struct ocgc_event *ev);
/** Events were lost on [ring] (a cursor's on_lost). */
OCGC_API void ocgc_stream_lost(struct ocgc_stream *st, unsigned ring);
/** Every ring was read to its tail (after a cursor poll whose stats say
 * behind 0): in stock OCaml 5 files a minor collection is held until its
 * ring's next event says whether a MINOR_LEAVE_BARRIER extends it (see
 * struct ocgc_collection's stw_member); one with nothing after it (one
 * domain, a program that waits) is delivered now.  The aggregator calls
 * it after each such poll. */
OCGC_API void ocgc_stream_settle(struct ocgc_stream *st);
/** Nothing more will come: cut every open span (OCGC_CUT_END) and deliver
 * each ring's last pause if no collection was open in it. */
OCGC_API void ocgc_stream_finish(struct ocgc_stream *st);
/** The rule this source's pauses follow. */
OCGC_API enum ocgc_pause_rule ocgc_stream_pause_rule(const struct ocgc_stream *st);
/** The pause ring [ring] is building, if it is complete as far as anyone
 * can tell now (no collection open; a later collection may still join it):
 * 1 and *out, else 0.  For a snapshot of the moment. */
OCGC_API int ocgc_stream_pending_pause(const struct ocgc_stream *st, unsigned ring,
                                       struct ocgc_pause *out);
/** Spans open on [ring] now (0..OCGC_STREAM_MAX_DEPTH). */
OCGC_API unsigned ocgc_stream_depth(const struct ocgc_stream *st, unsigned ring);
/** The [i]th open span of [ring], outermost first (end is the ring's last
 * timestamp): 0, or -EINVAL past the depth. */
OCGC_API int ocgc_stream_open_span(const struct ocgc_stream *st, unsigned ring, unsigned i,
                                   struct ocgc_span *out);

/** What a stream has met, all rings together. */
struct ocgc_stream_stats {
  uint64_t spans;          /**< spans delivered (cut ones included) */
  uint64_t collections;    /**< collections delivered */
  uint64_t pauses;         /**< pauses delivered */
  uint64_t unmatched_ends; /**< ends with no open span of their id */
  uint64_t too_deep;       /**< begins past OCGC_STREAM_MAX_DEPTH */
  uint64_t corrupt;        /**< spans that ended before they began */
  uint64_t dropped;        /**< events not followed for want of memory */
};
OCGC_API void ocgc_stream_stats(const struct ocgc_stream *st, struct ocgc_stream_stats *out);

/* ---- histograms ----------------------------------------------------------------- */

/** A log-linear histogram of durations in nanoseconds, 1 ns to 1 hour at 3
 * significant digits (every recorded value is reported within 0.1%), in
 * fixed memory; mergeable.  Values above an hour are recorded as an hour
 * and counted in ocgc_hist_clamped(). */
struct ocgc_hist;

/** Allocate an empty histogram (about 267 KB, once).  Returns 0, -EINVAL
 * or -ENOMEM. */
OCGC_API int ocgc_hist_new(struct ocgc_hist **out);
OCGC_API void ocgc_hist_free(struct ocgc_hist *h);
OCGC_API void ocgc_hist_reset(struct ocgc_hist *h);
OCGC_API void ocgc_hist_record(struct ocgc_hist *h, uint64_t ns);
/** Record [ns] [n] times. */
OCGC_API void ocgc_hist_record_n(struct ocgc_hist *h, uint64_t ns, uint64_t n);
/** dst += src.  Returns 0, or -EINVAL if either is NULL. */
OCGC_API int ocgc_hist_merge(struct ocgc_hist *dst, const struct ocgc_hist *src);
/** dst = src.  Returns 0, or -EINVAL if either is NULL. */
OCGC_API int ocgc_hist_copy(struct ocgc_hist *dst, const struct ocgc_hist *src);
OCGC_API uint64_t ocgc_hist_count(const struct ocgc_hist *h);
/** Exact smallest and largest values recorded (0 when empty), and their
 * sum (saturating at UINT64_MAX). */
OCGC_API uint64_t ocgc_hist_min(const struct ocgc_hist *h);
OCGC_API uint64_t ocgc_hist_max(const struct ocgc_hist *h);
OCGC_API uint64_t ocgc_hist_sum(const struct ocgc_hist *h);
OCGC_API uint64_t ocgc_hist_clamped(const struct ocgc_hist *h);
/** The value below which [pct] percent (0..100) of the values fall: the
 * highest value equivalent to the bucket holding that rank, never above
 * ocgc_hist_max(); 0 when empty.  percentile(0) can be up to 0.1% above
 * the true minimum: ocgc_hist_min() is exact. */
OCGC_API uint64_t ocgc_hist_percentile(const struct ocgc_hist *h, double pct);
/** How many recorded values are <= [ns] (as the buckets can tell, within
 * 0.1%): for cumulative exports such as Prometheus's le buckets. */
OCGC_API uint64_t ocgc_hist_count_le(const struct ocgc_hist *h, uint64_t ns);

/** dst -= src, bucket by bucket: what was recorded into [dst] since [src]
 * was copied from it (ocgc_hist_copy), e.g. one interval's values from two
 * cumulative snapshots: copy the newer, subtract the older, then read
 * percentiles, counts and buckets of the interval alone, exact to bucket
 * precision (0.1%).  count, sum and clamped subtract exactly (a figure that
 * had saturated at UINT64_MAX stays there).  min and max of the difference
 * are exact when the interval holds a new smallest (largest) value, the
 * common case for a max worth reading; otherwise only their bucket is
 * known, and min is that bucket's lowest value (at most 0.1% below the
 * truth) and max its highest (at most 0.1% above), never beyond dst's own
 * min and max.  src == dst empties dst.  Returns 0; -EINVAL if either is
 * NULL; -ERANGE, leaving dst unchanged, if src cannot be an earlier copy
 * of dst (a bucket, the count, sum or clamped of src above dst's, or its
 * min below or max above dst's). */
OCGC_API int ocgc_hist_sub(struct ocgc_hist *dst, const struct ocgc_hist *src);

/** Iteration over the non-empty buckets of a histogram, in increasing
 * order: for a Prometheus histogram (an le bucket per line, cumulative) or
 * a drawn one.  For each bucket, count_le(highest) == cumulative and, when
 * lowest > 0, count_le(lowest - 1) == cumulative - count; the last
 * bucket's cumulative is ocgc_hist_count().  The histogram must not change
 * during the iteration.  Usage:
 *   struct ocgc_hist_iter it;
 *   ocgc_hist_iter_init(&it, h);
 *   while (ocgc_hist_iter_next(&it)) use(it.lowest, it.highest, it.count);
 */
struct ocgc_hist_iter {
  uint64_t lowest;     /**< the bucket's lowest equivalent value, ns */
  uint64_t highest;    /**< its highest equivalent value (not capped at
                            ocgc_hist_max(): the bucket's own bound) */
  uint64_t count;      /**< values in it (> 0) */
  uint64_t cumulative; /**< values in it and in every bucket below it */
  /* Private: set by ocgc_hist_iter_init(). */
  const struct ocgc_hist *priv_hist;
  unsigned priv_next, priv_end;
};
/** Start an iteration over [h] (NULL: an empty one).  Returns 0, or
 * -EINVAL if [it] is NULL. */
OCGC_API int ocgc_hist_iter_init(struct ocgc_hist_iter *it, const struct ocgc_hist *h);
/** Move to the next non-empty bucket: 1 and its fields in *it, or 0 once
 * past the last (then again 0). */
OCGC_API int ocgc_hist_iter_next(struct ocgc_hist_iter *it);

/* ---- aggregation ------------------------------------------------------------------- */

/** An aggregator reads a source through its own cursor and collection
 * stream, and keeps: pauses (as the stream builds them: one stop of the
 * mutator each), a histogram per collection kind and per phase, a cause
 * table, and counters (exact from the producer's totals in ocgc files; from
 * the events in stock files). */
struct ocgc_agg;

/** Counters at one moment.  Bytes and times are cumulative since the
 * producer started (ocgc files) or since the cursor's start (stock). */
struct ocgc_counters {
  uint64_t time_ns;              /**< producer clock: last update seen */
  uint64_t collections[OCGC_KIND_COUNT]; /**< by kind */
  uint64_t major_cycles;         /**< major cycles completed */
  uint64_t forced_majors;
  uint64_t allocated_bytes;      /**< minor heap allocation */
  uint64_t promoted_bytes;
  uint64_t direct_major_bytes;
  uint64_t heap_bytes, top_heap_bytes;
  uint64_t gc_time_ns;           /**< time inside outermost collections (stock
                                      files: the sum of the pauses seen) */
  uint64_t pauses;               /**< pauses seen by this aggregator */
  uint64_t events_seen, events_lost;
  int lost_exact;
  int exact;                     /**< 1: from the producer's totals */
  /** Collections this aggregator saw complete in the events, by kind: with
   * nothing lost, their growth equals that of collections[] (a cross-check
   * of the producer's totals against its events). */
  uint64_t event_collections[OCGC_KIND_COUNT];
  /** Producer timestamps of the oldest and newest events this aggregator
   * read (0 before any): the span of time its histograms cover. */
  uint64_t first_event_ns, last_event_ns;
  /** How the pauses were told apart (enum ocgc_pause_rule). */
  int pause_rule;
};

/** A pause as the aggregator records it (ocgc_agg_opts.on_pause), with
 * what the aggregator had counted from the events when it ended. */
struct ocgc_agg_pause {
  struct ocgc_pause pause;    /**< the stream's pause (stw_member: see there) */
  /** The kind (enum ocgc_kind) and cause (enum ocgc_cause) of its longest
   * outermost collection, or OCGC_KIND_NONE and OCGC_CAUSE_NONE when none
   * was seen (a ring past the 128th). */
  int kind, cause;
  /** What the events read so far counted (exact 0: not the producer's
   * totals, so that the growth between two pauses, ocgc_counters_growth(),
   * is what happened between them, whatever the source): collections by
   * kind, bytes allocated in and promoted from the minor heap, the heap
   * and its top as last reported; pauses as before this one. */
  struct ocgc_counters counts;
};
typedef void (*ocgc_agg_pause_fn)(const struct ocgc_agg_pause *p, void *ctx);
typedef void (*ocgc_agg_lost_fn)(unsigned ring, uint64_t lost, int exact, uint64_t after_ns,
                                 void *ctx);

struct ocgc_agg_opts {
  size_t sz;                  /**< sizeof(struct ocgc_agg_opts) */
  enum ocgc_cursor_start start; /**< where its cursor starts */
  uint64_t poll_max_events;   /**< its cursor's budget (struct ocgc_cursor_opts) */
  uint64_t poll_max_ns;
  /** 1: keep no histogram per runtime phase (ocgc_snapshot_phase() is then
   * empty), for callers that want only pauses and collection kinds, such
   * as an exporter: less work per event and per snapshot. */
  int no_phases;
  /** Bounds in ns (strictly ascending, at most OCGC_MAX_BOUNDS) at which the
   * aggregator also counts pauses and collections of each kind, exactly (a
   * value counts under every bound it is <= to), for callers whose
   * histograms have fixed buckets, such as a Prometheus exporter:
   * ocgc_snapshot_pause_buckets() and ocgc_snapshot_kind_buckets().  The
   * array is copied.  NULL with nbounds 0: none. */
  const uint64_t *bounds_ns;
  unsigned nbounds;
  /** 1 (with bounds_ns): count pauses and collections only so, with no
   * fine histogram of them (ocgc_snapshot_pauses() and ocgc_snapshot_kind()
   * are then empty): a few bytes per histogram instead of 267 KB, which
   * stay in the cache, and no copy of them in a snapshot. */
  int bounds_only;
  /** Called with each pause as the aggregator records it, once, in the
   * order the stream delivers them (struct ocgc_agg_pause): for a caller
   * that keeps the pauses themselves, such as a timeline.  May be NULL. */
  ocgc_agg_pause_fn on_pause;
  /** Called when events were lost on a ring (ocgc_lost_fn's figures, and
   * after_ns: the newest timestamp read before the gap).  May be NULL. */
  ocgc_agg_lost_fn on_lost;
  void *ctx;                  /**< passed to on_pause and on_lost */
};

/** Most bounds ocgc_agg_opts.bounds_ns may hold. */
#define OCGC_MAX_BOUNDS 32

OCGC_API int ocgc_agg_new(struct ocgc_source *src, const struct ocgc_agg_opts *opts,
                          struct ocgc_agg **out);
OCGC_API void ocgc_agg_free(struct ocgc_agg *agg);
/** Read and aggregate what was written since the last poll, within the
 * cursor's budget.  Returns the number of events read, or a negative error
 * as ocgc_cursor_poll(), and OCGC_E_CORRUPT also when a span of the poll
 * ended before it began (it is dropped; the rest of the poll counts). */
OCGC_API int64_t ocgc_agg_poll(struct ocgc_agg *agg);

/** Nothing more will be read (the producer ended, or the caller's window
 * did): every ring's last pause that no collection holds open is recorded
 * (and given to on_pause) and open spans are dropped, as
 * ocgc_stream_finish() does.  A snapshot counts those pauses already, so
 * its figures do not change; call it once, after the last poll (later
 * polls would meet ends without their begins).  Returns 0, -EINVAL, or
 * the first allocation failure. */
OCGC_API int ocgc_agg_finish(struct ocgc_agg *agg);

/** The statistics of the aggregator's cursor (behind: poll again at once),
 * with corrupt also counting the impossible spans it dropped. */
OCGC_API void ocgc_agg_cursor_stats(const struct ocgc_agg *agg, struct ocgc_cursor_stats *out);

/** A cause table row: collections of a kind with a cause. */
struct ocgc_cause_row {
  uint64_t count;
  uint64_t total_ns;             /**< time in those collections */
  uint64_t worst_ns;             /**< longest of them */
};

/** A snapshot: a copy of everything the aggregator knows now, which the
 * caller keeps as long as it likes (compare two for rates). */
struct ocgc_snapshot;

/** Copy what the aggregator knows now.  A producer that keeps its totals
 * busy for the whole read does not make this fail: the counters are then
 * its last consistent totals (time_ns says when they were read), or the
 * events' own counts (exact 0) if none was ever read. */
OCGC_API int ocgc_agg_snapshot(struct ocgc_agg *agg, struct ocgc_snapshot **out);
/** Fixed-bucket counts (ocgc_agg_opts.bounds_ns) of a snapshot. */
struct ocgc_bucket_counts {
  uint64_t count;                /**< values (saturating) */
  uint64_t sum_ns;               /**< their sum (saturating) */
  unsigned nbounds;              /**< the aggregator's */
  uint64_t le[OCGC_MAX_BOUNDS];  /**< le[i]: values <= bounds_ns[i] (cumulative) */
};
/** The pauses' bucket counts (with a pause that could still grow counted,
 * as in ocgc_snapshot_pauses()): 0, -EINVAL, or -ENODATA if the aggregator
 * was given no bounds. */
OCGC_API int ocgc_snapshot_pause_buckets(const struct ocgc_snapshot *snap,
                                         struct ocgc_bucket_counts *out);
/** The same for the collections of kind [kind] (enum ocgc_kind). */
OCGC_API int ocgc_snapshot_kind_buckets(const struct ocgc_snapshot *snap, unsigned kind,
                                        struct ocgc_bucket_counts *out);

/** Bring *snap up to date with [agg] as ocgc_agg_snapshot() would, reusing
 * its memory (no allocation once it has every histogram [agg] has: for a
 * caller that snapshots often, such as an exporter at each scrape).  A NULL
 * *snap is made.  On error *snap holds what it held before. */
OCGC_API int ocgc_agg_snapshot_update(struct ocgc_agg *agg, struct ocgc_snapshot **snap);
OCGC_API void ocgc_snapshot_free(struct ocgc_snapshot *snap);
OCGC_API void ocgc_snapshot_counters(const struct ocgc_snapshot *snap, struct ocgc_counters *out);
/** Pause durations; never NULL. */
OCGC_API const struct ocgc_hist *ocgc_snapshot_pauses(const struct ocgc_snapshot *snap);
/** Durations of the collections of one kind; NULL for a bad kind. */
OCGC_API const struct ocgc_hist *ocgc_snapshot_kind(const struct ocgc_snapshot *snap,
                                                   unsigned kind);
/** Phase ids are below this in every numbering (5.2, 5.3). */
#define OCGC_PHASE_MAX 64u

/** Durations of a phase (the source's id numbering); NULL if never seen. */
OCGC_API const struct ocgc_hist *ocgc_snapshot_phase(const struct ocgc_snapshot *snap,
                                                    unsigned phase);
/** Row of the cause table; 0, or -EINVAL for a bad kind or cause. */
OCGC_API int ocgc_snapshot_cause(const struct ocgc_snapshot *snap, unsigned kind,
                                 unsigned cause, struct ocgc_cause_row *out);

/** Rates between two moments of one aggregator (two snapshots, or an
 * interval's ends), over the producer's clock. */
struct ocgc_rates {
  double seconds;                          /**< producer time between them */
  double collections_per_s[OCGC_KIND_COUNT];
  double major_cycles_per_s;
  double allocated_bytes_per_s, promoted_bytes_per_s;
  double promotion_ratio;                  /**< promoted / allocated */
  double gc_time_share;                    /**< GC time / elapsed, 0..1 */
  uint64_t heap_bytes;                     /**< at the newer snapshot */
};
/** The rates between two snapshots of the same aggregator: 0, or -EINVAL
 * (*out all 0) if [newer] is not later than [older]. */
OCGC_API int ocgc_snapshot_rates(const struct ocgc_snapshot *older,
                                 const struct ocgc_snapshot *newer, struct ocgc_rates *out);

/** What the cumulative counters of [newer] grew by since [older], into
 * *out: each count (collections, cycles, forced majors, bytes allocated,
 * promoted and allocated directly, GC time, pauses, events seen and lost)
 * as newer minus older, 0 where it went down (a different aggregator or
 * producer); the gauges (heap_bytes, top_heap_bytes), flags (exact,
 * lost_exact, pause_rule) and times (time_ns, first_event_ns,
 * last_event_ns) are the newer's.  *out may be either input.  The one
 * rule every interval uses. */
OCGC_API void ocgc_counters_growth(const struct ocgc_counters *older,
                                   const struct ocgc_counters *newer,
                                   struct ocgc_counters *out);

/* ---- intervals: what happened in the last second ------------------------------ */

/** An interval recorder over an aggregator: each call to
 * ocgc_interval_next() ends the interval in progress and begins the next,
 * as HdrHistogram's interval recorder does.  Its pauses: each pause
 * counts once, in the interval in which the aggregator first counted it;
 * one that a later collection may still join counts at an interval's end
 * at its length so far (as a snapshot's pause count has it) and not again
 * when it ends, so the pauses of consecutive intervals add up to the
 * growth of the pause count.  An aggregator may have several recorders
 * (a screen's refresh and a per-second sparkline); free them before it
 * (one freed after is harmless, and useless). */
struct ocgc_interval;

/** What one interval held. */
struct ocgc_interval_figures {
  size_t sz;                   /**< set by the caller: sizeof(struct ocgc_interval_figures) */
  uint64_t start_ns, end_ns;   /**< the producer's clock at its ends (counters' time_ns) */
  struct ocgc_counters growth; /**< ocgc_counters_growth() of its ends */
  /** Rates over end_ns - start_ns; rates_known 0 (and every rate 0) when
   * that is not positive: a producer that exited just after the start
   * may have an exit time before it (the counts still add up). */
  struct ocgc_rates rates;
  int rates_known;
};

/** A recorder over [agg] whose first interval begins now: 0, -EINVAL or
 * -ENOMEM.  Memory: two pause histograms and a word per ring. */
OCGC_API int ocgc_interval_new(struct ocgc_agg *agg, struct ocgc_interval **out);
OCGC_API void ocgc_interval_free(struct ocgc_interval *iv);
/** End the interval in progress now (read the aggregator first: drain
 * it), fill *out (as far as out->sz says), and begin the next.  Returns 0,
 * -EINVAL (also for a recorder whose aggregator was freed), or the error
 * of reading the producer's totals. */
OCGC_API int ocgc_interval_next(struct ocgc_interval *iv, struct ocgc_interval_figures *out);
/** The pauses of the interval last ended (empty before the first end);
 * valid until the next ocgc_interval_next(). */
OCGC_API const struct ocgc_hist *ocgc_interval_pauses(const struct ocgc_interval *iv);

/* ---- draining: reading until caught up, within bounds ------------------------ */

/** How far a drain may go.  A drain polls until its reader has caught up
 * with the producer (stats.behind 0), and ends sooner at the first of
 * these, so that no producer, however fast or stuck, keeps the caller
 * from its screen, its signals or its next target. */
struct ocgc_drain_opts {
  size_t sz;                  /**< sizeof(struct ocgc_drain_opts) */
  /** Events passed (seen, skipped or lost) at most; 0: the source's
   * ocgc_source_drain_bound(), which reads a whole file. */
  uint64_t max_events;
  /** CLOCK_MONOTONIC time (ns) after which no further poll starts; 0:
   * none.  A drain of a live producer wants one: one that writes as fast
   * as we read holds a drain for max_events, seconds on a big ring. */
  uint64_t deadline_ns;
  /** Nonzero (a signal handler's flag) ends the drain after the poll in
   * progress, so within one poll's budget (10 ms by default).  May be NULL. */
  const volatile sig_atomic_t *stop;
};

/** What a drain did. */
struct ocgc_drain_result {
  size_t sz;                  /**< set by the caller: sizeof(struct ocgc_drain_result) */
  uint64_t passed;            /**< events passed (seen, skipped or lost) */
  uint64_t polls;             /**< polls made */
  int caught_up;              /**< 1: it ended at the producer's tails */
  /** 1: it ended behind with a last poll that passed nothing: a producer
   * holding its seqlock (stopped mid-publication, or lying), as opposed to
   * one that merely writes much.  Come back to it later, not at once. */
  int stuck;
};

/** Poll [agg] until it has caught up, within [opts] (NULL: a whole ring's
 * worth of events, no deadline, no stop flag; an unknown option: -EINVAL),
 * and also after 100 polls in a row that passed nothing or one that a
 * seqlock held past the library's wait ended with nothing passed.  Fills
 * *out if it is not NULL.  Returns 0, or the first poll's error (the
 * events before it are counted, as ocgc_agg_poll()). */
OCGC_API int ocgc_agg_drain(struct ocgc_agg *agg, const struct ocgc_drain_opts *opts,
                            struct ocgc_drain_result *out);
/** The same for a cursor. */
OCGC_API int ocgc_cursor_drain(struct ocgc_cursor *cur, const struct ocgc_drain_opts *opts,
                               struct ocgc_drain_result *out);
/** The drain bound of [src]: four times the events its rings can hold (two
 * words each at least), so that a whole file is read and a producer
 * writing as fast as we read cannot hold a drain beyond that. */
OCGC_API uint64_t ocgc_source_drain_bound(const struct ocgc_source *src);

/* ---- names ------------------------------------------------------------------- */

/** Names of runtime ids in the given numbering ("minor", "major_slice",
 * ...), or NULL for an id the numbering does not have. */
OCGC_API const char *ocgc_phase_name(enum ocgc_ids ids, unsigned id);
OCGC_API const char *ocgc_counter_name(enum ocgc_ids ids, unsigned id);
OCGC_API const char *ocgc_lifecycle_name(unsigned id);

/** The library's version, "MAJOR.MINOR.PATCH". */
OCGC_API const char *ocgc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_CONSUMER_H */
