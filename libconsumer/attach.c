/* attach.c - attaching to a live process by pid: find the ring it writes,
 * open it, and tell whether it still belongs to that very process.
 *
 * Owns ocgc_find_ring(), ocgc_source_open_pid() and
 * ocgc_source_check_alive(), and the parsing of the /proc files they read
 * (/proc/PID/maps, /proc/PID/stat, /proc/sys/kernel/random/boot_id).
 * It keeps no state: every call reads /proc afresh, so any number of
 * threads may call it at once.
 *
 * Invariants and choices:
 * - A process's ring is a *shared, writable* mapping of a file whose name
 *   ends in ".events", in any folder (ocgc's private folder, OCaml 5's
 *   working directory, OCAML_RUNTIME_EVENTS_DIR).  Read-only mappings are
 *   readers' (libocgc and OCaml 5's consumer map PROT_READ), so a monitoring
 *   process is never mistaken for a producer.  When several match, the one
 *   named <pid>.events wins (both ocgc and OCaml 5 use that name).
 * - A matching mapping whose file was unlinked (maps says " (deleted)") is
 *   reported as OCGC_E_NORING: the ring can no longer be reached by any
 *   path (only /proc/PID/map_files, which needs CAP_SYS_ADMIN), and
 *   OCGC_E_STALE would wrongly say the process is gone.  The producer's own
 *   temporary name (.<pid>.events.tmp) does not match either: a file being
 *   built is waited for, never opened half-made.  Stock OCaml 5 creates its
 *   file in place and writes the header after sizing it, so within the
 *   wait a file that reads as corrupt is tried again too.
 * - A process is identified by (boot id, pid, start time): pids are reused,
 *   start times (field 22 of /proc/PID/stat, clock ticks after boot) are
 *   not within one boot.  (They tick at only 100 Hz: two processes may
 *   share one, but never with the same pid, which would take the whole pid
 *   space to wrap within the tick.)  The stat line is parsed after the
 *   *last* ')', since the command name may hold spaces and parentheses.
 *   A zombie counts as dead: its ring will never be written again.
 * - The identity is checked *after* the file is opened, so a pid reused
 *   between finding the file and opening it is caught.
 * - If the current boot id cannot be read, the boot check is skipped (pid +
 *   start time still identify the process within the boot we are in).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"

#define DEFAULT_WAIT_MS 200u
#define POLL_MS 5u
#define EVENTS_SUFFIX ".events"
#define DELETED_SUFFIX " (deleted)"

/* ---- small /proc readers --------------------------------------------------------- */

/* Read a whole small file into buf (NUL-terminated, cut at n - 1 bytes).
 * Returns the length, or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t n)
{
  size_t len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  while (len + 1 < n) {
    ssize_t got = read(fd, buf + len, n - 1 - len);
    if (got < 0) {
      int err = errno;
      if (err == EINTR) continue;
      close(fd);
      return -err;
    }
    if (got == 0) break;
    len += (size_t)got;
  }
  close(fd);
  buf[len] = '\0';
  return (ssize_t)len;
}

/* What /proc/PID/stat says about a process. */
struct proc_ident {
  char state;          /* field 3: R, S, D, Z, X, ... */
  uint64_t start_time; /* field 22 */
};

/* Returns 0, -ESRCH (no such process, or a zombie or dead one: it will never
 * write again), or another -errno.  The stat line is
 *   pid (comm) state ppid ... starttime ...
 * and comm is whatever the process called itself, ')' included, so the
 * fields start after the last ')'. */
static int proc_ident(int pid, struct proc_ident *out)
{
  char path[64], buf[2048];
  const char *p;
  char *end;
  ssize_t len;
  int field;

  if (pid <= 0) return -ESRCH;
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  len = read_small(path, buf, sizeof buf);
  if (len == -ENOENT || len == -ESRCH) return -ESRCH;
  if (len < 0) return (int)len;
  p = strrchr(buf, ')');
  if (p == NULL || p[1] != ' ') return -EIO;
  p += 2; /* field 3 */
  out->state = *p;
  /* Fields are single-space separated after comm; walk to field 22. */
  for (field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (p == NULL) return -EIO;
    p++;
  }
  if (*p < '0' || *p > '9') return -EIO;
  errno = 0;
  out->start_time = strtoull(p, &end, 10);
  if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0')) return -EIO;
  if (out->state == 'Z' || out->state == 'X' || out->state == 'x') return -ESRCH;
  return 0;
}

/* The current boot id, without its newline.  Returns 0 or -errno. */
static int boot_id(char *out, size_t n)
{
  ssize_t len = read_small("/proc/sys/kernel/random/boot_id", out, n);
  if (len < 0) return (int)len;
  out[strcspn(out, "\n")] = '\0';
  return out[0] != '\0' ? 0 : -EIO;
}

