/* rings.c - every ring of this host and of the ring folders, judged once
 * (ocgc/rings.h): the one rule of a ring's state and of what may be
 * removed, which `ocgc ls` prints and `ocgc ls --prune` acts on.
 *
 * A scan is three passes:
 * 1. every process in /proc whose memory map holds a ring, as ocgc_list()
 *    lists them (opened as ocgc_open_ring() does, checked to be the very
 *    file the maps name); a ring two processes map (a forked child) is
 *    listed once.  The owner is the file's when a stat of the path still
 *    leads to it, else unknown;
 * 2. the entries *.events of the default folders (ocgc_default_dir()) and
 *    of every folder asked for.  A ring file or link that is a ring of
 *    pass 1 (same device and inode) marks that ring as being in the
 *    folder, and gives it the folder's name when pass 1 knew it only as
 *    /proc/PID/fd/N.  Other ring files are left by processes that are
 *    gone; other links (ocgc publishes its memory ring as a link
 *    DIR/PID.events -> /proc/PID/fd/N) dangle, or lead to a file that is
 *    no ring any more: stale.  Each file is opened through a descriptor of
 *    our own (O_NOFOLLOW) and read as /proc/self/fd/N, so that what is
 *    judged, what is compared with pass 1 and what a prune removes are the
 *    same file; links are stat'ed, never opened;
 * 3. what every process of the host maps (hostmaps.c), read first, in
 *    the one pass over every /proc/PID/maps of the scan (pass 1 reads again
 *    only the maps of the processes it saw map a ring as a producer).  A
 *    prune judges each entry again when it removes it, so reading first
 *    costs nothing in safety.  A folder's entry that pass 1 did not find is still in use if some process maps
 *    the file, or what the link leads to, or, for a link <P>.events, a
 *    memfd named ocgc:<P>.events: which namespace's P that is cannot be
 *    told, so the link is kept (a stale link costs nothing; removing a live
 *    one blinds every reader).
 * What a scan cannot look into is counted, not guessed at: processes
 * whose maps it may not read (the host scan's, or pass 1's if there is
 * none), and other users' default folders it may not open (dirs.c);
 * whether they hold rings, and how many, cannot be told from here.
 * The rule is written once, in docs/design.md ("Which ring entries are
 * gone"); the producer's own sweep of its folder at start
 * (runtime_patch/src/ocgc_stale.c) follows it too.
 *
 * Invariants: the scan keeps no global state; it reads only what it names
 * (the folders it was given, /proc); the target's strings are kept as
 * bytes, escaping is the caller's. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirs.h"
#include "hostmaps.h"
#include "ocgc/consumer.h"
#include "opts.h"


struct ocgc_rings {
  struct ocgc_ring *v;
  size_t n, cap;
  int err;             /* pass 1: -ENOMEM in a callback */
  int proc_err;        /* pass 1: /proc could not be listed */
  int host_err;        /* pass 3: could not be made (-errno), else 0 */
  int host_complete;   /* pass 3 read every maps whole */
  struct ocgc_rings_unseen unseen; /* what could not be looked into */
  struct hostmaps *hm; /* during the scan */
};

const char *ocgc_ring_state_name(enum ocgc_ring_state st)
{
  static const char *const names[] = {"running", "exited", "stale",   "stock",  "mapped",
                                      "foreign", "corrupt", "denied", "unknown"};
  return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}

static int gone(enum ocgc_ring_state st)
{
  return st == OCGC_RING_EXITED || st == OCGC_RING_STALE;
}

static struct ocgc_ring *add_ring(struct ocgc_rings *l)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 32;
    struct ocgc_ring *v = realloc(l->v, cap * sizeof *v);
    if (v == NULL) return NULL;
    l->v = v;
    l->cap = cap;
  }
  memset(&l->v[l->n], 0, sizeof l->v[0]);
  return &l->v[l->n++];
}

static void copy_str(char *dst, size_t n, const char *src)
{
  snprintf(dst, n, "%s", src);
}

/* The pid a ring file's name gives ("1234.events"), or 0. */
static int pid_of_name(const char *name)
{
  size_t len = strlen(name), sl = strlen(OCGC_DIR_EVENTS_SUFFIX), i;
  long v = 0;
  if (len <= sl || len - sl > 9 || name[0] < '1' || name[0] > '9') return 0;
  for (i = 0; i < len - sl; i++) {
    if (name[i] < '0' || name[i] > '9') return 0;
    v = v * 10 + (name[i] - '0');
  }
  return v <= INT_MAX ? (int)v : 0;
}

