/* ls.c - `ocgc ls`: the processes on this host that ocgc can attach to,
 * and the ring files left behind by processes that are gone.
 *
 * What it owns: one listing, built in three passes and printed sorted by pid
 * (then path):
 * 1. every process in /proc whose memory map holds a ring, as libocgc
 *    lists them (ocgc_list(): a shared writable mapping of a *.events file
 *    in any folder, or ocgc's memfd ring, opened as ocgc_open_ring() does,
 *    checked to be the very file the maps name); a ring two processes map
 *    (a forked child) is listed once.  The owner shown is the file's, when
 *    a stat of the path libocgc found still leads to it, else unknown
 *    (JSON null);
 * 2. the entries *.events of the default ring folders of the caller
 *    (ocgc_default_dir(): $XDG_RUNTIME_DIR/ocgc, /dev/shm/ocgc-UID,
 *    /tmp/ocgc-UID, as the producer chooses them) and of every --dir.  A ring file or link that
 *    is a ring of pass 1 (same device and inode) marks that ring as being
 *    in the folder, and gives it the folder's name when pass 1 knew it only
 *    as /proc/PID/fd/N.  Other ring files are left by processes that are
 *    gone; other links (ocgc publishes its memfd ring as a link
 *    DIR/PID.events -> /proc/PID/fd/N) dangle, or lead to a file that is no
 *    ring any more: stale.  Links are stat'ed, never opened.
 * 3. what every process of the host maps (hostmaps.c: each /proc/PID/maps
 *    read once, after passes 1 and 2, as close to --prune as can be).  The
 *    pid in a ring's header, or in a link's name, is the pid in the
 *    producer's own pid namespace: from here a live container's ring looks
 *    stale (its pid is dead, or another process's).  So a folder's entry
 *    that pass 1 did not find is still in use if some process maps the file
 *    (device and inode), or what the link leads to, or, for a link
 *    <P>.events, a memfd named ocgc:<P>.events: which namespace's P that is
 *    cannot be told, so the link is kept (a stale link costs nothing;
 *    removing a live one blinds every reader).
 * With --no-default-dirs the listing is what the --dir folders hold: only
 * the entries pass 2 marked.  So a caller that names its own folder sees
 * its own programs only, whatever other OCaml programs come and go on the
 * host, and a relative DIR or one reached through a link works too.
 * Each file of a folder is opened through a descriptor of our own
 * (O_NOFOLLOW) and read by libocgc as /proc/self/fd/N, so that what is
 * classified, what is compared with pass 1 (device and inode) and what
 * --prune removes are the same file, whatever happens to the name
 * meanwhile.
 *
 * States: "running" (ocgc file whose producer is the live process it names,
 * or any ring a live process maps as its producer), "exited" (the producer
 * exited normally, OCAML_RUNTIME_EVENTS_PRESERVE kept the file), "stale"
 * (the producer was killed, or its pid now names another process), "stock"
 * (an OCaml 5 file found in a folder: it carries no identity, so whether
 * its process lives cannot be told), "mapped" (would be exited, stale or
 * stock, but pass 3 found a process that maps the file, or what the link
 * leads to), "foreign" (a stale link <P>.events while a process maps
 * ocgc:<P>.events: most likely a producer in another pid namespace),
 * "corrupt" and "denied" (files that cannot be read).  --json says also
 * "mapped_by": the pid (as this host numbers it) of a process that pass 3
 * found mapping the entry, or null.
 *
 * --prune removes exited and stale ocgc files and stale links found in the
 * folders, only if they belong to the caller: never another user's, never
 * the target of a link, never a file some process maps (pass 1 or 3),
 * never a link kept by pass 3, never a stock file (no identity: it might
 * be live), and nothing at all unless pass 3 read every maps it may read
 * whole (within its bounds; the maps of other users' processes that we may
 * not read are skipped, as pass 1 skips them).  It says on stderr what it
 * removed, and why it kept what pass 3 saved.  The name may be taken over
 * between the check and the removal by a new process that got the same pid
 * (the producer replaces a stale entry by renaming its new one over it), so
 * the entry is first renamed to a private name, checked to still be the
 * one that was classified, and only then unlinked; if it is not, it is
 * renamed back (without replacing anything).
 *
 * Other users' processes whose maps we may not read are left out silently,
 * as ps leaves out what it cannot see; `ocgc ls` run as root sees them. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "hostmaps.h"
#include "json.h"

#define EVENTS_SUFFIX ".events"
#define MAX_DIRS 64

struct entry {
  int pid;               /* 0: unknown (a stock file with an odd name) */
  char *path;
  dev_t dev;
  ino_t ino;
  uid_t uid;
  int mapped;            /* found in a live process's memory map */
  int in_dir;            /* found in one of the folders read (pass 2) */
  int link;              /* path is a link in a folder, not a ring file */
  int dangling;          /* a link that leads nowhere */
  int have_target;       /* a link whose target stat'ed: tdev, tino */
  dev_t tdev;
  ino_t tino;
  enum { KEPT_NO, KEPT_FILE, KEPT_MEMFD } kept; /* why the host scan keeps it */
  int mapped_by;         /* then: a pid (host numbering) that maps it */
  const char *classified; /* the state before the host scan */
  const char *state;
  int has_info, has_ext;
  char program[64], ocaml[16], ocgc[16];
  uint64_t ring_bytes;
  int have_written;
  uint64_t written;
  int native;
};

