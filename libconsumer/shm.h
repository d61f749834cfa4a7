/* shm.h - reading words that another process may be writing (private).
 *
 * Every load from a mapped ring goes through these, so the compiler reads
 * each word exactly once (a value checked is the value used) and the
 * ordering each caller needs is spelled out where it is used. */
#ifndef OCGC_SHM_H
#define OCGC_SHM_H

#include <stdint.h>

static inline uint64_t shm_load(const uint64_t *p)
{
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint64_t shm_load_acquire(const uint64_t *p)
{
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void shm_fence_acquire(void)
{
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

#endif /* OCGC_SHM_H */
