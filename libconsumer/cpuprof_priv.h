/* cpuprof_priv.h - what cpuprof.c shares with its writers (private):
 * cpuprof_pprof.c and cpuprof_folded.c read the rows through the public
 * API and the frequency here; the made-up frames' names, one spelling for
 * every form (no space, no ';': a folded line keeps them). */
#ifndef OCGC_CPUPROF_PRIV_H
#define OCGC_CPUPROF_PRIV_H

#include "cpuprof_label.h"
#include "ocgc/cpuprof.h"

/* The outermost frame of a stack whose unwinding stopped before the
 * outermost (lost, loop or depth). */
#define CPUPROF_FRAME_STOPPED "(unwinding-stopped)"
/* The one frame of a sample with no user registers. */
#define CPUPROF_FRAME_NO_STACK "(no-user-stack)"

/* The sampler's frequency a profile was made for. */
unsigned cpuprof_frequency(const struct ocgc_cpuprof *p);

#endif /* OCGC_CPUPROF_PRIV_H */
