/* ocgc_clock.c - the producer's clock: its start, whether the TSC may
 * stand in for CLOCK_MONOTONIC, the rate of the TSC, and the cold path of
 * a timestamp (a clock reading and a new anchor).  Each event's own
 * timestamp is ocgc_clock.h's inline caml_ocgc_now, which calls in here
 * only when the anchor no longer serves (once a millisecond at most).
 *
 * Invariants (with ocgc_clock.h): timestamps never decrease
 * (caml_ocgc_monotone); the TSC is used only once its rate is measured,
 * the CPU says it is invariant and the kernel times CLOCK_MONOTONIC with
 * it; a window whose rate disagrees with the one in use is a jump, after
 * which the clock alone serves until a new rate is measured.  The state is
 * owned by the runtime lock's holder, or by the exit handler once it owns
 * the ring (ocgc_ring.h's guard); a forked child keeps its parent's (the
 * TSC and the clock go on) and drops only the pointer to the parent's file
 * (ocgc_lifecycle.c). */

#define CAML_INTERNALS
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "ocgc/wire.h" /* the ext flags' clock bits */
#include "ocgc_clock.h"

struct caml_ocgc_clock caml_ocgc_clock;

/* ---- the clock's start -------------------------------------------------------- */

#ifdef CAML_OCGC_HAVE_TSC
/* The kernel's clocksource: 1 if the TSC drives it or it cannot be read
 * (no /sys: CPUID alone decides), 0 if it is something else.  A kernel
 * that found the TSC unstable has moved to another one (hpet, acpi_pm);
 * kvm-clock and Hyper-V's TSC page are the TSC scaled by the host, which
 * says the TSC is invariant in CPUID only when it is. */
static int kernel_clock_is_tsc(void)
{
  static const char *const tsc_driven[] = {"tsc\n", "kvm-clock\n", "hyperv_clocksource_tsc_page\n"};
  char buf[40];
  ssize_t n;
  unsigned i;
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return 1;
  for (i = 0; i < sizeof tsc_driven / sizeof tsc_driven[0]; i++)
    if ((size_t)n == strlen(tsc_driven[i]) && memcmp(buf, tsc_driven[i], (size_t)n) == 0) return 1;
  return 0;
}
#endif

#ifdef CAML_OCGC_HAVE_TSC
/* A clock reading and the TSC at the same moment.  A preemption between
 * the two reads (a loaded machine) would pair the clock with a TSC read
 * milliseconds later: a rate measured from such a base over the first
 * 20 ms was 10% off (phases_clock.sh), and an anchor would be off by that
 * much.  So the clock read is bracketed by two TSC reads, and of up to
 * eight tries the tightest bracket is kept; the TSC of the pair is the
 * bracket's middle.  A bracket is tight enough, and the tries end, under
 * PAIR_TIGHT cycles (about a microsecond: no preemption fits in it) or
 * under four times the brackets this process usually gets (a running
 * mean of those kept): where a clock read itself takes longer than
 * PAIR_TIGHT (a clock read that traps to the hypervisor, or under
 * valgrind, where a bracket was 5-20k cycles and every anchor paid all
 * eight tries), a first bracket like the others is as good as any, and a
 * preemption (milliseconds) is still far wider; never looser than
 * PAIR_LOOSE (about 30 us).  Until one bracket has been kept (at start,
 * which times the first rate's base), only PAIR_TIGHT. */
#define PAIR_TRIES 8
#define PAIR_TIGHT 3000
#define PAIR_LOOSE 100000
/* The running mean of the brackets kept, 1/8 to the newest, or 0: the
 * clock's state, owned as the rest of it is (ocgc_clock.h). */
static uint64_t pair_usual;
static uint64_t clock_pair(uint64_t *tsc_out)
{
  uint64_t best_ns = 0, best_tsc = 0, best_width = UINT64_MAX;
  uint64_t tight = pair_usual <= PAIR_TIGHT / 4   ? PAIR_TIGHT
                   : pair_usual >= PAIR_LOOSE / 4 ? PAIR_LOOSE
                                                  : 4 * pair_usual;
  int i;
  for (i = 0; i < PAIR_TRIES; i++) {
    uint64_t a = __rdtsc(), t = caml_ocgc_clock_read(), b = __rdtsc();
    if (b >= a && b - a < best_width) {
      best_width = b - a;
      best_ns = t;
      best_tsc = a + (b - a) / 2;
      if (best_width < tight) break;
    }
  }
  if (best_width == UINT64_MAX) { /* the TSC went backwards every time */
    best_ns = caml_ocgc_clock_read();
    best_tsc = __rdtsc();
  } else {
    pair_usual = pair_usual == 0 ? best_width : pair_usual - pair_usual / 8 + best_width / 8;
  }
  *tsc_out = best_tsc;
  return best_ns;
}
#endif

