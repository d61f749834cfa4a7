/* words.c - how every byte of a ring file is read: the one file that
 * maps a ring file or copies from it (pread), checks its size, and reads
 * its seqlocks.  The lowest file of the source: it uses no other file of
 * libocgc (the struct and the offsets are source.h's, liveness is the
 * caller's: see src_seqlock_read).
 *
 * A ring file belongs to another process.  ocgc's own rings are memfds
 * sealed against shrinking, on tmpfs (source.c checks both at open): their
 * pages stay, and a read fault that finds no memory is the OOM killer's,
 * never a SIGBUS, so their words are loaded from a read-only mapping, each
 * exactly once (shm.h).  Any other file (a stock OCaml 5 ring, an ocgc
 * ring in a directory) can be truncated by its owner at any moment, and a
 * load from a page past the new end raises SIGBUS, a signal that belongs
 * to the program libocgc lives in.  Such a file is never mapped: every
 * word of it is copied out with pread(), which fails where a load would
 * fault.  So no owner of a file can kill or divert the host, whatever
 * signal handlers the host has or lacks.
 *
 * Invariants: nothing here reads outside [0, s->size); a word that
 * publishes others (head, tail, seq, state) is read with acquire ordering
 * from either kind of file.  The kernel's copy is not promised to load an
 * aligned word in one access (it may use string moves), so a copied word
 * that publishes others is checked against a second copy: a word that
 * does not grow is taken when two copies agree; a counter that grows (head,
 * tail) from two copies in order, the one on the safe side (a tail that
 * is not past what was published, a head that is not short of what was
 * overwritten), since a writer as fast as the copies never lets two agree.
 * A torn copy mixes the bytes of two close values: taken as a tail, it can
 * end a batch inside an event (read as corrupt), not past the published
 * words.  A seqlock's seq needs no second copy: a tear
 * mixes the bytes of two consecutive values, which differ in more than
 * the lowest byte only at a carry, and a torn copy could pass for the seq
 * read after the data only if the writer went through exactly the
 * updates that bring the seq there (256 or more) during one read.
 * A seqlock left odd is waited for within SRC_SEQ_WAIT_NS, never for ever;
 * whether its producer is dead (its seq then final) is not asked here: the
 * caller asks attach.c (ocgc_source_seq_stuck) and reads again. */

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <unistd.h>

#include "clock.h"
#include "shm.h"
#include "source.h"

/* Copies of a word that never agree: a writer changing it faster than we
 * can copy (no honest producer does), or a liar. */
#define AGREE_TRIES 16u

int src_copy(const struct ocgc_source *s, uint64_t off, void *buf, uint64_t n)
{
  uint64_t *w = buf, i;
  if (off % 8 || n % 8) return -EINVAL;
  if (s->map == NULL) return ocgc_source_pread(s, off, buf, n);
  if (off > s->size || n > s->size - off) return OCGC_E_TRUNCATED;
  for (i = 0; i < n / 8; i++) w[i] = shm_load((const uint64_t *)(s->map + off) + i);
  return 0;
}

int src_seq_acquire(const struct ocgc_source *s, uint64_t off, uint64_t *v)
{
  int err;
  if (s->map != NULL) return src_word_acquire(s, off, v);
  if ((err = ocgc_source_pread(s, off, v, 8)) != 0) return err;
  __atomic_thread_fence(__ATOMIC_SEQ_CST); /* full: see two_copies */
  return 0;
}

/* Two copies of the word at off, in this order, each followed by a full
 * fence: not acquire, as the copy's string moves are ordered more weakly
 * than plain loads on x86. */
static int two_copies(const struct ocgc_source *s, uint64_t off, uint64_t *a, uint64_t *b)
{
  int err;
  if ((err = ocgc_source_pread(s, off, a, 8)) != 0) return err;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if ((err = ocgc_source_pread(s, off, b, 8)) != 0) return err;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return 0;
}

int src_counter_acquire(const struct ocgc_source *s, uint64_t off, int upper, uint64_t *v)
{
  uint64_t a, b;
  unsigned tries;
  int err;
  if (s->map != NULL) return src_word_acquire(s, off, v);
  for (tries = 0; tries < AGREE_TRIES; tries++) {
    if ((err = two_copies(s, off, &a, &b)) != 0) return err;
    if (a <= b) {
      *v = upper ? b : a;
      return 0;
    }
  }
  return -EAGAIN;
}

