/* ocgc_clock.h - the producer's timestamps (private to runtime/ocgc_*.c).
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds, as the format says.  Every
 * collection's begin and end, and every event outside a collection, reads
 * that clock.  A collection's begin also reads the TSC with it (an
 * "anchor"): sub-phase events inside a collection happen microseconds after
 * the newest anchor; on CPUs with an invariant TSC they are timed as anchor
 * + TSC cycles since it, at a rate measured against the clock over the
 * process's life, which costs a third of a clock read.  Ends and lone events
 * are followed by no inner event of theirs, so they read no TSC.
 * Invariant: timestamps never decrease. */
#ifndef CAML_OCGC_CLOCK_H
#define CAML_OCGC_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#define CAML_OCGC_HAVE_TSC 1
#endif

struct caml_ocgc_clock {
  uint64_t last;        /* newest timestamp handed out */
  uint64_t anchor_ns;   /* last clock reading ... */
  uint64_t anchor_tsc;  /* ... and the TSC at that moment */
  uint64_t base_ns;     /* first reading, for the rate */
  uint64_t base_tsc;
  uint64_t rated_ns;    /* when the rate was last measured */
  uint64_t scale;       /* ns per TSC cycle, 32.32 fixed point; 0: unknown */
  int tsc_ok;           /* the CPU's TSC runs at a constant rate */
  /* clock_gettime's result.  Not a local: a local whose address is taken
   * makes -fstack-protector-strong (Debian's flags) put a canary check in
   * every hook the clock read is inlined into.  Owned like [last]: by the
   * runtime lock's holder, or by the exit handler once it owns the ring. */
  struct timespec ts;
};

extern struct caml_ocgc_clock caml_ocgc_clock;

/* Measure the TSC rate over at least this long before trusting it, and
 * refresh it at most this often. */
#define CAML_OCGC_RATE_MIN_NS UINT64_C(20000000)
#define CAML_OCGC_RATE_EVERY_NS UINT64_C(1000000000)

static inline uint64_t caml_ocgc_clock_read(void)
{
  struct timespec *ts = &caml_ocgc_clock.ts;
  clock_gettime(CLOCK_MONOTONIC, ts);
  return (uint64_t)ts->tv_sec * UINT64_C(1000000000) + (uint64_t)ts->tv_nsec;
}

static inline uint64_t caml_ocgc_monotone(uint64_t t)
{
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  if (t < c->last) t = c->last;
  c->last = t;
  return t;
}

/* Startup: take the first reading and decide whether the TSC may be used:
 * [allow_tsc] (OCGC_TSC is not 0), an invariant TSC (CPUID), and a kernel
 * that times CLOCK_MONOTONIC with it (its current clocksource is "tsc",
 * when /sys says; a kernel that found the TSC unstable has switched away
 * from it).  Sets tsc_ok; ocgc_ring.c. */
void caml_ocgc_clock_init(int allow_tsc);

/* A clock reading: for collection ends and lone events. */
static inline uint64_t caml_ocgc_now(void)
{
  return caml_ocgc_monotone(caml_ocgc_clock_read());
}

/* A clock reading that the inner events to come are timed from: for
 * collection begins.  It also refreshes the TSC rate now and then. */
static inline uint64_t caml_ocgc_anchor(void)
{
  uint64_t t = caml_ocgc_clock_read();
#ifdef CAML_OCGC_HAVE_TSC
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  if (c->tsc_ok) {
    uint64_t tsc = __rdtsc();
    if (t - c->rated_ns > CAML_OCGC_RATE_EVERY_NS && t - c->base_ns > CAML_OCGC_RATE_MIN_NS &&
        tsc > c->base_tsc) {
      c->scale = (uint64_t)(((unsigned __int128)(t - c->base_ns) << 32) / (tsc - c->base_tsc));
      c->rated_ns = t;
    }
    c->anchor_ns = t;
    c->anchor_tsc = tsc;
  }
#endif
  return caml_ocgc_monotone(t);
}

/* A timestamp inside a collection, close after an anchor. */
static inline uint64_t caml_ocgc_now_inner(void)
{
#ifdef CAML_OCGC_HAVE_TSC
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  if (c->scale != 0) {
    uint64_t d = __rdtsc() - c->anchor_tsc;
    return caml_ocgc_monotone(c->anchor_ns + (uint64_t)(((unsigned __int128)d * c->scale) >> 32));
  }
#endif
  return caml_ocgc_now();
}

#endif /* CAML_OCGC_CLOCK_H */