struct listing {
  struct entry *v;
  size_t n, cap;
  int rc;  /* exit status so far */
  int err; /* pass 1: -ENOMEM in a callback */
};

static void note_rc(struct listing *l, int rc)
{
  if (l->rc == 0) l->rc = rc;
}

static struct entry *add_entry(struct listing *l)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 32;
    struct entry *v = realloc(l->v, cap * sizeof *v);
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
  char buf[32];
  size_t len = strlen(name), sl = strlen(EVENTS_SUFFIX);
  if (len <= sl || len - sl >= sizeof buf) return 0;
  memcpy(buf, name, len - sl);
  buf[len - sl] = '\0';
  len = (size_t)tool_parse_pid(buf);
  return (int)len > 0 ? (int)len : 0;
}

/* Read what the file says about itself into e (see the top of the file
 * for the states). */
static void classify(struct entry *e, struct ocgc_source *src)
{
  struct ocgc_source_info info;
  unsigned r;
  int alive;
  if (ocgc_source_info(src, &info) != 0) {
    e->state = "corrupt";
    return;
  }
  e->has_info = 1;
  e->has_ext = info.has_ext;
  e->ring_bytes = info.max_domains * info.ring_words * 8;
  if (!info.has_ext) {
    copy_str(e->ocaml, sizeof e->ocaml, "5");
    copy_str(e->ocgc, sizeof e->ocgc, "-");
    copy_str(e->program, sizeof e->program, "-"); /* pass 1 names it */
    e->state = e->mapped ? "running" : "stock";
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
  if (alive == 0) e->state = "running";
  else if (alive == OCGC_E_STALE) e->state = info.state == OCGC_STATE_EXITED ? "exited" : "stale";
  else e->state = "unknown";
  /* A live process maps it, whatever its header says: not removable. */
  if (e->mapped && alive != 0) e->state = "running";
}

/* The entry of the file [st] names, if listed already. */
static struct entry *find_file(struct listing *l, const struct stat *st)
{
  size_t i;
  for (i = 0; i < l->n; i++)
    if (l->v[i].dev == st->st_dev && l->v[i].ino == st->st_ino) return &l->v[i];
  return NULL;
}

/* A new entry for [path] (dev, ino and uid from [st]), with "-" columns.
 * Returns NULL on ENOMEM. */
static struct entry *new_entry(struct listing *l, const char *path, const struct stat *st,
                               int pid)
{
  struct entry *e = add_entry(l);
  if (e == NULL) return NULL;
  if ((e->path = strdup(path)) == NULL) {
    l->n--;
    return NULL;
  }
  e->pid = pid;
  e->dev = st->st_dev;
  e->ino = st->st_ino;
  e->uid = st->st_uid;
  copy_str(e->program, sizeof e->program, "-");
  copy_str(e->ocaml, sizeof e->ocaml, "-");
  copy_str(e->ocgc, sizeof e->ocgc, "-");
  return e;
}

/* Add the ring file of a folder, open as [fd] and named [path], and set
 * *out to its entry.  Returns 0 (added), 1 (listed already: *out is that
 * entry), 2 (not a regular file: *out is NULL), or -ENOMEM. */
static int probe_fd(struct listing *l, int fd, const char *path, struct entry **out)
{
  struct ocgc_source *src = NULL;
  struct entry *e;
  struct stat st;
  char fdpath[64];
  int err;

  *out = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 2;
  if ((*out = find_file(l, &st)) != NULL) return 1;
  if ((*out = e = new_entry(l, path, &st, 0)) == NULL) return -ENOMEM;
  e->pid = pid_of_name(strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
  err = ocgc_source_open_path(fdpath, NULL, &src);
  if (err == 0) {
    classify(e, src);
    ocgc_source_close(src);
  } else {
    e->state = err == -EACCES || err == -EPERM ? "denied" : "corrupt";
  }
  return 0;
}

/* The owner of the ring [le] names, if [le]'s path still leads to it (a
 * stat, never an open), else (uid_t)-1: unknown. */
static uid_t ring_owner(const struct ocgc_list_entry *le)
{
  struct stat st;
  if (stat(le->path, &st) != 0 || (uint64_t)st.st_dev != le->dev || (uint64_t)st.st_ino != le->ino)
    return (uid_t)-1;
  return st.st_uid;
}

/* One ring of pass 1 (ocgc_list's callback): a new entry, unless another
 * process maps the same file (a forked child: listed once).  0, or 1 to
 * end the listing (l->err: -ENOMEM). */
static int on_listed(const struct ocgc_list_entry *le, void *ctx)
{
  struct listing *l = ctx;
  struct entry *e;
  struct stat st;
  if (le->pid == (int)getpid()) return 0;
  memset(&st, 0, sizeof st);
  st.st_dev = (dev_t)le->dev;
  st.st_ino = (ino_t)le->ino;
  if (find_file(l, &st) != NULL) return 0;
  st.st_uid = ring_owner(le);
  if ((e = new_entry(l, le->path, &st, le->pid)) == NULL) {
    l->err = -ENOMEM;
    return 1;
  }
  e->mapped = 1;
  /* A live process maps it: running, whatever can be read of it. */
  if (le->src != NULL) classify(e, le->src);
  else e->state = "running";
  if (le->src == NULL || !e->has_ext) copy_str(e->program, sizeof e->program, le->program);
  return 0;
}

/* Pass 1: the rings live processes map (libocgc's listing: each opened and
 * checked to be the very file the maps name). */
static int scan_procs(struct listing *l)
{
  int n = ocgc_list(on_listed, l, NULL);
  if (n == -ENOMEM || l->err != 0) return l->err ? l->err : n;
  if (n < 0) {
    tool_say("/proc: %s (is /proc mounted?)", strerror(-n));
    note_rc(l, TOOL_EXIT_ERROR);
  }
  return 0;
}

/* A folder's entry [name] is the ring [e] of pass 1: remember it, and show
 * the folder's name rather than a /proc one. */
static int found_in_dir(struct entry *e, const char *path, int link)
{
  e->in_dir = 1;
  if (strncmp(e->path, "/proc/", 6) == 0) {
    char *p = strdup(path);
    if (p == NULL) return -ENOMEM;
    free(e->path);
    e->path = p;
    e->link = link;
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
  if (strncmp(text, ".ocgc-ring.", 11) == 0 && strchr(text, '/') == NULL) {
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
static struct entry *find_unnamed_ring_of(struct listing *l, int pid)
{
  size_t i;
  for (i = 0; i < l->n; i++)
    if (l->v[i].mapped && l->v[i].pid == pid && !l->v[i].in_dir &&
        strncmp(l->v[i].path, "/proc/", 6) == 0)
      return &l->v[i];
  return NULL;
}

/* A link in a folder ([lst]: the link itself): a memfd ring's publication
 * (a link to /proc/PID/fd/N).  It is only stat'ed, never opened: if it
 * leads to a ring of pass 1, that ring is in this folder; else its process
 * is gone (or the pid reused), and the link is stale. */
static int probe_link(struct listing *l, int dfd, const char *name, const char *path,
                      const struct stat *lst)
{
  struct entry *e;
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
  if ((e = new_entry(l, path, lst, pid_of_name(name))) == NULL) return -ENOMEM;
  e->in_dir = 1;
  e->link = 1;
  e->dangling = dangling;
  /* What it leads to, for the host scan: a process may map it. */
  e->have_target = found;
  if (found) {
    e->tdev = st.st_dev;
    e->tino = st.st_ino;
  }
  e->state = denied ? "denied" : "stale";
  return 0;
}

/* The entry [name] of the folder open as [dfd]. */
static int probe_dir_entry(struct listing *l, int dfd, const char *name, const char *path)
{
  struct entry *seen;
  struct stat lst;
  int fd, err;
  if (fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) return 0; /* gone */
  if (S_ISLNK(lst.st_mode)) return probe_link(l, dfd, name, path, &lst);
  if (!S_ISREG(lst.st_mode)) return 0;
  fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    struct entry *e;
    if (errno != EACCES && errno != EPERM) return 0; /* gone meanwhile */
    if ((e = find_file(l, &lst)) != NULL) return found_in_dir(e, path, 0);
    if ((e = new_entry(l, path, &lst, pid_of_name(name))) == NULL) return -ENOMEM;
    e->in_dir = 1;
    e->state = "denied";
    return 0;
  }
  err = probe_fd(l, fd, path, &seen);
  close(fd);
  if (err == 1) return found_in_dir(seen, path, 0);
  if (err == 0) seen->in_dir = 1;
  return err < 0 ? err : 0;
}

/* Pass 2: the ring files of one folder.  A default folder that does not
 * exist is skipped; a --dir that does not is an error. */
static int scan_dir(struct listing *l, const char *dir, int given)
{
  DIR *d = opendir(dir);
  struct dirent *de;
  char path[PATH_MAX];
  int err = 0;
  if (d == NULL) {
    if (given) {
      int e = errno;
      tool_say("%s: %s", dir, strerror(e));
      note_rc(l, e == ENOENT || e == ENOTDIR ? TOOL_EXIT_NOTFOUND
                 : e == EACCES ? TOOL_EXIT_DENIED : TOOL_EXIT_ERROR);
    }
    return 0;
  }
  while (err == 0 && (de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name), sl = strlen(EVENTS_SUFFIX);
    /* Hidden names are the producer's files being built (.PID.events.tmp)
     * and our own prune names. */
    if (de->d_name[0] == '.' || len <= sl || strcmp(de->d_name + len - sl, EVENTS_SUFFIX) != 0)
      continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
    err = probe_dir_entry(l, dirfd(d), de->d_name, path);
  }
  closedir(d);
  return err;
}

static int cmp_entry(const void *a, const void *b)
{
  const struct entry *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  return strcmp(x->path, y->path);
}

/* ---- what the host maps ---------------------------------------------------------- */

/* States that say the file's process is gone: what --prune removes. */
static int gone_state(const char *state)
{
  return strcmp(state, "exited") == 0 || strcmp(state, "stale") == 0;
}

/* The folders' entries that a process of the host maps, whatever their
 * pid says (see the top of the file): the file itself, what a link leads
 * to, or for a link <P>.events the memory ring ocgc:<P>.events. */
static void apply_hostmaps(struct listing *l, const struct hostmaps *h)
{
  size_t i;
  for (i = 0; i < l->n; i++) {
    struct entry *e = &l->v[i];
    int by = 0;
    if (!e->in_dir || e->mapped) continue;
    if (!e->link) by = hostmaps_file(h, e->dev, e->ino);
    else if (e->have_target) by = hostmaps_file(h, e->tdev, e->tino);
    if (by > 0) e->kept = KEPT_FILE;
    else if (e->link && (by = hostmaps_memfd(h, e->pid)) > 0) e->kept = KEPT_MEMFD;
    else continue;
    e->mapped_by = by;
    e->classified = e->state;
    /* corrupt and denied still say the most useful thing */
    if (gone_state(e->state) || strcmp(e->state, "stock") == 0 ||
        strcmp(e->state, "unknown") == 0)
      e->state = e->kept == KEPT_FILE ? "mapped" : "foreign";
  }
}

/* ---- --prune -------------------------------------------------------------------- */

/* ocgc files and links that lead nowhere (never a stock file: no
 * identity, it may be live; never a link that leads to a file: what it
 * leads to may be a ring ls could not see) */
static int removable_kind(const struct entry *e)
{
  return !e->mapped && (e->link ? e->dangling : e->has_ext);
}

/* Whether the ring file at [path] is written by a live process (or cannot
 * be told: then it is kept). */
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

/* Whether the entry moved aside to [tmp] is still the one [e] classified:
 * the same inode (which proves little: a removed entry's inode number may
 * be reused at once by a new one), and still stale: a link that leads
 * nowhere, or a file whose process is gone. */
static int still_same(const struct entry *e, const char *tmp)
{
  struct stat st;
  if (lstat(tmp, &st) != 0 || st.st_dev != e->dev || st.st_ino != e->ino) return 0;
  if (e->link) return S_ISLNK(st.st_mode) && stat(tmp, &st) != 0 && errno == ENOENT;
  return S_ISREG(st.st_mode) && !ring_alive(tmp);
}

static int prunable(const struct entry *e)
{
  return removable_kind(e) && e->kept == KEPT_NO && e->uid == getuid() && gone_state(e->state);
}

/* Remove e's file if the name still holds it (see the top of the file).
 * Returns 0 (removed), 1 (not: the name now holds another file) or -errno. */
/* A memfd ring's alias <P>.events leads to its identity link
 * .ocgc-ring.<ns>.<P> (ocgc_entries.c in the producer): once the alias at
 * [path] is pruned, prune the identity [ident] too if it is of our own pid
 * namespace (another's pids mean other processes here) and leads nowhere.
 * Silent: the alias's removal was said. */
static void prune_ident(const char *path, const char *ident)
{
  char self[64], want[48], full[PATH_MAX];
  const char *slash = strrchr(path, '/');
  ssize_t n = readlink("/proc/self/ns/pid", self, sizeof self - 1);
  struct stat st;
  int len;
  if (n <= 0 || strchr(ident, '/') != NULL) return;
  self[n] = '\0';
  if (strncmp(self, "pid:[", 5) != 0) return;
  snprintf(want, sizeof want, ".ocgc-ring.%.*s.", (int)strcspn(self + 5, "]"), self + 5);
  if (strncmp(ident, want, strlen(want)) != 0) return;
  if (slash == NULL) len = snprintf(full, sizeof full, "%s", ident);
  else len = snprintf(full, sizeof full, "%.*s/%s", (int)(slash - path), path, ident);
  if (len < 0 || (size_t)len >= sizeof full) return;
  if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode) && stat(full, &st) != 0 && errno == ENOENT)
    (void)unlink(full);
}

static int prune_file(const struct entry *e)
{
  char tmp[PATH_MAX], esc[TOOL_ESC_SIZE(PATH_MAX)], esc2[TOOL_ESC_SIZE(PATH_MAX)];
  const char *slash = strrchr(e->path, '/');
  int n;
  if (slash == NULL) n = snprintf(tmp, sizeof tmp, ".ocgc-prune.%d.%s", (int)getpid(), e->path);
  else n = snprintf(tmp, sizeof tmp, "%.*s/.ocgc-prune.%d.%s", (int)(slash - e->path), e->path,
                    (int)getpid(), slash + 1);
  if (n < 0 || (size_t)n >= sizeof tmp) return -ENAMETOOLONG;
  if (rename(e->path, tmp) != 0) return -errno;
  if (still_same(e, tmp)) {
    char ident[128];
    ssize_t len = e->link ? readlink(tmp, ident, sizeof ident - 1) : -1;
    if (unlink(tmp) != 0) return -errno;
    if (len > 0) {
      ident[len] = '\0';
      prune_ident(e->path, ident);
    }
    return 0;
  }
  /* Another file took the name: give it back, replacing nothing. */
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, e->path, RENAME_NOREPLACE) != 0)
    tool_say("%s: a new file took the name while pruning; it is now %s",
            tool_esc(e->path, esc, sizeof esc), tool_esc(tmp, esc2, sizeof esc2));
  return 1;
}

