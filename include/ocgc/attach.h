/* ocgc/attach.h - attaching to a process by pid: finding its ring, opening it
 * the checked way, and telling whether its process still writes it. */
#ifndef OCGC_PUBLIC_ATTACH_H
#define OCGC_PUBLIC_ATTACH_H

#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 *   user's process may not be looked into, the identity alone tells).
 *   The block names its producer by its pid in its own pid namespace:
 *   opened by pid, a producer in a container (a namespace below the
 *   caller's) is that process, its own pid read from /proc/PID/status
 *   (NSpid); opened by path, the pid is read in the caller's namespace, so
 *   a producer in a container whose folder is shared may read as
 *   OCGC_E_STALE: only a look at what the host's processes map proves it
 *   gone (ocgc_rings_scan() makes it);
 * - stock OCaml 5 files opened by ocgc_source_open_pid(): the very process
 *   it was opened from (same pid and start time) still maps that very file
 *   (device and inode in its /proc/PID/maps; if its maps may not be read,
 *   as another user's, the start time alone tells);
 * - stock files opened by path: -ENODATA (no identity to check).
 * Reads /proc (a few small files; the maps for a stock file): call it once
 * per refresh, not per event. */
OCGC_API int ocgc_source_check_alive(const struct ocgc_source *src);

/** The rule a reader that follows a process keeps to: 1 when its producer
 * is known to be gone (ocgc_source_check_alive() says OCGC_E_STALE: it
 * exited or was killed, exec'd, or its pid names another process), else 0;
 * a check that cannot be made now (a /proc file that could not be read)
 * tells nothing, and the reader goes on as before it. */
OCGC_API int ocgc_source_gone(const struct ocgc_source *src);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_ATTACH_H */
