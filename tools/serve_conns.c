/* serve_conns.c - the connections of `ocgc serve`, the deadline of a
 * request's head and who gives way when they are too many (serve.h).
 *
 * The deadline: libmicrohttpd closes a connection idle for its timeout,
 * but a client that trickles a header line every few seconds is never
 * idle: 512 of them held every slot for as long as they went on
 * (slowloris).  So each connection's head (from its accept, or from the
 * end of its previous answer) must be whole within SERVE_HEAD_DEADLINE_S;
 * the main thread's sweep shuts down the socket of one that is not, and
 * libmicrohttpd, seeing it end, closes the connection.
 *
 * Who gives way: the deadline alone still let a crowd of tricklers fill
 * the table, and a scraper waited in the listen backlog until the sweep
 * (5 to 10 s, against Prometheus's 10 s scrape timeout), or was refused
 * outright when the crowd came from its own address (libmicrohttpd's
 * per-IP limit closes the newcomer).  So the table takes every newcomer,
 * and when that makes more than [max] live connections, or more than
 * [per_address] of the newcomer's IP address, one of the oldest
 * connections whose head is not whole (of that address, for its share)
 * is cut: of the GIVEWAY_LOOK oldest, the one idle longest
 * (serve_giveway.c, where the reason is).  A client
 * that sends its request as it connects (a scraper does) is whole within
 * a turn of libmicrohttpd's loop; to be cut it would have to be among the
 * oldest heads, [max] (or [per_address]) newer connections arrived before
 * its head is whole, and the most idle of them: one that sends as fast as
 * the server reads is not idle (a TLS handshake's round trips on a loaded
 * machine), a trickler is, between its bytes.  A connection in a
 * request (its head whole, answer under way) never gives way: if all the
 * others are, the newcomer itself is the only unfinished head and is
 * cut, which is the refusal of a full server.  Over TLS the handshake is
 * part of the head (the head is whole when the access handler first sees
 * the request); the front door applies the same rule to the connections
 * that have not sent their first byte (serve_frontdoor.c).
 *
 * libmicrohttpd's own limits are set so that it refuses nothing by itself:
 * no per-IP limit, and a connection limit SERVE_CONNS_SLACK above [max],
 * room for the connections cut and not yet closed (it closes them on the
 * next turn of its loop, and accepts at most 10 per turn; at its limit it
 * stops accepting and the kernel holds the newcomer in the backlog, it
 * does not refuse).  The front door hands a connection over only while the
 * table's entries and those in flight stay SERVE_CONNS_SLACK / 2 below
 * libmicrohttpd's limit (serve_conns_handover), since libmicrohttpd
 * closes a handed-over connection past it.
 *
 * Invariants: the table is guarded by its lock; live <= max and, per IP
 * address, live <= per_address after every STARTED notification; an entry
 * leaves it in libmicrohttpd's CLOSED notification, which comes before
 * libmicrohttpd closes the socket: so a socket shut down under the lock
 * is still the connection's, never a descriptor reused for something
 * else; the sweep and the eviction only shut a socket down (shutdown(2)),
 * never close it; the choice of who gives way asks the kernel about
 * sockets of the table only (getsockopt, ioctl: under the lock, still
 * theirs); a connection is cut at most once.  The scans are over
 * the table, at most max + SERVE_CONNS_SLACK entries. */

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "common.h"
#include "serve.h"

struct serve_conn {
  struct serve_conn *prev, *next;
  int fd;
  int family;                 /* AF_INET, AF_INET6; else no address (unix) */
  unsigned char addr[16];     /* the client's IP address */
  uint64_t head_since_ns;     /* cm_mono_ns() its head began; 0: in a request */
  int cut;                    /* shut down (deadline, or gave way) */
};

void serve_conns_init(struct serve_conns *t)
{
  memset(t, 0, sizeof *t);
  pthread_mutex_init(&t->lock, NULL);
  t->max = t->per_address = ~0u;
}

void serve_conns_destroy(struct serve_conns *t)
{
  pthread_mutex_destroy(&t->lock);
}

void serve_conns_limits(struct serve_conns *t, unsigned max, unsigned per_address)
{
  pthread_mutex_lock(&t->lock);
  t->max = max;
  t->per_address = per_address;
  pthread_mutex_unlock(&t->lock);
}