int src_word_acquire(const struct ocgc_source *s, uint64_t off, uint64_t *v)
{
  uint64_t a, b;
  unsigned tries;
  int err;
  if (s->map != NULL) {
    if (off % 8 || off > s->size || 8 > s->size - off) return OCGC_E_TRUNCATED;
    /* Acquire: pairs with the producer's release store of this word. */
    *v = shm_load_acquire((const uint64_t *)(s->map + off));
    return 0;
  }
  for (tries = 0; tries < AGREE_TRIES; tries++) {
    if ((err = two_copies(s, off, &a, &b)) != 0) return err;
    if (a == b) {
      *v = a;
      return 0;
    }
  }
  return -EAGAIN;
}

int src_words_open(struct ocgc_source *s)
{
  struct statfs sf;
  int seals;
  /* Sealed against shrinking (ocgc's memfd rings): what is mapped stays,
   * and is read in place.  Any other file, even a memfd, may be truncated
   * by its owner, and is never mapped; nor is a memfd of huge pages, whose
   * read of a hole faults when none is free. */
  seals = fcntl(s->fd, F_GET_SEALS);
  s->sealed = seals >= 0 && (seals & F_SEAL_SHRINK) && fstatfs(s->fd, &sf) == 0 &&
              sf.f_type == TMPFS_MAGIC;
  if (s->sealed) {
    void *map = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, s->fd, 0);
    if (map == MAP_FAILED) return -errno;
    /* Only header words are loaded from it (the events are copied): no
     * fault-around, which maps 16 pages of the producer's ring around each
     * word read and counts them in our resident memory (16 MiB at 1,000
     * rings, for 8 KiB of headers each). */
    (void)madvise(map, (size_t)s->size, MADV_RANDOM);
    s->map = map;
  }
  return 0;
}

void src_words_close(struct ocgc_source *s)
{
  if (s->map != NULL) munmap((void *)s->map, (size_t)s->size);
  s->map = NULL;
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
}

int ocgc_source_check_size(const struct ocgc_source *s)
{
  struct stat st;
  if (s->sealed) return 0;
  if (fstat(s->fd, &st) != 0) return -errno;
  return (uint64_t)st.st_size < s->size ? OCGC_E_TRUNCATED : 0;
}

int ocgc_source_pread(const struct ocgc_source *s, uint64_t off, void *buf, uint64_t n)
{
  char *p = buf;
  unsigned tries = 0;
  if (off > s->size || n > s->size - off) return OCGC_E_TRUNCATED;
  while (n > 0) {
    ssize_t got = pread(s->fd, p, (size_t)n, (off_t)off);
    if (got < 0) {
      /* EINTR: a signal meant for the host; a few retries, then let the
       * caller come back (the bound keeps a signal storm from holding us). */
      if (errno == EINTR && ++tries < 16) continue;
      return -errno;
    }
    if (got == 0) return OCGC_E_TRUNCATED;
    p += got;
    off += (uint64_t)got;
    n -= (uint64_t)got;
  }
  return 0;
}

int src_seqlock_read(const struct ocgc_source *s, uint64_t seq_off,
                     int (*copy)(const struct ocgc_source *s, void *ctx), void *ctx)
{
  unsigned tries;
  uint64_t deadline = 0;
  int err;
  for (tries = 0; tries < 10000; tries++) {
    uint64_t s1, s2;
    /* Acquire: pairs with the producer's release store of the even seq
     * that ends an update. */
    if ((err = src_seq_acquire(s, seq_off, &s1)) != 0) return err;
    if ((s1 & 1) && !s->gone) {
      /* A producer preempted mid-update: let it run, for SRC_SEQ_WAIT_NS
       * at most (a live liar may keep seq odd for ever; callers keep the
       * last figures they read). */
      if (tries == 100) deadline = cm_mono_ns() + SRC_SEQ_WAIT_NS;
      if (tries > 100) sched_yield();
      if (tries % 64 == 63 && tries > 100 && cm_mono_ns() > deadline) break;
      continue;
    }
    if ((err = copy(s, ctx)) != 0) return err;
    /* The copy completes before seq is re-read (pairs with the producer's
     * release fence after it makes seq odd). */
    src_fence_acquire(s);
    if ((err = src_copy(s, seq_off, &s2, 8)) != 0) return err;
    if (s1 == s2 || s->gone) return 0;
  }
  return -EAGAIN;
}
