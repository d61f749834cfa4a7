/* mono.h - the reader's clock (private to libconsumer/): CLOCK_MONOTONIC
 * in nanoseconds, the clock the producer stamps its events with, and the
 * one every deadline of the library is measured on. */
#ifndef OCGC_MONO_H
#define OCGC_MONO_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

#endif /* OCGC_MONO_H */
