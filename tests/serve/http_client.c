/* http_client.c - for serve_http.sh: a small HTTP/1.1 client that loads
 * `ocgc serve` the ways a hostile network would (bad requests, many clients at
 * once, clients that say nothing, a long run of requests), on non-blocking
 * sockets driven by poll(), so that one process holds hundreds of
 * connections and every wait is bounded.
 *
 *   http_client HOST PORT concurrent N PATH [ACCEPT]
 *       N connections at once, each "GET PATH" with Connection: close
 *       (and Accept: ACCEPT); prints "concurrent N ok K failed F
 *       openmetrics M ms T": K answered 200 with the whole body
 *       (Content-Length bytes, ending in a newline, and for /metrics
 *       holding an ocgc_serve_errors_total sample, and ending with
 *       "# EOF" when OpenMetrics), M of them as OpenMetrics.
 *   http_client HOST PORT silent N SECONDS
 *       N connections that send nothing, opened SILENT_WAVE at a time;
 *       prints "ready C" once all are connected or after CONNECT_S (C
 *       connected: a server at its limit with a full listen backlog holds
 *       the rest back), then waits until the server closed those C or
 *       SECONDS passed and prints "silent N connected C closed K open L".
 *   http_client HOST PORT raw FILE|-
 *       sends FILE's bytes as they are and prints "raw status S ms T" (the
 *       status line's code), "raw closed ms T" (closed or reset with no
 *       answer), "raw nothttp ms T" (an answer that is not HTTP/1.x) or
 *       "raw timeout ms T".
 *   http_client HOST PORT loop N PATH [PER_CONN [PAUSE_MS]]
 *       N requests one after the other, PER_CONN (default 100) on each
 *       keep-alive connection; before each on a kept connection, idle
 *       until the server closes it or PAUSE_MS (default 0) have passed,
 *       then send on it all the same (a client crossing the server's
 *       close, which a scraper's next scrape may be); prints
 *       "loop N ok K failed F connections C ms T retried R" (ok: 200 with
 *       the whole body, as for concurrent).  A request sent on a reused
 *       connection that the server had closed (closed with no byte of an
 *       answer) is sent again once on a new connection and counted in R,
 *       as HTTP clients do (RFC 9112 9.3.1; Go's, so Prometheus's): a
 *       server may close an idle keep-alive connection at any time.
 *
 *   http_client HOST PORT trickle N SECONDS [tls]
 *       N slow clients (slowloris) for SECONDS: each sends a request line
 *       and a Host line, then a header line every TRICKLE_S, never ending
 *       its head (tls: the 5 bytes that open a TLS record of 512, then a
 *       byte every TRICKLE_S); one the server closes connects again
 *       TRICKLE_S later, SILENT_WAVE at a time, so that N always try.
 *       Prints "ready C" once the first connections are made (C of them),
 *       then "trickle N connected C closed K open L": K closed by the
 *       server in all, L open at the end.  Exits 2, saying so, if a source
 *       address cannot be bound (127.0.0.2 and up are on lo on Linux, not
 *       everywhere).
 *
 *   HC_SOURCES=K in the environment spreads the connections of any mode
 *   over the loopback addresses 127.0.0.1 to 127.0.0.K (HC_FIRST_SOURCE=F:
 *   127.0.0.F to 127.0.0.(F + K - 1)).
 *
 * Invariants: whatever the server does, a request waits WAIT_S at most
 * (concurrent: all of them together; silent: CONNECT_S, then SECONDS);
 * a failure's reason goes to stderr, the figures to stdout; exit 0 when
 * the figures were printed (the script judges them), 1 on usage or setup
 * errors. */

#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_S 60.0           /* the longest any mode waits for the server */
#define CONNECT_S 10.0        /* silent: the longest wait for connections */
#define SILENT_WAVE 16        /* silent: connections opened at once */
#define SILENT_PACE_MS 10     /* silent: the pause between two waves */
#define BODY_MAX (64u << 20)  /* serve.h's SERVE_BUF_MAX, plus headers */
#define REQ_MAX (1u << 20)    /* raw: the most bytes sent */
#define TRICKLE_S 1.0         /* trickle: the pause between two lines, and before a reconnect */

/* In the order a connection goes through them (run_conns compares). */
enum state { C_CONNECTING, C_SENDING, C_RECEIVING, C_DONE, C_FAILED };

