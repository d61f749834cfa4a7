/* serve.c - `ocgc serve`: the watched processes' GC and process figures as
 * Prometheus metrics over HTTP, served by libmicrohttpd (no HTTP of our
 * own).  What it owns: the options, the listening socket, the routes and
 * the lifetime; the figures are serve_metrics.c's, the set of processes
 * serve_set.c's.
 *
 * Invariants:
 * - everything is bounded: one internal polling thread (epoll; requests
 *   are answered one at a time), at most MAX_CONNECTIONS (512)
 *   connections, each closed after TIMEOUT_S (5) idle seconds, each with
 *   CONN_MEMORY (32 KiB) for its request and response head (a longer
 *   request line or header is refused by libmicrohttpd: 414, 431),
 *   responses up to SERVE_BUF_MAX.  Worst case in memory: the
 *   connections, 512 x (32 KiB + libmicrohttpd's state, about 1 KiB) =
 *   about 17 MiB, plus each body answered and not yet read by its client
 *   (one copy per request, freed once sent or when the connection times
 *   out for want of progress): up to 512 x the /metrics size;
 * - libocgc handles are single-threaded: every refresh and every write of
 *   the set happens under one mutex;
 * - GET and HEAD only (405 with Allow otherwise), 404 for unknown paths;
 * - /metrics is OpenMetrics when the Accept header prefers it (as
 *   Prometheus's does), text 0.0.4 otherwise (expo_negotiate);
 * - the "listening on" line goes to stderr once the socket is bound and
 *   listening, so a script can wait for it and read the port;
 * - --textfile: the text exposition written every --interval by the main
 *   thread (serve_textfile.c), the file removed at exit;
 * - SIGINT and SIGTERM stop it: exit 0. */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common.h"
#include "serve.h"

/* 9464: the port the OpenTelemetry SDKs' Prometheus exporters listen on by
 * default; ocgc serve is that kind of exporter (ocaml.gc.* names) for
 * programs that cannot run one themselves.  Prometheus's own allocation
 * list (9100-9999) is full.  Loopback: the figures (program names, pids)
 * are the host's business; expose them on purpose with --listen. */
#define DEFAULT_LISTEN "127.0.0.1:9464"
/* A flood of clients, or of connections that say nothing, takes at most
 * MAX_CONNECTIONS slots, each for TIMEOUT_S idle seconds at most; at the
 * limit libmicrohttpd stops accepting and the kernel holds the rest in
 * the listen backlog (or has them retry) until a slot frees, so a client
 * behind a flood is served TIMEOUT_S after the flood stops sending.  512:
 * several Prometheus servers, pollers and hundreds of curls at once
 * (serve_http.sh holds 300), within the 1024 descriptors a process gets by
 * default with room for rings and /proc files (past that libmicrohttpd
 * also stops accepting until one closes).  Epoll: with hundreds of
 * connections, poll() would rescan every idle one at each event.  5 s:
 * a scraper sends its request at once and reads the answer as it comes;
 * Prometheus scrapes every 15 s or more, so a longer idle time would not
 * keep its connection between scrapes anyway, only a silent client's. */
#define MAX_CONNECTIONS 512
#define TIMEOUT_S 5
#define CONN_MEMORY (32u * 1024)

#define DEFAULT_INTERVAL_NS (15 * UINT64_C(1000000000)) /* --textfile */

struct serve {
  pthread_mutex_t lock;       /* guards set and stopping */
  pthread_cond_t wake;        /* the poll thread waits on it (CLOCK_MONOTONIC) */
  int stopping;
  struct serve_set set;
  const char *listen;         /* NULL: no HTTP (--textfile without --listen) */
  struct serve_textfile tf;   /* tf.path NULL: no --textfile */
};

/* The poll thread: drains each ring on its schedule (serve_set_poll)
 * between scrapes, so that a ring does not overflow because nobody
 * scrapes.  It holds the lock while it drains, and waits with it
 * released. */
static void *poll_thread(void *arg)
{
  struct serve *sv = arg;
  pthread_mutex_lock(&sv->lock);
  while (!sv->stopping) {
    uint64_t next = serve_set_poll(&sv->set, tool_now_ns());
    struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
    pthread_cond_timedwait(&sv->wake, &sv->lock, &ts);
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
  return err;
}

static void poll_stop(struct serve *sv, pthread_t t)
{
  pthread_mutex_lock(&sv->lock);
  sv->stopping = 1;
  pthread_cond_signal(&sv->wake);
  pthread_mutex_unlock(&sv->lock);
  pthread_join(t, NULL);
}

static int serve_init(struct serve *sv)
{
  pthread_condattr_t ca;
  memset(sv, 0, sizeof *sv);
  if (pthread_condattr_init(&ca) != 0) return -1;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* tool_now_ns()'s clock */
  if (pthread_cond_init(&sv->wake, &ca) != 0) { pthread_condattr_destroy(&ca); return -1; }
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&sv->lock, NULL);
  return 0;
}

