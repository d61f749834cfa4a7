/* ocgc/list.h - listing the processes of this host that write a ring, and
 * the caller's default ring folders. */
#ifndef OCGC_PUBLIC_LIST_H
#define OCGC_PUBLIC_LIST_H

#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- listing: the processes that write rings, the folders rings go to ----- */

/** Folder [i] of the caller's default ring folders, in the order ocgc's
 * producer prefers them (the same rule as runtime_patch/src/ocgc_start.c
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
  size_t sz; /**< set by the caller: sizeof(struct ocgc_list_stats) (OCGC_OPTS_INIT) */
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

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_LIST_H */
