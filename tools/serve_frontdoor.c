/* serve_frontdoor.c - the acceptor of `ocgc serve` over TLS (serve.h):
 * it takes each connection first and looks at its first byte, so that a
 * plain HTTP request to the TLS port is answered "400 Bad Request" in
 * plain text, saying so (libmicrohttpd hands every byte to GnuTLS, which
 * could only close the connection with no word), and a TLS client is
 * handed to libmicrohttpd (MHD_add_connection) with nothing read.
 *
 * A connection waiting for its first byte has not begun its head (over
 * TLS the handshake is part of it), so the rule of serve_conns.c holds
 * here too: at most SERVE_FRONT_MAX wait, at most PER_ADDRESS of them
 * from one address, and a newcomer past either bound is taken and the
 * oldest waiting one (of its address, for the address's share) closed;
 * before, the newcomer was closed (or left in the backlog), and 600
 * silent clients from a scraper's address locked it out.  Once handed
 * over, serve_conns.c's table decides.
 *
 * Invariants: it never reads a byte (MSG_PEEK), so what libmicrohttpd gets
 * is the client's stream whole; at most SERVE_FRONT_MAX connections wait
 * for their first byte, each at most SERVE_HEAD_DEADLINE_S, so silent
 * clients cannot hold it; at most TAKE_BATCH accepts per turn, so a flood
 * of connections cannot keep it from the ones that spoke; a connection is
 * handed over only when the table says libmicrohttpd has room
 * (serve_conns_handover; else it waits, and the thread polls nothing but
 * its eventfd for STALL_MS); one thread, woken by an eventfd to stop;
 * every descriptor it holds is either handed over or closed by it. */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common.h"
#include "serve.h"

#define TLS_HANDSHAKE 0x16 /* the content type of a TLS record that opens one */
#define TAKE_BATCH 64      /* accepts per turn, at most */
#define STALL_MS 5         /* the wait when libmicrohttpd has no room yet */

static const char plain_answer[] =
  "HTTP/1.0 400 Bad Request\r\n"
  "Content-Type: text/plain; charset=utf-8\r\n"
  "Connection: close\r\n"
  "\r\n"
  "Client sent an HTTP request to an HTTPS server: this ocgc serve speaks TLS.\n";

static int same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  if (a->ss_family != b->ss_family) return 0;
  if (a->ss_family == AF_INET)
    return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                  &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr)) == 0;
  if (a->ss_family == AF_INET6)
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
  return 0; /* unix sockets: no address to tell clients apart (the file's mode decides) */
}

static void drop(struct serve_frontdoor *f, unsigned i)
{
  close(f->p[i].fd);
  f->p[i] = f->p[--f->n];
}

/* The oldest pending connection (of [like]'s address if [like]): its
 * index, or f->n if none. */
static unsigned oldest(const struct serve_frontdoor *f, const struct sockaddr_storage *like)
{
  unsigned i, best = f->n;
  for (i = 0; i < f->n; i++)
    if ((like == NULL || same_address(&f->p[i].addr, like)) &&
        (best == f->n || f->p[i].since_ns < f->p[best].since_ns))
      best = i;
  return best;
}

/* Take what the listening socket holds, TAKE_BATCH at most; past a bound
 * the oldest pending connection makes room for the newcomer. */