/* Say why an entry that looked gone is kept. */
static void say_kept(const struct entry *e)
{
  char path[TOOL_ESC_SIZE(PATH_MAX)];
  tool_esc(e->path, path, sizeof path);
  if (e->kept == KEPT_MEMFD)
    tool_say("keeping %s: process %d maps the memory ring ocgc:%d.events "
                    "(pid %d of another pid namespace?)",
            path, e->mapped_by, e->pid, e->pid);
  else
    tool_say("keeping %s: process %d maps %s", path, e->mapped_by,
            e->link ? "what it leads to" : "it");
}

/* [h]: what the host maps, or NULL if /proc could not be read ([herr]). */
static void prune(struct listing *l, const struct hostmaps *h, int herr)
{
  char path[TOOL_ESC_SIZE(PATH_MAX)]; /* e->path, escaped, for messages */
  size_t i, j = 0;
  /* Unless every process's maps was read, any file may be in use. */
  if (h == NULL || !hostmaps_complete(h)) {
    if (h == NULL)
      tool_say("not pruning: cannot read the memory maps in /proc: %s",
              strerror(-herr));
    else
      tool_say("not pruning: the memory maps of this host are too many to "
                      "read them all, so any file may be in use");
    note_rc(l, TOOL_EXIT_ERROR);
    return;
  }
  for (i = 0; i < l->n; i++) {
    struct entry *e = &l->v[i];
    int err;
    if (removable_kind(e) && e->kept != KEPT_NO && gone_state(e->classified)) say_kept(e);
    if (removable_kind(e) && e->uid != getuid() && gone_state(e->state))
      tool_say("not removing %s: it belongs to uid %u, not to you",
              tool_esc(e->path, path, sizeof path), (unsigned)e->uid);
    if (!prunable(e)) {
      l->v[j++] = *e;
      continue;
    }
    err = prune_file(e);
    if (err == 0) {
      tool_say("removed %s (process %d, %s)",
              tool_esc(e->path, path, sizeof path), e->pid, e->state);
      free(e->path);
      continue;
    }
    if (err < 0) {
      tool_say("cannot remove %s: %s", tool_esc(e->path, path, sizeof path),
              strerror(-err));
      note_rc(l, err == -EACCES || err == -EPERM ? TOOL_EXIT_DENIED : TOOL_EXIT_ERROR);
    }
    l->v[j++] = *e;
  }
  l->n = j;
}

