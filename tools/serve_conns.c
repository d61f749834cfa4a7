/* serve_conns.c - the connections of `ocgc serve` and the deadline of a
 * request's head (serve.h).  libmicrohttpd closes a connection idle for
 * its timeout, but a client that trickles a header line every few seconds
 * is never idle: 512 of them held every slot for as long as they went on
 * (slowloris).  So each connection's head (from its accept, or from the
 * end of its previous answer) must be whole within SERVE_HEAD_DEADLINE_S;
 * the main thread's sweep shuts down the socket of one that is not, and
 * libmicrohttpd, seeing it end, closes the connection.
 *
 * Invariants: the table is guarded by its lock, and an entry leaves it in
 * libmicrohttpd's CLOSED notification, which comes before libmicrohttpd
 * closes the socket: so a socket shut down under the lock is still the
 * connection's, never a descriptor reused for something else; the sweep
 * only shuts a socket down (shutdown(2)), never closes it. */

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "common.h"
#include "serve.h"

struct serve_conn {
  struct serve_conn *prev, *next;
  int fd;
  uint64_t head_since_ns;     /* cm_mono_ns() its head began; 0: in a request */
  int cut;                    /* shut down by the sweep */
};

void serve_conns_init(struct serve_conns *t)
{
  memset(t, 0, sizeof *t);
  pthread_mutex_init(&t->lock, NULL);
}

void serve_conns_destroy(struct serve_conns *t)
{
  pthread_mutex_destroy(&t->lock);
}

void serve_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
  struct serve_conns *t = cls;
  struct serve_conn *e = *socket_context;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci == NULL || (e = calloc(1, sizeof *e)) == NULL) return; /* not swept: idle timeout only */
    e->fd = ci->connect_fd;
    e->head_since_ns = cm_mono_ns();
    pthread_mutex_lock(&t->lock);
    e->next = t->head;
    if (t->head != NULL) t->head->prev = e;
    t->head = e;
    pthread_mutex_unlock(&t->lock);
    *socket_context = e;
    return;
  }
  if (toe != MHD_CONNECTION_NOTIFY_CLOSED || e == NULL) return;
  pthread_mutex_lock(&t->lock);
  if (e->prev != NULL) e->prev->next = e->next;
  else t->head = e->next;
  if (e->next != NULL) e->next->prev = e->prev;
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
  unsigned cut = 0;
  pthread_mutex_lock(&t->lock);
  for (e = t->head; e != NULL; e = e->next) {
    if (e->cut || e->head_since_ns == 0 ||
        now - e->head_since_ns < (uint64_t)SERVE_HEAD_DEADLINE_S * 1000000000u)
      continue;
    shutdown(e->fd, SHUT_RDWR);
    e->cut = 1;
    cut++;
  }
  pthread_mutex_unlock(&t->lock);
  return cut;
}
