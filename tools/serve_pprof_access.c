/* serve_pprof_access.c - who may have a process's allocation profile from
 * `ocgc serve` (docs/threat-model.md C3): a profile names the program's
 * functions, source files and lines and its executable's path and build
 * id, which a user who may not read the process's maps or folder must not
 * learn from the exporter.
 *
 * What it owns: the client of a /debug/pprof request as the profile
 * worker sees it (struct serve_pprof_client: its socket, who it is for the
 * per-client bound, what it may ask), and the rule of a unix socket's peer.
 *
 * The rule:
 * - over TCP, a profile goes only to a client the web config authenticated
 *   (basic_auth_users, or a client certificate verified against client_ca:
 *   serve.c decides, admit() having checked it) or, with
 *   --web.enable-pprof, to any client; else 403;
 * - over a unix socket (--listen unix:PATH), also to a peer (SO_PEERCRED:
 *   its credentials when it connected) who may read the target as ptrace
 *   would let it without privilege: root, or a uid that is each of the
 *   target's real, effective and saved uids and a gid each of its gids,
 *   the target dumpable (its /proc/PID owned by that uid: the kernel
 *   gives a process that is not dumpable to root);
 * - what cannot be read (/proc/PID gone, a line missing) refuses;
 * - a merged profile (?program=) goes only to a client who may read
 *   every process merged, each by the rule above; a process gone is
 *   judged by its ids as read while it lived (serve_pprof_creds_of, when
 *   it was first followed).
 *
 * Invariants: only the kernel's files are read (/proc/PID/status, written
 * by the kernel, its Uid and Gid lines; the target chooses nothing there),
 * one bounded read each, in the caller's thread. */

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "serve.h"

void serve_pprof_client(struct MHD_Connection *c, int is_unix, int open,
                        struct serve_pprof_client *who)
{
  const union MHD_ConnectionInfo *ci;
  memset(who, 0, sizeof *who);
  who->fd = -1;
  who->open = open;
  who->is_unix = is_unix;
  if ((ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)) != NULL)
    who->fd = ci->connect_fd;
  if (is_unix) {
    struct ucred cr;
    socklen_t n = sizeof cr;
    if (who->fd >= 0 && getsockopt(who->fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 &&
        n == sizeof cr) {
      who->have_peer = 1;
      who->uid = cr.uid;
      who->gid = cr.gid;
      snprintf(who->key, sizeof who->key, "uid %u", (unsigned)cr.uid);
    } else {
      snprintf(who->key, sizeof who->key, "uid ?");
    }
    return;
  }
  /* One address, one client: its port changes with each connection. */
  ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (ci != NULL && ci->client_addr != NULL && ci->client_addr->sa_family == AF_INET)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)ci->client_addr)->sin_addr,
              who->key, sizeof who->key);
  else if (ci != NULL && ci->client_addr != NULL && ci->client_addr->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)ci->client_addr)->sin6_addr,
              who->key, sizeof who->key);
  else
    snprintf(who->key, sizeof who->key, "?");
}

/* The four ids of line [name] ("Uid:" or "Gid:") of [status]: 0, or -1. */
static int ids(const char *status, const char *name, unsigned long v[4])
{
  const char *l = status;
  size_t n = strlen(name);
  while (l != NULL && *l != '\0') {
    if (strncmp(l, name, n) == 0)
      return sscanf(l + n, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4 ? 0 : -1;
    if ((l = strchr(l, '\n')) != NULL) l++;
  }
  return -1;
}

void serve_pprof_creds_of(int pid, struct serve_pprof_creds *c)
{
  char path[64], status[4096];
  unsigned long uid[4], gid[4];
  struct stat st;
  ssize_t got;
  int fd, i;
  memset(c, 0, sizeof *c);
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return;
  got = read(fd, status, sizeof status - 1); /* Uid and Gid come in the first lines */
  close(fd);
  if (got <= 0) return;
  status[got] = '\0';
  if (ids(status, "Uid:", uid) != 0 || ids(status, "Gid:", gid) != 0) return;
  for (i = 1; i < 3; i++)
    if (uid[i] != uid[0] || gid[i] != gid[0]) return;
  /* not dumpable: the kernel gives /proc/PID to root */
  snprintf(path, sizeof path, "/proc/%d", pid);
  if (stat(path, &st) != 0 || st.st_uid != uid[0]) return;
  c->valid = 1;
  c->uid = (unsigned)uid[0];
  c->gid = (unsigned)gid[0];
}

int serve_pprof_may_read_creds(const struct serve_pprof_client *who,
                               const struct serve_pprof_creds *c)
{
  if (who->open) return 1;
  if (!who->is_unix || !who->have_peer) return 0;
  if (who->uid == 0) return 1;
  return c->valid && c->uid == who->uid && c->gid == who->gid;
}

int serve_pprof_may_read(const struct serve_pprof_client *who, int pid)
{
  struct serve_pprof_creds c;
  if (who->open) return 1;
  if (!who->is_unix || !who->have_peer) return 0;
  if (who->uid == 0) return 1;
  serve_pprof_creds_of(pid, &c);
  return serve_pprof_may_read_creds(who, &c);
}