/* ---- finding the ring in /proc/PID/maps ---------------------------------------------- */

/* Skip one whitespace-separated field and the blanks after it. */
static const char *skip_field(const char *p)
{
  while (*p != '\0' && *p != ' ' && *p != '\t') p++;
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

static int has_suffix(const char *s, size_t len, const char *suf)
{
  size_t n = strlen(suf);
  return len >= n && memcmp(s + len - n, suf, n) == 0;
}

/* The kernel writes a newline in a path as "\012" (seq_file_path() with
 * "\n" to escape); undo that in place.  Returns the new length. */
static size_t unescape_path(char *s)
{
  char *r = s, *w = s;
  while (*r != '\0') {
    if (r[0] == '\\' && r[1] == '0' && r[2] == '1' && r[3] == '2') {
      *w++ = '\n';
      r += 4;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return (size_t)(w - s);
}

/* How well a maps line names the ring of [pid]: 0 not at all, else higher
 * is better.  On a match, the path is left NUL-terminated in *path (which
 * points into [line], modified in place) and *deleted says whether the
 * file was unlinked. */
static int score_line(char *line, int pid, char **path, int *deleted)
{
  const char *perms, *p;
  char own[32], *name, *base;
  size_t len;

  /* address perms offset dev inode [path] */
  perms = skip_field(line);
  if (strlen(perms) < 4 || perms[1] != 'w' || perms[3] != 's') return 0;
  p = skip_field(perms);
  p = skip_field(p);
  p = skip_field(p);
  p = skip_field(p);
  if (*p != '/') return 0; /* anonymous, [heap], [stack], ... */
  name = line + (p - line);
  len = strcspn(name, "\n");
  name[len] = '\0';
  *deleted = 0;
  if (has_suffix(name, len, DELETED_SUFFIX)) {
    len -= strlen(DELETED_SUFFIX);
    name[len] = '\0';
    *deleted = 1;
  }
  len = unescape_path(name);
  if (!has_suffix(name, len, EVENTS_SUFFIX) || len == strlen(EVENTS_SUFFIX)) return 0;
  base = strrchr(name, '/');
  base = base != NULL ? base + 1 : name;
  if (*base == '\0' || strcmp(base, EVENTS_SUFFIX) == 0) return 0;
  *path = name;
  snprintf(own, sizeof own, "%d" EVENTS_SUFFIX, pid);
  return strcmp(base, own) == 0 ? 2 : 1;
}

int ocgc_find_ring(int pid, char *path, size_t n)
{
  char maps[64], *line = NULL, *best = NULL;
  size_t cap = 0;
  int best_score = 0, best_deleted = 0, err = 0;
  struct proc_ident id;
  FILE *f;
  int fd;

  if (path == NULL || n == 0) return -EINVAL;
  if (pid <= 0) return -ESRCH;
  snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
  fd = open(maps, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    if (err == ENOENT || err == ESRCH) return -ESRCH;
    /* The kernel checks ptrace read access at open (EACCES) or, on old
     * kernels, at read; some LSMs say EPERM. */
    return err == EPERM ? -EACCES : -err;
  }
  f = fdopen(fd, "r");
  if (f == NULL) { err = -errno; close(fd); return err; }
  errno = 0;
  for (;;) {
    char *name = NULL;
    int deleted = 0, sc;
    ssize_t got = getline(&line, &cap, f);
    if (got < 0) {
      if (ferror(f)) {
        int e = errno;
        err = e == EACCES || e == EPERM ? -EACCES : e != 0 ? -e : -EIO;
      }
      break;
    }
    sc = score_line(line, pid, &name, &deleted);
    if (sc == 0) continue;
    /* A reachable file beats an unlinked one; then the better name wins;
     * on a tie, the first (lowest address) one. */
    if (best == NULL || (best_deleted && !deleted) ||
        (best_deleted == deleted && sc > best_score)) {
      free(best);
      best = strdup(name);
      if (best == NULL) { err = -ENOMEM; break; }
      best_score = sc;
      best_deleted = deleted;
    }
  }
  free(line);
  fclose(f);
  if (err == 0 && best == NULL) {
    /* A zombie's map is empty, as is that of a process that died while
     * we read: say it is gone rather than ringless. */
    int e = proc_ident(pid, &id);
    err = e == -ESRCH ? -ESRCH : OCGC_E_NORING;
  } else if (err == 0 && best_deleted) {
    err = OCGC_E_NORING; /* see the top of the file */
  } else if (err == 0) {
    if (strlen(best) >= n) err = -ENAMETOOLONG;
    else memcpy(path, best, strlen(best) + 1);
  }
  free(best);
  return err;
}

/* ---- opening and checking ------------------------------------------------------------ */

struct attach_cfg {
  const char *dir;
  unsigned wait_ms;
  enum ocgc_ids ids;
  int allow_stale;
};

/* Whether the caller's struct (of opts->sz bytes) has [field]. */
#define OPT_HAS(o, field) \
  ((o)->sz >= offsetof(struct ocgc_attach_opts, field) + sizeof((o)->field))

static void read_opts(const struct ocgc_attach_opts *o, struct attach_cfg *c)
{
  memset(c, 0, sizeof *c);
  c->wait_ms = DEFAULT_WAIT_MS;
  if (o == NULL) return;
  if (OPT_HAS(o, dir)) c->dir = o->dir;
  if (OPT_HAS(o, wait_ms) && o->wait_ms != 0) c->wait_ms = o->wait_ms;
  if (OPT_HAS(o, ids)) c->ids = o->ids;
  if (OPT_HAS(o, allow_stale)) c->allow_stale = o->allow_stale != 0;
}

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Whether the ring described by [info] (an ocgc file) is still written by
 * the live process it names: 0, OCGC_E_STALE, or another error. */
static int ident_matches(const struct ocgc_source_info *info)
{
  struct proc_ident id;
  char boot[64];
  int err;

  if (info->state != OCGC_STATE_RUNNING) return OCGC_E_STALE;
  if (info->pid == 0 || info->pid > INT_MAX) return OCGC_E_STALE;
  /* Boot first: after a reboot pid and start time mean nothing. */
  if (boot_id(boot, sizeof boot) == 0 && strcmp(boot, info->boot_id) != 0)
    return OCGC_E_STALE;
  err = proc_ident((int)info->pid, &id);
  if (err == -ESRCH) return OCGC_E_STALE;
  if (err != 0) return err;
  return id.start_time == info->start_time ? 0 : OCGC_E_STALE;
}

/* The file belongs to [pid], which runs it now.  Stock OCaml 5 files carry
 * no identity: finding them in the process's maps is all we can check. */
static int check_owner(const struct ocgc_source *src, int pid)
{
  struct ocgc_source_info info;
  int err = ocgc_source_info(src, &info);
  if (err != 0) return err;
  if (!info.has_ext) return 0;
  if (info.pid != (uint64_t)pid) return OCGC_E_STALE;
  return ident_matches(&info);
}

/* One attempt to open the ring of [pid].  Returns 0 (and *out), or an
 * error; OCGC_E_NORING means "not there yet, worth waiting for". */
static int try_open(int pid, const struct attach_cfg *c, struct ocgc_source **out)
{
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  char path[PATH_MAX];
  struct proc_ident id;
  int err;

  oo.ids = c->ids;
  if (c->dir != NULL) {
    int len = snprintf(path, sizeof path, "%s/%d" EVENTS_SUFFIX, c->dir, pid);
    if (len < 0 || (size_t)len >= sizeof path) return -ENAMETOOLONG;
    err = ocgc_source_open_path(path, &oo, out);
    if (err != -ENOENT) return err; /* opened (maybe stale: checked later) */
    /* No file: only a live process may still make one. */
    err = proc_ident(pid, &id);
    return err == -ESRCH ? -ESRCH : OCGC_E_NORING;
  }
  err = ocgc_find_ring(pid, path, sizeof path);
  if (err != 0) return err;
  err = ocgc_source_open_path(path, &oo, out);
  /* Renamed or removed between reading the maps and opening: look again. */
  return err == -ENOENT ? OCGC_E_NORING : err;
}

int ocgc_source_open_pid(int pid, const struct ocgc_attach_opts *opts,
                         struct ocgc_source **out)
{
  struct ocgc_source *src = NULL;
  struct attach_cfg c;
  uint64_t deadline;
  int err;

  if (out == NULL) return -EINVAL;
  if (pid <= 0) return -ESRCH;
  read_opts(opts, &c);
  deadline = now_ms() + c.wait_ms;
  /* A process that has just started (or forked) makes its ring a moment
   * later: poll until it appears (and, for stock files, has a header). */
  while (((err = try_open(pid, &c, &src)) == OCGC_E_NORING || err == OCGC_E_CORRUPT) &&
         now_ms() < deadline)
    sleep_ms(POLL_MS);
  if (err != 0) return err;
  if (!c.allow_stale) {
    err = check_owner(src, pid);
    if (err != 0) {
      ocgc_source_close(src);
      return err;
    }
  }
  *out = src;
  return 0;
}

int ocgc_source_check_alive(const struct ocgc_source *src)
{
  struct ocgc_source_info info;
  int err;

  if (src == NULL) return -EINVAL;
  err = ocgc_source_info(src, &info);
  if (err != 0) return err;
  if (!info.has_ext) return -ENODATA;
  return ident_matches(&info);
}
