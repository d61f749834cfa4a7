/* serve.c - `ocgc serve`: the watched processes' GC and process figures as
 * Prometheus metrics over HTTP, served by libmicrohttpd (no HTTP of our
 * own).  What it owns: the options, the listening socket, the routes and
 * the lifetime; the figures are serve_metrics.c's, the set of processes
 * serve_set.c's.
 *
 * Invariants:
 * - everything is bounded: one internal polling thread (epoll; requests
 *   are answered one at a time), at most MAX_CONNECTIONS (512) live
 *   connections, PER_ADDRESS (128) of one address, each closed after
 *   TIMEOUT_S (5) idle seconds or when its request's head is not whole
 *   SERVE_HEAD_DEADLINE_S (10) after it began; past either bound the
 *   oldest connection whose head is not whole gives way to the newcomer,
 *   so that a scraper always gets in (serve_conns.c); libmicrohttpd's own
 *   limit is SERVE_CONNS_SLACK (64) higher, for the connections cut and
 *   not yet closed.  Each has CONN_MEMORY (32 KiB) for its request and
 *   response head (a longer request line or header is refused by
 *   libmicrohttpd: 414, 431), responses up to SERVE_BUF_MAX.  Worst case
 *   in memory: the connections, 576 x (32 KiB + libmicrohttpd's state,
 *   about 1 KiB, + the table's entry, 64 bytes) = about 19 MiB, over TLS
 *   plus GnuTLS's state of each (tens of KiB while it shakes hands) and
 *   the front door's SERVE_FRONT_MAX (512) waiting for their first byte
 *   (a socket each, no buffer of ours); plus each body answered and not
 *   yet read by its client (one copy per request, freed once sent or when
 *   the connection times out for want of progress): up to 512 x the
 *   /metrics size (a connection cut to make room has no body: its head
 *   was not whole).  Descriptors: up to 576 connections + 512 waiting
 *   (TLS) + the rings: raise_nofile() raises the soft limit to the hard
 *   one;
 * - no lock is ever held across a read of target memory: the poll thread
 *   alone reads rings and /proc and uses the set, and publishes rendered
 *   bodies under a mutex that requests take only to ask and to copy; a
 *   request is answered within ANSWER_WAIT_NS (0.5 s) plus its copy,
 *   whatever the watched processes do (frozen mid-publication, lying,
 *   slow), and /-/healthy says 503 when the poll thread has not ended a
 *   turn for SERVE_HEALTH_TURN_NS (5 s) or the last /metrics answer could
 *   not be made (serve_health.c);
 * - with --web.config.file (webconfig.c), every path wants what it says
 *   before anything is read or rendered (admit(): 403 for a client
 *   certificate missing, not of the CA or not for a client, 401 for basic
 *   auth, whose bcrypt never runs on the HTTP thread: serve_auth.c), and
 *   its headers are on every answer (queue()); over TLS the front door
 *   (serve_frontdoor.c) accepts, answers a plain HTTP request 400, and
 *   hands the rest to libmicrohttpd;
 * - /debug/pprof answers only whom serve_pprof_access.c's rule lets have
 *   a profile (pprof(): over TCP an authenticated client, or any with
 *   --web.enable-pprof; else 403 saying which option opens it);
 * - GET and HEAD only (405 with Allow otherwise), 404 for unknown paths;
 * - /metrics is OpenMetrics when the Accept header prefers it (as
 *   Prometheus's does), text 0.0.4 otherwise (expo_negotiate);
 * - the "listening on" line goes to stderr once the socket is bound and
 *   listening, so a script can wait for it and read the port;
 * - --textfile: the text exposition written every --interval by the main
 *   thread (serve_textfile.c), the file removed at exit;
 * - SIGINT and SIGTERM stop it: exit 0; SIGHUP never does: the main loop
 *   reads --web.config.file again (serve_reload.c) and swaps it in under
 *   web_lock's write side, which every request holds for reading;
 * - --run-as: it listens, then becomes USER (serve_privs.c) before any
 *   target is read and before any thread is started. */

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "common.h"
#include "serve.h"
#include "serve_auth.h"
#include "webconfig.h"

/* 9464: the port the OpenTelemetry SDKs' Prometheus exporters listen on by
 * default; ocgc serve is that kind of exporter (ocaml.gc.* names) for
 * programs that cannot run one themselves.  Prometheus's own allocation
 * list (9100-9999) is full.  Loopback: the figures (program names, pids)
 * are the host's business; expose them on purpose with --listen. */
#define DEFAULT_LISTEN "127.0.0.1:9464"
/* A flood of clients, or of connections that say nothing, takes at most
 * MAX_CONNECTIONS slots, each for TIMEOUT_S idle seconds at most; past the
 * limit the oldest connection whose request's head is not whole gives way
 * to the newcomer (serve_conns.c), so a client that sends its request at
 * once is served whatever the flood does; before, libmicrohttpd stopped
 * accepting and a scraper waited in the listen backlog for the flood's
 * heads to reach their deadline (5 s and more).  512:
 * several Prometheus servers, pollers and hundreds of curls at once
 * (serve_http.sh holds 300), within the 1024 descriptors a process gets by
 * default with room for rings and /proc files (past that libmicrohttpd
 * also stops accepting until one closes).  Epoll: with hundreds of
 * connections, poll() would rescan every idle one at each event.  5 s:
 * a scraper sends its request at once and reads the answer as it comes;
 * Prometheus scrapes every 15 s or more, so a longer idle time would not
 * keep its connection between scrapes anyway, only a silent client's. */
#define MAX_CONNECTIONS 512
/* One address may hold at most a quarter of them: a client that opens
 * connections and trickles its requests (slowloris) from one address
 * leaves the rest to the others; SERVE_HEAD_DEADLINE_S ends each of its
 * connections meanwhile.  Past the quarter that address's own oldest
 * unfinished head gives way, not the newcomer: a scraper sharing the
 * address (a NAT, the same host) still gets in. */
#define PER_ADDRESS 128
#define TIMEOUT_S 5
#define CONN_MEMORY (32u * 1024)

#define DEFAULT_INTERVAL_NS (15 * UINT64_C(1000000000)) /* --textfile */

/* What a request asks the poll thread to render. */
enum body_kind { BODY_TEXT, BODY_OPENMETRICS, BODY_INDEX, BODY_KINDS };

/* A request waits at most ANSWER_WAIT_NS for the figures it asks for; the
 * reads they need stop after REFRESH_BUDGET_NS, and whatever was not read
 * by then is served from its last figures (ocgc_serve_stale).  Past the
 * wait (the poll thread inside a ring that takes long), the figures of the
 * last read are served (ocgc_serve_late_scrapes_total).  So /metrics
 * answers within ANSWER_WAIT_NS plus the copy of its body, whatever the
 * watched processes do.  /-/healthy says whether the poll thread finished a
 * turn lately and the last /metrics answer was whole (serve_health.c). */
#define ANSWER_WAIT_NS 500000000u     /* 0.5 s */
#define WAIT_SLICE_NS 20000000u       /* 20 ms: how soon a waiting main thread sees a stop */
#define REFRESH_BUDGET_NS 400000000u  /* 0.4 s */
#define FIRST_READ_NS 10000000000u    /* 10 s: the read before listening */

