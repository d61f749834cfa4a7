/* ocgc/rings.h - every ring of this host and of the ring folders, each
 * judged once by one rule: running, exited, stale, stock, mapped, foreign,
 * corrupt or denied, and whether its owner may remove it.  What `ocgc ls`
 * prints and `ocgc ls --prune` acts on; an agent that cleans up after
 * dead producers asks the same. */
#ifndef OCGC_PUBLIC_RINGS_H
#define OCGC_PUBLIC_RINGS_H

#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a ring stands.  The pid a ring's header (or a link's name P.events)
 * gives is the pid in its producer's own pid namespace: seen from here it
 * may be dead, or another process, while the producer, in a container,
 * still writes.  So before calling a file gone, the scan asks what every
 * process of the host maps (one pass over /proc/PID/maps). */
enum ocgc_ring_state {
  OCGC_RING_RUNNING = 0, /**< a live process maps it as its producer, or an ocgc
                              file whose producer is the live process it names */
  OCGC_RING_EXITED,      /**< its producer exited normally; the file was kept */
  OCGC_RING_STALE,       /**< its producer was killed, or its pid now names
                              another process; or a link that leads nowhere */
  OCGC_RING_STOCK,       /**< an OCaml 5 file no live process maps as its
                              producer: it carries no identity, so whether its
                              process lives cannot be told */
  OCGC_RING_MAPPED,      /**< would be exited, stale or stock, but a process of
                              the host maps the file (or what the link leads
                              to): a reader, or a producer of another pid
                              namespace */
  OCGC_RING_FOREIGN,     /**< a link P.events that leads nowhere from here while
                              a process maps the memory ring ocgc:P.events: most
                              likely a producer whose pid P is another
                              namespace's */
  OCGC_RING_CORRUPT,     /**< not a ring this library reads */
  OCGC_RING_DENIED,      /**< the file may not be read */
  OCGC_RING_UNKNOWN,     /**< whether its producer lives could not be told */
};

/** The state's name ("running", "exited", ...), or "?" past the last. */
OCGC_API const char *ocgc_ring_state_name(enum ocgc_ring_state st);

/** Why a file that looked gone is kept. */
enum ocgc_ring_kept {
  OCGC_KEPT_NO = 0,
  OCGC_KEPT_FILE,        /**< a process maps the file, or what the link leads to */
  OCGC_KEPT_MEMFD,       /**< a process maps the memory ring ocgc:P.events */
};

/** One ring, as a scan found and judged it; valid until ocgc_rings_free().
 * Strings are the target's bytes (program, ocaml, ocgc, path): escape them
 * before printing them. */
struct ocgc_ring {
  int pid;               /**< its process's pid as this host numbers it when a
                              live process maps it; else the pid its header or
                              name gives; 0 unknown */
  const char *path;      /**< a folder's name for it when one was found, else a
                              /proc path */
  uint64_t dev, ino;     /**< the file's (a link's own, for a link) */
  int64_t uid;           /**< the owner of the file (or link); -1 unknown */
  enum ocgc_ring_state state;
  int mapped;            /**< a live process maps it as its producer */
  int in_dir;            /**< found in one of the folders read */
  int link;              /**< a link in a folder (ocgc's memory rings are
                              published so), not a ring file */
  int dangling;          /**< a link that leads nowhere */
  int target_known;      /**< a link that leads somewhere: what it leads to */
  uint64_t target_dev, target_ino;
  enum ocgc_ring_kept kept;   /**< why the host scan keeps it */
  int mapped_by;         /**< kept: a pid (this host's) that maps it; else 0 */
  enum ocgc_ring_state was;   /**< kept: the state before the host scan */
  int has_info;          /**< the header was read: ring_bytes */
  int has_ext;           /**< an ocgc file: program, versions, written */
  int native;            /**< has_ext: native code (else bytecode) */
  char program[64], ocaml[16], ocgc[16]; /**< "-" when unknown */
  uint64_t ring_bytes;
  int have_written;
  uint64_t written;      /**< events written so far, every ring */
  /** 1: its producer looks gone (exited or stale, before the host scan
   * too) and it is an ocgc file or a link that leads nowhere (never a
   * stock file: no identity) that no live process maps as its producer:
   * what a prune considers; kept and uid say why it may still stay. */
  int looks_gone;
  /** The prune rule: 1 if the caller may remove it: its producer is gone
   * (exited or stale), it is an ocgc file or a link that leads nowhere
   * (never a stock file: no identity), no process maps it (as producer or
   * through the host scan), it belongs to the caller (getuid()), and the
   * host scan read every maps it could, whole. */
  int removable;
};

