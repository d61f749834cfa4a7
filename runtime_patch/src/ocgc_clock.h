/* ocgc_clock.h - the producer's timestamps (private to runtime/ocgc_*.c).
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds, as the format says.  Where
 * the TSC can stand in for that clock (an invariant TSC that the kernel
 * itself times CLOCK_MONOTONIC with), a timestamp is one TSC read: the
 * newest clock reading (the "anchor") plus the cycles since, at a rate
 * measured against the clock over the process's life.  The clock is read
 * again, and the anchor moved, once an anchor is CAML_OCGC_ANCHOR_NS old
 * (and whenever the TSC is not where an anchor covers it: behind it, or
 * far ahead), so a timestamp is never further from the clock than the
 * rate's error over that time: under 0.5 us even for a 500 ppm slew, and
 * durations are TSC-exact.  The rate is measured over a recent window,
 * never the process's life, and a window that disagrees with the rate in
 * use is a jump (a suspend the TSC counted through, a migration), after
 * which the rate is measured afresh (caml_ocgc_clock_rate).  Until the rate is known (the first 20 ms), or
 * without a usable TSC, or with OCGC_TSC=0, every timestamp is a clock
 * reading.  Invariant: timestamps never decrease.
 * The state is owned by the runtime lock's holder, or by the exit handler
 * once it owns the ring (ocgc_ring.h's guard). */
#ifndef CAML_OCGC_CLOCK_H
#define CAML_OCGC_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define CAML_OCGC_HAVE_TSC 1
#endif

struct caml_ocgc_clock {
  uint64_t last;        /* newest timestamp handed out */
  uint64_t anchor_ns;   /* last clock reading ... */
  uint64_t anchor_tsc;  /* ... and the TSC at that moment */
  uint64_t span_tsc;    /* cycles an anchor serves; 0: read the clock */
  uint64_t scale;       /* ns per TSC cycle, 32.32 fixed point; 0: unknown */
  uint64_t base_ns;     /* start of the window the rate is measured */
  uint64_t base_tsc;    /* over: a clock reading and its TSC */
  uint64_t *flags;      /* the file's ext flags word, whose clock bits
                           follow tsc_ok, or NULL (no file of ours) */
  int tsc_checked;      /* CPUID and the kernel's clocksource were asked */
  int tsc_ok;           /* the TSC may stand in for the clock (until
                           tsc_checked: is not ruled out) */
};

extern struct caml_ocgc_clock caml_ocgc_clock;

/* An anchor serves this long; the rate is measured over at least
 * RATE_MIN_NS before it is trusted and refreshed at most every
 * RATE_EVERY_NS (a new rate takes effect with a new anchor: no step); a
 * window whose rate differs from the one in use by more than
 * 2^-RATE_JUMP_SHIFT (0.2%: NTP slews CLOCK_MONOTONIC by 500 ppm at most,
 * so two windows differ by 1000 ppm at most) is a jump, not a rate. */
#define CAML_OCGC_ANCHOR_NS UINT64_C(1000000)
#define CAML_OCGC_RATE_MIN_NS UINT64_C(20000000)
#define CAML_OCGC_RATE_EVERY_NS UINT64_C(1000000000)
#define CAML_OCGC_RATE_JUMP_SHIFT 9

/* The clock itself: only the cold paths call it (caml_ocgc_reanchor,
 * startup), so the canary that -fstack-protector-strong puts around its
 * timespec stays out of the hooks (hook_codegen.sh). */
static inline uint64_t caml_ocgc_clock_read(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static inline uint64_t caml_ocgc_monotone(uint64_t t)
{
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  if (t < c->last) t = c->last;
  c->last = t;
  return t;
}

/* Startup: take the first reading.  Whether the TSC may be used is
 * decided when its rate is first due (20 ms on): [allow_tsc] (OCGC_TSC is
 * not 0), an invariant TSC (CPUID), and a kernel that times
 * CLOCK_MONOTONIC with it (its current clocksource is tsc, kvm-clock or
 * Hyper-V's TSC page, when /sys says; a kernel that found the TSC unstable
 * has moved away from it).  Until then every timestamp is a clock reading;
 * ocgc_clock.c. */
void caml_ocgc_clock_init(int allow_tsc);

/* Write the clock bits of the file's flags word (c->flags, if set): TSC
 * once it is checked and used, else the clock. */
void caml_ocgc_clock_flags(const struct caml_ocgc_clock *c);

/* The cold path: read the clock, move the anchor, measure the rate when
 * due; returns the clock reading (ocgc_clock.c). */
uint64_t caml_ocgc_reanchor(void);

/* The rate's bookkeeping, given a clock reading [t] and the TSC [tsc] at
 * that moment: the rate over the window since base when one is due, a jump
 * detected, base moved (ocgc_clock.c; on its own for the unit test). */
#ifdef CAML_OCGC_HAVE_TSC
void caml_ocgc_clock_rate(struct caml_ocgc_clock *c, uint64_t t, uint64_t tsc);

/* Whether caml_ocgc_clock_rate has anything to do: a window long enough to
 * rate (RATE_MIN_NS before the first rate, RATE_EVERY_NS after), or a TSC
 * or clock behind the window's base.  Inline, so that the re-reads between
 * two ratings (all but one a second) pay a compare, not a call. */
static inline int caml_ocgc_clock_rate_due(const struct caml_ocgc_clock *c, uint64_t t,
                                           uint64_t tsc)
{
  if (tsc <= c->base_tsc || t <= c->base_ns) return 1;
  return t - c->base_ns >=
         (c->scale != 0 ? CAML_OCGC_RATE_EVERY_NS : CAML_OCGC_RATE_MIN_NS);
}
#endif

/* A timestamp, for every event: one TSC read while an anchor serves. */
static inline uint64_t caml_ocgc_now(void)
{
#ifdef CAML_OCGC_HAVE_TSC
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  if (__builtin_expect(c->span_tsc != 0, 1)) {
    /* Unsigned: a TSC behind the anchor wraps to a huge d, past the span. */
    uint64_t d = __rdtsc() - c->anchor_tsc;
    /* d < span_tsc = (ANCHOR_NS << 32) / scale, so d * scale < 2^52. */
    if (__builtin_expect(d < c->span_tsc, 1))
      return caml_ocgc_monotone(c->anchor_ns + ((d * c->scale) >> 32));
  }
#endif
  return caml_ocgc_reanchor();
}

#endif /* CAML_OCGC_CLOCK_H */