struct serve {
  /* Guards what follows up to [set]; never held across a read of target
   * memory (which only the poll thread does, with no lock held). */
  pthread_mutex_t lock;
  pthread_cond_t wake;        /* the poll thread waits on it (CLOCK_MONOTONIC) */
  pthread_cond_t ready;       /* requests wait on it for their body */
  int stopping;
  unsigned wanted;            /* bit per body_kind asked since the poll thread took the asks */
  uint64_t asked;             /* asks made */
  uint64_t answered;          /* the last ask whose bodies are rendered */
  struct serve_body *body[BODY_KINDS]; /* the last rendered, per kind (a
                                 reference each; NULL: none yet, or out of memory) */
  uint64_t turn_ns;           /* cm_mono_ns() when the poll thread last ended a turn */
  int metrics_failed;         /* the last /metrics body rendered failed (or is NULL) */
  int pending;                /* an ask waits: read by the poll thread between
                                 rings, without the lock (atomic) */
  struct serve_wake waker;    /* wakes the poll thread when new rings are to be
                                 opened (its flag and turns under lock) */
  struct serve_set set;       /* the poll thread's alone once it runs */
  struct serve_body_writer writer; /* the poll thread's */
  struct serve_conns conns;   /* libmicrohttpd's thread and the main thread's sweep */
  const char *listen;         /* NULL: no HTTP (--textfile without --listen) */
  unsigned socket_mode;       /* --socket-mode, for --listen unix:PATH */
  struct serve_listener where; /* where it listens, once it does */
  struct serve_frontdoor front; /* over TLS: the acceptor (running once started) */
  const char *web_file;       /* --web.config.file, or NULL */
  regex_t program_re;         /* --program, compiled (set.program_re points to it) */
  struct web_config web;      /* what it says (all zero without one); read by
                                 requests under web_lock's read side, swapped
                                 by a SIGHUP under its write side */
  pthread_rwlock_t web_lock;
  struct web_config web_boot; /* after a swap: the one libmicrohttpd's TLS
                                 was started with, kept until the end */
  int have_boot;
  struct serve_auth auth;     /* basic auth's cache and worker (serve_auth.c);
                                 restarted with a swap of web */
  struct serve_privs privs;   /* --run-as */
  int bound_early;            /* --run-as bound [where] before http_start */
  struct serve_textfile tf;   /* tf.path NULL: no --textfile */
  struct serve_pprof pprof;   /* /debug/pprof: its worker and its queue */
  int enable_pprof;           /* --web.enable-pprof: profiles to any client */
  struct serve_flight flight; /* --flight-dir: its options, folder and asks */
  int flight_pending;         /* a recording is asked (under lock): the poll
                                 thread does not wait before taking it */
};

/* serve_set's yield: a request waits.  Acquire: pairs with the release
 * store in ask(). */
static int ask_waiting(void *ctx)
{
  struct serve *sv = ctx;
  return __atomic_load_n(&sv->pending, __ATOMIC_ACQUIRE);
}

/* Render the kinds in [wanted] of the set as read now into [out] (each a
 * new body, or NULL out of memory). */
static void render_kinds(struct serve *sv, unsigned wanted, struct serve_body **out)
{
  unsigned k;
  for (k = 0; k < BODY_KINDS; k++) {
    struct serve_body_writer *w = &sv->writer;
    if (!(wanted & 1u << k)) continue;
    if (serve_body_begin(w) != 0) { out[k] = NULL; continue; }
    if (k == BODY_INDEX) serve_set_index(&sv->set, serve_body_put, w);
    else serve_set_metrics(&sv->set, serve_body_put, w,
                           k == BODY_TEXT ? OCGC_EXPO_TEXT : OCGC_EXPO_OPENMETRICS);
    out[k] = serve_body_finish(w);
  }
}

/* The poll thread: the only reader of target memory, and the only user of
 * the set.  It drains each ring on its schedule (serve_set_poll) between
 * requests, so that a ring does not overflow because nobody scrapes; for
 * a request, it reads the set within REFRESH_BUDGET_NS, renders what was
 * asked, and publishes it under the lock.  No lock is held while it reads. */
static void *poll_thread(void *arg)
{
  struct serve *sv = arg;
  uint64_t next = 0, members_ns = cm_mono_ns();
  pthread_mutex_lock(&sv->lock);
  while (!sv->stopping) {
    struct serve_body *fresh[BODY_KINDS];
    unsigned wanted = sv->wanted, k;
    uint64_t asked = sv->asked, now;
    sv->wanted = 0;
    sv->flight_pending = 0;
    sv->waker.woken = 0; /* this turn reads what woke it */
    __atomic_store_n(&sv->pending, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sv->lock);

    memset(fresh, 0, sizeof fresh);
    now = cm_mono_ns();
    if (wanted != 0) {
      serve_set_refresh(&sv->set, now + REFRESH_BUDGET_NS);
      render_kinds(sv, wanted, fresh);
      next = now; /* and a turn of polls right after */
    } else {
      next = serve_set_poll(&sv->set, now);
    }
    serve_flight_turn(&sv->flight, sv->set.watch); /* a recording asked, if any */
    if (now - members_ns >= SERVE_MEMBERS_NS) { /* who /debug/pprof may ask for */
      serve_set_members(&sv->set);
      members_ns = now;
    }

    pthread_mutex_lock(&sv->lock);
    for (k = 0; k < BODY_KINDS; k++) {
      if (!(wanted & 1u << k)) continue;
      serve_body_unref(sv->body[k]);
      sv->body[k] = fresh[k];
      if (k == BODY_TEXT || k == BODY_OPENMETRICS)
        sv->metrics_failed = fresh[k] == NULL || fresh[k]->failed;
    }
    if (wanted != 0) {
      sv->answered = asked;
      pthread_cond_broadcast(&sv->ready);
    }
    sv->turn_ns = cm_mono_ns();
    serve_wake_turned(&sv->waker);
    if (!sv->stopping && sv->wanted == 0 && !sv->flight_pending && !sv->waker.woken &&
        next > sv->turn_ns) {
      struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
      pthread_cond_timedwait(&sv->wake, &sv->lock, &ts);
    }
  }
  pthread_mutex_unlock(&sv->lock);
  return NULL;
}

/* Start the poll thread with SIGINT and SIGTERM blocked in it (the main
 * thread takes them): 0, or an errno. */
static int poll_start(struct serve *sv, pthread_t *t)
{
  sigset_t block, old;
  int err;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  err = pthread_create(t, NULL, poll_thread, sv);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  /* For top -H, perf and gdb (and serve_first_scrape.sh, which stops it). */
  if (err == 0) pthread_setname_np(*t, "ocgc-poll");
  return err;
}

static void poll_stop(struct serve *sv, pthread_t t)
{
  pthread_mutex_lock(&sv->lock);
  sv->stopping = 1;
  __atomic_store_n(&sv->pending, 1, __ATOMIC_RELEASE); /* out of a long turn */
  pthread_cond_signal(&sv->wake);
  pthread_cond_broadcast(&sv->ready);
  pthread_mutex_unlock(&sv->lock);
  pthread_join(t, NULL);
}

/* Descriptors: every watched process holds two (its ring, and the pidfd
 * that tells its end: libocgc's watch.c), every connection one, and a
 * refresh a few of /proc and of the memory cgroups.  The soft limit (1,024 by default) is raised to
 * the hard one (as Go's runtime does for its programs): with it, rings
 * past about a thousand were never watched.  Said once if even the hard
 * limit is below what the bounds need. */
