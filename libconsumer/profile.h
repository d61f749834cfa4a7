/* profile.h - what profile.c and pprof.c share (private): the names of the
 * frames that stand for what the producer's table could not keep, one
 * spelling for every form (no space, no ';': a folded line keeps them). */
#ifndef OCGC_PROFILE_PRIV_H
#define OCGC_PROFILE_PRIV_H

/* The overflow row's one frame: samples of stacks the full table had no
 * row for. */
#define PROFILE_FRAME_FULL "(ocgc-table-full)"
/* The outermost frame of a stack cut at the producer's depth. */
#define PROFILE_FRAME_CUT "(deeper-frames-not-kept)"

#include <stddef.h>
#include <stdint.h>

/* The in-use rule, said in a comment of every pprof profile (pprof.c one
 * process's, pprof_merge.c a program's): of a producer whose rows carry
 * live (ocgc/memprof.h), and of an older one. */
#define PROFILE_INUSE_LIVE                                                       \
  "inuse: as of the last completed major marking; garbage not yet collected is not counted"
#define PROFILE_INUSE_OLD                                                        \
  "inuse: allocated - freed (an older producer): garbage counts until a marking finds it dead"

/* The model of gc_cpu (ocgc/gccharge.h), said in a profile that has it. */
#define PROFILE_GC_CPU_MODEL                                                     \
  "gc_cpu: the collector's CPU over the window, charged to the stacks that cause it: "   \
  "minor collections by bytes allocated in the minor heap, the major collector by bytes " \
  "entering the major heap (an estimate: docs/profiling.md)"

struct ocgc_symbols;

/* Room for a frame's name: a symbolizer's name is at most 1023 bytes,
 * each escaped in at most 4. */
#define PROFILE_NAME_SIZE (4 * 1023 + 1)

/* The name of frame [addr] (a return address): its function's, escaped
 * (esc_bytes, with the bytes of [also] too), else "0x" and the address;
 * in buf[0..n) (n >= PROFILE_NAME_SIZE), or the symbolizer's string when
 * nothing is escaped.  The one rule for every form. */
const char *profile_frame_name(struct ocgc_symbols *syms, uint64_t addr, const char *also,
                               char *buf, size_t n);

#endif /* OCGC_PROFILE_PRIV_H */
