/* serve_wake.c - `ocgc serve`'s waker (serve.h): the thread that turns the
 * watch's descriptor (ocgc_watch_fd(): a ring folder's new entry) into a
 * turn of the poll thread at once, so that a process that lives a few
 * milliseconds is opened while it lives, not at the next scheduled turn
 * (up to OCGC_WATCH_POLL_MAX_NS away) or listing (a second).
 *
 * Invariants: it never reads target memory or uses the set (the poll
 * thread alone does): it polls one descriptor and its own stop eventfd,
 * and signals; it wakes the poll thread at most once per poll turn (it
 * waits for the turn to end before polling again, the descriptor being
 * level-triggered) and at most once per SERVE_WAKE_GAP_NS, so it cannot
 * spin, whatever the folders hold; it holds the lock only to set the flag,
 * signal and wait for the turn. */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "serve.h"

/* Until [until] (cm_mono_ns()) or a stop: 1 if stopped. */
static int pause_until(struct serve_wake *k, uint64_t until)
{
  for (;;) {
    struct pollfd p = {.fd = k->stop_fd, .events = POLLIN};
    uint64_t now = cm_mono_ns();
    int r;
    if (now >= until) return 0;
    r = poll(&p, 1, (int)((until - now + 999999u) / 1000000u));
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return 1;
  }
}

static void *waker(void *arg)
{
  struct serve_wake *k = arg;
  for (;;) {
    struct pollfd p[2] = {{.fd = k->fd, .events = POLLIN}, {.fd = k->stop_fd, .events = POLLIN}};
    uint64_t turn, woke_ns;
    int stop;
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[1].revents != 0 || (p[0].revents & (POLLERR | POLLNVAL))) break;
    if (!(p[0].revents & POLLIN)) continue;
    woke_ns = cm_mono_ns();
    pthread_mutex_lock(k->lock);
    k->woken = 1;
    pthread_cond_signal(k->wake);
    /* The turn that reads what is ready: until it ends, the descriptor
     * stays readable for nothing. */
    turn = k->turns;
    while (k->turns == turn && !k->stopping) pthread_cond_wait(&k->turned, k->lock);
    stop = k->stopping;
    pthread_mutex_unlock(k->lock);
    if (stop) break;
    if (pause_until(k, woke_ns + SERVE_WAKE_GAP_NS)) break;
  }
  return NULL;
}

int serve_wake_start(struct serve_wake *k, int fd, pthread_mutex_t *lock, pthread_cond_t *wake)
{
  sigset_t block, old;
  int err;
  k->fd = -1;
  k->lock = lock;
  k->wake = wake;
  k->turns = 0;
  k->woken = 0;
  k->stopping = 0;
  if (fd < 0) return 0;
  if ((k->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0) return errno;
  if ((err = pthread_cond_init(&k->turned, NULL)) != 0) {
    close(k->stop_fd);
    return err;
  }
  /* SIGINT and SIGTERM are the main thread's. */
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  k->fd = fd;
  err = pthread_create(&k->thread, NULL, waker, k);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    k->fd = -1;
    pthread_cond_destroy(&k->turned);
    close(k->stop_fd);
    return err;
  }
  pthread_setname_np(k->thread, "ocgc-wake");
  return 0;
}

void serve_wake_turned(struct serve_wake *k)
{
  if (k->fd < 0) return;
  k->turns++;
  pthread_cond_broadcast(&k->turned);
}

void serve_wake_stop(struct serve_wake *k)
{
  uint64_t one = 1;
  if (k->fd < 0) return;
  pthread_mutex_lock(k->lock);
  k->stopping = 1;
  pthread_cond_broadcast(&k->turned);
  pthread_mutex_unlock(k->lock);
  (void)!write(k->stop_fd, &one, sizeof one);
  pthread_join(k->thread, NULL);
  pthread_cond_destroy(&k->turned);
  close(k->stop_fd);
  k->fd = -1;
}