static void raise_nofile(const struct serve_set *set)
{
  struct rlimit rl;
  rlim_t need = 2 * (rlim_t)(set->max_procs ? set->max_procs : OCGC_WATCH_MAX_PROCESSES) +
                MAX_CONNECTIONS + SERVE_CONNS_SLACK + 64;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
    tool_say("open files are limited to %llu, fewer than the %llu that --max-processes and %u "
             "connections need: rings past that are not watched (raise LimitNOFILE, or ulimit -n)",
             (unsigned long long)rl.rlim_cur, (unsigned long long)need, (unsigned)MAX_CONNECTIONS);
}

static int serve_init(struct serve *sv)
{
  pthread_condattr_t ca;
  memset(sv, 0, sizeof *sv);
  if (pthread_condattr_init(&ca) != 0) return -1;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* cm_mono_ns()'s clock */
  if (pthread_cond_init(&sv->wake, &ca) != 0) { pthread_condattr_destroy(&ca); return -1; }
  if (pthread_cond_init(&sv->ready, &ca) != 0) {
    pthread_cond_destroy(&sv->wake);
    pthread_condattr_destroy(&ca);
    return -1;
  }
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&sv->lock, NULL);
  pthread_rwlock_init(&sv->web_lock, NULL);
  if (serve_body_writer_init(&sv->writer) != 0) {
    pthread_cond_destroy(&sv->ready);
    pthread_cond_destroy(&sv->wake);
    pthread_mutex_destroy(&sv->lock);
    return -1;
  }
  if (serve_pprof_init(&sv->pprof, NULL) != 0) {
    serve_body_writer_free(&sv->writer);
    pthread_cond_destroy(&sv->ready);
    pthread_cond_destroy(&sv->wake);
    pthread_mutex_destroy(&sv->lock);
    return -1;
  }
  sv->set.pprof = &sv->pprof;
  serve_flight_init(&sv->flight);
  sv->set.flight = &sv->flight;
  serve_conns_init(&sv->conns);
  sv->set.yield = ask_waiting;
  sv->set.yield_ctx = sv;
  sv->turn_ns = cm_mono_ns();
  sv->waker.fd = -1; /* until serve_wake_start */
  return 0;
}

static void serve_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc serve [--listen ADDR:PORT|unix:PATH [--socket-mode MODE]]\n"
          "                  [--textfile PATH [--interval D]]\n"
          "                  [--max-processes N] [--max-per-user N] [--dir DIR]\n"
          "                  [--web.config.file FILE] [--web.enable-pprof]\n"
          "                  [--by program|pid]\n"
          "                  [--program REGEX] [--user NAME] [--run-as USER]\n"
          "                  [--flight-dir DIR [--flight-window D] [--flight-on-pause D]\n"
          "                   [--flight-on-heap-growth SIZE] [--flight-on-memory PCT]\n"
          "                   [--flight-cooldown D] [--flight-max-files N]\n"
          "                   [--flight-max-per-program N] [--flight-max-bytes SIZE]]\n"
          "                  (PID... | --all)\n\n"
          "Serve the GC figures of OCaml processes as Prometheus metrics over HTTP:\n"
          "/metrics (text format 0.0.4, or OpenMetrics when the scraper asks for it),\n"
          "/ (the watched processes), /-/healthy, and their allocation profiles as\n"
          "pprof: /debug/pprof/allocs?pid=N and /debug/pprof/heap?pid=N (&seconds=S:\n"
          "the delta of a window, as Go's; &addresses=1: the process's own addresses);\n"
          "?program=NAME instead of pid=N: the program's processes merged (living,\n"
          "and gone within 5 minutes), one target per program at /debug/pprof/targets\n"
          "(Prometheus HTTP service discovery JSON); and CPU profiles,\n"
          "/debug/pprof/profile?pid=N (&seconds=S, default 30; &frequency=HZ, default\n"
          "100; ?program=NAME: its processes merged), which serve samples with\n"
          "perf_event_open (root or CAP_PERFMON).\n"
          "Profiles go over TCP only to clients the web config authenticates, or to\n"
          "any with --web.enable-pprof; over a unix socket also to root and to the\n"
          "process's own user.  Each ring is drained on its own schedule (every\n"
          "10 ms to 250 ms, as busy as it is), scraped or not.\n\n"
          "  --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN "; port 0: any\n"
          "                      free port; IPv6 as [::1]:PORT; :PORT: every address,\n"
          "                      IPv6 and IPv4; unix:PATH: a unix socket)\n"
          "  --socket-mode MODE  the mode of a unix socket (default 0660: its owner and\n"
          "                      group may connect)\n"
          "  --textfile PATH     write the same figures to PATH (name it *.prom, in\n"
          "                      node_exporter's --collector.textfile.directory),\n"
          "                      replaced atomically every --interval, removed at exit;\n"
          "                      without --listen, no HTTP server\n"
          "  --interval D        period of --textfile (default 15s; 10ms or more)\n"
          "  --all               every process with a ring, looked for again every\n"
          "                      second\n"
          "  --dir DIR           rings are DIR/PID.events (not searched in the maps)\n"
          "  --program REGEX     with --all, only programs whose name matches REGEX\n"
          "                      (extended, unanchored: ^name$ for one name)\n"
          "  --user NAME         with --all, only the processes of user NAME (or number):\n"
          "                      a filter, not a change of user (see --run-as)\n"
          "  --run-as USER       once listening, before reading any process: become USER\n"
          "                      keeping only CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH\n"
          "                      (those it had), with no_new_privs (started as root)\n"
          "  --by program|pid    series per program (counters summed over its processes,\n"
          "                      living and gone; histograms merged; no pid label: the\n"
          "                      series count is fixed by the programs) or per process\n"
          "                      (the default)\n"
          "  --max-processes N   watch at most N processes (default %u)\n"
          "  --web.config.file FILE  TLS and basic authentication, in the YAML file\n"
          "                      Prometheus's exporters read (tls_server_config,\n"
          "                      basic_auth_users with bcrypt hashes, http_server_config)\n"
          "  --web.enable-pprof  serve /debug/pprof profiles to any client that may\n"
          "                      connect (function names, source files and lines, the\n"
          "                      executable's path and build id of every watched process)\n"
          "  --max-per-user N    of them at most N of one user (default %u); past a\n"
          "                      bound, a new ring takes the place of one that keeps\n"
          "                      failing, else it is refused\n"
          "  --flight-dir DIR    a flight recorder: keep each process's last\n"
          "                      --flight-window (default 60s) of GC history, and write\n"
          "                      a recording (its ring, totals, history, how it ended)\n"
          "                      into DIR when a process ends without its runtime's exit\n"
          "                      (killed, OOM-killed, crashed), when a trigger fires, or\n"
          "                      on POST /debug/flight?pid=N; read it with\n"
          "                      'ocgc report --file'.  DIR: made by you, others may not\n"
          "                      write to it\n"
          "  --flight-on-pause D         trigger: a pause longer than D\n"
          "  --flight-on-heap-growth SIZE  trigger: the heap growing faster than SIZE a\n"
          "                      second (over 10 s)\n"
          "  --flight-on-memory PCT      trigger: its memory cgroup above PCT%% of its limit\n"
          "  --flight-cooldown D  between two recordings of one program (default 60s;\n"
          "                      not for those asked)\n"
          "  --flight-max-files N, --flight-max-per-program N, --flight-max-bytes SIZE\n"
          "                      the folder's bounds (default 128, 8, 1G): past them the\n"
          "                      oldest recordings are removed\n"
          "  --help              this text\n\n"
          "It says 'ocgc serve: listening on http://ADDR:PORT/' on stderr once it\n"
          "listens; SIGINT or SIGTERM stop it; SIGHUP reads --web.config.file again\n"
          "(users and headers; a file that does not load is said, and not used).\n",
          (unsigned)OCGC_WATCH_MAX_PROCESSES, (unsigned)OCGC_WATCH_MAX_PER_USER);
}

