/* serve_auth.h - who may ask `ocgc serve` (serve_auth.c): basic auth
 * answered without a bcrypt on the HTTP thread, and the client
 * certificate's purpose.  Private to tools/. */
#ifndef OCGC_TOOLS_SERVE_AUTH_H
#define OCGC_TOOLS_SERVE_AUTH_H

#include <pthread.h>
#include <stdint.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "webconfig.h"

#define SERVE_AUTH_QUEUE 8     /* checks waiting or under way; past them: 503 */
#define SERVE_AUTH_GOOD 64     /* credentials that passed, kept */
#define SERVE_AUTH_BAD 64      /* credentials refused, kept */

enum serve_auth_verdict {
  SERVE_AUTH_OK,        /* go on */
  SERVE_AUTH_DENIED,    /* 401 */
  SERVE_AUTH_QUEUED,    /* the connection is suspended until its check is done */
  SERVE_AUTH_BUSY       /* 503: the queue is full, or the server stops */
};

struct serve_auth_job;

struct serve_auth {
  const struct web_config *web;
  unsigned char secret[32];   /* the cache's HMAC key, this process's own */
  uint64_t slow_ns;           /* a check of the highest cost lately: at load, then
                                 the mean of those made (1/8 each) */
  pthread_mutex_t lock;       /* guards what follows; no libmicrohttpd call is made
                                 under it */
  pthread_cond_t wake;        /* the worker waits on it (CLOCK_MONOTONIC) */
  pthread_t thread;
  int inited, running, stopping;
  struct serve_auth_job *jobs; /* SERVE_AUTH_QUEUE slots */
  uint64_t seq;               /* the order jobs came in */
  struct { unsigned char d[32]; uint64_t used; } good[SERVE_AUTH_GOOD];
  unsigned ngood;
  unsigned char bad[SERVE_AUTH_BAD][32];
  unsigned nbad, next_bad;
  uint64_t tick;              /* for good[].used: the least recently used goes */
};

/* For [web]'s users: 0, or an errno.  The worker starts only when there
 * are users.  [web] outlives [a] and does not change under it (jobs point
 * to its users): a new file takes serve_auth_stop, serve_auth_free and a
 * new start, with no request in admit() meanwhile. */
int serve_auth_start(struct serve_auth *a, const struct web_config *web);
/* A new file's users (SIGHUP), [web] the same object as before or not:
 * the worker ended (checks waiting answered BUSY, their connections
 * resumed), the credentials remembered forgotten, and a worker started for
 * [web]'s users, if any.  The caller holds off every serve_auth_ask and
 * serve_auth_take meanwhile (serve.c's web lock, for writing) and frees
 * the old users only after: 0, or an errno (then every check says BUSY). */
int serve_auth_restart(struct serve_auth *a, const struct web_config *web);
/* Every check waiting answered BUSY and its connection resumed, the
 * worker ended: before libmicrohttpd stops (it may not stop with a
 * connection suspended). */
void serve_auth_stop(struct serve_auth *a);
/* After libmicrohttpd stopped (its completions may still free jobs). */
void serve_auth_free(struct serve_auth *a);

/* The basic-auth credentials of the request on [c] (on the HTTP thread,
 * in its callback): OK or DENIED at once when they are known (passed or
 * refused lately) or absent, or for a user not in the file that was
 * refused before; else QUEUED (the connection suspended: ask
 * serve_auth_take when libmicrohttpd calls again) or BUSY. */
enum serve_auth_verdict serve_auth_ask(struct serve_auth *a, struct MHD_Connection *c);
/* The verdict of [c]'s check, once resumed (its job freed). */
enum serve_auth_verdict serve_auth_take(struct serve_auth *a, struct MHD_Connection *c);
/* [c] ended with a check not taken (libmicrohttpd's completion). */
void serve_auth_completed(struct serve_auth *a, struct MHD_Connection *c);

/* Whether the certificates a client sent ([n] of [certs], DER, its own
 * first) may authenticate a client, as Go checks: each that has an
 * extended key usage names clientAuth or anyExtendedKeyUsage. */
int serve_auth_client_purpose(const gnutls_datum_t *certs, unsigned n);

#endif /* OCGC_TOOLS_SERVE_AUTH_H */
