/* attach.c - attaching to a live process by pid: find the ring it writes,
 * open it, and tell whether it still belongs to that very process.
 *
 * Owns ocgc_open_ring(), ocgc_find_ring(), ocgc_source_open_pid(),
 * ocgc_source_check_alive() and ocgc_source_seq_stuck() (a busy seqlock's
 * producer dead: the readers' callers ask, never the reads themselves), and
 * a source's owner (attach.h): which
 * mapping of /proc/PID/maps is a ring, and how a ring is reached and
 * judged.  Reading /proc is procfs.c's.
 * It keeps no state but what a source remembers of its owner: every call
 * reads /proc afresh, so any number of threads may call it at once.
 *
 * Invariants and choices:
 * - A process's ring is a *shared, writable* mapping of a file whose name
 *   ends in ".events", in any folder (ocgc's private folder, OCaml 5's
 *   working directory, OCAML_RUNTIME_EVENTS_DIR).  Read-only mappings are
 *   readers' (libocgc and OCaml 5's consumer map PROT_READ), so a monitoring
 *   process is never mistaken for a producer.  When several match, the one
 *   named <pid>.events wins (both ocgc and OCaml 5 use that name).
 * - ocgc's producer keeps its ring in a sealed memfd (maps names it
 *   "/memfd:ocgc:<pid>.events (deleted)") and publishes it in its folder as
 *   a link to /proc/<pid>/fd/<n>.  Such a ring, or any ring whose file was
 *   unlinked, is reached through the process: /proc/PID/map_files (root),
 *   else the entry of /proc/PID/fd that is that very inode.
 * - The process chooses every path in its maps and every entry of its fd
 *   table, so nothing is opened on its word alone (openreg.h): a path is
 *   resolved with no link anywhere in it (openat2's RESOLVE_NO_SYMLINKS)
 *   to an O_PATH descriptor, an fd entry only after its link text names
 *   the mapped file and stat(2) says it is a regular file, and either is
 *   opened for reading only once fstat(2) finds it the regular file of the
 *   maps line's dev:inode.  The fd table scan is bounded (FD_SCAN_MAX entries).
 * - The producer's own temporary name (.<pid>.events.tmp) does not match:
 *   a file being built is waited for, never opened half-made.  Stock OCaml
 *   5 creates its file in place and writes the header after sizing it, so
 *   within the wait a file that reads as corrupt is tried again too.
 * - A process is identified by (boot id, pid, start time): pids are reused,
 *   start times (field 22 of /proc/PID/stat, clock ticks after boot) are
 *   not within one boot.  (They tick at only 100 Hz: two processes may
 *   share one, but never with the same pid, which would take the whole pid
 *   space to wrap within the tick.)  A zombie counts as dead.
 * - The identity is checked *after* the file is opened, so a pid reused
 *   between finding the file and opening it is caught.
 * - An ocgc file names its producer (pid, start time, boot id, state).  A
 *   stock OCaml 5 file names nobody, so a source opened by pid remembers
 *   its process (pid, and the start time read after the open) and the
 *   file's dev:inode, and that process is its producer while it still
 *   maps that very file shared and writable.  Our descriptor keeps the
 *   inode alive, so its number cannot pass to another file meanwhile.
 *   Nothing the target names is opened for this: its maps are only read.
 * - A stock file does not say which id numbering it holds: the attach reads
 *   it from the process's executable (exever.c: /proc/PID/exe only,
 *   bounded), once, after the process's start time is known.
 * - If the current boot id cannot be read, the boot check is skipped (pid +
 *   start time still identify the process within the boot we are in).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"
#include "ocgc/consumer.h"
#include "attach.h"
#include "openreg.h"
#include "mapsline.h"
#include "clock.h"
#include "procfs.h"
#include "source.h"

#define DEFAULT_WAIT_MS 200u
#define POLL_MS 5u
#define DELETED_SUFFIX " (deleted)"
#define MEMFD_PREFIX "/memfd:"
#define FD_SCAN_MAX 65536u

/* ---- finding the ring in /proc/PID/maps ---------------------------------------------- */

static int has_suffix(const char *s, size_t len, const char *suf)
{
  size_t n = strlen(suf);
  return len >= n && memcmp(s + len - n, suf, n) == 0;
}

/* A ring mapping found in /proc/PID/maps. */
struct ring_map {
  char *path;            /* as maps names it (unescaped), in the line */
  unsigned long start, end;
  dev_t dev;
  ino_t ino;
  int deleted;           /* unlinked, or a memfd: reach it through /proc */
};

/* How well a maps line names the ring of [pid]: 0 not at all, else higher
 * is better.  On a match, *m describes it (m->path points into [line],
 * modified in place). */
