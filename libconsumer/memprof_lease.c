/* memprof_lease.c - the reader's side of the rate leases: a slot of the
 * producer's allocation-profile header (include/ocgc/wire.h,
 * OCGC_MP_LEASE_*) claimed, renewed and released, and what a copy says of
 * the leases (memprof_take_leases).  The rule the producer applies is its
 * own (runtime_patch/src/ocgc_mp_lease.c).
 *
 * Invariants:
 * - A slot is written only with an 8-byte compare-and-swap from the word
 *   this lease last wrote (or 0, to claim it): two readers never both
 *   hold a slot, and a slot the producer freed as dead is never written
 *   back over another's claim.
 * - The slots are written through a shared mapping of the file reopened
 *   from our own descriptor (/proc/self/fd), proved to be the file opened,
 *   never through a path the target names; only a file sealed against
 *   shrinking (ocgc's memfd rings) is mapped, so no access faults.
 * - A copy's lease figures are the producer's (under the table's seqlock);
 *   the holders' pids are readers' words, for display only, and bounded
 *   to the pid field's width. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "memprof_lease.h"
#include "source.h"

struct ocgc_memprof_lease {
  void *map;        /* the page(s) of the slots, shared and writable */
  size_t map_len;
  uint64_t *slots;  /* OCGC_MP_LEASE_SLOTS words in map */
  unsigned slot;    /* ours */
  uint64_t word;    /* what we last wrote there */
  uint64_t rate;
  unsigned beat;
};

#define BEAT_MASK ((1u << (64 - OCGC_MP_LEASE_BEAT_SHIFT)) - 1u)

static uint64_t lease_word(const struct ocgc_memprof_lease *l)
{
  return OCGC_MP_LEASE_WORD(l->rate, (uint64_t)getpid(), l->beat & BEAT_MASK);
}

/* A free slot claimed: 0, or -EBUSY (holders[] filled when not NULL). */
static int claim(struct ocgc_memprof_lease *l, int *holders)
{
  unsigned i;
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++) {
    uint64_t expect = 0, w = lease_word(l);
    /* seq_cst: pairs with the producer's acquire load of the slot and
     * with its compare-and-swap freeing a dead one */
    if (__atomic_compare_exchange_n(&l->slots[i], &expect, w, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED)) {
      l->slot = i;
      l->word = w;
      return 0;
    }
    if (holders != NULL) holders[i] = (int)OCGC_MP_LEASE_PID(expect);
  }
  return -EBUSY;
}

int ocgc_memprof_lease_take(const struct ocgc_source *src, uint64_t rate_bytes,
                            struct ocgc_memprof_lease **out, int holders[OCGC_MP_LEASE_SLOTS])
{
  struct ocgc_memprof_lease *l;
  struct timespec ts;
  struct stat st;
  char self[64];
  uint64_t magic, lease_ns, off, page, base;
  int fd, err;