/* ---- printing --------------------------------------------------------------------- */

static void print_table(const struct listing *l)
{
  size_t i;
  printf("%7s %-16s %-7s %-7s %8s %12s %-7s %s\n", "PID", "PROGRAM", "OCAML", "OCGC",
         "RING_KiB", "WRITTEN", "STATE", "PATH");
  for (i = 0; i < l->n; i++) {
    const struct entry *e = &l->v[i];
    char pid[16], ring[24], written[24];
    char program[TOOL_ESC_SIZE(sizeof e->program)], ocaml[TOOL_ESC_SIZE(sizeof e->ocaml)];
    char ocgc[TOOL_ESC_SIZE(sizeof e->ocgc)], path[TOOL_ESC_SIZE(PATH_MAX)];
    if (e->pid > 0) snprintf(pid, sizeof pid, "%d", e->pid);
    else copy_str(pid, sizeof pid, "-");
    if (e->has_info) snprintf(ring, sizeof ring, "%" PRIu64, e->ring_bytes / 1024);
    else copy_str(ring, sizeof ring, "-");
    if (e->have_written) snprintf(written, sizeof written, "%" PRIu64, e->written);
    else copy_str(written, sizeof written, "-");
    printf("%7s %-16s %-7s %-7s %8s %12s %-7s %s\n", pid,
           tool_esc(e->program, program, sizeof program), tool_esc(e->ocaml, ocaml, sizeof ocaml),
           tool_esc(e->ocgc, ocgc, sizeof ocgc), ring, written, e->state,
           tool_esc(e->path, path, sizeof path));
  }
}