static int score_line(char *line, int pid, struct ring_map *m)
{
  struct ocgc_maps_line f;
  char own[32], *name, *base;

  if (ocgc_maps_parse_line(line, &f) != 0 || !ocgc_maps_ring_like(&f)) return 0;
  m->start = f.start;
  m->end = f.end;
  m->dev = makedev(f.dev_major, f.dev_minor);
  m->ino = (ino_t)f.inode;
  m->deleted = f.deleted;
  name = f.path;
  if (strncmp(name, MEMFD_PREFIX, strlen(MEMFD_PREFIX)) == 0) {
    /* ocgc's memfd: "/memfd:ocgc:<pid>.events" */
    base = strrchr(name, ':') + 1;
    m->deleted = 1;
  } else {
    base = strrchr(name, '/');
    base = base != NULL ? base + 1 : name;
  }
  if (*base == '\0' || strcmp(base, OCGC_DIR_EVENTS_SUFFIX) == 0) return 0;
  m->path = name;
  snprintf(own, sizeof own, "%d" OCGC_DIR_EVENTS_SUFFIX, pid);
  return strcmp(base, own) == 0 ? 2 : 1;
}

/* find_map()'s search: the best ring mapping so far. */
struct map_search {
  int pid;
  struct ring_map *best;
  char *buf;
  size_t n;
  int score, found;
};

static int consider_line(char *line, void *ctx)
{
  struct map_search *q = ctx;
  struct ring_map m;
  int sc = score_line(line, q->pid, &m);
  if (sc == 0) return 0;
  /* A file reachable by its path beats one that is not; then the better
   * name wins; on a tie, the first (lowest address) one. */
  if (!q->found || (q->best->deleted && !m.deleted) ||
      (q->best->deleted == m.deleted && sc > q->score)) {
    if (strlen(m.path) >= q->n) return -ENAMETOOLONG;
    memcpy(q->buf, m.path, strlen(m.path) + 1);
    *q->best = m;
    q->best->path = q->buf;
    q->score = sc;
    q->found = 1;
  }
  return 0;
}

/* The best ring mapping of [pid]; its path is copied into buf.  Returns 0,
 * -ESRCH, -EACCES, OCGC_E_NORING, -ENAMETOOLONG or another -errno. */
static int find_map(int pid, struct ring_map *best, char *buf, size_t n)
{
  struct map_search q = {pid, best, buf, n, 0, 0};
  struct ocgc_proc_ident id;
  int err = ocgc_proc_maps_each(pid, consider_line, &q);
  if (err == 0 && !q.found) {
    /* A zombie's map is empty, as is that of a process that died while
     * we read: say it is gone rather than ringless. */
    int e = ocgc_proc_ident(pid, &id);
    err = e == -ESRCH ? -ESRCH : OCGC_E_NORING;
  }
  return err;
}

/* Open [path] (following a final link only if [follow]: the /proc links
 * are magic links) and keep it only if it is the very regular file [m]
 * maps.  Returns the descriptor, or -errno / OCGC_E_NORING. */
static int open_verified(int dirfd, const char *path, int follow, const struct ring_map *m)
{
  int fd;
  if (m->ino == 0) return OCGC_E_NORING; /* a file's maps line has its inode */
  fd = ocgc_open_regular(dirfd, path, follow ? OCGC_OPENREG_MAGIC_LAST : OCGC_OPENREG_NO_LINKS,
                         m->dev, m->ino);
  return fd == -ELOOP ? OCGC_E_NORING : fd;
}

/* Whether the fd link [name] in [dfd] reads as the file [m] maps: its
 * path, with " (deleted)" when it is unlinked (or a memfd).  The text is
 * unescaped as the maps line was, so that both read the same. */
static int names_map(int dfd, const char *name, const struct ring_map *m)
{
  char text[PATH_MAX + sizeof DELETED_SUFFIX];
  ssize_t n = readlinkat(dfd, name, text, sizeof text - 1);
  size_t len;
  if (n < 0) return 0;
  text[n] = '\0';
  len = strlen(text);
  if (has_suffix(text, len, DELETED_SUFFIX)) text[len - strlen(DELETED_SUFFIX)] = '\0';
  ocgc_maps_unescape(text);
  return strcmp(text, m->path) == 0;
}

/* Reach the ring [m] of [pid]: by its path, else through map_files (root
 * only), else through the fd table entry that is that inode.  On success
 * returns the descriptor and writes a path that opens it to path[0..n). */
