/* guard.c - the SIGBUS handler behind OCGC_GUARD_BEGIN (guard.h).
 *
 * Installed once per process, the first time libocgc maps a file.  It
 * claims a SIGBUS only if this thread has a guard up and the faulting
 * address lies inside the guarded mapping; every other SIGBUS goes to the
 * handler that was installed before (or gets the default action), so a
 * program's own handling is unchanged. */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "guard.h"

_Thread_local struct ocgc_guard ocgc_guard_tls;

static struct sigaction previous;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
  struct ocgc_guard *g = &ocgc_guard_tls;
  const char *addr = info ? (const char *)info->si_addr : NULL;

  if (g->up && addr >= g->lo && addr < g->hi) {
    g->up = 0;
    siglongjmp(g->jump, 1);
  }
  /* Not ours: behave as if we had never been installed. */
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != NULL) {
      previous.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (previous.sa_handler == SIG_IGN) {
    return;
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != NULL) {
    previous.sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
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

int ocgc_guard_install(void)
{
  pthread_once(&once, install);
  return install_error;
}
