/* watch_wait.h - the descriptors a watch waits on (private; code in
 * watch_wait.c, the hook on a watch in watch.c): one epoll set, which
 * ocgc_watch_fd() hands to the caller, holding the inotify descriptor of
 * the ring folders (watch_notify.c) and whatever another part of the
 * watch puts in it (a pidfd per process, readable when it dies).  The
 * caller polls the set and calls ocgc_watch_poll(), which asks the set
 * which descriptors fired (epoll_wait with no wait) and tells each its
 * waiter before anything else of the turn. */
#ifndef OCGC_WATCH_WAIT_H
#define OCGC_WATCH_WAIT_H

#include <stdint.h>

struct ocgc_watch;

/* Who a descriptor in the set belongs to: embedded in its owner's
 * memory, which it must outlive until watch_wait_del().  [fired] is
 * called from ocgc_watch_poll() with the epoll events of its descriptor
 * (level-triggered: a descriptor left readable fires at every turn, so
 * the waiter reads it, or takes it out, or makes its cause go).  It may
 * only mark what is to be done in the turn (a process to check now):
 * another waiter of the same turn's batch must not be freed from it. */
struct watch_waiter {
  void (*fired)(struct ocgc_watch *w, struct watch_waiter *self, uint32_t events);
};

/* The set (its descriptor made by watch_wait_init, else at the first
 * add; -1 until then). */
struct watch_wait {
  int epfd;
  unsigned n;                 /* descriptors in it */
};

/* Descriptors told per turn, at most (the rest at the next turn). */
#define WATCH_WAIT_BATCH 64

void watch_wait_init(struct watch_wait *s);
/* Put [fd] in [s] for EPOLLIN, its waiter [who]: 0 or -errno. */
int wait_set_add(struct watch_wait *s, int fd, struct watch_waiter *who);
/* Take [fd] out (before it is closed, or with it: a closed descriptor
 * leaves the set by itself): 0 or -errno. */
int wait_set_del(struct watch_wait *s, int fd);
/* Tell the waiters of the descriptors ready now (no wait), at most
 * WATCH_WAIT_BATCH of them: how many were told. */
unsigned wait_set_fired(struct watch_wait *s, struct ocgc_watch *w);
void watch_wait_free(struct watch_wait *s);

/* The same on a watch's own set (watch.c), for the other parts of the
 * watch: what they add fires in ocgc_watch_poll() and wakes whoever polls
 * ocgc_watch_fd(). */
int watch_wait_add(struct ocgc_watch *w, int fd, struct watch_waiter *who);
int watch_wait_del(struct ocgc_watch *w, int fd);

#endif /* OCGC_WATCH_WAIT_H */