/* Read what the file says about itself into e. */
static void classify(struct ocgc_ring *e, struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  unsigned r;
  int alive;
  if (ocgc_source_info(src, &info) != 0) {
    e->state = OCGC_RING_CORRUPT;
    return;
  }
  e->has_info = 1;
  e->has_ext = info.has_ext;
  e->ring_bytes = info.max_domains * info.ring_words * 8;
  if (!info.has_ext) {
    copy_str(e->ocaml, sizeof e->ocaml, "5");
    copy_str(e->ocgc, sizeof e->ocgc, "-");
    copy_str(e->program, sizeof e->program, "-"); /* pass 1 names it */
    e->state = e->mapped ? OCGC_RING_RUNNING : OCGC_RING_STOCK;
    return;
  }
  copy_str(e->program, sizeof e->program, info.program[0] ? info.program : "-");
  copy_str(e->ocaml, sizeof e->ocaml, info.ocaml_version[0] ? info.ocaml_version : "-");
  copy_str(e->ocgc, sizeof e->ocgc, info.ocgc_version[0] ? info.ocgc_version : "-");
  e->native = (info.flags & OCGC_EXT_NATIVE) != 0;
  if (!e->mapped && info.pid > 0 && info.pid <= INT_MAX) e->pid = (int)info.pid;
  e->have_written = 1;
  for (r = 0; r < info.max_domains; r++) {
    uint64_t w;
    if (ocgc_source_written(src, r, &w) == 0) e->written += w;
    else e->have_written = 0;
  }
  alive = ocgc_source_check_alive(src);
  if (alive == 0) e->state = OCGC_RING_RUNNING;
  else if (alive == OCGC_E_STALE)
    e->state = info.state == OCGC_STATE_EXITED ? OCGC_RING_EXITED : OCGC_RING_STALE;
  else e->state = OCGC_RING_UNKNOWN;
  /* A live process maps it, whatever its header says: not removable. */
  if (e->mapped && alive != 0) e->state = OCGC_RING_RUNNING;
}

/* The ring of the file [st] names, if listed already. */
static struct ocgc_ring *find_file(struct ocgc_rings *l, const struct stat *st)
{
  size_t i;
  for (i = 0; i < l->n; i++)
    if (l->v[i].dev == (uint64_t)st->st_dev && l->v[i].ino == (uint64_t)st->st_ino)
      return &l->v[i];
  return NULL;
}

/* A new ring for [path] (dev, ino and uid from [st], uid -1: unknown),
 * with "-" strings.  NULL on ENOMEM. */
static struct ocgc_ring *new_ring(struct ocgc_rings *l, const char *path, const struct stat *st,
                                  int64_t uid, int pid)
{
  struct ocgc_ring *e = add_ring(l);
  if (e == NULL) return NULL;
  if ((e->path = strdup(path)) == NULL) {
    l->n--;
    return NULL;
  }
  e->pid = pid;
  e->dev = (uint64_t)st->st_dev;
  e->ino = (uint64_t)st->st_ino;
  e->uid = uid;
  copy_str(e->program, sizeof e->program, "-");
  copy_str(e->ocaml, sizeof e->ocaml, "-");
  copy_str(e->ocgc, sizeof e->ocgc, "-");
  return e;
}

/* ---- pass 1: the rings live processes map --------------------------------------- */

/* The owner of the ring [le] names, if [le]'s path still leads to it (a
 * stat, never an open), else -1: unknown. */
static int64_t ring_owner(const struct ocgc_list_entry *le)
{
  struct stat st;
  if (stat(le->path, &st) != 0 || (uint64_t)st.st_dev != le->dev || (uint64_t)st.st_ino != le->ino)
    return -1;
  return (int64_t)st.st_uid;
}

static int on_listed(const struct ocgc_list_entry *le, void *ctx)
{
  struct ocgc_rings *l = ctx;
  struct ocgc_ring *e;
  struct stat st;
  if (le->pid == (int)getpid()) return 0;
  memset(&st, 0, sizeof st);
  st.st_dev = (dev_t)le->dev;
  st.st_ino = (ino_t)le->ino;
  if (find_file(l, &st) != NULL) return 0;
  if ((e = new_ring(l, le->path, &st, ring_owner(le), le->pid)) == NULL) {
    l->err = -ENOMEM;
    return 1;
  }
  e->mapped = 1;
  /* A live process maps it: running, whatever can be read of it. */
  if (le->src != NULL) classify(e, le->src);
  else e->state = OCGC_RING_RUNNING;
  if (le->src == NULL || !e->has_ext) copy_str(e->program, sizeof e->program, le->program);
  return 0;
}