void caml_ocgc_clock_init(int allow_tsc)
{
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  memset(c, 0, sizeof *c);
#ifdef CAML_OCGC_HAVE_TSC
  /* Whether the TSC may be used is checked when its rate is first due
   * (clock_check_tsc): CPUID traps to the hypervisor in a VM and /sys is a
   * file to read, 15-30 us that a short program, which never gets that
   * far, would pay at start for nothing.  The base of the first window is
   * taken now all the same. */
  c->tsc_ok = allow_tsc;
  if (c->tsc_ok) {
    c->base_ns = c->anchor_ns = c->last = clock_pair(&c->base_tsc);
    c->anchor_tsc = c->base_tsc;
    return;
  }
#else
  (void)allow_tsc;
#endif
  c->base_ns = c->anchor_ns = c->last = caml_ocgc_clock_read();
}

#ifdef CAML_OCGC_HAVE_TSC
/* Once, when the first rate is due: may the TSC stand in for the clock?
 * An invariant TSC (CPUID 0x80000007, EDX bit 8) that the kernel times
 * CLOCK_MONOTONIC with.  The file's flags say the clock from then on. */
static void clock_check_tsc(struct caml_ocgc_clock *c)
{
  unsigned a, b, cx, d;
  c->tsc_checked = 1;
  c->tsc_ok = __get_cpuid(0x80000007, &a, &b, &cx, &d) && (d & (1u << 8)) && kernel_clock_is_tsc();
  if (c->tsc_ok) caml_ocgc_clock_flags(c);
}
#endif

void caml_ocgc_clock_flags(const struct caml_ocgc_clock *c)
{
  uint64_t f, clock = c->tsc_ok && c->tsc_checked ? OCGC_EXT_CLOCK_TSC : OCGC_EXT_CLOCK_MONOTONIC;
  if (c->flags == NULL) return;
  /* Relaxed: a word readers take as it is when they read it; they pair
   * with nothing (a reader that sees the old value sees clock readings,
   * which a TSC timestamp extends). */
  f = __atomic_load_n(c->flags, __ATOMIC_RELAXED);
  f = (f & ~(uint64_t)OCGC_EXT_CLOCK_MASK) | clock << OCGC_EXT_CLOCK_SHIFT;
  __atomic_store_n(c->flags, f, __ATOMIC_RELAXED);
}

#ifdef CAML_OCGC_HAVE_TSC
/* The rate is measured over the window since the last rating, not since
 * the process started: a suspend that the TSC counts through and
 * CLOCK_MONOTONIC does not (s2idle, a paused VM) would make a life-long
 * rate too slow for ever after, compressing every later duration. */
void caml_ocgc_clock_rate(struct caml_ocgc_clock *c, uint64_t t, uint64_t tsc)
{
  uint64_t scale, jump;
  if (!caml_ocgc_clock_rate_due(c, t, tsc)) return;
  if (tsc <= c->base_tsc || t <= c->base_ns) {
    /* The TSC went back (reset by a resume): the rate in use still holds
     * (the TSC's frequency did not change); a new window starts here. */
    c->base_ns = t;
    c->base_tsc = tsc;
    return;
  }
  scale = (uint64_t)(((unsigned __int128)(t - c->base_ns) << 32) / (tsc - c->base_tsc));
  jump = c->scale >> CAML_OCGC_RATE_JUMP_SHIFT;
  /* A rate of 1/16 to 16 ns per cycle is a TSC of 62 MHz to 16 GHz;
   * anything else is no TSC to trust, and a window far from the rate in
   * use held a jump: either way the clock alone (span 0) until a window
   * without one has been measured. */
  if (scale < (UINT64_C(1) << 28) || scale > (UINT64_C(1) << 36) ||
      (c->scale != 0 && (scale > c->scale + jump || scale < c->scale - jump))) {
    c->scale = c->span_tsc = 0;
  } else {
    c->scale = scale;
    c->span_tsc = (CAML_OCGC_ANCHOR_NS << 32) / scale;
  }
  c->base_ns = t;
  c->base_tsc = tsc;
}
#endif

uint64_t caml_ocgc_reanchor(void)
{
  struct caml_ocgc_clock *c = &caml_ocgc_clock;
  uint64_t t;
#ifdef CAML_OCGC_HAVE_TSC
  if (c->tsc_ok) {
    uint64_t tsc;
    t = clock_pair(&tsc);
    /* After the clock read: the check's cost lies inside what this event
     * times, as it begins. */
    if (!c->tsc_checked && t - c->base_ns >= CAML_OCGC_RATE_MIN_NS) clock_check_tsc(c);
    if (c->tsc_ok && caml_ocgc_clock_rate_due(c, t, tsc)) caml_ocgc_clock_rate(c, t, tsc);
    c->anchor_ns = t;
    c->anchor_tsc = tsc;
    return caml_ocgc_monotone(t);
  }
#endif
  t = caml_ocgc_clock_read();
  return caml_ocgc_monotone(t);
}