static int locate(int pid, const struct ring_map *m, char *path, size_t n)
{
  char dir[64], mf[64 + sizeof ((struct dirent *)0)->d_name];
  struct dirent *e;
  unsigned seen = 0;
  int fd, dfd, err = OCGC_E_NORING;
  DIR *d;

  if (!m->deleted) {
    fd = open_verified(AT_FDCWD, m->path, 0, m);
    if (fd >= 0) {
      if (strlen(m->path) >= n) { close(fd); return -ENAMETOOLONG; }
      memmove(path, m->path, strlen(m->path) + 1);
      return fd;
    }
  }
  snprintf(mf, sizeof mf, "/proc/%d/map_files/%lx-%lx", pid, m->start, m->end);
  fd = open_verified(AT_FDCWD, mf, 1, m);
  if (fd >= 0) goto found;
  snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno == EACCES || errno == EPERM ? -EACCES : OCGC_E_NORING;
  d = fdopendir(dfd);
  if (d == NULL) { close(dfd); return -ENOMEM; }
  fd = -1;
  while (fd < 0 && seen++ < FD_SCAN_MAX && (e = readdir(d)) != NULL) {
    struct stat st;
    /* First the link's text, which the kernel makes without touching the
     * file: only an entry that names the mapped file is stat'ed (a stat
     * reaches the file system, which for a file the process holds on its
     * own FUSE mount may never answer).  Then stat, not open: it follows
     * the magic link without opening what the process holds (a terminal,
     * a FIFO ...). */
    if (e->d_name[0] == '.' || !names_map(dfd, e->d_name, m) ||
        fstatat(dfd, e->d_name, &st, 0) != 0)
      continue;
    if (!S_ISREG(st.st_mode) || st.st_dev != m->dev || st.st_ino != m->ino) continue;
    fd = open_verified(dfd, e->d_name, 1, m);
    if (fd >= 0) snprintf(mf, sizeof mf, "%s/%s", dir, e->d_name);
    else err = fd;
  }
  closedir(d);
  if (fd < 0) return err;
found:
  if (strlen(mf) >= n) { close(fd); return -ENAMETOOLONG; }
  memcpy(path, mf, strlen(mf) + 1);
  return fd;
}

/* ocgc_open_ring(), and the mapping's range in *start and *end. */
static int open_ring_at(int pid, char *path, size_t n, unsigned long *start, unsigned long *end)
{
  char buf[PATH_MAX], where[PATH_MAX];
  struct ring_map m;
  int fd, err;

  if (path == NULL) {
    path = where;
    n = sizeof where;
  }
  if (n == 0) return -EINVAL;
  err = find_map(pid, &m, buf, sizeof buf);
  if (err != 0) return err;
  fd = locate(pid, &m, path, n);
  *start = m.start;
  *end = m.end;
  return fd == -ENOENT ? OCGC_E_NORING : fd;
}

int ocgc_open_ring(int pid, char *path, size_t n)
{
  unsigned long start, end;
  return open_ring_at(pid, path, n, &start, &end);
}

int ocgc_find_ring(int pid, char *path, size_t n)
{
  int fd;
  if (path == NULL || n == 0) return -EINVAL;
  fd = ocgc_open_ring(pid, path, n);
  if (fd < 0) return fd;
  close(fd);
  return 0;
}

/* ---- opening and checking ------------------------------------------------------------ */

struct attach_cfg {
  const char *dir;
  unsigned wait_ms;
  enum ocgc_ids ids;
  int allow_stale;
};

/* The caller's options (opts.h's rule): 0 or -EINVAL. */
static int read_opts(const struct ocgc_attach_opts *opts, struct attach_cfg *c)
{
  struct ocgc_attach_opts o;
  int err = opts_read(&o, sizeof o, opts);
  memset(c, 0, sizeof *c);
  c->dir = o.dir;
  c->wait_ms = o.wait_ms != 0 ? o.wait_ms : DEFAULT_WAIT_MS;
  c->ids = o.ids;
  c->allow_stale = o.allow_stale != 0;
  return err;
}

static uint64_t now_ms(void) { return cm_mono_ns() / 1000000u; }

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Whether the ring described by [info] (an ocgc file) is still written by
 * the live process it names, which is process [here] in our pid namespace
 * (its pid in its own namespace is info->pid: the same unless it lives in
 * a container): 0, OCGC_E_STALE, or another error. */