/* Pass 1 opens only the rings of processes the host scan saw map one as
 * their producer (ocgc_list_opts.skip): each process's maps are read once
 * by the host scan, and again only for the few that hold a ring.  An
 * incomplete host scan may have missed some: then every process is read. */
static int skip_non_producer(int pid, uint64_t start_time, void *ctx)
{
  const struct ocgc_rings *l = ctx;
  (void)start_time;
  return l->hm != NULL && hostmaps_complete(l->hm) && !hostmaps_producer(l->hm, pid);
}

static int scan_procs(struct ocgc_rings *l)
{
  struct ocgc_list_opts lo = OCGC_OPTS_INIT(struct ocgc_list_opts);
  struct ocgc_list_stats st = OCGC_OPTS_INIT(struct ocgc_list_stats);
  int n;
  lo.skip = skip_non_producer;
  n = ocgc_list_opts(&lo, on_listed, l, &st);
  /* The host scan tried every process; pass 1 only those it did not rule
   * out, every one when there is no host scan. */
  l->unseen.processes = l->hm != NULL ? hostmaps_denied(l->hm) : 0;
  if (st.denied > l->unseen.processes) l->unseen.processes = st.denied;
  if (n == -ENOMEM || l->err != 0) return l->err ? l->err : n;
  if (n < 0) l->proc_err = n;
  return 0;
}

/* ---- pass 2: the folders ------------------------------------------------------ */

/* A folder's entry [path] is the ring [e] of pass 1: remember it, and show
 * the folder's name rather than a /proc one. */
static int found_in_dir(struct ocgc_ring *e, const char *path, int link)
{
  e->in_dir = 1;
  if (strncmp(e->path, "/proc/", 6) == 0) {
    char *p = strdup(path);
    if (p == NULL) return -ENOMEM;
    free((char *)e->path);
    e->path = p;
    e->link = link;
  }
  return 0;
}

/* Add the ring file of a folder, open as [fd] and named [path]: 0 (added),
 * 1 (listed already: *out is that ring), 2 (not a regular file), or
 * -ENOMEM. */
