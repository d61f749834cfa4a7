/* serve_auth.c - who may ask `ocgc serve` (serve_auth.h): the basic-auth
 * credentials of a request checked without a bcrypt on libmicrohttpd's one
 * HTTP thread, and a client certificate's purpose checked as Go checks it.
 *
 * A request without credentials is refused at once (401).  Credentials are
 * looked up, on the HTTP thread, by their HMAC (a key of this process's
 * own, over the name, the user's hash and the password) among those that
 * passed (SERVE_AUTH_GOOD, the least recently used replaced) and those
 * refused (SERVE_AUTH_BAD, the oldest replaced): a scraper's every request
 * after its first costs a base64 decoding and an HMAC, and so does a
 * client that repeats a wrong password.  Other credentials are queued
 * (SERVE_AUTH_QUEUE; past it 503, whoever they name) and their connection
 * suspended; the worker checks them one at a time and resumes the
 * connection with the verdict.
 *
 * Invariants:
 * - a name not in the file costs no bcrypt, and yet the same as one in it
 *   from the client's side: it takes the same queue, and every check the
 *   worker makes lasts, from its start, what a hash of the highest cost
 *   takes (slow_ns: measured at load, then followed as checks of that
 *   cost are made, so that a loaded machine's slower hashes are followed),
 *   and a quarter more for the noise: a known user's bcrypt is padded to
 *   it, an unknown user's refusal waits it out.  So
 *   the time of an answer tells neither whether a name exists nor which
 *   user's cost it has, and a flood of wrong passwords or unknown names
 *   holds at most SERVE_AUTH_QUEUE connections and the worker: credentials
 *   that passed are answered from the cache, on the HTTP thread, and wait
 *   for neither;
 * - what is kept of credentials is an HMAC under a key that never leaves
 *   the process; a password copied for the worker is zeroed once checked;
 * - a job is freed when both its holders let it go: the worker (once it
 *   decided; it then resumes the connection and touches the job no more)
 *   and the connection (serve_auth_take, or libmicrohttpd's completion);
 * - no libmicrohttpd call is made with the lock held; a connection is
 *   suspended before its job is visible to the worker, so its resume
 *   always follows its suspend; at stop every queued job is answered BUSY
 *   and resumed before libmicrohttpd stops;
 * - a new file (SIGHUP) restarts the worker with the caller's web lock held
 *   for writing, so that no request is in serve_auth_ask or _take: the old
 *   worker is joined before the users it points into are swapped, checks
 *   waiting are answered BUSY, and the caches and their key are renewed;
 *   the jobs and the lock live on, as libmicrohttpd's completions (outside
 *   that lock) may still let a job go. */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "clock.h"
#include "serve_auth.h"

#define PURPOSES_MAX 64 /* extended key usages looked at in one certificate */

enum job_state { JOB_FREE, JOB_RESERVED, JOB_QUEUED, JOB_WORKING, JOB_DONE };

struct serve_auth_job {
  enum job_state state;
  int worker_holds, conn_holds;
  struct MHD_Connection *c;
  const struct web_user *u;   /* NULL: a name not in the file */
  char *password;             /* the worker's copy, until checked */
  unsigned char key[32];
  uint64_t seq;
  enum serve_auth_verdict verdict;
};

/* Let [j] go if neither holds it any more (the lock held). */
static void job_release(struct serve_auth_job *j)
{
  if (j->worker_holds || j->conn_holds) return;
  if (j->password != NULL) {
    explicit_bzero(j->password, strlen(j->password));
    free(j->password);
  }
  memset(j, 0, sizeof *j);
}

/* The HMAC of the credentials, keyed by this process's secret: 0, or -1. */
static int cache_key(const struct serve_auth *a, const char *user, const struct web_user *u,
                     const char *password, unsigned char key[32])
{
  const char *hash = u != NULL ? u->hash : "";
  size_t nu = strlen(user) + 1, nh = strlen(hash) + 1, np = strlen(password);
  char *buf = malloc(nu + nh + np + 1);
  int rc;
  if (buf == NULL) return -1;
  memcpy(buf, user, nu);
  memcpy(buf + nu, hash, nh);
  memcpy(buf + nu + nh, password, np);
  rc = gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->secret, sizeof a->secret, buf, nu + nh + np, key) == 0
           ? 0 : -1;
  explicit_bzero(buf, nu + nh + np);
  free(buf);
  return rc;
}

