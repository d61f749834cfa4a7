/* hostmaps.c - one pass over every /proc/PID/maps of the host: the set of
 * files mapped by anyone (device and inode) and the set of ocgc memory
 * rings mapped by anyone (memfd names "ocgc:<P>.events").
 *
 * Also which processes map a ring as a producer does (shared, writable,
 * a *.events file or ocgc's memory ring), so that the ring scan (rings.c)
 * opens the rings of those only, and reads the host's maps once.
 *
 * Why: the pid in a ring's header, or in a link's name <P>.events, is the
 * pid in the producer's own pid namespace.  Seen from the host (or from
 * another container) it may name nobody, or somebody else, while the
 * producer lives.  What a process maps does not depend on namespaces: the
 * host's /proc lists every process, and a mapped file's dev:inode is the
 * same wherever it is seen from.
 *
 * Invariants:
 * - Every maps file is hostile text (the names in it are chosen by the
 *   process).  Nothing named in a line is ever opened or stat'ed; a line is
 *   split by mapsline.c (the one parser of maps lines, whose rule of what
 *   a producer's ring mapping is attach.c follows too), and a line that
 *   does not parse is skipped.  A name may hold any byte but a
 *   newline (the kernel writes it as \012), so a name can never start a
 *   line: lines are split on '\n' only.
 * - Bounded: at most LINE_KEEP bytes of a line are kept (a longer one only
 *   loses its name, which then matches no memfd), and a scan stops at the
 *   limits of struct hostmaps_limits (lines per process, lines and bytes in
 *   all, distinct files and names kept).  Reaching one makes the scan
 *   incomplete, which the caller must treat as "anything may be mapped".
 * - A process that vanishes, or whose maps we may not read, is skipped:
 *   what was read of it is kept (keeping more is the safe side).
 * - The maps device field is major:minor in hex (the kernel's MAJOR and
 *   MINOR); it is compared with st_dev through makedev(), never as text.
 * - Our own process is left out: what ocgc maps while it reads rings is
 *   no producer's. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostmaps.h"
#include "mapsline.h"
#include "procfs.h"

/* Defaults: far above any real host (vm.max_map_count is 65530 by default,
 * 262144 where databases ask for more), yet a few seconds of reading at
 * worst. */
#define LINES_PER_PROC (1ul << 20)
#define LINES_TOTAL (8ul << 20)
#define BYTES_TOTAL (1ull << 30)
#define FILES_MAX (1ul << 19)
#define MEMFDS_MAX (1ul << 16)

/* The fields before the name take ~75 bytes, a memfd name at most 249
 * bytes after "/memfd:", plus " (deleted)". */
#define LINE_KEEP 1024


/* A set of (a, b) keys, each with the pid that was first seen holding it;
 * open addressing, pid 0 marks an empty slot. */
struct slot {
  uint64_t a, b;
  int pid;
};

struct set {
  struct slot *v;
  size_t cap, n, max;
};

struct hostmaps {
  struct set files;  /* (dev, inode) */
  struct set memfds; /* (P, 0) */
  struct set producers; /* (pid, 0): it maps a ring as a producer does */
  struct hostmaps_limits lim;
  unsigned long lines, procs;
  unsigned long denied;        /* processes whose maps we may not read */
  unsigned long long bytes;
  int incomplete;
};

static uint64_t hash2(uint64_t a, uint64_t b)
{
  uint64_t x = a * UINT64_C(0x9e3779b97f4a7c15) ^ (b + UINT64_C(0x632be59bd9b4e019));
  x ^= x >> 31;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

/* The slot of (a, b), or the empty slot where it would go.  s->cap is a
 * power of two and the table is at most half full, so the probe ends. */
static struct slot *set_slot(const struct set *s, uint64_t a, uint64_t b)
{
  size_t i = (size_t)hash2(a, b) & (s->cap - 1);
  while (s->v[i].pid != 0 && (s->v[i].a != a || s->v[i].b != b)) i = (i + 1) & (s->cap - 1);
  return &s->v[i];
}

static int set_get(const struct set *s, uint64_t a, uint64_t b)
{
  return s->cap == 0 ? 0 : set_slot(s, a, b)->pid;
}

/* Returns 0 (added, or there already), 1 (full: s->max keys) or -ENOMEM. */
static int set_add(struct set *s, uint64_t a, uint64_t b, int pid)
{
  struct slot *sl;
  if (s->cap != 0 && set_slot(s, a, b)->pid != 0) return 0;
  if (s->n >= s->max) return 1;
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024, i;
    struct slot *v = calloc(cap, sizeof *v), *old = s->v;
    size_t oldcap = s->cap;
    if (v == NULL) return -ENOMEM;
    s->v = v;
    s->cap = cap;
    for (i = 0; i < oldcap; i++)
      if (old[i].pid != 0) *set_slot(s, old[i].a, old[i].b) = old[i];
    free(old);
  }
  sl = set_slot(s, a, b);
  sl->a = a;
  sl->b = b;
  sl->pid = pid;
  s->n++;
  return 0;
}

/* ---- one maps line ------------------------------------------------------------- */

/* Record what line [s] (NUL-terminated, no newline; [cut]: its end was
 * dropped) of [pid]'s maps says: the file it maps (mapsline.c splits it),
 * whether it maps a ring as a producer does, and ocgc's memory ring it
 * names.  Returns 0, or -ENOMEM. */
