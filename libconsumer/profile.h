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

struct ocgc_symbols;

/* The name of frame [addr] (a return address): its function's, else "0x"
 * and the address in buf[0..n) (n >= 20).  The one rule for every form. */
const char *profile_frame_name(struct ocgc_symbols *syms, uint64_t addr, char *buf, size_t n);

#endif /* OCGC_PROFILE_PRIV_H */