/* The headers of http_server_config, on every answer. */
static void web_headers(const struct serve *sv, struct MHD_Response *r)
{
  size_t i;
  for (i = 0; i < sv->web.nheaders; i++)
    MHD_add_response_header(r, sv->web.headers[i].name, sv->web.headers[i].value);
}

/* Queue [r] with [status] and web_headers(), and drop our reference to it. */
static enum MHD_Result queue(const struct serve *sv, struct MHD_Connection *c, unsigned status,
                             struct MHD_Response *r)
{
  enum MHD_Result ret;
  web_headers(sv, r);
  ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

/* A short text response (copied: [s] may be on the stack), or NULL. */
static struct MHD_Response *text_response(const char *s)
{
  struct MHD_Response *r;
  r = MHD_create_response_from_buffer(strlen(s), (void *)(uintptr_t)s, MHD_RESPMEM_MUST_COPY);
  if (r != NULL) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
  return r;
}

/* A short text answer. */
static enum MHD_Result text(const struct serve *sv, struct MHD_Connection *c, unsigned status,
                            const char *s)
{
  struct MHD_Response *r = text_response(s);
  if (r == NULL) return MHD_NO;
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, "Allow", "GET, HEAD");
  return queue(sv, c, status, r);
}

/* The body of kind [k], as the poll thread renders it for this request,
 * or past ANSWER_WAIT_NS as it rendered it last: a reference, or NULL when
 * there is none yet (the first request, and the poll thread not done with
 * it in time; or out of memory). */
static struct serve_body *render(struct serve *sv, enum body_kind k)
{
  struct timespec ts;
  struct serve_body *b;
  uint64_t my, deadline, now;
  pthread_mutex_lock(&sv->lock);
  my = ++sv->asked;
  sv->wanted |= 1u << k;
  /* Release: pairs with the poll thread's acquire load in ask_waiting. */
  __atomic_store_n(&sv->pending, 1, __ATOMIC_RELEASE);
  pthread_cond_signal(&sv->wake);
  deadline = cm_mono_ns() + ANSWER_WAIT_NS;
  /* In slices: a signal does not end a condition wait, and the main thread
   * (--textfile, asking every --interval) must see SIGINT or SIGTERM
   * within a slice, not after the whole wait. */
  while (sv->answered < my && !sv->stopping && !tool_stop && (now = cm_mono_ns()) < deadline) {
    uint64_t until = deadline - now > WAIT_SLICE_NS ? now + WAIT_SLICE_NS : deadline;
    ts.tv_sec = (time_t)(until / 1000000000u);
    ts.tv_nsec = (long)(until % 1000000000u);
    pthread_cond_timedwait(&sv->ready, &sv->lock, &ts);
  }
  if (sv->answered < my && !tool_stop) __atomic_add_fetch(&sv->set.late, 1, __ATOMIC_RELAXED);
  b = sv->body[k] != NULL ? serve_body_ref(sv->body[k]) : NULL;
  pthread_mutex_unlock(&sv->lock);
  return b;
}

/* Whether [ae], an Accept-Encoding header, takes gzip: "gzip", "x-gzip"
 * or "*" with a q other than 0. */
static int takes_gzip(const char *ae)
{
  while (ae != NULL && *ae != '\0') {
    size_t n = strcspn(ae, ",;"), sp = strspn(ae, " \t");
    const char *tok = ae + sp, *end = ae + n, *q;
    while (end > tok && (end[-1] == ' ' || end[-1] == '\t')) end--;
    int named = ((size_t)(end - tok) == 4 && strncasecmp(tok, "gzip", 4) == 0) ||
                ((size_t)(end - tok) == 6 && strncasecmp(tok, "x-gzip", 6) == 0) ||
                (end - tok == 1 && *tok == '*');
    const char *next = strchr(ae, ',');
    if (named) {
      /* Its parameters, up to the next ',': only q counts. */
      size_t plen = next ? (size_t)(next - (ae + n)) : strlen(ae + n);
      char params[64] = "";
      if (plen >= sizeof params) plen = sizeof params - 1;
      memcpy(params, ae + n, plen);
      params[plen] = '\0';
      q = strstr(params, "q=");
      if (q == NULL || strtod(q + 2, NULL) > 0) return 1;
    }
    ae = next ? next + 1 : NULL;
  }
  return 0;
}

static ssize_t read_plain(void *cls, uint64_t pos, char *buf, size_t max)
{
  long n = serve_body_read(cls, buf, max);
  (void)pos; /* sequential: libmicrohttpd asks for the bytes in order */
  if (n < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
  if (n == 0) return MHD_CONTENT_READER_END_OF_STREAM;
  return (ssize_t)n;
}

/* Answer with body [b] (its reference taken over): as gzip if the client
 * takes it, else as text inflated as it is sent. */
static enum MHD_Result answer_body(const struct serve *sv, struct MHD_Connection *c,
                                   const char *type, struct serve_body *b)
{
  struct MHD_Response *r;
  int gz = takes_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_ACCEPT_ENCODING));
  if (b->failed) {
    serve_body_unref(b);
    return text(sv, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the answer outgrew its bound (64 MiB "
                                                   "gzipped), or memory ran out\n");
  }
  if (gz) {
    r = MHD_create_response_from_buffer_with_free_callback_cls(b->zn, b->z, serve_body_unref, b);
  } else {
    struct serve_body_reader *rd = serve_body_reader_new(b);
    serve_body_unref(b); /* the reader holds one */
    r = rd == NULL ? NULL
                   : MHD_create_response_from_callback(b->plain_n, 16 * 1024, read_plain, rd,
                                                       serve_body_reader_free);
    if (r == NULL) serve_body_reader_free(rd);
    b = NULL;
  }
  if (r == NULL) { serve_body_unref(b); return MHD_NO; }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
  if (gz) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
  return queue(sv, c, MHD_HTTP_OK, r);
}

/* /-/healthy: serve_health() of the poll thread's state, into why. */
static int healthy(struct serve *sv, char *why, size_t n)
{
  uint64_t now = cm_mono_ns(), age;
  int failed;
  pthread_mutex_lock(&sv->lock);
  age = now > sv->turn_ns ? now - sv->turn_ns : 0;
  failed = sv->metrics_failed;
  pthread_mutex_unlock(&sv->lock);
  return serve_health(age, failed, why, n);
}

/* The client's certificate, as tls_server_config's client_auth_type
 * wants it: 1 if it may go on (signed by the CA, and made for a client:
 * serve_auth_client_purpose). */
static int client_cert_ok(const struct serve *sv, struct MHD_Connection *c)
{
  const union MHD_ConnectionInfo *ci;
  gnutls_session_t ses;
  const gnutls_datum_t *certs;
  unsigned n = 0, status = 0;
  if (!sv->web.tls || sv->web.client_auth == WEB_NO_CLIENT_CERT) return 1;
  ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (ci == NULL || (ses = (gnutls_session_t)ci->tls_session) == NULL) return 0;
  certs = gnutls_certificate_get_peers(ses, &n);
  if (certs == NULL || n == 0) return sv->web.client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN;
  return gnutls_certificate_verify_peers2(ses, &status) == 0 && status == 0 &&
         serve_auth_client_purpose(certs, n);
}