static int probe_fd(struct ocgc_rings *l, int fd, const char *path, struct ocgc_ring **out)
{
  struct ocgc_source *src = NULL;
  struct ocgc_ring *e;
  struct stat st;
  char fdpath[64];
  int err;
  *out = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 2;
  if ((*out = find_file(l, &st)) != NULL) return 1;
  if ((*out = e = new_ring(l, path, &st, (int64_t)st.st_uid, 0)) == NULL) return -ENOMEM;
  e->pid = pid_of_name(strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
  err = ocgc_source_open_path(fdpath, NULL, &src);
  if (err == 0) {
    classify(e, src);
    ocgc_source_close(src);
  } else {
    e->state = err == -EACCES || err == -EPERM ? OCGC_RING_DENIED : OCGC_RING_CORRUPT;
  }
  return 0;
}

/* The pid of the process whose mapping a memfd ring's name leads to, read
 * from the links' texts without following anything: the alias <P>.events
 * -> .ocgc-ring.<ns>.<P> -> /proc/<V>/map_files/<range> (V: the pid in our
 * /proc), or a link straight to /proc/<V>/map_files.  0 for anything else.
 * Only root may follow map_files links; this is how a user reads his own. */
static int map_link_pid(int dfd, const char *name)
{
  char text[128], ident[128];
  const char *t = text;
  char *end;
  long v;
  ssize_t n = readlinkat(dfd, name, text, sizeof text - 1);
  if (n <= 0) return 0;
  text[n] = '\0';
  if (strncmp(text, OCGC_DIR_RING_PREFIX, strlen(OCGC_DIR_RING_PREFIX)) == 0 &&
      strchr(text, '/') == NULL) {
    n = readlinkat(dfd, text, ident, sizeof ident - 1);
    if (n <= 0) return 0;
    ident[n] = '\0';
    t = ident;
  }
  if (strncmp(t, "/proc/", 6) != 0 || t[6] < '1' || t[6] > '9') return 0;
  errno = 0;
  v = strtol(t + 6, &end, 10);
  if (errno != 0 || v > INT_MAX || strncmp(end, "/map_files/", 11) != 0) return 0;
  return (int)v;
}

/* The ring of pass 1 that process [pid] maps and that no folder named yet
 * (it is shown by a /proc path). */
static struct ocgc_ring *find_unnamed_ring_of(struct ocgc_rings *l, int pid)
{
  size_t i;
  for (i = 0; i < l->n; i++)
    if (l->v[i].mapped && l->v[i].pid == pid && !l->v[i].in_dir &&
        strncmp(l->v[i].path, "/proc/", 6) == 0)
      return &l->v[i];
  return NULL;
}

/* A link in a folder ([lst]: the link itself): a memory ring's publication
 * (a link to /proc/PID/fd/N).  Only stat'ed, never opened: if it leads to
 * a ring of pass 1, that ring is in this folder; else its process is gone
 * (or the pid reused), and the link is stale. */
static int probe_link(struct ocgc_rings *l, int dfd, const char *name, const char *path,
                      const struct stat *lst)
{
  struct ocgc_ring *e;
  struct stat st;
  int denied = 0, dangling = 0, found;
  if ((found = fstatat(dfd, name, &st, 0) == 0)) {
    if (S_ISREG(st.st_mode) && (e = find_file(l, &st)) != NULL) return found_in_dir(e, path, 1);
  } else {
    denied = errno == EACCES || errno == EPERM;
    dangling = errno == ENOENT;
    /* A name that leads through map_files, which only root may follow:
     * matched to the ring pass 1 found in that very process. */
    if (denied) {
      int p = map_link_pid(dfd, name);
      if (p > 0 && (e = find_unnamed_ring_of(l, p)) != NULL) return found_in_dir(e, path, 1);
    }
  }
  if ((e = new_ring(l, path, lst, (int64_t)lst->st_uid, pid_of_name(name))) == NULL)
    return -ENOMEM;
  e->in_dir = 1;
  e->link = 1;
  e->dangling = dangling;
  /* What it leads to, for the host scan: a process may map it. */
  if (found) {
    e->target_known = 1;
    e->target_dev = (uint64_t)st.st_dev;
    e->target_ino = (uint64_t)st.st_ino;
  }
  e->state = denied ? OCGC_RING_DENIED : OCGC_RING_STALE;
  return 0;
}

/* The entry [name] of the folder open as [dfd]. */
static int probe_dir_entry(struct ocgc_rings *l, int dfd, const char *name, const char *path)
{
  struct ocgc_ring *seen;
  struct stat lst;
  int fd, err;
  if (fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) return 0; /* gone */
  if (S_ISLNK(lst.st_mode)) return probe_link(l, dfd, name, path, &lst);
  if (!S_ISREG(lst.st_mode)) return 0;
  fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    struct ocgc_ring *e;
    if (errno != EACCES && errno != EPERM) return 0; /* gone meanwhile */
    if ((e = find_file(l, &lst)) != NULL) return found_in_dir(e, path, 0);
    if ((e = new_ring(l, path, &lst, (int64_t)lst.st_uid, pid_of_name(name))) == NULL)
      return -ENOMEM;
    e->in_dir = 1;
    e->state = OCGC_RING_DENIED;
    return 0;
  }
  err = probe_fd(l, fd, path, &seen);
  close(fd);
  if (err == 1) return found_in_dir(seen, path, 0);
  if (err == 0) seen->in_dir = 1;
  return err < 0 ? err : 0;
}

/* The ring files of one folder.  A default folder that does not exist is
 * skipped; one asked for is said to the caller. */
static int scan_dir(struct ocgc_rings *l, const char *dir, const struct ocgc_rings_opts *o)
{
  DIR *d = opendir(dir);
  struct dirent *de;
  char path[PATH_MAX];
  int err = 0;
  if (d == NULL) {
    if (o != NULL && o->dir_error != NULL) o->dir_error(dir, -errno, o->ctx);
    return 0;
  }
  while (err == 0 && (de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name), sl = strlen(OCGC_DIR_EVENTS_SUFFIX);
    /* Hidden names are the producer's files being built (.PID.events.tmp)
     * and the names a prune moves entries to. */
    if (de->d_name[0] == '.' || len <= sl || strcmp(de->d_name + len - sl, OCGC_DIR_EVENTS_SUFFIX) != 0)
      continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
    err = probe_dir_entry(l, dirfd(d), de->d_name, path);
  }
  closedir(d);
  return err;
}

/* ---- pass 3: what the host maps ------------------------------------------------- */

/* The folders' entries that a process of the host maps, whatever their
 * pid says: the file itself, what a link leads to, or for a link
 * <P>.events the memory ring ocgc:<P>.events. */
