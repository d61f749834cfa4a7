/* ocgc/source.h - sources: a ring file opened, and what it says of itself
 * (its producer, ids, exact totals, GC settings, user-event names). */
#ifndef OCGC_PUBLIC_SOURCE_H
#define OCGC_PUBLIC_SOURCE_H

#include <ocgc/api.h>
#include <ocgc/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sources: an opened ring file ------------------------------------------ */

struct ocgc_source;

/** Which numbering of runtime ids the file uses: each OCaml 5 release so
 * far renumbered or added ids while keeping format version 1 (5.3 inserted
 * phases and counters, 5.4 appended phases), and the file does not say. */
enum ocgc_ids {
  OCGC_IDS_AUTO = 0, /**< ocgc files: what their extension block says (OCGC_IDS); stock
                          files opened by pid: by the OCaml version of the process's
                          executable (5.2.x: 5.2, 5.3.x: 5.3, 5.4.x: 5.4; a newer
                          one is refused, OCGC_E_IDS_UNKNOWN); else 5.2 */
  OCGC_IDS_52 = 1,
  OCGC_IDS_53 = 2,
  OCGC_IDS_54 = 3,
  /* the newest: a new release's table is appended here */
};

struct ocgc_open_opts {
  size_t sz;          /**< sizeof(struct ocgc_open_opts) */
  enum ocgc_ids ids;  /**< id numbering, OCGC_IDS_AUTO by default */
};

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
  size_t sz; /**< set by the caller: sizeof(struct ocgc_source_info) (OCGC_OPTS_INIT) */
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
  enum ocgc_ids ids;            /**< OCGC_IDS_52, _53 or _54 */
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
  size_t sz; /**< set by the caller: sizeof(struct ocgc_totals) (OCGC_OPTS_INIT) */
  uint64_t minor_collections, major_collections, compactions, forced_major_collections;
  uint64_t major_slices, minor_words, promoted_words, major_words, direct_major_words;
  uint64_t heap_words, top_heap_words, heap_chunks;
  uint64_t gc_time_ns, kind_time_ns[OCGC_KIND_COUNT], updated_ns;
  uint64_t by_cause[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS];
  /** Words of the major heap not on its free list when the last major
   * cycle ended (Gc.stat's heap_words - free_words then: live words and
   * fragments), the heap after GC; 0 until a cycle ends, and in files
   * older than ext_version 4. */
  uint64_t live_words;
  /** Whether the program's own Gc.Memprof runs (enum ocgc_memprof_state). */
  int program_memprof;
};
/** What a producer says of the program's own statistical memory profiler
 * (Gc.Memprof), which ocgc's own sampling stands aside for. */
enum ocgc_memprof_state {
  OCGC_MEMPROF_UNKNOWN = 0, /**< the file does not say (ext_version < 4) */
  OCGC_MEMPROF_OFF = 1,     /**< not running */
  OCGC_MEMPROF_RUNNING = 2, /**< Gc.Memprof.start was called and not stopped */
};
/** Fill *out with [src]'s totals as described above: 0, -EINVAL (a NULL
 * argument), -ENODATA, -EAGAIN, or OCGC_E_TRUNCATED. */
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
/** Fill *out (as far as out->sz says) with [src]'s GC settings: 0,
 * -EINVAL (a NULL argument or an sz below sz itself), -ENODATA, or
 * OCGC_E_TRUNCATED. */
OCGC_API int ocgc_source_gc_config(const struct ocgc_source *src, struct ocgc_gc_config *out);

/** Events written so far into ring [ring] (ocgc files; -ENODATA for stock). */
OCGC_API int ocgc_source_written(const struct ocgc_source *src, unsigned ring, uint64_t *out);

/** The name of user event slot [id], or NULL if the slot is empty or not a
 * valid string.  Valid while the source is open. */
OCGC_API const char *ocgc_source_user_name(const struct ocgc_source *src, unsigned id);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_SOURCE_H */
