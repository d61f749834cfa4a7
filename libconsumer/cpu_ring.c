/* cpu_ring.c - records read out of one perf_event ring buffer, and a
 * sample's fields out of its record (cpu_ring.h).  No state, no system
 * call: the sampler (cpu_sampler.c) owns the rings and their head and tail.
 *
 * Invariants: no byte is read outside [data, data + size) of the ring nor
 * past the record's checked length; a record is taken only whole (its
 * size a multiple of 8, at least its header, at most the ring and the
 * bytes published between tail and head), so a corrupt size can neither
 * make us read out of bounds nor loop: each record moves the tail by at
 * least 8 bytes, and the reading stops at the head it started from. */

#include <string.h>

#include "cpu_ring.h"

static uint64_t u64_at(const unsigned char *p)
{
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

int cpu_ring_next(const struct cpu_ring *r, uint64_t *tail, unsigned char *buf)
{
  uint64_t avail = r->head - *tail, off, first;
  unsigned char hdr[8];
  uint16_t size;
  if (r->size == 0 || (r->size & (r->size - 1)) != 0) return -1;
  if (avail == 0) return 0;
  if (avail > r->size || avail < 8) return -1;
  off = *tail & (r->size - 1);
  first = r->size - off;
  /* the header may itself wrap (off is 8-aligned in a sane ring, but the
   * tail is ours and the head the kernel's: check, do not assume) */
  if (first >= 8) {
    memcpy(hdr, r->data + off, 8);
  } else {
    memcpy(hdr, r->data + off, (size_t)first);
    memcpy(hdr + first, r->data, (size_t)(8 - first));
  }
  memcpy(&size, hdr + 6, sizeof size);
  if (size < 8 || (size & 7) != 0 || size > avail || size > r->size) return -1;
  if (first >= size) {
    memcpy(buf, r->data + off, size);
  } else {
    memcpy(buf, r->data + off, (size_t)first);
    memcpy(buf + first, r->data, (size_t)(size - first));
  }
  *tail += size;
  return size;
}

/* perf's order of the sampled registers (cpu_ring.h) to DWARF's. */
static const unsigned char dwarf_of[CPU_NREGS_SAMPLED] = {0, 3, 2, 1, 4, 5, 6, 7, 16,
                                                          8, 9, 10, 11, 12, 13, 14, 15};

int cpu_ring_sample(const unsigned char *rec, size_t len, struct ocgc_cpu_sample *out)
{
  size_t at = 8;
  uint64_t abi, ssize, dyn;
  uint32_t pid, tid;
  unsigned i;
  memset(out, 0, sizeof *out);
  if (len < 8 + 8 + 8 + 8 + 8) return -1; /* header, ip, pid/tid, time, abi */
  out->ip = u64_at(rec + at);
  at += 8;
  memcpy(&pid, rec + at, 4);
  memcpy(&tid, rec + at + 4, 4);
  out->pid = (int)pid;
  out->tid = (int)tid;
  at += 8;
  out->time_ns = u64_at(rec + at);
  at += 8;
  abi = u64_at(rec + at);
  at += 8;
  if (abi != 0) {
    if (len - at < CPU_NREGS_SAMPLED * 8) return -1;
    for (i = 0; i < CPU_NREGS_SAMPLED; i++) out->regs[dwarf_of[i]] = u64_at(rec + at + 8 * i);
    at += CPU_NREGS_SAMPLED * 8;
    out->regs_known = 1;
  }
  if (len - at < 8) return -1;
  ssize = u64_at(rec + at);
  at += 8;
  if (ssize == 0) return 0;
  if (ssize > len - at || len - at - ssize < 8) return -1;
  dyn = u64_at(rec + at + ssize);
  if (dyn > ssize) return -1;
  if (out->regs_known) {
    out->stack = rec + at;
    out->stack_size = (size_t)dyn;
  }
  return 0;
}

uint64_t cpu_ring_lost(const unsigned char *rec, size_t len)
{
  return len >= 24 ? u64_at(rec + 16) : 0;
}