static int take_line(struct hostmaps *h, char *s, int cut, int pid)
{
  struct ocgc_maps_line m;
  long memfd;
  int r;
  if (ocgc_maps_parse_line(s, &m) != 0) return 0;
  if (m.inode != 0 && m.dev_major <= UINT_MAX && m.dev_minor <= UINT_MAX) {
    uint64_t dev = (uint64_t)makedev((unsigned)m.dev_major, (unsigned)m.dev_minor);
    r = set_add(&h->files, dev, m.inode, pid);
    if (r < 0) return r;
    if (r > 0) h->incomplete = 1;
  }
  if (m.path == NULL) return 0;
  /* A cut name may hide a producer's ring: its process is a candidate. */
  if (cut || ocgc_maps_ring_like(&m)) {
    r = set_add(&h->producers, (uint64_t)pid, 0, pid);
    if (r < 0) return r;
    if (r > 0) h->incomplete = 1;
  }
  if (!cut && (memfd = ocgc_maps_memfd_pid(&m)) > 0) {
    r = set_add(&h->memfds, (uint64_t)memfd, 0, pid);
    if (r < 0) return r;
    if (r > 0) h->incomplete = 1;
  }
  return 0;
}

/* ---- one process ----------------------------------------------------------------- */

/* Read the maps of [pid] in the /proc open as [dfd].  Returns 0, 1 (a
 * limit on all the work was reached: stop) or -ENOMEM. */
static int scan_proc(struct hostmaps *h, int dfd, int pid)
{
  char path[32], buf[16384], line[LINE_KEEP];
  size_t ll = 0;
  unsigned long nlines = 0;
  int cut = 0, fd, stop = 0, err = 0;

  snprintf(path, sizeof path, "%d/maps", pid);
  fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) { /* gone, or not ours to read */
    if (errno == EACCES || errno == EPERM) h->denied++;
    return 0;
  }
  h->procs++;
  while (!stop && err == 0) {
    const char *p, *e, *nl;
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break; /* the end, or it vanished or denied us meanwhile */
    if ((unsigned long long)got > h->lim.bytes_total - h->bytes) {
      h->incomplete = 1;
      err = 1;
      break;
    }
    h->bytes += (unsigned long long)got;
    for (p = buf, e = buf + got; p < e && !stop && err == 0; p = nl + 1) {
      size_t n;
      nl = memchr(p, '\n', (size_t)(e - p));
      n = (size_t)((nl != NULL ? nl : e) - p);
      if (n > sizeof line - 1 - ll) {
        n = sizeof line - 1 - ll;
        cut = 1;
      }
      memcpy(line + ll, p, n);
      ll += n;
      if (nl == NULL) break; /* the line goes on in the next read */
      line[ll] = '\0';
      err = take_line(h, line, cut, pid);
      ll = 0;
      cut = 0;
      h->lines++;
      if (++nlines >= h->lim.lines_per_proc) {
        h->incomplete = 1;
        stop = 1;
      }
      if (h->lines >= h->lim.lines_total) {
        h->incomplete = 1;
        err = err ? err : 1;
      }
    }
  }
  /* A last line without its newline was cut by the process vanishing: its
   * fields may be cut short too, so it is not read. */
  close(fd);
  return err;
}

/* ---- the scan -------------------------------------------------------------------- */

int hostmaps_scan(const char *proc, const struct hostmaps_limits *lim, struct hostmaps **out)
{
  struct hostmaps *h;
  struct dirent *de;
  DIR *d;
  int dfd, err = 0, self = (int)getpid();

  *out = NULL;
  if ((h = calloc(1, sizeof *h)) == NULL) return -ENOMEM;
  if (lim != NULL) h->lim = *lim;
  if (h->lim.lines_per_proc == 0) h->lim.lines_per_proc = LINES_PER_PROC;
  if (h->lim.lines_total == 0) h->lim.lines_total = LINES_TOTAL;
  if (h->lim.bytes_total == 0) h->lim.bytes_total = BYTES_TOTAL;
  if (h->lim.files_max == 0) h->lim.files_max = FILES_MAX;
  if (h->lim.memfds_max == 0) h->lim.memfds_max = MEMFDS_MAX;
  h->files.max = h->lim.files_max;
  h->memfds.max = h->lim.memfds_max;
  h->producers.max = h->lim.files_max;

  dfd = open(proc != NULL ? proc : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || (d = fdopendir(dfd)) == NULL) {
    err = -errno;
    if (dfd >= 0) close(dfd);
    hostmaps_free(h);
    return err;
  }
  while (err == 0 && (de = readdir(d)) != NULL) {
    int pid = ocgc_proc_pid_name(de->d_name);
    if (pid == 0 || pid == self) continue;
    err = scan_proc(h, dirfd(d), pid);
  }
  closedir(d);
  if (err < 0) {
    hostmaps_free(h);
    return err;
  }
  *out = h;
  return 0;
}

int hostmaps_complete(const struct hostmaps *h)
{
  return !h->incomplete;
}

int hostmaps_file(const struct hostmaps *h, dev_t dev, ino_t ino)
{
  return set_get(&h->files, (uint64_t)dev, (uint64_t)ino);
}

int hostmaps_producer(const struct hostmaps *h, int pid)
{
  return pid > 0 && set_get(&h->producers, (uint64_t)pid, 0) != 0;
}

int hostmaps_memfd(const struct hostmaps *h, long p)
{
  return p > 0 ? set_get(&h->memfds, (uint64_t)p, 0) : 0;
}

void hostmaps_counts(const struct hostmaps *h, unsigned long *files, unsigned long *memfds,
                     unsigned long *procs)
{
  if (files != NULL) *files = (unsigned long)h->files.n;
  if (memfds != NULL) *memfds = (unsigned long)h->memfds.n;
  if (procs != NULL) *procs = h->procs;
}

unsigned long hostmaps_denied(const struct hostmaps *h)
{
  return h->denied;
}

void hostmaps_free(struct hostmaps *h)
{
  if (h == NULL) return;
  free(h->files.v);
  free(h->memfds.v);
  free(h->producers.v);
  free(h);
}