struct conn {
  int fd;
  enum state st;
  const char *req;            /* the bytes to send (not owned) */
  size_t req_n, sent;
  char *buf;                  /* what came back */
  size_t n, cap;
  size_t body_off, body_n;    /* once C_DONE */
  int status;                 /* 0: no status line (yet) */
  const char *why;            /* once C_FAILED */
};

static struct addrinfo *server;
/* HC_SOURCES=K (IPv4 loopback only): connection i comes from 127.0.0.(F +
 * i % K), F being HC_FIRST_SOURCE (1 unless given), so that a load of
 * hundreds of connections is not one address's (ocgc serve caps what one
 * address may hold), or is not the scraper's. */
static unsigned sources, next_source, first_source = 1;

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void conn_fail(struct conn *c, const char *why)
{
  c->st = C_FAILED;
  c->why = why;
}

static void conn_close(struct conn *c)
{
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

/* A non-blocking connection to the server on its way (C_CONNECTING). */
static void conn_open(struct conn *c, const char *req, size_t req_n)
{
  c->req = req, c->req_n = req_n, c->sent = 0;
  c->n = 0, c->status = 0, c->why = NULL;
  c->st = C_CONNECTING;
  c->fd = socket(server->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) { conn_fail(c, "socket"); return; }
  if ((sources > 1 || first_source != 1) && server->ai_family == AF_INET) {
    struct sockaddr_in src;
    memset(&src, 0, sizeof src);
    src.sin_family = AF_INET;
    src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + first_source - 1 + next_source++ % (sources ? sources : 1));
    if (bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0) {
      char a[32];
      if (errno != EADDRNOTAVAIL) { conn_fail(c, "bind"); return; }
      inet_ntop(AF_INET, &src.sin_addr, a, sizeof a);
      fprintf(stderr, "http_client: cannot bind %s: %s\n", a, strerror(errno));
      exit(2);
    }
  }
  if (connect(c->fd, server->ai_addr, server->ai_addrlen) != 0 && errno != EINPROGRESS)
    conn_fail(c, "connect");
}

/* The value of header NAME in the header block h[0..n), or NULL. */
static const char *header(const char *h, size_t n, const char *name, size_t *vn)
{
  size_t nl = strlen(name);
  const char *p = memchr(h, '\n', n), *end = h + n;
  while (p != NULL && ++p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (eol == NULL) eol = end;
    if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
      const char *v = p + nl + 1;
      while (v < eol && (*v == ' ' || *v == '\t')) v++;
      *vn = (size_t)(eol - v);
      if (*vn > 0 && v[*vn - 1] == '\r') (*vn)--;
      return v;
    }
    p = eol;
  }
  return NULL;
}

/* Is the response in c->buf whole?  1 yes (status, body_off and body_n
 * set), 0 not yet, -1 it cannot be (not HTTP). */
static int resp_parse(struct conn *c, int eof)
{
  const char *end = NULL, *v;
  size_t vn, hn;
  char num[32];
  if (c->n >= 12 && memcmp(c->buf, "HTTP/1.", 7) != 0) return -1;
  if (c->n >= 12 && c->status == 0) c->status = atoi(c->buf + 9);
  for (size_t i = 0; i + 4 <= c->n && end == NULL; i++)
    if (memcmp(c->buf + i, "\r\n\r\n", 4) == 0) end = c->buf + i + 4;
  if (end == NULL) return eof ? -1 : 0;
  hn = (size_t)(end - c->buf);
  c->body_off = hn;
  v = header(c->buf, hn, "Content-Length", &vn);
  if (v == NULL || vn == 0 || vn >= sizeof num) {
    c->body_n = c->n - hn;
    return eof ? 1 : 0;
  }
  memcpy(num, v, vn);
  num[vn] = '\0';
  c->body_n = strtoull(num, NULL, 10);
  if (c->n - hn > c->body_n) return -1;
  return c->n - hn == c->body_n ? 1 : eof ? -1 : 0;
}

static void conn_recv(struct conn *c)
{
  ssize_t r;
  int p;
  if (c->cap - c->n < 4096) {
    size_t cap = c->cap ? c->cap * 2 : 16384;
    char *b = cap > BODY_MAX ? NULL : realloc(c->buf, cap);
    if (b == NULL) { conn_fail(c, "response too long"); return; }
    c->buf = b, c->cap = cap;
  }
  r = recv(c->fd, c->buf + c->n, c->cap - c->n, 0);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (r > 0) c->n += (size_t)r;
  p = resp_parse(c, r <= 0);
  if (p > 0) c->st = C_DONE;
  else if (p < 0 && c->n > 0) conn_fail(c, r <= 0 ? "closed mid-response" : "not HTTP");
  else if (r <= 0) conn_fail(c, "closed");
}

