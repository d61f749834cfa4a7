/* clock.h - the one clock of ocgc's readers (common layer, private):
 * CLOCK_MONOTONIC in nanoseconds, the clock the producer stamps its events
 * with, and the one every deadline of the library and the tools is
 * measured on. */
#ifndef OCGC_COMMON_CLOCK_H
#define OCGC_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t cm_mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

#endif /* OCGC_COMMON_CLOCK_H */
