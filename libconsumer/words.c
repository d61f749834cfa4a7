/* words.c - how every word of a ring file is read.
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
 * updates that bring the seq there (256 or more) during one read. */

#include <errno.h>
#include <string.h>

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