static void take(struct serve_frontdoor *f, uint64_t now)
{
  unsigned k;
  for (k = 0; k < TAKE_BATCH; k++) {
    struct serve_pending e;
    unsigned i, same = 0;
    e.alen = sizeof e.addr;
    e.fd = accept4(f->lfd, (struct sockaddr *)&e.addr, &e.alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (e.fd < 0) return; /* EAGAIN, or out of descriptors: the next turn */
    e.since_ns = now;
    for (i = 0; i < f->n; i++) same += same_address(&f->p[i].addr, &e.addr);
    if (same >= f->per_address) drop(f, oldest(f, &e.addr));
    else if (f->n >= SERVE_FRONT_MAX) drop(f, oldest(f, NULL));
    f->p[f->n++] = e;
  }
}

/* Pending [i] has something to say: hand it over if it opens TLS, else
 * answer it in plain text; either way it leaves the list.  0, or -1 when
 * libmicrohttpd has no room for it yet (it stays). */
static int judge(struct serve_frontdoor *f, unsigned i)
{
  unsigned char b;
  ssize_t r = recv(f->p[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (r == 1 && b == TLS_HANDSHAKE) {
    struct serve_pending e = f->p[i];
    if (!serve_conns_handover(f->conns)) return -1;
    f->p[i] = f->p[--f->n];
    /* Closes the socket itself if it cannot take it. */
    if (MHD_add_connection(f->d, e.fd, (const struct sockaddr *)&e.addr, e.alen) != MHD_YES)
      serve_conns_handover_failed(f->conns);
    return 0;
  }
  if (r == 1) {
    /* Best effort, never blocking: the answer fits any socket buffer. */
    (void)!send(f->p[i].fd, plain_answer, sizeof plain_answer - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(f->p[i].fd, SHUT_WR);
  }
  drop(f, i);
  return 0;
}

static void *front_thread(void *arg)
{
  struct serve_frontdoor *f = arg;
  struct pollfd pf[SERVE_FRONT_MAX + 2];
  int stalled = 0, retry;
  while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
    uint64_t now = cm_mono_ns(), deadline = now + 1000000000u;
    unsigned i, k = 0, base;
    int timeout;
    /* Past their deadline: closed (silent clients). */
    for (i = 0; i < f->n;) {
      uint64_t end = f->p[i].since_ns + (uint64_t)SERVE_HEAD_DEADLINE_S * 1000000000u;
      if (now >= end) { drop(f, i); continue; }
      if (end < deadline) deadline = end;
      i++;
    }
    pf[k++] = (struct pollfd){f->wake, POLLIN, 0};
    pf[k++] = (struct pollfd){stalled ? -1 : f->lfd, POLLIN, 0};
    base = k;
    for (i = 0; i < f->n; i++) pf[k++] = (struct pollfd){stalled ? -1 : f->p[i].fd, POLLIN, 0};
    timeout = stalled ? STALL_MS : (int)((deadline - now) / 1000000u) + 1;
    if (poll(pf, k, timeout) < 0 && errno != EINTR) break;
    if (pf[0].revents) break;
    /* Back to front: judge() moves the last one into the place it frees.
     * After a stall, every one is asked again (recv says who has spoken). */
    retry = stalled;
    stalled = 0;
    for (i = f->n; i-- > 0;)
      if ((retry || pf[base + i].revents) && judge(f, i) != 0) stalled = 1;
    if (retry || pf[1].revents) take(f, cm_mono_ns());
  }
  while (f->n > 0) drop(f, f->n - 1);
  return NULL;
}

int serve_frontdoor_start(struct serve_frontdoor *f, int lfd, unsigned per_address,
                          struct MHD_Daemon *d, struct serve_conns *conns)
{
  sigset_t block, old;
  int err;
  memset(f, 0, sizeof *f);
  f->lfd = lfd;
  f->d = d;
  f->conns = conns;
  f->per_address = per_address;
  if ((f->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) return errno;
  /* Accepting without blocking: a client that went between poll and
   * accept must not hold the thread. */
  if (fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) != 0) {
    err = errno;
    close(f->wake);
    return err;
  }
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  err = pthread_create(&f->thread, NULL, front_thread, f);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    close(f->wake);
    return err;
  }
  f->running = 1;
  return 0;
}

void serve_frontdoor_stop(struct serve_frontdoor *f)
{
  uint64_t one = 1;
  if (!f->running) return;
  /* Release: pairs with the thread's acquire load of stop. */
  __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
  (void)!write(f->wake, &one, sizeof one);
  pthread_join(f->thread, NULL);
  close(f->wake);
  f->running = 0;
}