/* A string field, or null for "-" (unknown). */
static void str_or_null(struct json *j, const char *key, const char *s)
{
  json_kv_str(j, key, strcmp(s, "-") == 0 ? NULL : s);
}

/* One JSON object a line and an entry. */
static void print_json(const struct listing *l)
{
  struct json j;
  size_t i;
  json_init_file(&j, stdout, 0);
  for (i = 0; i < l->n; i++) {
    const struct entry *e = &l->v[i];
    json_obj(&j, JSON_INLINE);
    json_kv_u64_or_null(&j, "pid", e->pid > 0, (uint64_t)e->pid);
    str_or_null(&j, "program", e->program);
    str_or_null(&j, "ocaml", e->ocaml);
    str_or_null(&j, "ocgc", e->ocgc);
    json_kv_u64_or_null(&j, "ring_bytes", e->has_info, e->ring_bytes);
    json_kv_u64_or_null(&j, "written", e->have_written, e->written);
    json_kv_str(&j, "state", e->state);
    json_kv_str(&j, "code", !e->has_ext ? NULL : e->native ? "native" : "bytecode");
    json_kv_bool(&j, "mapped", e->mapped || e->kept == KEPT_FILE);
    json_kv_u64_or_null(&j, "mapped_by", e->mapped_by > 0, (uint64_t)e->mapped_by);
    json_kv_u64_or_null(&j, "uid", e->uid != (uid_t)-1, (uint64_t)e->uid);
    json_kv_str(&j, "path", e->path);
    json_obj_end(&j);
    json_raw(&j, "\n");
  }
}