static void apply_hostmaps(struct ocgc_rings *l, const struct hostmaps *h)
{
  size_t i;
  for (i = 0; i < l->n; i++) {
    struct ocgc_ring *e = &l->v[i];
    int by = 0;
    if (!e->in_dir || e->mapped) continue;
    if (!e->link) by = hostmaps_file(h, (dev_t)e->dev, (ino_t)e->ino);
    else if (e->target_known) by = hostmaps_file(h, (dev_t)e->target_dev, (ino_t)e->target_ino);
    if (by > 0) e->kept = OCGC_KEPT_FILE;
    else if (e->link && (by = hostmaps_memfd(h, e->pid)) > 0) e->kept = OCGC_KEPT_MEMFD;
    else continue;
    e->mapped_by = by;
    e->was = e->state;
    /* corrupt and denied still say the most useful thing */
    if (gone(e->state) || e->state == OCGC_RING_STOCK || e->state == OCGC_RING_UNKNOWN)
      e->state = e->kept == OCGC_KEPT_FILE ? OCGC_RING_MAPPED : OCGC_RING_FOREIGN;
  }
}

/* The prune rule (ocgc/rings.h: looks_gone, removable). */
static void judge_removal(struct ocgc_rings *l)
{
  uid_t me = getuid();
  size_t i;
  for (i = 0; i < l->n; i++) {
    struct ocgc_ring *e = &l->v[i];
    int kind = !e->mapped && (e->link ? e->dangling : e->has_ext);
    e->looks_gone = kind && gone(e->kept != OCGC_KEPT_NO ? e->was : e->state);
    e->removable = kind && l->host_complete && e->kept == OCGC_KEPT_NO && e->uid == (int64_t)me &&
                   gone(e->state);
  }
}

static int cmp_ring(const void *a, const void *b)
{
  const struct ocgc_ring *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  return strcmp(x->path, y->path);
}

/* With no_default_dirs: only what the folders hold. */
static void keep_in_dirs(struct ocgc_rings *l)
{
  size_t j = 0, k;
  for (k = 0; k < l->n; k++) {
    if (l->v[k].in_dir) l->v[j++] = l->v[k];
    else free((char *)l->v[k].path);
  }
  l->n = j;
}

int ocgc_rings_scan(const struct ocgc_rings_opts *opts, struct ocgc_rings **out)
{
  struct ocgc_rings_opts o;
  struct ocgc_rings *l;
  char dir[PATH_MAX];
  unsigned i;
  int err;
  if (out == NULL || opts_read(&o, sizeof o, opts) != 0 || (o.ndirs > 0 && o.dirs == NULL))
    return -EINVAL;
  *out = NULL;
  if ((l = calloc(1, sizeof *l)) == NULL) return -ENOMEM;
  /* What every process maps, first: pass 1 reads only the producers'
   * maps again, and pass 3 judges with it. */
  l->host_err = hostmaps_scan(NULL, NULL, &l->hm);
  err = l->host_err == -ENOMEM ? -ENOMEM : scan_procs(l);
  for (i = 0; err == 0 && !o.no_default_dirs && ocgc_default_dir(i, dir, sizeof dir) == 0; i++)
    err = scan_dir(l, dir, NULL);
  for (i = 0; err == 0 && i < o.ndirs; i++) err = scan_dir(l, o.dirs[i], &o);
  if (err == 0 && !o.no_default_dirs) l->unseen.folders = dirs_closed_others();
  if (err == 0 && o.no_default_dirs) keep_in_dirs(l);
  if (err != 0) {
    ocgc_rings_free(l);
    return err;
  }
  if (l->hm != NULL) {
    apply_hostmaps(l, l->hm);
    l->host_complete = hostmaps_complete(l->hm);
  }
  hostmaps_free(l->hm);
  l->hm = NULL;
  judge_removal(l);
  if (l->n > 1) qsort(l->v, l->n, sizeof l->v[0], cmp_ring);
  *out = l;
  return 0;
}

void ocgc_rings_free(struct ocgc_rings *l)
{
  size_t k;
  if (l == NULL) return;
  for (k = 0; k < l->n; k++) free((char *)l->v[k].path);
  hostmaps_free(l->hm);
  free(l->v);
  free(l);
}

size_t ocgc_rings_count(const struct ocgc_rings *l)
{
  return l != NULL ? l->n : 0;
}

const struct ocgc_ring *ocgc_rings_get(const struct ocgc_rings *l, size_t i)
{
  return l != NULL && i < l->n ? &l->v[i] : NULL;
}