/* Move c on after poll() said [rev] about it. */
static void conn_step(struct conn *c, short rev)
{
  if (c->st == C_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    if (!(rev & (POLLOUT | POLLERR | POLLHUP))) return;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) { conn_fail(c, "connect refused"); return; }
    c->st = c->req_n > c->sent ? C_SENDING : C_RECEIVING;
  }
  if (c->st == C_SENDING && (rev & (POLLOUT | POLLERR | POLLHUP))) {
    ssize_t w = send(c->fd, c->req + c->sent, c->req_n - c->sent, MSG_NOSIGNAL);
    if (w > 0) c->sent += (size_t)w;
    /* Refused mid-send: the answer (a 4xx) may be there to read. */
    if (w < 0 && errno != EAGAIN && errno != EINTR) c->st = C_RECEIVING;
    else if (c->sent == c->req_n) c->st = C_RECEIVING;
    return;
  }
  if (c->st == C_RECEIVING && (rev & (POLLIN | POLLERR | POLLHUP))) conn_recv(c);
}

/* Drive cs[0..n) until each is at state [until] or past it (C_DONE: done
 * or failed), or [deadline]: then the rest fail with "timeout". */
static void run_conns(struct conn *cs, size_t n, enum state until, double deadline)
{
  struct pollfd *pf = calloc(n, sizeof *pf);
  size_t *ix = calloc(n, sizeof *ix);
  if (pf == NULL || ix == NULL) { perror("http_client"); exit(1); }
  for (;;) {
    size_t k = 0;
    double left = deadline - now_s();
    for (size_t i = 0; i < n; i++) {
      if (cs[i].st >= until) continue;
      pf[k].fd = cs[i].fd;
      pf[k].events = cs[i].st == C_RECEIVING ? POLLIN : POLLOUT;
      ix[k++] = i;
    }
    if (k == 0) break;
    if (left <= 0) { /* given up: closed, so that it cannot connect later */
      for (size_t j = 0; j < k; j++) {
        conn_fail(&cs[ix[j]], "timeout");
        conn_close(&cs[ix[j]]);
      }
      break;
    }
    if (poll(pf, k, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
      perror("http_client: poll");
      exit(1);
    }
    for (size_t j = 0; j < k; j++)
      if (pf[j].revents) conn_step(&cs[ix[j]], pf[j].revents);
  }
  free(pf);
  free(ix);
}

/* Is c's response OpenMetrics (by its Content-Type)? */
static int openmetrics(const struct conn *c)
{
  size_t vn;
  const char *v = header(c->buf, c->body_off, "Content-Type", &vn);
  return v != NULL && vn >= 28 && strncasecmp(v, "application/openmetrics-text", 28) == 0;
}

/* Did c get a 200 with the whole body of [path]?  NULL yes, else why not. */
static const char *whole_200(const struct conn *c, const char *path)
{
  const char *b = c->buf + c->body_off;
  size_t n = c->body_n;
  static const char errs[] = "\nocgc_serve_errors_total ", eof[] = "\n# EOF\n";
  if (c->st != C_DONE) return c->why ? c->why : "unfinished";
  if (c->status != 200) return "status not 200";
  if (n == 0 || b[n - 1] != '\n') return "body does not end with a newline";
  if (strncmp(path, "/metrics", 8) != 0) return NULL;
  if (openmetrics(c) &&
      (n < sizeof eof - 1 || memcmp(b + n - (sizeof eof - 1), eof, sizeof eof - 1) != 0))
    return "OpenMetrics without its # EOF line";
  for (size_t i = 0; i + sizeof errs - 1 <= n; i++)
    if (memcmp(b + i, errs, sizeof errs - 1) == 0) return NULL;
  return "no ocgc_serve_errors_total sample";
}

/* "GET PATH", asking for the type ACCEPT (NULL: no Accept header). */
static char *get_request(const char *host, const char *port, const char *path, int close_it,
                         const char *accept)
{
  char *s;
  if (asprintf(&s, "GET %s HTTP/1.1\r\nHost: %s:%s\r\n%s%s%s%s\r\n", path, host, port,
               close_it ? "Connection: close\r\n" : "", accept ? "Accept: " : "",
               accept ? accept : "", accept ? "\r\n" : "") < 0) {
    perror("http_client");
    exit(1);
  }
  return s;
}

static struct conn *conns_new(size_t n)
{
  struct conn *cs = calloc(n ? n : 1, sizeof *cs);
  if (cs == NULL) { perror("http_client"); exit(1); }
  for (size_t i = 0; i < n; i++) cs[i].fd = -1;
  return cs;
}

static void conns_free(struct conn *cs, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    conn_close(&cs[i]);
    free(cs[i].buf);
  }
  free(cs);
}