static int ident_matches(const struct ocgc_source_info *info, uint64_t here)
{
  struct ocgc_proc_ident id;
  char boot[64];
  int err;

  if (info->state != OCGC_STATE_RUNNING) return OCGC_E_STALE;
  if (here == 0 || here > INT_MAX) return OCGC_E_STALE;
  /* Boot first: after a reboot pid and start time mean nothing. */
  if (ocgc_proc_boot_id(boot, sizeof boot) == 0 && strcmp(boot, info->boot_id) != 0)
    return OCGC_E_STALE;
  err = ocgc_proc_ident((int)here, &id);
  if (err == -ESRCH) return OCGC_E_STALE;
  if (err != 0) return err;
  return id.start_time == info->start_time ? 0 : OCGC_E_STALE;
}

/* Whether the process that mapped the stock ring [src] when it was opened
 * (pid and start time remembered then) still maps that very file (its
 * dev:inode, which cannot be reused while our descriptor holds it): 0,
 * OCGC_E_STALE, or another error.  The maps are read before the start
 * time, so a pid reused meanwhile is caught by the start time.  Another
 * user's maps may not be readable: then the start time alone tells. */
static int stock_alive(const struct ocgc_source *src)
{
  struct ocgc_proc_ident id;
  int err;

  if (!src->pid_start_ok) return OCGC_E_STALE; /* gone already at open */
  err = ocgc_proc_maps_file(src->pid, src->dev, src->ino);
  if (err == 0 || err == -ESRCH) return OCGC_E_STALE;
  if (err < 0 && err != -EACCES) return err;
  err = ocgc_proc_ident(src->pid, &id);
  if (err == -ESRCH) return OCGC_E_STALE;
  if (err != 0) return err;
  return id.start_time == src->pid_start ? 0 : OCGC_E_STALE;
}

void ocgc_source_set_owner(struct ocgc_source *src, int pid, int start_ok, uint64_t start)
{
  src->pid = pid;
  src->pid_start_ok = start_ok;
  src->pid_start = start_ok ? start : 0;
}

void ocgc_source_set_mapping(struct ocgc_source *src, unsigned long start, unsigned long end)
{
  src->map_known = 1;
  src->map_start = start;
  src->map_end = end;
}

/* Whether the process [src] was opened from still maps the ring where it
 * did: an exec keeps the pid and the start time but not the mappings, so
 * an ocgc file whose producer exec'd still names a live process as its
 * own (its runtime never wrote its exit).  0, or OCGC_E_STALE; when it
 * cannot be told (no ptrace read access to another user's process, no
 * map_files), 0: the identity alone decides. */
static int still_mapped(const struct ocgc_source *src)
{
  int r;
  if (!src->map_known || src->pid <= 0) return 0;
  r = ocgc_proc_maps_range(src->pid, src->map_start, src->map_end);
  if (r == 0 || r == -ESRCH) return OCGC_E_STALE;
  return 0;
}

/* Whether the ocgc file [info] names process [pid] (of our namespace) as
 * its producer: by its pid here, or, for a producer in a container (a pid
 * namespace below ours), by its pid in its own namespace.  0 or
 * OCGC_E_STALE. */
static int names_process(const struct ocgc_source_info *info, int pid)
{
  uint64_t own;
  if (info->pid == (uint64_t)pid) return 0;
  return ocgc_proc_ns_pid(pid, &own) == 0 && own != (uint64_t)pid && own == info->pid
             ? 0 : OCGC_E_STALE;
}

int ocgc_source_check_owner(const struct ocgc_source *src, int pid)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  int err = ocgc_source_info(src, &info);
  if (err != 0) return err;
  if (!info.has_ext) return src->pid == pid ? stock_alive(src) : OCGC_E_STALE;
  if ((err = names_process(&info, pid)) != 0) return err;
  return ident_matches(&info, (uint64_t)pid);
}

/* One attempt to open the ring of [pid].  Returns 0 (and *out), or an
 * error; OCGC_E_NORING means "not there yet, worth waiting for". */
static int try_open(int pid, const struct attach_cfg *c, struct ocgc_source **out)
{
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  char path[PATH_MAX];
  struct ocgc_proc_ident id;
  int fd, err;

  oo.ids = c->ids;
  if (c->dir != NULL) {
    int dfd, len = snprintf(path, sizeof path, "%d" OCGC_DIR_EVENTS_SUFFIX, pid);
    if (len < 0 || (size_t)len >= sizeof path) return -ENAMETOOLONG;
    /* The folder is the caller's, its entries are not: no link is
     * followed, nothing but a regular file opened. */
    dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
      fd = -errno;
    } else {
      fd = ocgc_open_regular(dfd, path, OCGC_OPENREG_NO_LINKS, 0, 0);
      close(dfd);
    }
    if (fd >= 0) return ocgc_source_open_fd(fd, &oo, out); /* maybe stale: checked later */
    err = fd;
    if (err == OCGC_E_NORING) return OCGC_E_CORRUPT; /* a FIFO, a device: no ring */
    /* No file: only a live process may still make one. */
    if (err == -ENOENT) return ocgc_proc_ident(pid, &id) == -ESRCH ? -ESRCH : OCGC_E_NORING;
    if (err != -ELOOP) return err;
    /* A link: a memfd ring's publication, reached through the process; if
     * that process is gone, the link is all that is left of its ring. */
    if (ocgc_proc_ident(pid, &id) == -ESRCH) return OCGC_E_STALE;
  }
  {
    unsigned long start, end;
    fd = open_ring_at(pid, path, sizeof path, &start, &end);
    if (fd < 0) return fd;
    if ((err = ocgc_source_open_fd(fd, &oo, out)) != 0) return err;
    ocgc_source_set_mapping(*out, start, end);
    return 0;
  }
}

