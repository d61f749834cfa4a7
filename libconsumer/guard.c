/* guard.c - who handles a SIGBUS raised under OCGC_GUARDED (guard.h).
 *
 * Nothing here runs unless the host asks: ocgc_sigbus_install() puts
 * on_sigbus in place (the ocgc command does; a library must not), and
 * ocgc_sigbus_handle() lets a host that owns SIGBUS forward to us.
 *
 * Invariants: a fault is claimed only if this thread has a guard up and
 * the faulting address lies inside the guarded mapping; the claim lowers
 * the guard before jumping, so a second fault cannot jump into a dead
 * frame.  Every other SIGBUS goes where it would have gone without us: to
 * the handler installed before, or to the default action.  The handler
 * touches only initial-exec TLS and its own arguments (async-signal-safe
 * whatever way libocgc was loaded). */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "guard.h"
#include "ocgc/consumer.h"

__thread struct ocgc_guard *ocgc_guard_cur __attribute__((tls_model("initial-exec")));

static struct sigaction previous;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;

int ocgc_sigbus_handle(const void *addr)
{
  struct ocgc_guard *g = ocgc_guard_cur;
  if (g == NULL || (const char *)addr < g->lo || (const char *)addr >= g->hi) return 0;
  ocgc_guard_cur = NULL;
  siglongjmp(g->jump, 1);
}

/* The fault is not ours: do what would have happened without us. */
static void pass_on(int sig, siginfo_t *info, void *uctx)
{
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != NULL) {
      previous.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (previous.sa_handler == SIG_IGN) {
    /* A signal sent with kill() may be ignored.  A fault may not: the
     * kernel would have reset an ignored SIGBUS to the default action
     * before delivering it, or the faulting load would repeat for ever. */
    if (info == NULL || info->si_code <= 0) return;
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != NULL) {
    previous.sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  /* A fault re-executes the load on return and dies of SIGBUS with the
   * right address in the core; a sent signal is sent again. */
  if (info == NULL || info->si_code <= 0) raise(sig);
}

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
  /* Only a fault (si_code > 0, set by the kernel) has an address: a SIGBUS
   * sent with kill() or sigqueue() carries the sender's pid and uid where
   * si_addr would be, which must not end a read as truncated. */
  if (info != NULL && info->si_code > 0) ocgc_sigbus_handle(info->si_addr);
  pass_on(sig, info, uctx);
}

static void install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  /* SA_NODEFER: jumping out of the handler leaves SIGBUS unblocked, so the
   * guard can use the cheap sigsetjmp(env, 0). */
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGBUS, &sa, &previous) != 0) install_error = -errno;
}

int ocgc_sigbus_install(void)
{
  pthread_once(&once, install);
  return install_error;
}
