/* serve_listen.c - where `ocgc serve` listens (serve.h): --listen
 * ADDR:PORT (numeric, IPv6 as [ADDR]:PORT), :PORT (every address: [::]
 * taking IPv4 too, or 0.0.0.0 on a host without IPv6) or unix:PATH, bound
 * and listening, and the name it says it listens on.
 *
 * Invariants: a unix socket is made with --socket-mode by bind itself
 * (the umask set to its complement around it), never widened after; an
 * entry already at PATH is replaced only if it is a socket nobody listens
 * on (a stale one of an earlier run), never a file, a folder or a link,
 * and never a live socket; at exit the socket is removed only if PATH
 * still names the one made here (device and inode). */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common.h"
#include "serve.h"

#define UNIX_PREFIX "unix:"

/* "http://ADDR:PORT/" (https with [tls]) of the bound socket [fd]. */
static void url_of(int fd, char *url, size_t n, int tls)
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
  snprintf(url, n, v6 ? "%s://[%s]:%u/" : "%s://%s:%u/", tls ? "https" : "http", a, port);
}

/* Whether a process listens on the unix socket [sa] (not blocking: a
 * listener whose backlog is full is one). */
static int someone_listens(const struct sockaddr_un *sa)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), up;
  if (fd < 0) return 1; /* cannot tell: leave it */
  up = connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0 || errno != ECONNREFUSED;
  close(fd);
  return up;
}

static int listen_unix(const char *path, unsigned mode, struct serve_listener *l)
{
  struct sockaddr_un sa;
  struct stat st;
  mode_t old;
  int fd, err;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  if (path[0] == '\0' || strlen(path) >= sizeof sa.sun_path) {
    tool_say("--listen unix:PATH wants a path of 1 to %zu bytes", sizeof sa.sun_path - 1);
    return -1;
  }
  memcpy(sa.sun_path, path, strlen(path));
  if (lstat(path, &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      tool_say("cannot listen on unix:%s: something that is not a socket is there", path);
      return -2;
    }
    if (someone_listens(&sa)) {
      tool_say("cannot listen on unix:%s: a process listens on it already", path);
      return -2;
    }
    (void)unlink(path); /* an earlier run's, left by a kill */
  }
  if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
    tool_say("cannot listen on unix:%s: %s", path, strerror(errno));
    return -2;
  }
  /* Made with its mode at once (no chmod through a name someone could
   * swap meanwhile); no other thread makes files now. */
  old = umask((mode_t)(~mode & 0777));
  err = bind(fd, (const struct sockaddr *)&sa, sizeof sa) != 0 ? errno : 0;
  umask(old);
  if (err == 0 && lstat(path, &st) != 0) err = errno;
  if (err == 0 && listen(fd, SOMAXCONN) != 0) err = errno;
  if (err != 0) {
    tool_say("cannot listen on unix:%s: %s", path, strerror(err));
    close(fd);
    return -2;
  }
  l->fd = fd;
  l->is_unix = 1;
  l->dev = (uint64_t)st.st_dev;
  l->ino = (uint64_t)st.st_ino;
  snprintf(l->path, sizeof l->path, "%s", path);
  snprintf(l->name, sizeof l->name, UNIX_PREFIX "%s", path);
  return 0;
}

/* A TCP socket of [family] bound to [sa] and listening ([v6_too]: an IPv6
 * one that takes IPv4 too, whatever net.ipv6.bindv6only says): the
 * descriptor, or -errno. */
static int bound_socket(int family, const struct sockaddr *sa, socklen_t len, int v6_too)
{
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, zero = 0, err;
  if (fd < 0) return -errno;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if ((v6_too && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0) ||
      bind(fd, sa, len) != 0 || listen(fd, SOMAXCONN) != 0) {
    err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

/* ":PORT": every address, as Prometheus's exporters take it: [::] taking
 * IPv4 too where the host has IPv6, else 0.0.0.0.  The descriptor, or
 * after a line -1 (a bad port) or -2. */
static int listen_any(const char *port, const char *spec, struct serve_listener *l)
{
  struct sockaddr_in6 s6;
  struct sockaddr_in s4;
  char *end;
  unsigned long v = strtoul(port, &end, 10);
  int fd;
  if (*port < '0' || *port > '9' || *end != '\0' || v > 65535) {
    tool_say("--listen %s: the port is a number from 0 to 65535", spec);
    return -1;
  }
  memset(&s6, 0, sizeof s6);
  s6.sin6_family = AF_INET6;
  s6.sin6_addr = in6addr_any;
  s6.sin6_port = htons((uint16_t)v);
  fd = bound_socket(AF_INET6, (const struct sockaddr *)&s6, sizeof s6, 1);
  if (fd >= 0) {
    l->v6 = 1;
    return fd;
  }
  /* No IPv6 here (the module not loaded, or disabled): IPv4 alone.  Any
   * other failure (the port taken) is said as it is. */
  if (fd != -EAFNOSUPPORT && fd != -EADDRNOTAVAIL && fd != -EPROTONOSUPPORT) {
    tool_say("cannot listen on %s: %s", spec, strerror(-fd));
    return -2;
  }
  memset(&s4, 0, sizeof s4);
  s4.sin_family = AF_INET;
  s4.sin_addr.s_addr = htonl(INADDR_ANY);
  s4.sin_port = htons((uint16_t)v);
  if ((fd = bound_socket(AF_INET, (const struct sockaddr *)&s4, sizeof s4, 0)) >= 0) return fd;
  tool_say("cannot listen on %s: %s", spec, strerror(-fd));
  return -2;
}

int serve_listen(const char *spec, unsigned mode, int tls, struct serve_listener *l)
{
  char host[256];
  const char *colon;
  struct addrinfo hints, *ai;
  int fd, err;
  size_t hl;
  memset(l, 0, sizeof *l);
  l->fd = -1;
  if (strncmp(spec, UNIX_PREFIX, strlen(UNIX_PREFIX)) == 0)
    return listen_unix(spec + strlen(UNIX_PREFIX), mode, l);
  colon = strrchr(spec, ':');
  hl = colon ? (size_t)(colon - spec) : 0;
  if (colon == NULL || hl >= sizeof host || colon[1] == '\0') {
    tool_say("--listen wants ADDR:PORT, such as 127.0.0.1:9464, :PORT (every address), "
             "or unix:PATH, not '%s'", spec);
    return -1;
  }
  if (hl == 0) { /* Prometheus's ":PORT": every address */
    if ((fd = listen_any(colon + 1, spec, l)) < 0) return fd;
    l->fd = fd;
    url_of(fd, l->name, sizeof l->name, tls);
    return 0;
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
  l->v6 = ai->ai_family == AF_INET6;
  fd = bound_socket(ai->ai_family, ai->ai_addr, ai->ai_addrlen, 0);
  if (fd < 0) tool_say("cannot listen on %s: %s", spec, strerror(-fd));
  freeaddrinfo(ai);
  if (fd < 0) return -2;
  l->fd = fd;
  url_of(fd, l->name, sizeof l->name, tls);
  return 0;
}

void serve_listen_remove(const struct serve_listener *l)
{
  struct stat st;
  if (!l->is_unix) return;
  if (lstat(l->path, &st) == 0 && (uint64_t)st.st_dev == l->dev && (uint64_t)st.st_ino == l->ino)
    (void)unlink(l->path);
}