static void ls_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc ls [--json] [--prune] [--dir DIR]... [--no-default-dirs]\n\n"
          "List the processes on this host that ocgc can attach to (those whose\n"
          "memory map holds a ring, in any folder), and the ring files that\n"
          "processes which are gone left in the ring folders: yours by default\n"
          "($XDG_RUNTIME_DIR/ocgc, /dev/shm/ocgc-UID, /tmp/ocgc-UID) and each --dir.\n"
          "With --no-default-dirs, only what the --dir folders hold: their files,\n"
          "and the live processes whose ring is one of them.\n"
          "Other users' processes are listed only when you may read their memory\n"
          "map (as root).\n\n"
          "Columns: PID, PROGRAM, OCAML (the producer's OCaml version; 5 for a\n"
          "stock OCaml 5 file), OCGC (the producer's ocgc version, - for stock\n"
          "files), RING_KiB (ring size), WRITTEN (events written so far), STATE, PATH.\n"
          "STATE is running (attachable), exited (it exited; the file was kept),\n"
          "stale (killed, or its pid now names another process), stock (an OCaml 5\n"
          "file no live process maps: it says nothing of its process), mapped (its\n"
          "pid says gone, but a process maps the file, or what the link leads to:\n"
          "a reader, or a producer in another pid namespace), foreign (a link\n"
          "PID.events that leads nowhere from here while a process maps the memory\n"
          "ring ocgc:PID.events: a producer whose pid PID is another namespace's),\n"
          "corrupt or denied (the file cannot be read).\n\n"
          "  --json             one JSON object per line and per file instead\n"
          "  --prune            remove the exited and stale files that belong to you,\n"
          "                     and your links that lead nowhere (never a file any\n"
          "                     process on the host maps, whatever its pid says,\n"
          "                     never a mapped or foreign entry, never a stock\n"
          "                     file); says on stderr what it removed and kept\n"
          "  --dir DIR          look in DIR too (OCAML_RUNTIME_EVENTS_DIR); repeatable\n"
          "  --no-default-dirs  list only the rings in the --dir folders (live\n"
          "                     processes whose ring is elsewhere are left out)\n"
          "  --help             this text\n\n"
          "Exit status 0, also when nothing is found (then the table has only its\n"
          "header); 5 when --prune removed nothing because it could not read the\n"
          "memory maps of the host (all of them, within its bounds).\n");
}