  if (src == NULL || out == NULL) return -EINVAL;
  *out = NULL;
  if (holders != NULL) memset(holders, 0, OCGC_MP_LEASE_SLOTS * sizeof *holders);
  if (rate_bytes < OCGC_MP_RATE_MIN || rate_bytes > OCGC_MP_RATE_MAX) return -ERANGE;
  if ((err = ocgc_source_check_size(src)) != 0) return err;
  if (!src->l.has_ext || src->l.mp_offset == 0) return -ENODATA;
  off = src->l.mp_offset + offsetof(struct ocgc_wire_mp, reserved);
  if (off + 8 * OCGC_MP_LEASE_SLOTS > src->l.ext_end || off + 8 * OCGC_MP_LEASE_SLOTS > src->size)
    return OCGC_E_CORRUPT;
  if ((err = src_word_acquire(src, src->l.mp_offset, &magic)) != 0) return err;
  if (magic != OCGC_MP_MAGIC) return -ENODATA;
  if ((err = src_word_acquire(src, off + 8 * OCGC_MP_LEASE_NS, &lease_ns)) != 0) return err;
  if (lease_ns == 0 || !src->sealed) return -ENOTSUP;
  /* The file we hold, opened again for writing: the kernel checks that we
   * may (the file's owner or root), and no name is resolved. */
  snprintf(self, sizeof self, "/proc/self/fd/%d", src->fd);
  fd = open(self, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return -errno;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != src->dev ||
      (uint64_t)st.st_ino != src->ino || (uint64_t)st.st_size < off + 8 * OCGC_MP_LEASE_SLOTS) {
    close(fd);
    return OCGC_E_STALE;
  }
  if ((l = calloc(1, sizeof *l)) == NULL) {
    close(fd);
    return -ENOMEM;
  }
  page = (uint64_t)sysconf(_SC_PAGESIZE);
  base = off & ~(page - 1);
  l->map_len = (size_t)(off + 8 * OCGC_MP_LEASE_SLOTS - base);
  l->map = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)base);
  err = l->map == MAP_FAILED ? -errno : 0;
  close(fd); /* the mapping holds the file */
  if (err != 0) {
    free(l);
    return err;
  }
  l->slots = (uint64_t *)((char *)l->map + (off - base));
  l->rate = rate_bytes;
  /* a beat of our own start: not the word a previous holder of our pid
   * and rate left, which the producer would count as unchanged */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  l->beat = (unsigned)(ts.tv_nsec / 1000000);
  if ((err = claim(l, holders)) != 0) {
    munmap(l->map, l->map_len);
    free(l);
    return err;
  }
  *out = l;
  return 0;
}

int ocgc_memprof_lease_renew(struct ocgc_memprof_lease *l)
{
  uint64_t expect, w;
  if (l == NULL) return -EINVAL;
  expect = l->word;
  l->beat++;
  w = lease_word(l);
  /* seq_cst: as claim's */
  if (__atomic_compare_exchange_n(&l->slots[l->slot], &expect, w, 0, __ATOMIC_SEQ_CST,
                                  __ATOMIC_RELAXED)) {
    l->word = w;
    return 0;
  }
  /* Freed as dead (we were stopped for longer than the lease), perhaps
   * claimed since: never written over; another slot, if one is free. */
  return claim(l, NULL) == 0 ? 1 : -EBUSY;
}

int ocgc_memprof_lease_answer(const struct ocgc_memprof *p, const struct ocgc_memprof_lease *l)
{
  if (p == NULL || l == NULL) return -EINVAL;
  if (p->state == OCGC_MP_UNAVAILABLE) return -ENOTSUP;
  /* (a slot released and claimed again between two of the producer's
   * polls shows alive from the old holder's time: the rate in force is
   * then at least as fine as the old holder's, and becomes ours at its
   * next poll) */
  return (p->leases_alive >> l->slot) & 1u;
}

int ocgc_memprof_lease_slot(const struct ocgc_memprof_lease *l)
{
  return l == NULL ? -1 : (int)l->slot;
}

void ocgc_memprof_lease_end(struct ocgc_memprof_lease *l)
{
  uint64_t expect;
  if (l == NULL) return;
  expect = l->word;
  /* seq_cst: as claim's; a slot that is not ours any more is left alone */
  (void)__atomic_compare_exchange_n(&l->slots[l->slot], &expect, 0, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED);
  munmap(l->map, l->map_len);
  free(l);
}

void memprof_take_leases(struct ocgc_memprof *p, const uint64_t *reserved)
{
  uint64_t state = reserved[OCGC_MP_LEASE_STATE];
  unsigned i;
  p->base_rate = reserved[OCGC_MP_LEASE_BASE];
  p->rate_leased = (state & OCGC_MP_LEASE_IN_FORCE) != 0;
  p->leases_alive = (unsigned)(state & OCGC_MP_LEASE_ALIVE_MASK);
  p->lease_refused = reserved[OCGC_MP_LEASE_REFUSED];
  p->lease_ns = reserved[OCGC_MP_LEASE_NS];
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++) p->lease_pid[i] = (int)OCGC_MP_LEASE_PID(reserved[i]);
}
