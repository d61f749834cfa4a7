/* watch_wait.c - a watch's epoll set (watch_wait.h): the descriptors a
 * caller of ocgc_watch_fd() waits on, each with its waiter.
 *
 * Invariants: the set's descriptor is close-on-exec, made at the first
 * descriptor put in it, so a watch with nothing to wait on has none
 * (ocgc_watch_fd() says -1); a turn asks with no wait and tells at most
 * WATCH_WAIT_BATCH waiters (level-triggered: the rest are ready again at
 * the next turn), so a crowd of ready descriptors cannot hold a turn. */

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "watch_wait.h"

void watch_wait_init(struct watch_wait *s)
{
  /* Made now, so that a caller that polls ocgc_watch_fd() from the start
   * is woken by what is added later (each process's pidfd); -1 if it
   * cannot be (then at the first add). */
  s->epfd = epoll_create1(EPOLL_CLOEXEC);
  s->n = 0;
}

int wait_set_add(struct watch_wait *s, int fd, struct watch_waiter *who)
{
  struct epoll_event ev;
  if (fd < 0 || who == NULL || who->fired == NULL) return -EINVAL;
  if (s->epfd < 0 && (s->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
    s->epfd = -1;
    return -errno;
  }
  ev.events = EPOLLIN;
  ev.data.ptr = who;
  if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) return -errno;
  s->n++;
  return 0;
}

int wait_set_del(struct watch_wait *s, int fd)
{
  if (s->epfd < 0) return -ENOENT;
  if (epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL) != 0) return -errno;
  s->n--;
  return 0;
}

unsigned wait_set_fired(struct watch_wait *s, struct ocgc_watch *w)
{
  struct epoll_event ev[WATCH_WAIT_BATCH];
  int n, i;
  if (s->epfd < 0 || s->n == 0) return 0;
  n = epoll_wait(s->epfd, ev, WATCH_WAIT_BATCH, 0);
  for (i = 0; i < n; i++) {
    struct watch_waiter *who = ev[i].data.ptr;
    who->fired(w, who, ev[i].events);
  }
  return n > 0 ? (unsigned)n : 0;
}

void watch_wait_free(struct watch_wait *s)
{
  if (s->epfd >= 0) close(s->epfd);
  s->epfd = -1;
  s->n = 0;
}