struct ls_opts {
  int json, prune, no_defaults;
  const char *dirs[MAX_DIRS];
  unsigned ndirs;
};

/* The options into *o: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct ls_opts *o)
{
  static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"prune", no_argument, NULL, 'p'},
    {"dir", required_argument, NULL, 'd'},
    {"no-default-dirs", no_argument, NULL, 'n'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt;
  memset(o, 0, sizeof *o);
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': o->json = 1; break;
    case 'p': o->prune = 1; break;
    case 'n': o->no_defaults = 1; break;
    case 'd':
      if (o->ndirs == MAX_DIRS) return tool_usage_error("at most %d --dir", MAX_DIRS);
      o->dirs[o->ndirs++] = optarg;
      break;
    case 'h': ls_usage(stdout); exit(0);
    default: ls_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc)
    return tool_usage_error("takes no operand ('%s'); 'ocgc ls --help' tells more",
                            argv[optind]);
  if (o->no_defaults && o->ndirs == 0)
    return tool_usage_error("--no-default-dirs lists only the --dir folders: name one with "
                            "--dir DIR");
  return 0;
}

/* Pass 2 over the caller's default folders, as the producer chooses them
 * (libocgc's ocgc_default_dir). */
static int scan_default_dirs(struct listing *l)
{
  char dir[PATH_MAX];
  unsigned i;
  int err = 0;
  for (i = 0; err == 0 && ocgc_default_dir(i, dir, sizeof dir) == 0; i++)
    err = scan_dir(l, dir, 0);
  return err;
}