/** What to scan. */
struct ocgc_rings_opts {
  size_t sz;                 /**< sizeof(struct ocgc_rings_opts) */
  const char *const *dirs;   /**< folders to read besides the defaults */
  unsigned ndirs;
  /** 1: only what the folders of dirs hold (their files, and the live
   * processes whose ring is one of them): what a caller that names its own
   * folder wants, whatever other programs come and go on the host. */
  int no_default_dirs;
  /** Called for each folder of dirs that cannot be read, with its -errno
   * (a default folder that does not exist is not an error).  May be NULL. */
  void (*dir_error)(const char *dir, int err, void *ctx);
  void *ctx;
};

/** A scan's result: the rings, and what the scan could not read. */
struct ocgc_rings;

/** Scan: the processes that map a ring (ocgc_list()), the ring files and
 * links of the caller's default folders (ocgc_default_dir()) and of
 * opts->dirs, each file opened through a descriptor of its own
 * (O_NOFOLLOW) so that what is judged is what is named, links stat'ed,
 * never opened; then what every process of the host maps, read last.  A
 * ring two processes map is listed once.  Returns 0 and *out (freed with
 * ocgc_rings_free()), -EINVAL, or -ENOMEM. */
OCGC_API int ocgc_rings_scan(const struct ocgc_rings_opts *opts, struct ocgc_rings **out);
OCGC_API void ocgc_rings_free(struct ocgc_rings *r);
/** The rings found, sorted by pid then path. */
OCGC_API size_t ocgc_rings_count(const struct ocgc_rings *r);
OCGC_API const struct ocgc_ring *ocgc_rings_get(const struct ocgc_rings *r, size_t i);
/** Why /proc could not be listed (-errno), or 0. */
OCGC_API int ocgc_rings_proc_error(const struct ocgc_rings *r);
/** Whether the host scan read every process's maps it may read whole
 * (1), and if it could not be made at all, why (-errno in *err, which
 * may be NULL).  Unless it is 1, any file may be in use: removable is 0
 * everywhere. */
OCGC_API int ocgc_rings_host_complete(const struct ocgc_rings *r, int *err);

/** What a scan could not look into: where rings of other users may be
 * that it cannot show.  How many rings are there cannot be told (their
 * processes' memory maps and descriptors, and their ring folders, are
 * closed to the caller): these are the counts that can.  All 0 for a
 * caller that sees every user (root). */
struct ocgc_rings_unseen {
  size_t sz;          /**< set by the caller: sizeof(struct ocgc_rings_unseen) (OCGC_OPTS_INIT) */
  uint64_t processes; /**< processes whose memory map the caller may not read
                           (other users', unless root; a process of its own
                           that is not dumpable): whether they write a ring
                           cannot be told */
  uint64_t folders;   /**< other users' ring folders of the default rule in
                           the shared bases (/dev/shm/ocgc-UID,
                           /tmp/ocgc-UID) that the caller may not open (not
                           looked for with no_default_dirs) */
};

/** What [r]'s scan could not look into, written to *out (as much as its sz
 * asks).  0, or -EINVAL (r or out NULL, out->sz too small). */
OCGC_API int ocgc_rings_unseen(const struct ocgc_rings *r, struct ocgc_rings_unseen *out);

/** Whether the entry now at [path] (where it was moved to remove it) is
 * still [ring]'s very entry and still gone: the same inode, and a link
 * that still leads nowhere or a file whose producer is still dead.  1 yes,
 * 0 no (remove nothing). */
OCGC_API int ocgc_ring_still_gone(const struct ocgc_ring *ring, const char *path);

/** Remove the entry of [ring], one ocgc_rings_scan() called removable, as
 * docs/design.md says ("Which ring entries are gone", rule 5): rename it
 * to a private name beside it, judge it gone again there
 * (ocgc_ring_still_gone(): a new producer with the same pid may have
 * taken the name meanwhile), and only then unlink it, with, for a memory
 * ring's alias, its identity link when that is of the caller's pid
 * namespace and leads nowhere; else rename it back, replacing nothing.
 * Returns 0 (removed), 1 (kept: no longer gone), 2 (kept, but a new entry
 * took the name meanwhile: it stays under the private name, written into
 * aside, n bytes, when aside is not NULL), or -errno. */
OCGC_API int ocgc_ring_remove(const struct ocgc_ring *ring, char *aside, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_RINGS_H */
