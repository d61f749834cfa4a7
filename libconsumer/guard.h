/* guard.h - turning a SIGBUS on a mapped ring into an error (private).
 *
 * A ring file belongs to another process, which can truncate it while we
 * have it mapped; touching a page past the new end raises SIGBUS.  Ring
 * data is copied with pread(), which cannot fault, so only the few header
 * loads (head, tail, seqlocks, totals, the extension block) touch the
 * mapping, and ocgc's own rings are sealed memfds that cannot shrink at
 * all.  Those loads run inside OCGC_GUARDED: a SIGBUS whose address lies in
 * the guarded mapping, raised in this thread while the guard is up, jumps
 * back there and the call evaluates to OCGC_E_TRUNCATED.
 *
 * The jump happens only if a SIGBUS handler sends the fault here: libocgc
 * installs none by itself (a library must not take process-wide state
 * from its host).  The host calls ocgc_sigbus_install(), or forwards from
 * its own handler with ocgc_sigbus_handle() (consumer.h).  Without either,
 * a truncation that races past the fstat() done before each guarded
 * section kills the host as any SIGBUS would.
 *
 * Never call back into user code while guarded.  Locals that the guarded
 * code changes and that are read after a fault must be volatile (setjmp
 * rules). */
#ifndef OCGC_GUARD_H
#define OCGC_GUARD_H

#include <setjmp.h>
#include <stddef.h>

struct ocgc_guard {
  sigjmp_buf jump;
  const char *lo, *hi; /* the guarded mapping */
};

/* The guard this thread has up, or NULL.  Initial-exec TLS: the handler
 * reads it, and the general-dynamic model's __tls_get_addr may allocate
 * (not async-signal-safe) when libocgc was dlopen'ed.  One pointer only,
 * so that it costs the static TLS surplus of a dlopen almost nothing. */
extern __thread struct ocgc_guard *ocgc_guard_cur __attribute__((tls_model("initial-exec")));

/* Lower the guard: a compiler barrier first, so no guarded load is moved
 * past it. */
static inline void ocgc_guard_down(void)
{
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  ocgc_guard_cur = NULL;
}

/* result = call, or OCGC_E_TRUNCATED if the mapping [map, map + size)
 * faulted during it.  [call] must not call back into user code.  The
 * signal fences order the TLS stores with the guarded loads as the handler
 * (same thread) sees them. */
#define OCGC_GUARDED(map, size, result, call)                                  \
  do {                                                                         \
    struct ocgc_guard ocgc_g_;                                                 \
    ocgc_g_.lo = (const char *)(map);                                          \
    ocgc_g_.hi = (const char *)(map) + (size);                                 \
    if (sigsetjmp(ocgc_g_.jump, 0) != 0) {                                     \
      (result) = OCGC_E_TRUNCATED;                                             \
    } else {                                                                   \
      ocgc_guard_cur = &ocgc_g_;                                               \
      __atomic_signal_fence(__ATOMIC_SEQ_CST);                                 \
      (result) = (call);                                                       \
      ocgc_guard_down();                                                       \
    }                                                                          \
  } while (0)

#endif /* OCGC_GUARD_H */
