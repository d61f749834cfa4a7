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

#endif /* OCGC_PROFILE_PRIV_H */
