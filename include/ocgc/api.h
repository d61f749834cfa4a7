/* ocgc/api.h - the conventions of libocgc and what every header shares:
 * OCGC_API, OCGC_OPTS_INIT, the error codes and ocgc_strerror(),
 * and the promise that no signal is taken.
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
 *   know is told, not ignored), as libbpf's OPTS_VALID.  Every struct the
 *   caller hands in to be filled (ocgc_source_info, ocgc_cursor_stats,
 *   ocgc_counters, ocgc_interval_figures, ...) starts with sz too, set by
 *   the caller (OCGC_OPTS_INIT), and is filled as far as it says; an sz
 *   below sz itself is -EINVAL (or, for a getter that returns nothing,
 *   leaves the struct as it was).  The structs the library hands to
 *   callbacks (events, spans, collections, pauses, list entries) are its
 *   own memory, read only, valid during the call;
 * - "none" is a named value (OCGC_KIND_NONE, OCGC_CAUSE_NONE), never a
 *   bare -1;
 * - handles are opaque; one handle must not be used by two threads at once,
 *   but any number of handles, in any number of threads or processes, may
 *   read the same ring.
 * - the file belongs to another process and is treated as hostile: every
 *   offset, length and id read from it is checked before use. */
#ifndef OCGC_PUBLIC_API_H
#define OCGC_PUBLIC_API_H

#include <stddef.h>
#include <stdint.h>


#ifdef __cplusplus
extern "C" {
#endif

#ifndef OCGC_API
#define OCGC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus /* zeroed, then sz: C++ before 20 has no designated initializers */
#define OCGC_OPTS_INIT(type) \
  ([]() -> type { type ocgc_o_{}; ocgc_o_.sz = sizeof(type); return ocgc_o_; }())
#else
#define OCGC_OPTS_INIT(type) {.sz = sizeof(type)}
#endif

/* ---- errors ---------------------------------------------------------------- */

enum ocgc_error {
  OCGC_E_CORRUPT = -4001,   /**< not a valid ring file (bad header or event) */
  OCGC_E_VERSION = -4002,   /**< a ring file of a version this library does not read */
  OCGC_E_NORING = -4003,    /**< the process has no ring */
  OCGC_E_STALE = -4004,     /**< the ring's process is gone or has exited */
  OCGC_E_TRUNCATED = -4005, /**< the file shrank after it was opened */
  OCGC_E_PERF_DENIED = -4006, /**< perf_event_open(2) refused for want of
                                   permission (ocgc/cpu.h) */
  OCGC_E_IDS_UNKNOWN = -4007, /**< a stock ring of an OCaml 5 release newer than
                                   the newest numbering known (ocgc/source.h):
                                   the caller must name one (ocgc_open_opts.ids) */
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

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_API_H */
