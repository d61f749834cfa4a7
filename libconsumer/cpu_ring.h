/* cpu_ring.h - the records of one perf_event ring buffer, read with every
 * size checked (private; cpu_ring.c).  The kernel writes the ring, but
 * what it holds is read as if hostile: a record that does not fit the
 * ring, or the bytes the ring says are there, ends the reading. */
#ifndef OCGC_CPU_RING_H
#define OCGC_CPU_RING_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/cpu.h"

/* The perf record types read (linux/perf_event.h). */
#define CPU_REC_LOST 2u
#define CPU_REC_COMM 3u
#define CPU_REC_EXIT 4u
#define CPU_REC_SAMPLE 9u
#define CPU_MISC_COMM_EXEC (1u << 13)

/* The largest record: its size is 16 bits. */
#define CPU_REC_MAX 65536u

/* The registers sampled, as perf numbers them on x86-64 (PERF_REG_X86_*:
 * AX BX CX DX SI DI BP SP IP, then R8..R15 at 16..23): the mask of
 * sample_regs_user, and their order in a sample. */
#define CPU_REGS_MASK UINT64_C(0xff01ff)
#define CPU_NREGS_SAMPLED 17u

/* A ring's data part as the reader sees it: [data, data + size), size a
 * power of 2, and the head the kernel published. */
struct cpu_ring {
  const unsigned char *data;
  uint64_t size;
  uint64_t head;
};

/* The next record at *tail, copied (the ring wraps) to buf, which holds
 * CPU_REC_MAX bytes.  Returns its size (>= 8) and moves *tail past it; 0
 * when the ring holds no more; -1 when what is there fails the checks (a
 * size under 8 or not a multiple of 8, more than the ring or than the
 * bytes between tail and head, or a head more than the ring's size ahead
 * of tail): *tail is then left as it was. */
int cpu_ring_next(const struct cpu_ring *r, uint64_t *tail, unsigned char *buf);

/* A PERF_RECORD_SAMPLE of sample_type TID|TIME|IP|REGS_USER|STACK_USER
 * with CPU_REGS_MASK: rec[0, len) the whole record, header included.
 * Fills *out (out->stack points into rec).  Returns 0, or -1 when a field
 * does not fit in the record or the stack's sizes disagree. */
int cpu_ring_sample(const unsigned char *rec, size_t len, struct ocgc_cpu_sample *out);

/* The lost count of a PERF_RECORD_LOST, or 0 if it does not fit. */
uint64_t cpu_ring_lost(const unsigned char *rec, size_t len);

#endif /* OCGC_CPU_RING_H */