static void serve_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc serve [--listen ADDR:PORT] [--textfile PATH [--interval D]]\n"
          "                  [--dir DIR] (PID... | --all)\n\n"
          "Serve the GC figures of OCaml processes as Prometheus metrics over HTTP:\n"
          "/metrics (text format 0.0.4, or OpenMetrics when the scraper asks for it),\n"
          "/ (the watched processes), /-/healthy.  Each ring is drained on its own\n"
          "schedule (every 10 ms to 250 ms, as busy as it is), scraped or not.\n\n"
          "  --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN "; port 0: any\n"
          "                      free port; IPv6 as [::1]:PORT)\n"
          "  --textfile PATH     write the same figures to PATH (name it *.prom, in\n"
          "                      node_exporter's --collector.textfile.directory),\n"
          "                      replaced atomically every --interval, removed at exit;\n"
          "                      without --listen, no HTTP server\n"
          "  --interval D        period of --textfile (default 15s; 10ms or more)\n"
          "  --all               every process with a ring, looked for again every\n"
          "                      second\n"
          "  --dir DIR           rings are DIR/PID.events (not searched in the maps)\n"
          "  --help              this text\n\n"
          "It says 'ocgc serve: listening on http://ADDR:PORT/' on stderr once it\n"
          "listens; SIGINT or SIGTERM stop it.\n");
}