static int mode_concurrent(const char *host, const char *port, size_t n, const char *path,
                           const char *accept)
{
  char *req = get_request(host, port, path, 1, accept);
  struct conn *cs = conns_new(n);
  double t0 = now_s();
  size_t ok = 0, om = 0;
  for (size_t i = 0; i < n; i++) conn_open(&cs[i], req, strlen(req));
  run_conns(cs, n, C_DONE, t0 + WAIT_S);
  for (size_t i = 0; i < n; i++) {
    const char *why = whole_200(&cs[i], path);
    om += cs[i].st == C_DONE && openmetrics(&cs[i]);
    if (why == NULL) ok++;
    else fprintf(stderr, "http_client: client %zu: %s (status %d, %zu bytes)\n", i, why,
                 cs[i].status, cs[i].n);
  }
  printf("concurrent %zu ok %zu failed %zu openmetrics %zu ms %.0f\n", n, ok, n - ok, om,
         (now_s() - t0) * 1e3);
  conns_free(cs, n);
  free(req);
  return 0;
}

/* After a whole response on a keep-alive connection: may it take another? */
static int reusable(const struct conn *c)
{
  size_t vn;
  const char *v = header(c->buf, c->body_off, "Connection", &vn);
  return c->st == C_DONE && !(v != NULL && vn == 5 && strncasecmp(v, "close", 5) == 0);
}

static int mode_loop(const char *host, const char *port, size_t n, const char *path,
                     size_t per_conn, size_t pause_ms)
{
  char *req = get_request(host, port, path, 0, NULL);
  struct conn *c = conns_new(1);
  double t0 = now_s();
  size_t ok = 0, conns = 0, on_this = 0, retried = 0;
  for (size_t i = 0; i < n; i++) {
    int reused = c->fd >= 0;
    if (reused && pause_ms > 0) {
      struct pollfd pf = {.fd = c->fd, .events = POLLIN | POLLRDHUP};
      poll(&pf, 1, (int)(pause_ms > 600000 ? 600000 : pause_ms));
    }
    if (!reused) {
      conn_open(c, req, strlen(req));
      conns++, on_this = 0;
    } else {
      c->st = C_SENDING, c->sent = 0, c->n = 0, c->status = 0, c->why = NULL;
    }
    run_conns(c, 1, C_DONE, now_s() + WAIT_S);
    if (reused && c->st == C_FAILED && c->n == 0) { /* closed before it: once more */
      conn_close(c);
      conn_open(c, req, strlen(req));
      conns++, on_this = 0, retried++;
      run_conns(c, 1, C_DONE, now_s() + WAIT_S);
    }
    if (whole_200(c, path) == NULL) ok++;
    else fprintf(stderr, "http_client: request %zu: %s\n", i, whole_200(c, path));
    if (++on_this >= per_conn || !reusable(c)) conn_close(c);
  }
  printf("loop %zu ok %zu failed %zu connections %zu ms %.0f retried %zu\n", n, ok, n - ok,
         conns, (now_s() - t0) * 1e3, retried);
  conns_free(c, 1);
  free(req);
  return 0;
}

/* The whole of FILE (- for stdin), at most REQ_MAX bytes. */
static char *slurp(const char *file, size_t *n)
{
  FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
  char *s = malloc(REQ_MAX);
  if (f == NULL || s == NULL) { perror(file); exit(1); }
  *n = fread(s, 1, REQ_MAX, f);
  if (f != stdin) fclose(f);
  return s;
}

static int mode_raw(const char *file)
{
  size_t n;
  char *req = slurp(file, &n);
  struct conn *c = conns_new(1);
  double t0 = now_s();
  conn_open(c, req, n);
  run_conns(c, 1, C_DONE, t0 + WAIT_S);
  if (c->status != 0) printf("raw status %d", c->status);
  else if (c->why != NULL && strcmp(c->why, "timeout") == 0) printf("raw timeout");
  else if (c->n > 0) printf("raw nothttp");
  else printf("raw closed");
  printf(" ms %.0f\n", (now_s() - t0) * 1e3);
  conns_free(c, 1);
  free(req);
  return 0;
}