/* What the cache says of [key] (the lock held): OK, DENIED, or QUEUED for
 * not known.  memcmp is enough: an HMAC under a key the client does not
 * know tells it nothing by where it differs. */
static enum serve_auth_verdict cached(struct serve_auth *a, const unsigned char key[32])
{
  unsigned i;
  for (i = 0; i < a->ngood; i++)
    if (memcmp(a->good[i].d, key, 32) == 0) {
      a->good[i].used = ++a->tick;
      return SERVE_AUTH_OK;
    }
  for (i = 0; i < a->nbad; i++)
    if (memcmp(a->bad[i], key, 32) == 0) return SERVE_AUTH_DENIED;
  return SERVE_AUTH_QUEUED;
}

/* Keep the verdict of [key] (the lock held). */
static void remember(struct serve_auth *a, const unsigned char key[32], int ok)
{
  unsigned i, lru = 0;
  if (!ok) {
    memcpy(a->bad[a->next_bad], key, 32);
    a->next_bad = (a->next_bad + 1) % SERVE_AUTH_BAD;
    if (a->nbad < SERVE_AUTH_BAD) a->nbad++;
    return;
  }
  if (a->ngood < SERVE_AUTH_GOOD) {
    lru = a->ngood++;
  } else {
    for (i = 1; i < SERVE_AUTH_GOOD; i++)
      if (a->good[i].used < a->good[lru].used) lru = i;
  }
  memcpy(a->good[lru].d, key, 32);
  a->good[lru].used = ++a->tick;
}

/* The oldest job queued, or NULL (the lock held). */
static struct serve_auth_job *next_job(struct serve_auth *a)
{
  struct serve_auth_job *best = NULL;
  unsigned i;
  for (i = 0; i < SERVE_AUTH_QUEUE; i++) {
    struct serve_auth_job *j = &a->jobs[i];
    if (j->state == JOB_QUEUED && (best == NULL || j->seq < best->seq)) best = j;
  }
  return best;
}

static void *worker(void *arg)
{
  struct serve_auth *a = arg;
  pthread_mutex_lock(&a->lock);
  for (;;) {
    struct serve_auth_job *j;
    struct MHD_Connection *c;
    uint64_t t0, dt, deadline, pad;
    int ok;
    if (a->stopping) break;
    if ((j = next_job(a)) == NULL) {
      pthread_cond_wait(&a->wake, &a->lock);
      continue;
    }
    j->state = JOB_WORKING;
    pad = a->slow_ns + a->slow_ns / 4;
    pthread_mutex_unlock(&a->lock);

    t0 = cm_mono_ns();
    ok = j->u != NULL && web_config_password_ok(j->u, j->password);
    dt = cm_mono_ns() - t0;
    explicit_bzero(j->password, strlen(j->password));

    pthread_mutex_lock(&a->lock);
    if (j->u != NULL && j->u->cost == a->web->max_cost)
      a->slow_ns = a->slow_ns - a->slow_ns / 8 + dt / 8;
    /* Every check lasts pad: a stop alone cuts it short. */
    deadline = t0 + pad;
    while (!a->stopping && cm_mono_ns() < deadline) {
      struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
      pthread_cond_timedwait(&a->wake, &a->lock, &ts);
    }
    remember(a, j->key, ok);
    free(j->password);
    j->password = NULL;
    j->verdict = ok ? SERVE_AUTH_OK : SERVE_AUTH_DENIED;
    j->state = JOB_DONE;
    j->worker_holds = 0;
    c = j->c;
    job_release(j);
    pthread_mutex_unlock(&a->lock);
    /* The job is the connection's now: not touched after this. */
    MHD_resume_connection(c);
    pthread_mutex_lock(&a->lock);
  }
  pthread_mutex_unlock(&a->lock);
  return NULL;
}

/* The worker started: 0, or an errno. */
static int start_worker(struct serve_auth *a)
{
  sigset_t block, old;
  int err;
  /* SIGINT, SIGTERM and SIGHUP are the main thread's. */
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  err = pthread_create(&a->thread, NULL, worker, a);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err == 0) a->running = 1;
  return err;
}