/* --no-default-dirs: keep only what the folders hold. */
static void keep_in_dirs(struct listing *l)
{
  size_t j = 0, k;
  for (k = 0; k < l->n; k++) {
    if (l->v[k].in_dir) l->v[j++] = l->v[k];
    else free(l->v[k].path);
  }
  l->n = j;
}

/* Passes 1, 2 and 3 (see the top of the file) into l; *hm and *herr: the
 * host scan, for --prune.  0 or -ENOMEM. */
static int scan(struct listing *l, const struct ls_opts *o, struct hostmaps **hm, int *herr)
{
  unsigned i;
  int err = scan_procs(l);
  if (err == 0 && !o->no_defaults) err = scan_default_dirs(l);
  for (i = 0; i < o->ndirs && err == 0; i++) err = scan_dir(l, o->dirs[i], 1);
  if (err == 0 && o->no_defaults) keep_in_dirs(l);
  if (err) return err;
  /* Read last, as close to the pruning as can be. */
  *herr = hostmaps_scan(NULL, NULL, hm);
  if (*herr == -ENOMEM) return *herr;
  if (*hm != NULL) apply_hostmaps(l, *hm);
  return 0;
}

int cmd_ls(int argc, char **argv)
{
  struct ls_opts o;
  struct listing l = {NULL, 0, 0, 0, 0};
  struct hostmaps *hm = NULL;
  int err, herr = 0;
  size_t k;
  if ((err = parse_args(argc, argv, &o)) != 0) return err;
  if ((err = scan(&l, &o, &hm, &herr)) != 0) {
    tool_say("%s", strerror(-err));
    note_rc(&l, TOOL_EXIT_ERROR);
  } else {
    if (o.prune) prune(&l, hm, herr);
    if (l.n > 1) qsort(l.v, l.n, sizeof l.v[0], cmp_entry);
    if (o.json) print_json(&l);
    else print_table(&l);
    fflush(stdout);
    if (ferror(stdout)) note_rc(&l, TOOL_EXIT_ERROR);
  }
  hostmaps_free(hm);
  for (k = 0; k < l.n; k++) free(l.v[k].path);
  free(l.v);
  return l.rc;
}