int ocgc_rings_proc_error(const struct ocgc_rings *l)
{
  return l != NULL ? l->proc_err : -EINVAL;
}

int ocgc_rings_host_complete(const struct ocgc_rings *l, int *err)
{
  if (err != NULL) *err = l != NULL ? l->host_err : -EINVAL;
  return l != NULL && l->host_err == 0 && l->host_complete;
}

int ocgc_rings_unseen(const struct ocgc_rings *l, struct ocgc_rings_unseen *out)
{
  struct ocgc_rings_unseen u;
  if (l == NULL) return -EINVAL;
  u = l->unseen;
  u.sz = sizeof u;
  return opts_write(out, &u, sizeof u);
}

/* Whether the ring file at [path] is written by a live process (or that
 * cannot be told: then it counts as alive). */
static int ring_alive(const char *path)
{
  struct ocgc_source *src = NULL;
  char fdpath[64];
  int alive = 1, fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 1;
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
  if (ocgc_source_open_path(fdpath, NULL, &src) == 0) {
    alive = ocgc_source_check_alive(src) != OCGC_E_STALE;
    ocgc_source_close(src);
  }
  close(fd);
  return alive;
}

int ocgc_ring_still_gone(const struct ocgc_ring *e, const char *path)
{
  struct stat st;
  if (e == NULL || path == NULL) return 0;
  /* The same inode proves little (a removed entry's inode number may be
   * reused at once by a new one): it must still be gone too. */
  if (lstat(path, &st) != 0 || (uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino)
    return 0;
  if (e->link) return S_ISLNK(st.st_mode) && stat(path, &st) != 0 && errno == ENOENT;
  return S_ISREG(st.st_mode) && !ring_alive(path);
}

/* A memory ring's alias <P>.events leads to its identity link
 * .ocgc-ring.<ns>.<P> (the producer's ocgc_file.c): once the alias at
 * [path] is removed, remove the identity [ident] too if it is of our own
 * pid namespace (another's pids mean other processes here) and leads
 * nowhere. */
static void remove_ident(const char *path, const char *ident)
{
  char self[64], want[48], full[PATH_MAX];
  const char *slash = strrchr(path, '/');
  ssize_t n = readlink("/proc/self/ns/pid", self, sizeof self - 1);
  struct stat st;
  int len;
  if (n <= 0 || strchr(ident, '/') != NULL) return;
  self[n] = '\0';
  if (strncmp(self, "pid:[", 5) != 0) return;
  snprintf(want, sizeof want, OCGC_DIR_RING_PREFIX "%.*s.", (int)strcspn(self + 5, "]"), self + 5);
  if (strncmp(ident, want, strlen(want)) != 0) return;
  if (slash == NULL) len = snprintf(full, sizeof full, "%s", ident);
  else len = snprintf(full, sizeof full, "%.*s/%s", (int)(slash - path), path, ident);
  if (len < 0 || (size_t)len >= sizeof full) return;
  if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode) && stat(full, &st) != 0 && errno == ENOENT)
    (void)unlink(full);
}

int ocgc_ring_remove(const struct ocgc_ring *e, char *aside, size_t n)
{
  char tmp[PATH_MAX], ident[128];
  const char *slash;
  ssize_t len;
  int k;
  if (e == NULL || !e->removable) return -EINVAL;
  slash = strrchr(e->path, '/');
  if (slash == NULL) k = snprintf(tmp, sizeof tmp, ".ocgc-prune.%d.%s", (int)getpid(), e->path);
  else k = snprintf(tmp, sizeof tmp, "%.*s/.ocgc-prune.%d.%s", (int)(slash - e->path), e->path,
                    (int)getpid(), slash + 1);
  if (k < 0 || (size_t)k >= sizeof tmp) return -ENAMETOOLONG;
  if (rename(e->path, tmp) != 0) return -errno;
  if (ocgc_ring_still_gone(e, tmp)) {
    len = e->link ? readlink(tmp, ident, sizeof ident - 1) : -1;
    if (unlink(tmp) != 0) return -errno;
    if (len > 0) {
      ident[len] = '\0';
      remove_ident(e->path, ident);
    }
    return 0;
  }
  /* Another entry took the name, or this one lives again: give it back,
   * replacing nothing. */
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, e->path, RENAME_NOREPLACE) == 0) return 1;
  if (aside != NULL && n > 0) snprintf(aside, n, "%s", tmp);
  return 2;
}