/* Connect n silent clients, SILENT_WAVE at a time and SILENT_PACE_MS
 * apart (all at once would overflow the server's listen backlog, and the
 * kernel would complete the rest with SYN cookies: connections that exist
 * on this side only until they send something, which never take one of
 * the server's slots): how many got connected within CONNECT_S. */
static size_t silent_connect(struct conn *cs, size_t n)
{
  size_t up = 0;
  double end = now_s() + CONNECT_S;
  for (size_t i = 0; i < n; i += SILENT_WAVE) {
    size_t w = n - i < SILENT_WAVE ? n - i : SILENT_WAVE;
    for (size_t j = i; j < i + w; j++) conn_open(&cs[j], "", 0);
    run_conns(cs + i, w, C_RECEIVING, end);
    poll(NULL, 0, SILENT_PACE_MS);
  }
  for (size_t i = 0; i < n; i++) up += cs[i].st == C_RECEIVING;
  return up;
}

static int mode_silent(size_t n, double seconds)
{
  struct conn *cs = conns_new(n);
  size_t up = silent_connect(cs, n), closed = 0, open_n = 0;
  struct pollfd *pf = calloc(n ? n : 1, sizeof *pf);
  double end = now_s() + seconds;
  if (pf == NULL) { perror("http_client"); exit(1); }
  printf("ready %zu\n", up);
  fflush(stdout);
  for (size_t i = 0; i < n; i++) {
    pf[i].fd = cs[i].st == C_RECEIVING ? cs[i].fd : -1;
    pf[i].events = POLLIN; /* a close reads as end of file */
  }
  for (double left; closed < up && (left = end - now_s()) > 0;) {
    if (poll(pf, n, (int)(left * 1000) + 1) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < n; i++) {
      char b[512];
      ssize_t r;
      if (pf[i].fd < 0 || pf[i].revents == 0) continue;
      r = recv(pf[i].fd, b, sizeof b, 0);
      if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR))) continue;
      pf[i].fd = -1;
      closed++;
    }
  }
  for (size_t i = 0; i < n; i++) open_n += pf[i].fd >= 0;
  printf("silent %zu connected %zu closed %zu open %zu\n", n, up, closed, open_n);
  free(pf);
  conns_free(cs, n);
  return 0;
}

/* trickle: what connection c sends next, a line (or a byte) at a time. */
static void trickle_send(struct conn *c, const char *line, size_t n)
{
  ssize_t w = send(c->fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w < 0 && errno != EAGAIN && errno != EINTR) conn_fail(c, "closed");
}