int serve_auth_start(struct serve_auth *a, const struct web_config *web)
{
  pthread_condattr_t ca;
  int err;
  memset(a, 0, sizeof *a);
  a->web = web;
  if (web->nusers == 0) return 0;
  a->slow_ns = web->slowest_ns;
  if (gnutls_rnd(GNUTLS_RND_KEY, a->secret, sizeof a->secret) != 0) return EIO;
  if ((a->jobs = calloc(SERVE_AUTH_QUEUE, sizeof *a->jobs)) == NULL) return ENOMEM;
  if ((err = pthread_mutex_init(&a->lock, NULL)) != 0) goto no_lock;
  if ((err = pthread_condattr_init(&ca)) != 0) goto no_cond;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* cm_mono_ns()'s clock */
  err = pthread_cond_init(&a->wake, &ca);
  pthread_condattr_destroy(&ca);
  if (err != 0) goto no_cond;
  a->inited = 1;
  return start_worker(a); /* on failure, serve_auth_free undoes the rest */
no_cond:
  pthread_mutex_destroy(&a->lock);
no_lock:
  free(a->jobs);
  a->jobs = NULL;
  return err;
}

void serve_auth_stop(struct serve_auth *a)
{
  struct MHD_Connection *resume[SERVE_AUTH_QUEUE];
  unsigned i, n = 0;
  if (!a->inited) return;
  pthread_mutex_lock(&a->lock);
  a->stopping = 1;
  pthread_cond_broadcast(&a->wake);
  pthread_mutex_unlock(&a->lock);
  if (a->running) pthread_join(a->thread, NULL);
  a->running = 0;
  pthread_mutex_lock(&a->lock);
  for (i = 0; i < SERVE_AUTH_QUEUE; i++) {
    struct serve_auth_job *j = &a->jobs[i];
    if (j->state != JOB_QUEUED) continue;
    j->verdict = SERVE_AUTH_BUSY;
    j->state = JOB_DONE;
    j->worker_holds = 0;
    resume[n++] = j->c;
    job_release(j);
  }
  pthread_mutex_unlock(&a->lock);
  for (i = 0; i < n; i++) MHD_resume_connection(resume[i]);
}

int serve_auth_restart(struct serve_auth *a, const struct web_config *web)
{
  int err;
  if (!a->inited) return serve_auth_start(a, web);
  serve_auth_stop(a); /* the worker joined, the queue answered 503 */
  pthread_mutex_lock(&a->lock);
  /* What was learnt of credentials under the old file is forgotten, and
   * the key it was kept under with it. */
  explicit_bzero(a->good, sizeof a->good);
  explicit_bzero(a->bad, sizeof a->bad);
  a->ngood = a->nbad = a->next_bad = 0;
  a->web = web;
  a->slow_ns = web->slowest_ns;
  err = gnutls_rnd(GNUTLS_RND_KEY, a->secret, sizeof a->secret) != 0 ? EIO : 0;
  a->stopping = 0;
  pthread_mutex_unlock(&a->lock);
  if (err != 0 || web->nusers == 0) return err; /* no worker: ask says BUSY */
  return start_worker(a);
}

void serve_auth_free(struct serve_auth *a)
{
  unsigned i;
  if (!a->inited) return;
  serve_auth_stop(a);
  for (i = 0; i < SERVE_AUTH_QUEUE; i++) {
    a->jobs[i].worker_holds = a->jobs[i].conn_holds = 0;
    job_release(&a->jobs[i]);
  }
  free(a->jobs);
  pthread_cond_destroy(&a->wake);
  pthread_mutex_destroy(&a->lock);
  explicit_bzero(a, sizeof *a);
}

