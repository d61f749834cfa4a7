/* ocgc/pprof_merge.h - the allocation profiles of several processes (the
 * processes of one program: living, and gone) merged into one pprof
 * profile, for a continuous profiler whose target must outlive a pid.
 *
 * Each process has its own addresses (its load address, randomised), so
 * stacks cannot be merged by address.  They are merged where addresses
 * agree across processes of one build: a frame is placed in the file it
 * was mapped from, at its place in that file (the file offset pprof's
 * arithmetic gives, as ocgc_pprof_write writes it by default), and the
 * file is known by its GNU build id (its path and offset where it has
 * none).  The merged profile has one pprof mapping per executable file
 * (per build id and segment), one location per place in such a file, its
 * function and line as named by any process of that build; a sample per
 * distinct stack and kind, its six values (ocgc_profile_values) summed
 * over the processes.  Two builds of one program (a deploy under way) are
 * two mappings whose functions pprof still merges by name.  A frame of a
 * process that could not be placed (no mapping known) is a location of
 * its own with no address.
 *
 * A process's names are kept apart from its symbolizer (struct
 * ocgc_frame_names: what its addresses are, copied and escaped), so that
 * a process's profile can still be merged once the process is gone and
 * its /proc entries with it.
 *
 * CPU profiles (ocgc/cpuprof.h) merge by the same rule: a sample per
 * distinct stack of placed frames and labels (gc_phase, gc_cause,
 * gc_call), its samples and nanoseconds summed; a merge holds one kind of
 * profile, allocation or CPU. */
#ifndef OCGC_PUBLIC_PPROF_MERGE_H
#define OCGC_PUBLIC_PPROF_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/cpuprof.h>
#include <ocgc/memprof.h>
#include <ocgc/profile.h>
#include <ocgc/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What one process's frame addresses are: its mapping (escaped path and
 * build id, file offset), function, symbol, source file and line
 * (escaped as ocgc_pprof_write escapes them).  At most
 * OCGC_FRAME_NAMES_MAX addresses and OCGC_FRAME_NAMES_BYTES of strings;
 * past either, an address is left unplaced. */
#define OCGC_FRAME_NAMES_MAX 65536u
#define OCGC_FRAME_NAMES_BYTES (UINT64_C(8) << 20)
struct ocgc_frame_names;

/** A new, empty table into *out.  Returns 0 or -ENOMEM. */
OCGC_API int ocgc_frame_names_new(struct ocgc_frame_names **out);

/** How many frame addresses of [p] [fn] does not hold yet (what a call of
 * ocgc_frame_names_add would look up). */
OCGC_API size_t ocgc_frame_names_missing(const struct ocgc_frame_names *fn,
                                         const struct ocgc_memprof *p);

/** Look up, through [syms] (the process's), every frame address of [p]
 * that [fn] does not hold yet, and keep what it is.  Returns 0, -EINVAL,
 * -ENOMEM (what was added stays). */
OCGC_API int ocgc_frame_names_add(struct ocgc_frame_names *fn, const struct ocgc_memprof *p,
                                  struct ocgc_symbols *syms);

/** As ocgc_frame_names_add, for the frames of a CPU profile's rows (the
 * first of each the sampled instruction, the others return addresses). */
OCGC_API int ocgc_frame_names_add_cpu(struct ocgc_frame_names *fn, const struct ocgc_cpuprof *p,
                                      struct ocgc_symbols *syms);

/** The bytes [fn] holds (its entries and strings).  NULL: 0. */
OCGC_API uint64_t ocgc_frame_names_memory(const struct ocgc_frame_names *fn);

/** Free [fn].  NULL is accepted. */
OCGC_API void ocgc_frame_names_free(struct ocgc_frame_names *fn);

/** A merged profile being made. */
struct ocgc_pprof_merge;

/** A new, empty merge into *out.  Returns 0 or -ENOMEM. */
OCGC_API int ocgc_pprof_merge_new(struct ocgc_pprof_merge **out);

/** Add [p] (a copy or a window of one process) with the names of its
 * frames [names] (may be NULL: nothing placed).  The merge copies what it
 * keeps: [p] and [names] may be freed after.  At most
 * OCGC_PPROF_MERGE_SAMPLES distinct stacks in all: past it -EFBIG.
 * Returns 0, -EINVAL, -ENOMEM, -EFBIG. */
#define OCGC_PPROF_MERGE_SAMPLES 200000u
OCGC_API int ocgc_pprof_merge_add(struct ocgc_pprof_merge *m, const struct ocgc_memprof *p,
                                  const struct ocgc_frame_names *names);

/** Add the CPU profile [p] of one process (finished: ocgc_cpuprof_finish)
 * with its frames' names, as ocgc_pprof_merge_add: a sample per stack and
 * labels, its values samples/count and cpu/nanoseconds (samples x the
 * process's period); the merge's period is the largest added.  A merge
 * that holds allocation profiles: -EINVAL (and the reverse).  Returns 0,
 * -EINVAL, -ENOMEM, -EFBIG. */
OCGC_API int ocgc_pprof_merge_add_cpu(struct ocgc_pprof_merge *m, const struct ocgc_cpuprof *p,
                                      const struct ocgc_frame_names *names);

/** Write the merge as a pprof profile, as ocgc_pprof_write (opts: the
 * same; absolute_addresses is not honoured: a merged profile holds no
 * address of any process), period the largest rate of the profiles added,
 * and [comment] (may be NULL; written as it is: the caller escapes what
 * a target chose in it) as a comment after the library's own.  A merge
 * of CPU profiles is written as ocgc_cpuprof_pprof writes one (its
 * sample types, period, labels and made-up frames; opts' default_value
 * is not used).
 * Returns 0, -EINVAL, -ENOMEM, -EFBIG. */
OCGC_API int ocgc_pprof_merge_write(const struct ocgc_pprof_merge *m,
                                    const struct ocgc_pprof_opts *opts, const char *comment,
                                    unsigned char **out, size_t *len);

/** Free [m].  NULL is accepted. */
OCGC_API void ocgc_pprof_merge_free(struct ocgc_pprof_merge *m);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_PPROF_MERGE_H */