static int mode_trickle(const char *host, const char *port, size_t n, double seconds, int tls)
{
  static const char tls_open[] = "\x16\x03\x01\x02\x00", tls_byte[] = "";
  static const char line[] = "X-a: b\r\n";
  char *req = NULL; /* a head never ended: no empty line */
  if (!tls && asprintf(&req, "GET /metrics HTTP/1.1\r\nHost: %s:%s\r\n", host, port) < 0) {
    perror("http_client");
    exit(1);
  }
  const char *first = tls ? tls_open : req, *next = tls ? tls_byte : line;
  size_t first_n = tls ? sizeof tls_open - 1 : strlen(req), next_n = tls ? 1 : sizeof line - 1;
  struct conn *cs = conns_new(n);
  struct pollfd *pf = calloc(n ? n : 1, sizeof *pf);
  double *again = calloc(n ? n : 1, sizeof *again); /* when a closed one reconnects */
  double t0 = now_s(), end = t0 + seconds, tick = t0 + TRICKLE_S;
  size_t closed = 0, up = 0, open_n = 0, tried = 0;
  if (pf == NULL || again == NULL) { perror("http_client"); exit(1); }
  for (size_t i = 0; i < n; i++) cs[i].st = C_FAILED, again[i] = t0;
  for (int ready = 0;;) {
    double now = now_s();
    size_t opened = 0;
    /* SILENT_WAVE at a time, so that the listen backlog never overflows. */
    for (size_t i = 0; i < n && opened < SILENT_WAVE; i++)
      if (cs[i].st == C_FAILED && cs[i].fd < 0 && now >= again[i]) {
        tried += again[i] == t0;
        again[i] = 0;
        conn_open(&cs[i], first, first_n);
        opened++;
      }
    if (!ready) { /* each tried once, and none still on its way */
      size_t waiting = n - tried;
      for (size_t i = 0; i < n; i++) waiting += cs[i].st < C_RECEIVING;
      if (waiting == 0 || now - t0 > CONNECT_S) {
        for (size_t i = 0; i < n; i++) up += cs[i].st == C_RECEIVING;
        printf("ready %zu\n", up);
        fflush(stdout);
        ready = 1;
      }
    }
    if (now >= end) break;
    if (now >= tick) {
      for (size_t i = 0; i < n; i++)
        if (cs[i].st == C_RECEIVING) trickle_send(&cs[i], next, next_n);
      tick = now + TRICKLE_S;
    }
    for (size_t i = 0; i < n; i++) {
      pf[i].fd = cs[i].st == C_FAILED ? -1 : cs[i].fd;
      pf[i].events = cs[i].st == C_RECEIVING ? POLLIN : POLLOUT;
      pf[i].revents = 0;
    }
    if (poll(pf, n, SILENT_PACE_MS) < 0 && errno != EINTR) { perror("http_client: poll"); exit(1); }
    now = now_s();
    for (size_t i = 0; i < n; i++) {
      if (cs[i].st != C_FAILED && pf[i].revents) {
        if (cs[i].st == C_RECEIVING) {
          char b[512];
          ssize_t r = recv(cs[i].fd, b, sizeof b, 0);
          if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) conn_fail(&cs[i], "closed");
        } else {
          conn_step(&cs[i], pf[i].revents);
        }
      }
      if (cs[i].st == C_FAILED && cs[i].fd >= 0) { /* closed by the server (or refused) */
        conn_close(&cs[i]);
        closed++;
        again[i] = now + TRICKLE_S;
      }
    }
  }
  for (size_t i = 0; i < n; i++) open_n += cs[i].st == C_RECEIVING;
  printf("trickle %zu connected %zu closed %zu open %zu\n", n, up, closed, open_n);
  free(pf);
  free(again);
  conns_free(cs, n);
  free(req);
  return 0;
}

static void usage(void)
{
  fprintf(stderr, "usage: http_client HOST PORT (concurrent N PATH [ACCEPT] | silent N SECONDS |\n"
                  "                   raw FILE | loop N PATH [PER_CONN [PAUSE_MS]] |\n"
                  "                   trickle N SECONDS [tls])\n");
  exit(1);
}

static size_t count(const char *s)
{
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v > 100000) usage();
  return (size_t)v;
}

/* Up to the hard limit of descriptors: silent holds hundreds. */
static void more_fds(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

int main(int argc, char **argv)
{
  struct addrinfo hints;
  int err, rc = 1;
  if (argc < 4) usage();
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  if ((err = getaddrinfo(argv[1], argv[2], &hints, &server)) != 0) {
    fprintf(stderr, "http_client: %s:%s: %s\n", argv[1], argv[2], gai_strerror(err));
    return 1;
  }
  more_fds();
  if (getenv("HC_SOURCES") != NULL) sources = (unsigned)count(getenv("HC_SOURCES"));
  if (getenv("HC_FIRST_SOURCE") != NULL) first_source = (unsigned)count(getenv("HC_FIRST_SOURCE"));
  if (first_source < 1 || first_source > 254) usage();
  if (strcmp(argv[3], "concurrent") == 0 && (argc == 6 || argc == 7))
    rc = mode_concurrent(argv[1], argv[2], count(argv[4]), argv[5], argc == 7 ? argv[6] : NULL);
  else if (strcmp(argv[3], "silent") == 0 && argc == 6)
    rc = mode_silent(count(argv[4]), (double)count(argv[5]));
  else if (strcmp(argv[3], "raw") == 0 && argc == 5)
    rc = mode_raw(argv[4]);
  else if (strcmp(argv[3], "trickle") == 0 && (argc == 6 || (argc == 7 && strcmp(argv[6], "tls") == 0)))
    rc = mode_trickle(argv[1], argv[2], count(argv[4]), (double)count(argv[5]), argc == 7);
  else if (strcmp(argv[3], "loop") == 0 && argc >= 6 && argc <= 8)
    rc = mode_loop(argv[1], argv[2], count(argv[4]), argv[5], argc >= 7 ? count(argv[6]) : 100,
                   argc == 8 ? count(argv[7]) : 0);
  else
    usage();
  freeaddrinfo(server);
  return rc;
}