enum serve_auth_verdict serve_auth_ask(struct serve_auth *a, struct MHD_Connection *c)
{
  char *user, *pass = NULL, *copy = NULL;
  const struct web_user *u;
  struct serve_auth_job *j = NULL;
  unsigned char key[32];
  enum serve_auth_verdict v;
  unsigned i;
  user = MHD_basic_auth_get_username_password(c, &pass);
  if (user == NULL || pass == NULL) {
    v = SERVE_AUTH_DENIED; /* nothing to check: no bcrypt, no queue */
    goto out;
  }
  u = web_config_user(a->web, user);
  if (cache_key(a, user, u, pass, key) != 0) {
    v = SERVE_AUTH_BUSY; /* out of memory */
    goto out;
  }
  pthread_mutex_lock(&a->lock);
  v = cached(a, key);
  if (v == SERVE_AUTH_QUEUED) {
    v = SERVE_AUTH_BUSY;
    for (i = 0; i < SERVE_AUTH_QUEUE && !a->stopping && a->running; i++)
      if (a->jobs[i].state == JOB_FREE) {
        j = &a->jobs[i];
        j->state = JOB_RESERVED; /* not the worker's yet */
        j->conn_holds = j->worker_holds = 1;
        j->c = c;
        j->u = u;
        memcpy(j->key, key, sizeof key);
        v = SERVE_AUTH_QUEUED;
        break;
      }
  }
  pthread_mutex_unlock(&a->lock);
  if (j == NULL) goto out;
  if ((copy = strdup(pass)) == NULL) {
    pthread_mutex_lock(&a->lock);
    j->conn_holds = j->worker_holds = 0;
    job_release(j);
    pthread_mutex_unlock(&a->lock);
    v = SERVE_AUTH_BUSY;
    goto out;
  }
  /* Suspended before the worker can see it: its resume then follows. */
  MHD_suspend_connection(c);
  pthread_mutex_lock(&a->lock);
  j->password = copy;
  if (a->stopping) {
    /* The stop may have swept the queue already: answered here. */
    j->verdict = SERVE_AUTH_BUSY;
    j->state = JOB_DONE;
    j->worker_holds = 0;
    job_release(j);
    pthread_mutex_unlock(&a->lock);
    MHD_resume_connection(c);
  } else {
    j->seq = ++a->seq;
    j->state = JOB_QUEUED;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
  }
out:
  if (pass != NULL) explicit_bzero(pass, strlen(pass));
  MHD_free(user);
  MHD_free(pass);
  explicit_bzero(key, sizeof key);
  return v;
}

/* The job of [c] that the connection holds, or NULL (the lock held). */
static struct serve_auth_job *job_of(struct serve_auth *a, struct MHD_Connection *c)
{
  unsigned i;
  for (i = 0; i < SERVE_AUTH_QUEUE; i++)
    if (a->jobs[i].conn_holds && a->jobs[i].c == c) return &a->jobs[i];
  return NULL;
}

enum serve_auth_verdict serve_auth_take(struct serve_auth *a, struct MHD_Connection *c)
{
  struct serve_auth_job *j;
  enum serve_auth_verdict v = SERVE_AUTH_BUSY;
  if (!a->inited) return v;
  pthread_mutex_lock(&a->lock);
  if ((j = job_of(a, c)) != NULL) {
    if (j->state == JOB_DONE) v = j->verdict;
    j->conn_holds = 0;
    job_release(j);
  }
  pthread_mutex_unlock(&a->lock);
  return v;
}

void serve_auth_completed(struct serve_auth *a, struct MHD_Connection *c)
{
  struct serve_auth_job *j;
  if (!a->inited) return;
  pthread_mutex_lock(&a->lock);
  if ((j = job_of(a, c)) != NULL) {
    j->conn_holds = 0;
    job_release(j);
  }
  pthread_mutex_unlock(&a->lock);
}

/* Whether [crt] may authenticate a client: no extended key usage, or one
 * that names clientAuth or any (Go's crypto/x509 rule). */
static int purpose_ok(gnutls_x509_crt_t crt)
{
  unsigned k;
  int any = 0;
  for (k = 0; k < PURPOSES_MAX; k++) {
    char oid[128];
    size_t n = sizeof oid;
    int r = gnutls_x509_crt_get_key_purpose_oid(crt, k, oid, &n, NULL);
    if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) break;
    any = 1;
    if (r < 0) continue; /* an OID longer than any purpose named here */
    if (strcmp(oid, GNUTLS_KP_TLS_WWW_CLIENT) == 0 || strcmp(oid, GNUTLS_KP_ANY) == 0) return 1;
  }
  return !any;
}

int serve_auth_client_purpose(const gnutls_datum_t *certs, unsigned n)
{
  unsigned i;
  for (i = 0; i < n; i++) {
    gnutls_x509_crt_t crt;
    int ok;
    if (gnutls_x509_crt_init(&crt) != 0) return 0;
    ok = gnutls_x509_crt_import(crt, &certs[i], GNUTLS_X509_FMT_DER) == 0 && purpose_ok(crt);
    gnutls_x509_crt_deinit(crt);
    if (!ok) return 0;
  }
  return 1;
}