/* A request's con_cls once its head is whole, and while its credentials
 * are checked off this thread (its connection suspended: serve_auth.c). */
static int headers_seen, auth_waiting;

/* Who may ask (--web.config.file): MHD_YES to go on with *answered 0, or
 * the answer queued or to come (*answered 1): 403 for a client
 * certificate that is missing, not signed by client_ca or not made for a
 * client, 401 asking for basic auth, 503 when the checks' queue is full;
 * credentials not known yet suspend the connection (*con_cls
 * &auth_waiting) until serve_auth.c's worker resumes it, and this is
 * asked again. */
static enum MHD_Result admit(struct serve *sv, struct MHD_Connection *c, void **con_cls,
                             int *answered)
{
  enum serve_auth_verdict v;
  struct MHD_Response *r;
  enum MHD_Result ret;
  *answered = 1;
  if (!client_cert_ok(sv, c))
    return text(sv, c, MHD_HTTP_FORBIDDEN, "forbidden: a client certificate for client "
                                           "authentication signed by the configured client "
                                           "CA is required\n");
  if (sv->web.nusers == 0) {
    *answered = 0;
    return MHD_YES;
  }
  if (*con_cls == &auth_waiting) {
    *con_cls = &headers_seen;
    v = serve_auth_take(&sv->auth, c);
  } else {
    v = serve_auth_ask(&sv->auth, c);
  }
  if (v == SERVE_AUTH_OK) {
    *answered = 0;
    return MHD_YES;
  }
  if (v == SERVE_AUTH_QUEUED) {
    *con_cls = &auth_waiting;
    return MHD_YES;
  }
  if (v == SERVE_AUTH_BUSY)
    return text(sv, c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: too many passwords are being "
                                                     "checked; ask again\n");
  if ((r = text_response("unauthorized: a user and password of basic_auth_users are "
                         "required\n")) == NULL)
    return MHD_NO;
  web_headers(sv, r);
  ret = MHD_queue_basic_auth_fail_response(c, "ocgc", r);
  MHD_destroy_response(r);
  return ret;
}

/* A request's con_cls: NULL before its head is whole, then &headers_seen,
 * &auth_waiting while its credentials are checked, or a profile's job
 * (serve_pprof_submit) once queued. */
static int is_job(const void *con_cls)
{
  return con_cls != NULL && con_cls != &headers_seen && con_cls != &auth_waiting;
}

/* A request is done: the connections' sweep, and a profile's job freed
 * by its last holder. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
  struct serve *sv = cls;
  serve_conns_completed(&sv->conns, c, con_cls, toe);
  if (con_cls != NULL && *con_cls == &auth_waiting) serve_auth_completed(&sv->auth, c);
  if (con_cls != NULL && is_job(*con_cls)) serve_pprof_completed(&sv->pprof, *con_cls);
}

/* Whether the web config authenticated [c] (admit() let it in): it asks
 * every client for a user and password, or for a certificate of its CA
 * (VerifyClientCertIfGiven: this client gave one, which admit() checked). */
static int authenticated(struct serve *sv, struct MHD_Connection *c)
{
  const union MHD_ConnectionInfo *ci;
  unsigned n = 0;
  if (sv->web.nusers > 0) return 1;
  if (!sv->web.tls) return 0;
  if (sv->web.client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT) return 1;
  if (sv->web.client_auth != WEB_VERIFY_CLIENT_CERT_IF_GIVEN) return 0;
  ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  return ci != NULL && ci->tls_session != NULL &&
         gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n) != NULL && n > 0;
}

/* /debug/pprof/...: the request queued for the profile worker (its
 * connection suspended), or refused now.  Who may have a profile:
 * serve_pprof_access.c (over TCP, an authenticated client, or any with
 * --web.enable-pprof; over a unix socket, also the target's own user). */
