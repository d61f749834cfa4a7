/* guard.h - turning a SIGBUS on a mapped ring into an error (private).
 *
 * A ring file belongs to another process, which can truncate it while we
 * have it mapped; touching a page past the new end raises SIGBUS.  Code
 * that touches a mapping does so between OCGC_GUARD_BEGIN and
 * ocgc_guard_end(): a SIGBUS whose address lies in that mapping, raised in
 * this thread while the guard is up, jumps back to OCGC_GUARD_BEGIN, which
 * then evaluates to nonzero.  Never call back into user code while guarded.
 *
 *   if (OCGC_GUARD_BEGIN(lo, size)) return OCGC_E_TRUNCATED;
 *   ... loads from [lo, lo + size) ...
 *   ocgc_guard_end();
 *
 * Locals that the guarded code changes and that are read after a fault
 * must be volatile (setjmp rules). */
#ifndef OCGC_GUARD_H
#define OCGC_GUARD_H

#include <setjmp.h>
#include <stddef.h>

struct ocgc_guard {
  sigjmp_buf jump;
  const char *lo, *hi;   /* the guarded mapping */
  volatile int up;
};

extern _Thread_local struct ocgc_guard ocgc_guard_tls;

/* Install the process-wide handler once; 0 or -errno. */
int ocgc_guard_install(void);

static inline void ocgc_guard_set(const void *lo, size_t size)
{
  ocgc_guard_tls.up = 0;
  ocgc_guard_tls.lo = lo;
  ocgc_guard_tls.hi = (const char *)lo + size;
}

static inline void ocgc_guard_up(void)
{
  ocgc_guard_tls.up = 1;
}

static inline void ocgc_guard_end(void)
{
  ocgc_guard_tls.up = 0;
}

/* result = call, or OCGC_E_TRUNCATED if the mapping [map, map + size)
 * faulted during it.  [call] must not call back into user code. */
#define OCGC_GUARDED(map, size, result, call)                                  \
  do {                                                                         \
    ocgc_guard_set((map), (size));                                             \
    if (sigsetjmp(ocgc_guard_tls.jump, 0) != 0) {                              \
      (result) = OCGC_E_TRUNCATED;                                             \
    } else {                                                                   \
      ocgc_guard_up();                                                         \
      (result) = (call);                                                       \
      ocgc_guard_end();                                                        \
    }                                                                          \
  } while (0)

#endif /* OCGC_GUARD_H */