/* A file found in a --dir folder is that process's ring only if the
 * process maps it: an ocgc file's identity can be copied by anyone who can
 * read it (G12).  0, or OCGC_E_STALE; when the maps cannot be read (another
 * user's process), the identity alone decides, as for stock files. */
static int dir_file_mapped(struct ocgc_source *src, int pid)
{
  unsigned long start, end;
  int err = ocgc_proc_maps_file_at(pid, src->dev, src->ino, &start, &end);
  if (err == 1) ocgc_source_set_mapping(src, start, end);
  if (err == 1 || err == -EACCES) return 0;
  return err == 0 || err == -ESRCH ? OCGC_E_STALE : err;
}

/* ocgc_source_open_pid() with [c] (its wait_ms 0: one attempt). */
static int open_pid(int pid, const struct attach_cfg *c, struct ocgc_source **out)
{
  struct ocgc_source *src = NULL;
  struct ocgc_proc_ident id = {0, 0};
  uint64_t deadline = now_ms() + c->wait_ms;
  int err;

  /* A process that has just started (or forked) makes its ring a moment
   * later: poll until it appears (and, for stock files, has a header). */
  while (((err = try_open(pid, c, &src)) == OCGC_E_NORING || err == OCGC_E_CORRUPT) &&
         now_ms() < deadline)
    sleep_ms(POLL_MS);
  if (err != 0) return err;
  /* After the open: a pid reused before it is caught by the check. */
  err = ocgc_proc_ident(pid, &id);
  ocgc_source_set_owner(src, pid, err == 0, id.start_time);
  if ((err = ocgc_source_ids_from_exe(src)) != 0) {
    ocgc_source_close(src);
    return err;
  }
  if (!c->allow_stale) {
    err = ocgc_source_check_owner(src, pid);
    if (err == 0 && c->dir != NULL) err = dir_file_mapped(src, pid);
    if (err != 0) {
      ocgc_source_close(src);
      return err;
    }
  }
  *out = src;
  return 0;
}

int ocgc_source_open_pid(int pid, const struct ocgc_attach_opts *opts,
                         struct ocgc_source **out)
{
  struct attach_cfg c;
  if (out == NULL) return -EINVAL;
  if (pid <= 0) return -ESRCH;
  if (read_opts(opts, &c) != 0) return -EINVAL;
  return open_pid(pid, &c, out);
}

int attach_open_pid_once(int pid, const char *dir, struct ocgc_source **out)
{
  struct attach_cfg c;
  if (out == NULL) return -EINVAL;
  if (pid <= 0) return -ESRCH;
  memset(&c, 0, sizeof c);
  c.dir = dir;
  return open_pid(pid, &c, out);
}

int ocgc_source_check_alive(const struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  int err;

  if (src == NULL) return -EINVAL;
  err = ocgc_source_info(src, &info);
  if (err != 0) return err;
  if (info.has_ext) {
    /* Opened by pid: that process, whose own pid the file names
     * (ocgc_source_open_pid checked it, in a container too); its mapping
     * tells an exec.  Opened by path: the pid the file names, read here. */
    if (src->pid > 0) {
      if ((err = names_process(&info, src->pid)) != 0 ||
          (err = ident_matches(&info, (uint64_t)src->pid)) != 0)
        return err;
      return still_mapped(src);
    }
    return ident_matches(&info, info.pid);
  }
  return src->pid > 0 ? stock_alive(src) : -ENODATA;
}

int ocgc_source_seq_stuck(struct ocgc_source *s)
{
  if (!s->gone && s->l.has_ext && ocgc_source_check_alive(s) == OCGC_E_STALE) s->gone = 1;
  return s->gone;
}

int ocgc_source_gone(const struct ocgc_source *src)
{
  return ocgc_source_check_alive(src) == OCGC_E_STALE;
}