static void set_address(struct serve_conn *e, const struct sockaddr *sa)
{
  e->family = AF_UNSPEC;
  if (sa == NULL) return;
  if (sa->sa_family == AF_INET) {
    e->family = AF_INET;
    memcpy(e->addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  } else if (sa->sa_family == AF_INET6) {
    e->family = AF_INET6;
    memcpy(e->addr, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
  }
}

static int same_address(const struct serve_conn *a, const struct serve_conn *b)
{
  return a->family != AF_UNSPEC && a->family == b->family &&
         memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* Under the lock: cut [e]. */
static void cut(struct serve_conns *t, struct serve_conn *e)
{
  shutdown(e->fd, SHUT_RDWR);
  e->cut = 1;
  t->live--;
}

/* Under the lock: of the GIVEWAY_LOOK oldest live connections whose head
 * is not whole (of [like]'s address if [like]), the one that gives way
 * (serve_giveway_pick: the one idle longest), or NULL. */
static struct serve_conn *giving_way(struct serve_conns *t, const struct serve_conn *like)
{
  struct serve_conn *e, *old[GIVEWAY_LOOK];
  struct serve_giveway g[GIVEWAY_LOOK];
  size_t n = 0, i, j;
  for (e = t->head; e != NULL; e = e->next) {
    if (e->cut || e->head_since_ns == 0 || (like != NULL && !same_address(e, like))) continue;
    /* kept oldest first; newest first in the table: on a tie, the one that
     * came first goes before */
    for (i = n; i > 0 && e->head_since_ns <= old[i - 1]->head_since_ns; i--) {}
    if (i >= GIVEWAY_LOOK) continue;
    if (n < GIVEWAY_LOOK) n++;
    for (j = n - 1; j > i; j--) old[j] = old[j - 1];
    old[i] = e;
  }
  if (n == 0) return NULL;
  for (i = 0; i < n; i++) g[i].fd = old[i]->fd, g[i].head_since_ns = old[i]->head_since_ns;
  return old[serve_giveway_pick(g, n, cm_mono_ns())];
}

/* Under the lock: newcomer [n] is in; make the table hold to its limits. */
static void make_room(struct serve_conns *t, struct serve_conn *n)
{
  struct serve_conn *e, *v;
  unsigned same = 0;
  if (n->family != AF_UNSPEC)
    for (e = t->head; e != NULL; e = e->next) same += !e->cut && same_address(e, n);
  if (same > t->per_address && (v = giving_way(t, n)) != NULL) {
    cut(t, v);
    t->gave_way++;
  }
  if (t->live > t->max && (v = giving_way(t, NULL)) != NULL) {
    cut(t, v);
    t->gave_way++;
  }
}

void serve_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
  struct serve_conns *t = cls;
  struct serve_conn *e = *socket_context;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    pthread_mutex_lock(&t->lock);
    if (t->in_flight > 0) t->in_flight--; /* over TLS, every connection is the front door's */
    if (ci == NULL || (e = calloc(1, sizeof *e)) == NULL) { /* not tracked: idle timeout only */
      pthread_mutex_unlock(&t->lock);
      return;
    }
    e->fd = ci->connect_fd;
    set_address(e, ai != NULL ? ai->client_addr : NULL);
    e->head_since_ns = cm_mono_ns();
    e->next = t->head;
    if (t->head != NULL) t->head->prev = e;
    t->head = e;
    t->entries++;
    t->live++;
    make_room(t, e);
    pthread_mutex_unlock(&t->lock);
    *socket_context = e;
    return;
  }
  if (toe != MHD_CONNECTION_NOTIFY_CLOSED || e == NULL) return;
  pthread_mutex_lock(&t->lock);
  if (e->prev != NULL) e->prev->next = e->next;
  else t->head = e->next;
  if (e->next != NULL) e->next->prev = e->prev;
  t->entries--;
  if (!e->cut) t->live--;
  pthread_mutex_unlock(&t->lock);
  *socket_context = NULL;
  free(e);
}

/* The entry of connection [c], or NULL. */
static struct serve_conn *entry_of(struct MHD_Connection *c)
{
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci != NULL ? ci->socket_context : NULL;
}

void serve_conns_head_done(struct serve_conns *t, struct MHD_Connection *c)
{
  struct serve_conn *e = entry_of(c);
  if (e == NULL) return;
  pthread_mutex_lock(&t->lock);
  e->head_since_ns = 0;
  pthread_mutex_unlock(&t->lock);
}

void serve_conns_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
  struct serve_conns *t = cls;
  struct serve_conn *e = entry_of(c);
  (void)con_cls, (void)toe;
  if (e == NULL) return;
  pthread_mutex_lock(&t->lock);
  e->head_since_ns = cm_mono_ns(); /* the next request's head, if any */
  pthread_mutex_unlock(&t->lock);
}

unsigned serve_conns_sweep(struct serve_conns *t, uint64_t now)
{
  struct serve_conn *e;
  unsigned n;
  pthread_mutex_lock(&t->lock);
  n = t->gave_way;
  t->gave_way = 0;
  for (e = t->head; e != NULL; e = e->next) {
    if (e->cut || e->head_since_ns == 0 ||
        now - e->head_since_ns < (uint64_t)SERVE_HEAD_DEADLINE_S * 1000000000u)
      continue;
    cut(t, e);
    n++;
  }
  pthread_mutex_unlock(&t->lock);
  return n;
}

int serve_conns_handover(struct serve_conns *t)
{
  int ok;
  pthread_mutex_lock(&t->lock);
  /* libmicrohttpd counts a connection until after its CLOSED notification
   * (one at a time): half the slack covers that and rounding. */
  ok = t->max == ~0u || t->entries + t->in_flight < t->max + SERVE_CONNS_SLACK / 2;
  if (ok) t->in_flight++;
  pthread_mutex_unlock(&t->lock);
  return ok;
}

void serve_conns_handover_failed(struct serve_conns *t)
{
  pthread_mutex_lock(&t->lock);
  if (t->in_flight > 0) t->in_flight--;
  pthread_mutex_unlock(&t->lock);
}