static enum MHD_Result pprof(struct serve *sv, struct MHD_Connection *c, const char *url,
                             void **con_cls)
{
  char why[200];
  unsigned status;
  void *job;
  struct serve_pprof_client who;
  serve_pprof_client(c, sv->where.is_unix, sv->enable_pprof || authenticated(sv, c), &who);
  if (!who.open && !who.is_unix)
    return text(sv, c, MHD_HTTP_FORBIDDEN,
                "forbidden: profiles are served over TCP only to clients that --web.config.file "
                "authenticates (basic_auth_users, or client certificates it verifies), or to "
                "any with --web.enable-pprof\n");
  if (strcmp(url, "/debug/pprof/targets") == 0) {
    struct MHD_Response *r = serve_pprof_targets(&sv->pprof, c, &who, &status);
    if (r == NULL) return text(sv, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return queue(sv, c, status, r);
  }
  if (serve_pprof_submit(&sv->pprof, c, url, &who, &job, &status, why, sizeof why) != 0)
    return text(sv, c, status, why);
  *con_cls = job;
  return MHD_YES;
}

/* serve_flight_ask's wake: the poll thread takes the ask at once (it does
 * not wait out its turn's sleep). */
static void flight_wake(void *ctx)
{
  struct serve *sv = ctx;
  pthread_mutex_lock(&sv->lock);
  sv->flight_pending = 1;
  pthread_cond_signal(&sv->wake);
  pthread_mutex_unlock(&sv->lock);
}

/* POST /debug/flight?pid=N: a recording of a watched process now, into
 * --flight-dir.  Who may ask: who may have that process's profile
 * (serve_pprof_access.c): a recording names its code and memory. */
static enum MHD_Result flight(struct serve *sv, struct MHD_Connection *c)
{
  struct serve_pprof_client who;
  const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
  char msg[256 + TOOL_ESC_SIZE(128)];
  int pid = arg != NULL ? tool_parse_pid(arg) : -1;
  unsigned status;
  serve_pprof_client(c, sv->where.is_unix, sv->enable_pprof || authenticated(sv, c), &who);
  if (!who.open && !who.is_unix)
    return text(sv, c, MHD_HTTP_FORBIDDEN,
                "forbidden: recordings are asked over TCP only by clients that "
                "--web.config.file authenticates, or by any with --web.enable-pprof\n");
  if (pid <= 0) return text(sv, c, MHD_HTTP_BAD_REQUEST, "bad request: ?pid=N is required\n");
  if (!serve_pprof_may_read(&who, pid))
    return text(sv, c, MHD_HTTP_FORBIDDEN, "forbidden: not a process this client may read\n");
  status = serve_flight_ask(&sv->flight, pid, flight_wake, sv, msg, sizeof msg);
  return text(sv, c, status, msg);
}

/* The answer of a profile's job, once the worker resumed its connection. */
static enum MHD_Result pprof_answer(struct serve *sv, struct MHD_Connection *c, void *job)
{
  unsigned status;
  struct MHD_Response *r = serve_pprof_take(&sv->pprof, job, &status);
  if (r == NULL) return text(sv, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
  return queue(sv, c, status, r);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
  struct serve *sv = cls;
  struct serve_body *body;
  int metrics = strcmp(url, "/metrics") == 0;
  enum ocgc_expo_format f;
  (void)version, (void)upload;
  /* Another method is refused at once (its body unread: the connection
   * closes).  GET and HEAD are answered on the second call, once
   * libmicrohttpd has the whole request: answered on the first, the
   * connection is closed after the answer (0.9.75), and a scraper has to
   * open a new one each time. */
  /* POST for /debug/flight alone, which makes something; it alone not
   * GET: a crawler or a prefetch must not write recordings. */
  if (strcmp(url, "/debug/flight") == 0 ? strcmp(method, "POST") != 0
                                        : strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return text(sv, c, MHD_HTTP_METHOD_NOT_ALLOWED, strcmp(url, "/debug/flight") == 0
                                                        ? "method not allowed: POST\n"
                                                        : "method not allowed: GET or HEAD\n");
  if (is_job(*con_cls)) return pprof_answer(sv, c, *con_cls);
  if (*con_cls == NULL) {
    *con_cls = &headers_seen;
    serve_conns_head_done(&sv->conns, c);
    return MHD_YES;
  }
  if (*upload_size != 0) {
    /* A body, which a GET or HEAD has no use for: read and dropped as it
     * comes (libmicrohttpd hands it over in pieces of its buffer), and
     * the request answered once it has all come.  Answered before, the
     * connection was closed with no answer. */
    *upload_size = 0;
    return MHD_YES;
  }
  {
    int answered;
    enum MHD_Result ret = admit(sv, c, con_cls, &answered);
    if (answered) return ret;
  }
  f = ocgc_expo_negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
  if (strcmp(url, "/-/healthy") == 0) {
    char why[160];
    int ok = healthy(sv, why, sizeof why);
    return text(sv, c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, why);
  }
  if (strncmp(url, "/debug/pprof/", 13) == 0) return pprof(sv, c, url, con_cls);
  if (strcmp(url, "/debug/flight") == 0) return flight(sv, c);
  if (!metrics && strcmp(url, "/") != 0) return text(sv, c, MHD_HTTP_NOT_FOUND, "not found\n");
  body = render(sv, !metrics ? BODY_INDEX : f == OCGC_EXPO_TEXT ? BODY_TEXT : BODY_OPENMETRICS);
  if (body == NULL)
    return text(sv, c, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready: the first read of the rings has "
                                                 "not ended yet\n");
  return answer_body(sv, c, metrics ? ocgc_expo_content_type(f) : "text/plain; charset=utf-8", body);
}

/* handle() under the web lock's read side: a SIGHUP's swap of the web
 * configuration (main_loop) waits for the request that reads it. */
static enum MHD_Result handle_web_locked(void *cls, struct MHD_Connection *c, const char *url,
                                         const char *method, const char *version,
                                         const char *upload, size_t *upload_size, void **con_cls)
{
  struct serve *sv = cls;
  enum MHD_Result r;
  pthread_rwlock_rdlock(&sv->web_lock);
  r = handle(cls, c, url, method, version, upload, upload_size, con_cls);
  pthread_rwlock_unlock(&sv->web_lock);
  return r;
}

/* [s], a user name or number, as a uid: 0, or -1. */
static int user_id(const char *s, unsigned *uid)
{
  struct passwd pw, *got = NULL;
  char buf[4096], *end;
  unsigned long v;
  if (getpwnam_r(s, &pw, buf, sizeof buf, &got) == 0 && got != NULL) {
    *uid = (unsigned)pw.pw_uid;
    return 0;
  }
  v = strtoul(s, &end, 10);
  if (*s < '0' || *s > '9' || *end != '\0' || v > 0x7fffffffu) return -1;
  *uid = (unsigned)v;
  return 0;
}

/* The options into *sv: 0, or the exit code. */
static int parse_options(int argc, char **argv, struct serve *sv)
{
  static const struct option longopts[] = {
    {"listen", required_argument, NULL, 'l'},
    {"all", no_argument, NULL, 'a'},
    {"dir", required_argument, NULL, 'd'},
    {"textfile", required_argument, NULL, 't'},
    {"interval", required_argument, NULL, 'i'},
    {"max-processes", required_argument, NULL, 'm'},
    {"max-per-user", required_argument, NULL, 'u'},
    {"web.config.file", required_argument, NULL, 'w'},
    {"socket-mode", required_argument, NULL, 's'},
    {"by", required_argument, NULL, 'b'},
    {"program", required_argument, NULL, 'P'},
    {"user", required_argument, NULL, 'U'},
    {"web.enable-pprof", no_argument, NULL, 'E'},
    {"run-as", required_argument, NULL, 'R'},
    {"flight-dir", required_argument, NULL, SERVE_OPT_FLIGHT_DIR},
    {"flight-window", required_argument, NULL, SERVE_OPT_FLIGHT_WINDOW},
    {"flight-max-files", required_argument, NULL, SERVE_OPT_FLIGHT_FILES},
    {"flight-max-per-program", required_argument, NULL, SERVE_OPT_FLIGHT_PER_PROGRAM},
    {"flight-max-bytes", required_argument, NULL, SERVE_OPT_FLIGHT_BYTES},
    {"flight-cooldown", required_argument, NULL, SERVE_OPT_FLIGHT_COOLDOWN},
    {"flight-on-pause", required_argument, NULL, SERVE_OPT_FLIGHT_ON_PAUSE},
    {"flight-on-heap-growth", required_argument, NULL, SERVE_OPT_FLIGHT_ON_GROWTH},
    {"flight-on-memory", required_argument, NULL, SERVE_OPT_FLIGHT_ON_MEMORY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *interval = NULL, *socket_mode = NULL;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'l': sv->listen = optarg; break;
    case 'a': sv->set.all = 1; break;
    case 'd': sv->set.dir = sv->pprof.dir = optarg; break;
    case 't': sv->tf.path = optarg; break;
    case 'i': interval = optarg; break;
    case 'w': sv->web_file = optarg; break;
    case 'E': sv->enable_pprof = 1; break;
    case 'b':
      if (strcmp(optarg, "program") == 0) sv->set.by_program = 1;
      else if (strcmp(optarg, "pid") == 0) sv->set.by_program = 0;
      else return tool_usage_error("--by wants pid or program, not '%s'", optarg);
      break;
    case 'P': {
      int err;
      if (sv->set.program_re != NULL) return tool_usage_error("--program is given twice");
      if ((err = regcomp(&sv->program_re, optarg, REG_EXTENDED | REG_NOSUB)) != 0) {
        char why[128];
        regerror(err, &sv->program_re, why, sizeof why);
        return tool_usage_error("--program '%s': %s (an extended regular expression)", optarg, why);
      }
      sv->set.program_re = &sv->program_re;
      break;
    }
    case 'U':
      if (user_id(optarg, &sv->set.uid) != 0)
        return tool_usage_error("--user wants a user name or number of this host, not '%s'", optarg);
      sv->set.have_uid = 1;
      break;
    case 'R':
      if (serve_privs_parse(optarg, &sv->privs) != 0)
        return tool_usage_error("--run-as wants a user name of this host, or a number other "
                                "than 0, not '%s'", optarg);
      break;
    case 's': {
      char *end;
      unsigned long m = strtoul(optarg, &end, 8);
      if (*optarg == '\0' || *end != '\0' || m == 0 || m > 0777 || (m & 0200) == 0)
        return tool_usage_error("--socket-mode wants an octal mode the owner may write, "
                                "such as 0660, not '%s'", optarg);
      sv->socket_mode = (unsigned)m;
      socket_mode = optarg;
      break;
    }
    case 'm':
    case 'u': {
      uint64_t v;
      if (tool_parse_count(optarg, &v) != 0 || v == 0 || v > OCGC_WATCH_MAX_PROCESSES)
        return tool_usage_error("--%s wants a number from 1 to %u, not '%s'",
                                opt == 'm' ? "max-processes" : "max-per-user",
                                (unsigned)OCGC_WATCH_MAX_PROCESSES, optarg);
      if (opt == 'm') sv->set.max_procs = (unsigned)v;
      else sv->set.max_per_user = (unsigned)v;
      break;
    }
    case 'h': serve_usage(stdout); exit(0);
    default: {
      int rc = serve_flight_option(&sv->flight, opt, optarg);
      if (rc == 0) break;
      if (rc > 0) return rc;
      serve_usage(stderr);
      return TOOL_EXIT_USAGE;
    }
    }
  }
  sv->tf.every_ns = DEFAULT_INTERVAL_NS;
  {
    int rc = serve_flight_check(&sv->flight);
    if (rc != 0) return rc;
  }
  if (interval != NULL && sv->tf.path == NULL)
    return tool_usage_error("--interval is the period of --textfile, which is not given");
  if (interval != NULL && (tool_parse_duration(interval, &sv->tf.every_ns) != 0 ||
                           sv->tf.every_ns < 10000000u))
    return tool_usage_error("--interval wants a duration of 10ms or more, such as 15s, not '%s'",
                            interval);
  if (sv->tf.path != NULL && sv->tf.path[0] == '\0')
    return tool_usage_error("--textfile wants a file name");
  if (sv->listen == NULL && sv->tf.path == NULL) sv->listen = DEFAULT_LISTEN;
  if (socket_mode != NULL && (sv->listen == NULL || strncmp(sv->listen, "unix:", 5) != 0))
    return tool_usage_error("--socket-mode is the mode of --listen unix:PATH, which is not given");
  if (socket_mode == NULL) sv->socket_mode = SERVE_SOCKET_MODE;
  if (sv->web_file != NULL && sv->listen == NULL)
    return tool_usage_error("--web.config.file is for the HTTP server, which --textfile "
                            "without --listen does not run");
  if (sv->enable_pprof && sv->listen == NULL)
    return tool_usage_error("--web.enable-pprof is for the HTTP server, which --textfile "
                            "without --listen does not run");
  if (sv->web_file != NULL && web_config_load(sv->web_file, &sv->web) != 0)
    return TOOL_EXIT_USAGE; /* said why */
  if (sv->web.tls && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
    tool_say("%s asks for TLS, which this libmicrohttpd was built without", sv->web_file);
    return TOOL_EXIT_ERROR;
  }
  return 0;
}

/* The operands into *sv, after parse_options(): 0, or the exit code. */
static int parse_args(int argc, char **argv, struct serve *sv)
{
  int i, rc;
  if (sv->set.all == (optind < argc))
    return tool_usage_error("give PIDs or --all, one of them ('ocgc serve --help' tells more)");
  if (!sv->set.all && (sv->set.program_re != NULL || sv->set.have_uid))
    return tool_usage_error("--program and --user choose among the processes of --all");
  if ((rc = serve_set_start(&sv->set)) != 0) return rc;
  for (i = optind; i < argc; i++) {
    struct tool_target t = {0};
    if (tool_target_pid(&t, argv[i], NULL) != 0) return TOOL_EXIT_USAGE;
    if ((rc = serve_set_add_pid(&sv->set, t.pid)) != 0) return rc;
  }
  return 0;
}

/* libmicrohttpd serving sv->listen: 0 and *out, or after a line the exit
 * code. */
static int http_start(struct serve *sv, struct MHD_Daemon **out)
{
  char prio[WEB_PRIORITIES_MAX];
  struct MHD_OptionItem opts[6];
  unsigned nt = 0;
  int err = sv->bound_early ? 0 : serve_listen(sv->listen, sv->socket_mode, sv->web.tls, &sv->where),
      fd = sv->where.fd;
  sv->bound_early = 0;
  if (err != 0) return err == -1 ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
  /* Basic auth's worker, before the first request can come. */
  if ((err = serve_auth_start(&sv->auth, &sv->web)) != 0) {
    close(fd);
    serve_listen_remove(&sv->where);
    tool_say("cannot start the password checker: %s", strerror(err));
    return TOOL_EXIT_ERROR;
  }
  /* Over TLS the front door accepts (serve_frontdoor.c: a plain HTTP
   * request is answered 400 in plain text); else libmicrohttpd. */
  if (!sv->web.tls) opts[nt++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL};
  if (sv->web.tls) {
    web_config_priorities(&sv->web, prio, sizeof prio);
    opts[nt++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, sv->web.cert_pem};
    opts[nt++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, sv->web.key_pem};
    opts[nt++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, prio};
    /* With a CA to check them against, libmicrohttpd asks clients for a
     * certificate; admit() decides what its absence means. */
    if (sv->web.client_ca_pem != NULL)
      opts[nt++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, sv->web.client_ca_pem};
  }
  opts[nt] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
  serve_conns_limits(&sv->conns, MAX_CONNECTIONS, PER_ADDRESS);
  *out = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                          MHD_ALLOW_SUSPEND_RESUME |
                          (sv->where.v6 ? MHD_USE_IPv6 : 0) |
                          (sv->web.tls ? MHD_USE_TLS | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC : 0),
                          0, NULL, NULL, handle_web_locked, sv,
                          /* Above the table's, and no per-IP limit: the
                           * table decides who gives way (serve_conns.c);
                           * libmicrohttpd would refuse the newcomer. */
                          MHD_OPTION_CONNECTION_LIMIT, (unsigned)(MAX_CONNECTIONS + SERVE_CONNS_SLACK),
                          MHD_OPTION_NOTIFY_CONNECTION, serve_conns_notify, &sv->conns,
                          MHD_OPTION_NOTIFY_COMPLETED, completed, sv,
                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
                          MHD_OPTION_ARRAY, opts,
                          MHD_OPTION_END);
  if (*out == NULL) {
    serve_auth_stop(&sv->auth);
    close(fd);
    serve_listen_remove(&sv->where);
    tool_say("cannot start the HTTP server on %s%s", sv->where.name,
             sv->web.tls ? " (is the key the certificate's, and both PEM?)" : "");
    return TOOL_EXIT_ERROR;
  }
  if (sv->web.tls && (err = serve_frontdoor_start(&sv->front, fd, PER_ADDRESS, *out, &sv->conns)) != 0) {
    serve_auth_stop(&sv->auth);
    MHD_stop_daemon(*out);
    *out = NULL;
    close(fd);
    serve_listen_remove(&sv->where);
    tool_say("cannot start accepting on %s: %s", sv->where.name, strerror(err));
    return TOOL_EXIT_ERROR;
  }
  tool_say("listening on %s", sv->where.name);
  return 0;
}

/* Write the text exposition to --textfile. */
static void textfile_tick(struct serve *sv)
{
  struct serve_body *b = render(sv, BODY_TEXT);
  if (b != NULL && serve_textfile_write(&sv->tf, b) != 0)
    __atomic_add_fetch(&sv->set.tf_errors, 1, __ATOMIC_RELAXED);
  serve_body_unref(b);
}

/* SIGHUP: --web.config.file read again, and swapped in if it may be. */
static void web_reload(struct serve *sv)
{
  struct web_config fresh;
  struct web_config old;
  int err;
  if (serve_reload_web(sv->web_file, &sv->web, &fresh) != 0) return;
  pthread_rwlock_wrlock(&sv->web_lock);
  old = sv->web;
  sv->web = fresh;
  /* Its worker points into the users swapped out, and its cache holds
   * what they let in: it starts again with the new ones, before the old
   * ones are freed. */
  err = serve_auth_restart(&sv->auth, &sv->web);
  if (!sv->have_boot) {
    sv->web_boot = old;
    sv->have_boot = 1;
  } else {
    web_config_free(&old);
  }
  pthread_rwlock_unlock(&sv->web_lock);
  if (err != 0)
    tool_say("SIGHUP: the password checks cannot start again (%s): every request with a "
             "password not checked before is answered 503", strerror(err));
}

/* --run-as: listen now, as the user serve started as (a port below 1024,
 * a socket in a folder of root's), then become USER, before any target is
 * read: 0, or after a line the exit code. */
static int run_as(struct serve *sv)
{
  int err;
  if (sv->listen != NULL) {
    if ((err = serve_listen(sv->listen, sv->socket_mode, sv->web.tls, &sv->where)) != 0)
      return err == -1 ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
    sv->bound_early = 1;
  }
  return serve_privs_drop(&sv->privs) == 0 ? 0 : TOOL_EXIT_ERROR;
}

/* Until SIGINT or SIGTERM: write --textfile on its period, if given, and
 * read the web configuration again after a SIGHUP (the HTTP server and
 * the poll thread work on their own threads). */
static void main_loop(struct serve *sv)
{
  uint64_t next = cm_mono_ns();
  if (sv->tf.path != NULL) {
    char every[32];
    tool_say("writing %s every %ss", sv->tf.path, ocgc_expo_seconds(sv->tf.every_ns, every, sizeof every));
  }
  while (!tool_stop) {
    uint64_t now = cm_mono_ns(), nap = 200000000u;
    unsigned cut = serve_conns_sweep(&sv->conns, now);
    if (cut != 0) __atomic_add_fetch(&sv->set.heads_cut, cut, __ATOMIC_RELAXED);
    if (serve_hup) {
      serve_hup = 0;
      web_reload(sv);
    }
    if (sv->tf.path != NULL && now >= next) {
      textfile_tick(sv);
      next = now + sv->tf.every_ns;
    }
    if (sv->tf.path != NULL && next - now < nap) nap = next - now;
    tool_sleep_ns(nap);
  }
}

/* Serve until SIGINT or SIGTERM: 0, or the exit code. */
static int run(struct serve *sv)
{
  struct tool_signals sig;
  struct MHD_Daemon *d = NULL;
  int rc = 0;
  tool_signals_catch(&sig);
  if (sv->listen != NULL && (rc = serve_pprof_start(&sv->pprof)) != 0) {
    tool_say("cannot start the profile worker: %s", strerror(rc));
    tool_signals_restore(&sig);
    return TOOL_EXIT_ERROR;
  }
  if (sv->listen == NULL || (rc = http_start(sv, &d)) == 0) {
    main_loop(sv);
    /* Its last answers (503) go out while the server still runs. */
    serve_pprof_stop(&sv->pprof);
    if (d != NULL) {
      serve_frontdoor_stop(&sv->front);
      serve_auth_stop(&sv->auth); /* no connection left suspended */
      MHD_stop_daemon(d); /* closes its socket, if it had it */
      if (sv->web.tls) close(sv->where.fd);
      serve_listen_remove(&sv->where);
    }
    if (sv->tf.path != NULL) serve_textfile_remove(&sv->tf);
  }
  serve_pprof_stop(&sv->pprof);
  tool_signals_restore(&sig);
  return rc;
}

int cmd_serve(int argc, char **argv)
{
  struct serve sv;
  struct sigaction old_hup;
  pthread_t poller;
  int rc;
  unsigned i;
  if (serve_init(&sv) != 0) {
    tool_say("cannot make a condition variable or a gzip stream: %s", strerror(errno));
    return TOOL_EXIT_ERROR;
  }
  serve_reload_catch(&old_hup);
  if ((rc = parse_options(argc, argv, &sv)) == 0) raise_nofile(&sv.set);
  if (rc == 0 && sv.privs.given) rc = run_as(&sv);
  sv.set.sees_every_user = ocgc_sees_every_user();
  if (rc == 0 && (rc = parse_args(argc, argv, &sv)) == 0) {
    if (sv.set.all && !sv.set.sees_every_user)
      tool_say("without CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, only this user's processes "
               "can be looked into (ocgc_serve_sees_every_user 0)");
    /* The rings read once before anything listens (the poll thread not
     * started yet: the set is this thread's), so that "listening" means
     * ready: the first read of a host with a thousand rings (listing them,
     * opening them, draining each from its oldest event) takes longer
     * than a request may wait, and a first scrape was answered 503.  At
     * most FIRST_READ_NS; what is not read by then is read on the poll
     * thread's turns. */
    serve_set_refresh(&sv.set, cm_mono_ns() + FIRST_READ_NS);
    serve_set_members(&sv.set);
    /* And every answer rendered once from it: a request that the poll
     * thread does not answer within ANSWER_WAIT_NS (a machine loaded to
     * its cores) is given the last body, marked late, and there must be
     * one; without it a first scrape was answered 503 "not ready". */
    render_kinds(&sv, (1u << BODY_KINDS) - 1, sv.body);
    sv.metrics_failed = sv.body[BODY_TEXT] == NULL || sv.body[BODY_TEXT]->failed;
    /* The waker first: the poll thread tells it of every turn.  Without
     * it, new rings wait for the poll thread's turn or the listing (a
     * second): said once, serve goes on. */
    if ((rc = serve_wake_start(&sv.waker, serve_set_fd(&sv.set), &sv.lock, &sv.wake)) != 0)
      tool_say("cannot start the waker thread: %s (new processes are found each second)",
               strerror(rc));
    if ((rc = poll_start(&sv, &poller)) != 0) {
      tool_say("cannot start the poll thread: %s", strerror(rc));
      rc = TOOL_EXIT_ERROR;
    } else {
      rc = run(&sv);
      poll_stop(&sv, poller);
    }
    serve_wake_stop(&sv.waker); /* after the poll thread: no turn to wait for is left */
  }
  if (sv.bound_early) { /* it failed before serving */
    close(sv.where.fd);
    serve_listen_remove(&sv.where);
  }
  serve_reload_restore(&old_hup);
  serve_set_free(&sv.set);
  if (sv.set.program_re != NULL) regfree(&sv.program_re);
  serve_auth_free(&sv.auth); /* libmicrohttpd stopped: its completions are done */
  web_config_free(&sv.web);
  if (sv.have_boot) web_config_free(&sv.web_boot);
  pthread_rwlock_destroy(&sv.web_lock);
  for (i = 0; i < BODY_KINDS; i++) serve_body_unref(sv.body[i]);
  serve_body_writer_free(&sv.writer);
  serve_pprof_free(&sv.pprof);
  serve_flight_free(&sv.flight);

  pthread_cond_destroy(&sv.ready);
  pthread_cond_destroy(&sv.wake);
  pthread_mutex_destroy(&sv.lock);
  serve_conns_destroy(&sv.conns);
  return rc;
}
