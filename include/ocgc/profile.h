/* ocgc/profile.h - an allocation profile (ocgc/memprof.h) in the forms
 * profilers read: pprof's profile.proto, gzipped, for `go tool pprof`,
 * Pyroscope, Parca and speedscope; and folded stacks ("a;b;c 123", one line
 * a stack) for flame graph scripts.
 *
 * The figures of a stack (ocgc_profile_values), one rule for every form:
 * - *_space: bytes, the producer's words x 8 (an unbiased estimate);
 * - *_objects: blocks, the producer's blocks_x1024 / 1024, rounded;
 * - alloc: allocated; promoted: minor blocks that reached the major heap;
 *   inuse: allocated - freed.
 * Of a whole copy (ocgc_memprof_read) these count from when sampling began,
 * and inuse is what is live now, as Go's heap profile; of a window
 * (ocgc_memprof_delta) each is what the window added, so inuse is the
 * window's growth and may be negative, as Go's delta profiles
 * (/debug/pprof/heap?seconds=N). */
#ifndef OCGC_PUBLIC_PROFILE_H
#define OCGC_PUBLIC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/memprof.h>
#include <ocgc/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The figures of a stack, in pprof's order (Go's four first). */
enum ocgc_profile_value {
  OCGC_PV_ALLOC_OBJECTS = 0,
  OCGC_PV_ALLOC_SPACE,
  OCGC_PV_INUSE_OBJECTS,
  OCGC_PV_INUSE_SPACE,
  OCGC_PV_PROMOTED_OBJECTS,
  OCGC_PV_PROMOTED_SPACE,
  OCGC_PV_COUNT
};

/** "alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
 * "promoted_objects", "promoted_space"; NULL out of range. */
OCGC_API const char *ocgc_profile_value_name(enum ocgc_profile_value v);

/** The value named [name] (a name of ocgc_profile_value_name): 0 and *out,
 * or -EINVAL. */
OCGC_API int ocgc_profile_value_parse(const char *name, enum ocgc_profile_value *out);

/** The figures of stack [s], by enum ocgc_profile_value (each clamped to
 * int64_t). */
OCGC_API void ocgc_profile_values(const struct ocgc_memprof_stack *s,
                                  int64_t out[OCGC_PV_COUNT]);

/** Options of ocgc_pprof_write (0: the default). */
struct ocgc_pprof_opts {
  size_t sz;                    /**< OCGC_OPTS_INIT */
  int64_t time_ns;              /**< when the profile ends (CLOCK_REALTIME ns), 0: not said */
  int64_t duration_ns;          /**< the window's length, 0: a whole copy */
  int default_value_set;        /**< nonzero: default_value is pprof's default sample type */
  enum ocgc_profile_value default_value; /**< else alloc_space */
  int no_gzip;                  /**< nonzero: the protobuf as it is */
  size_t max_bytes;             /**< a larger profile fails with -EFBIG (default 64 MiB) */
  /** Nonzero: the process's own addresses in locations and mappings (its
   * load addresses, which undo its ASLR for whoever reads the profile).
   * 0 (the default): no absolute address of the process; each mapping is
   * written as loaded at its file offset (start = offset, its length kept)
   * and a location in it at the same place (address - start + offset: an
   * offset in the file, which pprof's arithmetic turns back into the ELF
   * address as before, so a symbolizer given the file still names it); a
   * location in no known mapping has address 0 (its names, if any, kept). */
  int absolute_addresses;
  /** Not NULL: p->nstacks figures, the collector's CPU charged to each
   * stack (ocgc_gc_charge, ocgc/gccharge.h), written as a seventh sample
   * type gc_cpu/nanoseconds, with a comment stating the model. */
  const uint64_t *gc_cpu_ns;
};

/** Write [p] (a copy or a window) as a pprof profile into a new buffer *out
 * of *len bytes (free() it): one sample per stack with any figure not 0,
 * its six values; its frames through [syms] (may be NULL: addresses only):
 * a location per address with its function (OCaml name, the ELF symbol
 * as system name) and line where known, an unresolved one with its
 * address and mapping (addresses relative to the mapping's file unless
 * opts->absolute_addresses); the mappings of the process's executable files
 * with their build ids; a "kind" label (ocgc_memprof_kind_name); the
 * overflow row as one frame "(ocgc-table-full)", a cut stack with an
 * outermost frame "(deeper-frames-not-kept)" (the same in folded form); period_type space/bytes and
 * period the rate in force.  Returns 0, -EINVAL, -ENOMEM, -EFBIG. */
OCGC_API int ocgc_pprof_write(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                              const struct ocgc_pprof_opts *opts, unsigned char **out,
                              size_t *len);

/** Write [p]'s stacks as folded lines, outermost frame first, frames
 * separated by ';', then a space and the stack's figure [v] (only stacks
 * whose figure is above 0), into a new NUL-terminated buffer *out of *len
 * bytes (free() it).  A frame is its function's name, else "0x" and its
 * address; a byte of a name that is not printable ASCII, or is ';' or a
 * space, is written '?'.  Returns 0, -EINVAL, -ENOMEM, -EFBIG (more than
 * 64 MiB). */
OCGC_API int ocgc_profile_folded(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                                 enum ocgc_profile_value v, char **out, size_t *len);

/** A function of a profile (by name: the frames it has at different
 * addresses together). */
struct ocgc_profile_function {
  const char *name;                 /**< as in folded form ("0x..." unnamed), the target's
                                         bytes: escape them */
  int64_t flat[OCGC_PV_COUNT];      /**< of the stacks whose innermost frame it is */
  int64_t cum[OCGC_PV_COUNT];       /**< of the stacks it is in (each stack once) */
};

/** The functions of a profile, by flat figure [by] (then by name). */
struct ocgc_profile_functions {
  size_t n;
  struct ocgc_profile_function *fn;
};

/** [p]'s functions into a new *out (free with
 * ocgc_profile_functions_free; its names are its own, valid after [syms]
 * is closed).  The overflow row and cut stacks count under their made-up
 * frames' names.  Returns 0, -EINVAL, -ENOMEM. */
OCGC_API int ocgc_profile_functions(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                                    enum ocgc_profile_value by,
                                    struct ocgc_profile_functions **out);
OCGC_API void ocgc_profile_functions_free(struct ocgc_profile_functions *f);

/** A node of a call tree: a function called by its parent's (node 0, the
 * root, is every stack together and has no name: ""). */
struct ocgc_profile_node {
  const char *name;
  uint32_t parent;                  /**< node 0's is 0 */
  uint32_t depth;                   /**< 0 for the root, 1 for outermost frames */
  uint32_t first_child, next_sibling; /**< 0: none; children sorted by name */
  int64_t value[OCGC_PV_COUNT];     /**< of the stacks through it */
};

/** The call tree of a profile: the stacks merged from the outermost frame
 * in, a frame of the same function under the same parent one node (as
 * flame graphs draw them), in depth-first order (a node's subtree follows
 * it). */
struct ocgc_profile_tree {
  size_t n;
  struct ocgc_profile_node *node;
};

/** [p]'s call tree into a new *out (free with ocgc_profile_tree_free; its
 * names are its own), of the stacks whose figure [v] is above 0, with
 * every figure summed.  At most 1 + stacks x (depth + 1) nodes.  Returns 0,
 * -EINVAL, -ENOMEM. */
OCGC_API int ocgc_profile_tree(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                               enum ocgc_profile_value v, struct ocgc_profile_tree **out);
OCGC_API void ocgc_profile_tree_free(struct ocgc_profile_tree *t);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_PROFILE_H */
