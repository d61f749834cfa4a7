/* cpuprof_label.h - what a CPU sample's stack and the ring's collections
 * say about the collector (private; cpuprof_label.c): a frame's role by
 * its function's name, a stack's phase from its frames' roles, and the
 * collection of the ring that holds a time.  Pure functions of their
 * arguments, so that tests/unit/test_cpuprof.c feeds them crafted stacks
 * and spans. */
#ifndef OCGC_CPUPROF_LABEL_H
#define OCGC_CPUPROF_LABEL_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/cpuprof.h"

/* A frame's role, packed in a byte: the phase it proves the thread is in
 * (ROLE_PHASE, an enum ocgc_gc_phase), a phase it refines a major one into
 * (ROLE_REFINE: marking, sweeping, cleaning, only inside a major frame),
 * or the Gc function it is (ROLE_CALL, an enum ocgc_gc_call). */
#define ROLE_NONE 0u
#define ROLE_PHASE(p) (0x10u | (unsigned)(p))
#define ROLE_REFINE(p) (0x20u | (unsigned)(p))
#define ROLE_CALL(c) (0x40u | (unsigned)(c))
#define ROLE_KIND(r) ((r) & 0xf0u)
#define ROLE_ARG(r) ((r) & 0x0fu)

/* The role of the function named [name] (an ELF symbol; a compiler's
 * suffix ".part.0", ".constprop.0", ".isra.0" ignored). */
unsigned cpuprof_frame_role(const char *name);

/* The phase of a stack whose frames' roles are [roles] (innermost first),
 * and in *call the Gc function it runs in: the innermost ROLE_PHASE frame
 * says the phase (a major one refined by a ROLE_REFINE frame inside it);
 * a stack with no such frame but a Gc function's is OCGC_GC_COLLECTOR; one
 * with neither OCGC_GC_MUTATOR (and *call OCGC_GC_CALL_NONE). */
enum ocgc_gc_phase cpuprof_stack_phase(const unsigned char *roles, unsigned n,
                                       enum ocgc_gc_call *call);

/* A collection of the ring. */
struct cpuprof_coll {
  uint64_t begin, end;
  int kind, cause;
};

/* How far outside a span a sample may fall and still be in it (ns): the
 * producer's timestamps are TSC readings scaled to CLOCK_MONOTONIC, the
 * kernel's are the clock itself. */
#define CPUPROF_SPAN_SLACK_NS UINT64_C(100000)

/* The innermost of [n] collections [c] that holds [t] (the latest begun),
 * or NULL. */
const struct cpuprof_coll *cpuprof_coll_at(const struct cpuprof_coll *c, size_t n, uint64_t t);

/* The labels of a sample of stack phase [stack_phase] at [t]: *phase (a
 * stack in the collector's dispatch only takes the phase of the ring's
 * collection) and *cause (OCGC_CAUSE_NONE for the mutator, the
 * collection's cause, or OCGC_CAUSE_UNKNOWN when no collection holds t;
 * then the return is 0, else 1 for the mutator and a matched one). */
int cpuprof_label(enum ocgc_gc_phase stack_phase, const struct cpuprof_coll *c, size_t n,
                  uint64_t t, enum ocgc_gc_phase *phase, int *cause);

#endif /* OCGC_CPUPROF_LABEL_H */