/* "http://ADDR:PORT/" of the bound socket [fd]. */
static void url_of(int fd, char *url, size_t n)
{
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  char a[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  int v6;
  memset(&ss, 0, sizeof ss);
  getsockname(fd, (struct sockaddr *)&ss, &len);
  v6 = ss.ss_family == AF_INET6;
  if (v6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
    inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
    port = ntohs(s6->sin6_port);
  } else {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
    inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
    port = ntohs(s4->sin_port);
  }
  snprintf(url, n, v6 ? "http://[%s]:%u/" : "http://%s:%u/", a, port);
}

/* ADDR:PORT bound and listening: the socket, or after a line -1 (a bad
 * ADDR:PORT) or -2 (it cannot be bound). */
static int listen_on(const char *spec, int *v6)
{
  char host[256];
  const char *colon = strrchr(spec, ':');
  struct addrinfo hints, *ai;
  int fd, one = 1, err;
  size_t hl = colon ? (size_t)(colon - spec) : 0;
  if (colon == NULL || hl == 0 || hl >= sizeof host || colon[1] == '\0') {
    tool_say("--listen wants ADDR:PORT, such as 127.0.0.1:9464, not '%s'", spec);
    return -1;
  }
  if (spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']') memcpy(host, spec + 1, hl -= 2);
  else memcpy(host, spec, hl);
  host[hl] = '\0';
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  if ((err = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
    tool_say("--listen %s: %s (ADDR:PORT, numeric)", spec, gai_strerror(err));
    return -1;
  }
  *v6 = ai->ai_family == AF_INET6;
  fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
    tool_say("cannot listen on %s: %m", spec);
    if (fd >= 0) close(fd);
    fd = -2;
  }
  freeaddrinfo(ai);
  return fd;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              struct serve_buf *body)
{
  struct MHD_Response *r;
  enum MHD_Result ret;
  if (body->failed) {
    free(body->s);
    memset(body, 0, sizeof *body);
    status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    serve_buf_put(body, "out of memory\n", 14);
  }
  r = MHD_create_response_from_buffer(body->n, body->s ? body->s : (char *)"",
                                      body->s ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (r == NULL) { free(body->s); return MHD_NO; }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, "Allow", "GET, HEAD");
  ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *s)
{
  struct serve_buf b = {0};
  serve_buf_put(&b, s, strlen(s));
  return answer(c, status, "text/plain; charset=utf-8", &b);
}

/* The set brought up to date, then /metrics in format [f] or the index
 * page into [b]. */
static void render(struct serve *sv, struct serve_buf *b, int metrics, enum expo_format f)
{
  pthread_mutex_lock(&sv->lock);
  serve_set_refresh(&sv->set);
  if (metrics) serve_set_metrics(&sv->set, b, f);
  else serve_set_index(&sv->set, b);
  pthread_mutex_unlock(&sv->lock);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
  struct serve *sv = cls;
  struct serve_buf b = {0};
  int metrics = strcmp(url, "/metrics") == 0;
  static int headers_seen; /* its address marks a request whose headers are in */
  enum expo_format f;
  (void)version, (void)upload, (void)upload_size;
  /* Another method is refused at once (its body unread: the connection
   * closes).  GET and HEAD are answered on the second call, once
   * libmicrohttpd has the whole request: answered on the first, the
   * connection is closed after the answer (0.9.75), and a scraper has to
   * open a new one each time. */
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET or HEAD\n");
  if (*con_cls == NULL) {
    *con_cls = &headers_seen;
    return MHD_YES;
  }
  f = expo_negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
  if (strcmp(url, "/-/healthy") == 0) return text(c, MHD_HTTP_OK, "ok\n");
  if (!metrics && strcmp(url, "/") != 0) return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
  render(sv, &b, metrics, f);
  return answer(c, MHD_HTTP_OK, metrics ? expo_content_type(f) : "text/plain; charset=utf-8", &b);
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
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *interval = NULL;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'l': sv->listen = optarg; break;
    case 'a': sv->set.all = 1; break;
    case 'd': sv->set.dir = optarg; break;
    case 't': sv->tf.path = optarg; break;
    case 'i': interval = optarg; break;
    case 'h': serve_usage(stdout); exit(0);
    default: serve_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  sv->tf.every_ns = DEFAULT_INTERVAL_NS;
  if (interval != NULL && sv->tf.path == NULL)
    return tool_usage_error("--interval is the period of --textfile, which is not given");
  if (interval != NULL && (tool_parse_duration(interval, &sv->tf.every_ns) != 0 ||
                           sv->tf.every_ns < 10000000u))
    return tool_usage_error("--interval wants a duration of 10ms or more, such as 15s, not '%s'",
                            interval);
  if (sv->tf.path != NULL && sv->tf.path[0] == '\0')
    return tool_usage_error("--textfile wants a file name");
  if (sv->listen == NULL && sv->tf.path == NULL) sv->listen = DEFAULT_LISTEN;
  return 0;
}

/* The options and operands into *sv: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct serve *sv)
{
  int i, rc;
  if ((rc = parse_options(argc, argv, sv)) != 0) return rc;
  if (sv->set.all == (optind < argc))
    return tool_usage_error("give PIDs or --all, one of them ('ocgc serve --help' tells more)");
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
  char url[128];
  int v6 = 0, fd = listen_on(sv->listen, &v6);
  if (fd < 0) return fd == -1 ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
  url_of(fd, url, sizeof url);
  *out = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                          (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, handle, sv,
                          MHD_OPTION_LISTEN_SOCKET, fd,
                          MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
                          MHD_OPTION_END);
  if (*out == NULL) {
    close(fd);
    tool_say("cannot start the HTTP server on %s", url);
    return TOOL_EXIT_ERROR;
  }
  tool_say("listening on %s", url);
  return 0;
}

/* Write the text exposition to --textfile. */
static void textfile_tick(struct serve *sv)
{
  struct serve_buf b = {0};
  render(sv, &b, 1, EXPO_TEXT);
  if (serve_textfile_write(&sv->tf, &b) != 0) {
    pthread_mutex_lock(&sv->lock);
    sv->set.errors++;
    pthread_mutex_unlock(&sv->lock);
  }
  free(b.s);
}

/* Until SIGINT or SIGTERM: write --textfile on its period, if given (the
 * HTTP server and the poll thread work on their own threads). */
static void main_loop(struct serve *sv)
{
  uint64_t next = tool_now_ns();
  if (sv->tf.path != NULL) {
    char every[32];
    tool_say("writing %s every %ss", sv->tf.path, expo_seconds(sv->tf.every_ns, every, sizeof every));
  }
  while (!tool_stop) {
    uint64_t now = tool_now_ns(), nap = 200000000u;
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
  if (sv->listen == NULL || (rc = http_start(sv, &d)) == 0) {
    main_loop(sv);
    if (d != NULL) MHD_stop_daemon(d); /* closes its socket */
    if (sv->tf.path != NULL) serve_textfile_remove(&sv->tf);
  }
  tool_signals_restore(&sig);
  return rc;
}

int cmd_serve(int argc, char **argv)
{
  struct serve sv;
  pthread_t poller;
  int rc;
  if (serve_init(&sv) != 0) {
    tool_say("cannot make a condition variable: %s", strerror(errno));
    return TOOL_EXIT_ERROR;
  }
  if ((rc = parse_args(argc, argv, &sv)) == 0) {
    if ((rc = poll_start(&sv, &poller)) != 0) {
      tool_say("cannot start the poll thread: %s", strerror(rc));
      rc = TOOL_EXIT_ERROR;
    } else {
      rc = run(&sv);
      poll_stop(&sv, poller);
    }
  }
  serve_set_free(&sv.set);
  pthread_cond_destroy(&sv.wake);
  pthread_mutex_destroy(&sv.lock);
  return rc;
}
