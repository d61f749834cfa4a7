/* watch_notify.c - the ring folders a watch is told of by inotify
 * (watch_notify.h): which folders, and the pids their new entries name.
 *
 * What is watched: the caller's --dir alone; else the caller's default
 * folders (dirs.c's rule), and for each one missing its base, until the
 * folder is made (then the base's watch is taken out: a busy /tmp does
 * not wake the watch for its files); with every_user also every user's
 * folders of the rule (/dev/shm/ocgc-UID, /tmp/ocgc-UID,
 * /run/user/UID/ocgc) and the bases where a new one may appear (/dev/shm,
 * /tmp and /run/user for good; /run/user/UID while its ocgc is missing).
 *
 * Invariants:
 * - Bounded: at most NOTIFY_MAX_WATCHES watches (past them, or past the
 *   kernel's limit, a folder is left to the listing, and the caller told
 *   to list); one read of NOTIFY_BUF bytes per call (the rest stays
 *   queued); a new folder's entries already there read up to
 *   SCAN_ENTRIES; a base's entries read up to MAX_BASE_ENTRIES once, at
 *   the start.
 * - A name is the target's (anyone may fill their own folder): it is only
 *   parsed (digits, bounded), never opened here; a pid it names goes to
 *   watch.c, which opens that process's ring by its pid, the checked way.
 *   A folder found in a shared base is watched only if it is a folder (no
 *   link followed) owned by the user its name says: opened O_NOFOLLOW,
 *   checked with fstat, and the watch put on that very descriptor
 *   (/proc/self/fd/N), never on a path looked up again.  Every path made
 *   here is a base of ours and a name of bounded length, cut with a
 *   check. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocgc/list.h"
#include "procfs.h"
#include "watch_notify.h"

#define SCAN_ENTRIES 1024      /* of a folder made later, read for rings already there */
#define MAX_BASE_ENTRIES 65536 /* of a shared base, read once for users' folders */
#define RINGS_MASK (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
#define BASE_MASK (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
#define RUN_USER "/run/user"

enum kind {
  K_RINGS,   /* a ring folder: its new entries name pids */
  K_ONE,     /* a base where one folder [expect] of user [uid] is awaited */
  K_SHARED,  /* /dev/shm, /tmp: every user's ocgc-UID */
  K_RUNUSER, /* /run/user: every user's UID, where UID/ocgc may come */
};

struct entry {
  int wd;                     /* -1: a free slot */
  enum kind kind;
  unsigned uid;               /* K_ONE: the awaited folder's owner */
  int rearm;                  /* K_RINGS: its base is watched again if it goes */
  char expect[24];            /* K_ONE: the awaited name */
  char *path;
};

struct notify {
  int ifd;
  int every_user;
  uint64_t pidns;             /* our pid namespace's inode (0: unknown) */
  struct entry e[NOTIFY_MAX_WATCHES];
  unsigned n;                 /* slots in use */
  int own_again;              /* a default folder went: set up again */
  int full;                   /* a folder could not be watched since the last read */
};

int notify_name_pid(const char *name, uint64_t pidns)
{
  char digits[12];
  const char *p = name, *dot;
  size_t len;
  if (strncmp(p, OCGC_DIR_RING_PREFIX, strlen(OCGC_DIR_RING_PREFIX)) == 0) {
    unsigned long long ns = 0;
    p += strlen(OCGC_DIR_RING_PREFIX);
    if (*p < '0' || *p > '9') return 0;
    for (len = 0; *p >= '0' && *p <= '9'; p++, len++) {
      if (len >= 20) return 0;
      ns = ns * 10 + (unsigned)(*p - '0');
    }
    if (*p++ != '.') return 0;
    /* Another namespace's pid names another process here, or none. */
    if (pidns != 0 && ns != 0 && ns != pidns) return 0;
    return ocgc_proc_pid_name(p);
  }
  if ((dot = strchr(p, '.')) == NULL || strcmp(dot, OCGC_DIR_EVENTS_SUFFIX) != 0) return 0;
  len = (size_t)(dot - p);
  if (len == 0 || len >= sizeof digits) return 0;
  memcpy(digits, p, len);
  digits[len] = '\0';
  return ocgc_proc_pid_name(digits);
}

int notify_name_uid(const char *name, unsigned *uid)
{
  int v;
  if (strncmp(name, "ocgc-", 5) != 0) return 0;
  /* uid 0 is root's: "ocgc-0" */
  if (strcmp(name + 5, "0") == 0) {
    *uid = 0;
    return 1;
  }
  if ((v = ocgc_proc_pid_name(name + 5)) <= 0) return 0;
  *uid = (unsigned)v;
  return 1;
}

/* The inode of our pid namespace, or 0. */
static uint64_t our_pidns(void)
{
  char buf[64];
  ssize_t len = readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  unsigned long long v;
  if (len <= 0) return 0;
  buf[len] = '\0';
  return sscanf(buf, "pid:[%llu]", &v) == 1 ? (uint64_t)v : 0;
}

static struct entry *by_wd(struct notify *n, int wd)
{
  unsigned i;
  for (i = 0; i < NOTIFY_MAX_WATCHES; i++)
    if (n->e[i].wd == wd) return &n->e[i];
  return NULL;
}

static void forget(struct notify *n, struct entry *e)
{
  free(e->path);
  e->path = NULL;
  e->wd = -1;
  n->n--;
}

/* [base]/[name] into out[0..size): 0, or -1 if it does not fit. */
static int join(char *out, size_t size, const char *base, const char *name)
{
  int len = snprintf(out, size, "%s/%s", base, name);
  return len > 0 && (size_t)len < size ? 0 : -1;
}

/* The entries of the folder [fd] (read from its start) that name pids,
 * into pids[*np..NOTIFY_MAX_PIDS), at most SCAN_ENTRIES read. */
static void scan(struct notify *n, int fd, int *pids, size_t *np)
{
  int dup_fd = dup(fd);
  DIR *d;
  struct dirent *de;
  unsigned seen = 0;
  if (dup_fd < 0) return;
  if ((d = fdopendir(dup_fd)) == NULL) {
    close(dup_fd);
    return;
  }
  while (*np < NOTIFY_MAX_PIDS && seen++ < SCAN_ENTRIES && (de = readdir(d)) != NULL) {
    int pid = notify_name_pid(de->d_name, n->pidns);
    size_t i;
    if (pid <= 0) continue;
    for (i = 0; i < *np && pids[i] != pid; i++) continue;
    if (i == *np) pids[(*np)++] = pid;
  }
  closedir(d);
}

/* Watch the folder [path] as [kind]: only a folder (a link at its end
 * followed only when [follow]: the caller's own paths), owned by [uid]
 * when [check_uid]; its entries there already given to pids[*np..) when
 * [pids] is not NULL.  Returns the entry, or NULL (not such a folder, or
 * no room: then n->full). */
static struct entry *add(struct notify *n, const char *path, enum kind kind, int follow,
                         int check_uid, unsigned uid, int *pids, size_t *np)
{
  char self[64];
  struct stat st;
  struct entry *e;
  uint32_t mask = kind == K_RINGS ? RINGS_MASK : BASE_MASK;
  int fd, wd;
  unsigned i;
  fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return NULL;
  if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || (check_uid && st.st_uid != uid)) {
    close(fd);
    return NULL;
  }
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  wd = inotify_add_watch(n->ifd, self, mask);
  if (wd < 0) {
    if (errno == ENOSPC || errno == ENOMEM) n->full = 1;
    close(fd);
    return NULL;
  }
  if ((e = by_wd(n, wd)) == NULL) { /* the same folder twice has one wd */
    for (i = 0; i < NOTIFY_MAX_WATCHES && n->e[i].wd >= 0; i++) continue;
    if (i == NOTIFY_MAX_WATCHES || (n->e[i].path = strdup(path)) == NULL) {
      (void)inotify_rm_watch(n->ifd, wd);
      n->full = 1;
      close(fd);
      return NULL;
    }
    e = &n->e[i];
    e->wd = wd;
    e->kind = kind;
    e->uid = uid;
    e->rearm = 0;
    e->expect[0] = '\0';
    n->n++;
  }
  if (pids != NULL && kind == K_RINGS) scan(n, fd, pids, np);
  close(fd);
  return e;
}

/* Wait in [base] for the folder [name] of [uid] (K_ONE). */
static void await(struct notify *n, const char *base, const char *name, unsigned uid, int follow)
{
  struct entry *e;
  if (strlen(name) >= sizeof e->expect) return;
  if ((e = add(n, base, K_ONE, follow, 0, 0, NULL, NULL)) == NULL || e->kind != K_ONE) return;
  e->uid = uid;
  snprintf(e->expect, sizeof e->expect, "%s", name);
}

/* The ring folder [path] of [uid] (its base [base] awaits it if it is
 * missing, or when it goes); [pids]: as add(). */
static void ring_folder(struct notify *n, const char *base, const char *name, unsigned uid,
                        int follow_base, int *pids, size_t *np)
{
  char path[PATH_MAX];
  struct entry *e;
  if (join(path, sizeof path, base, name) != 0) return;
  if ((e = add(n, path, K_RINGS, 0, 1, uid, pids, np)) != NULL) e->rearm = 1;
  else await(n, base, name, uid, follow_base);
}

/* The caller's default folders (dirs.c), or their bases. */
static void own_folders(struct notify *n)
{
  char path[PATH_MAX];
  unsigned i;
  for (i = 0; ocgc_default_dir(i, path, sizeof path) == 0; i++) {
    char *slash = strrchr(path, '/');
    if (slash == NULL || slash == path) continue;
    *slash = '\0';
    /* A shared base is watched for every user's already. */
    if (n->every_user && (strcmp(path, "/dev/shm") == 0 || strcmp(path, "/tmp") == 0)) continue;
    ring_folder(n, path, slash + 1, (unsigned)geteuid(), 1, NULL, NULL);
  }
}

/* /run/user/UID: its ocgc folder, or the wait for it. */
static void run_user(struct notify *n, const char *name, unsigned uid, int *pids, size_t *np)
{
  char base[PATH_MAX];
  struct stat st;
  if (join(base, sizeof base, RUN_USER, name) != 0 ||
      fstatat(AT_FDCWD, base, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != uid)
    return;
  ring_folder(n, base, "ocgc", uid, 0, pids, np);
}

/* Every user's folders in the shared base [base] (kind K_SHARED or
 * K_RUNUSER), read once, bounded, and the base watched for new ones. */
static void every_user_in(struct notify *n, const char *base, enum kind kind)
{
  DIR *d;
  struct dirent *de;
  unsigned long seen = 0;
  /* The system's own paths (/dev/shm may be a link to /run/shm). */
  if (add(n, base, kind, 1, 0, 0, NULL, NULL) == NULL) return;
  if ((d = opendir(base)) == NULL) return;
  while (seen++ < MAX_BASE_ENTRIES && (de = readdir(d)) != NULL) {
    char path[PATH_MAX];
    unsigned uid;
    int v;
    if (kind == K_SHARED && notify_name_uid(de->d_name, &uid)) {
      if (join(path, sizeof path, base, de->d_name) == 0)
        (void)add(n, path, K_RINGS, 0, 1, uid, NULL, NULL);
    } else if (kind == K_RUNUSER && (v = ocgc_proc_pid_name(de->d_name)) > 0) {
      run_user(n, de->d_name, (unsigned)v, NULL, NULL);
    }
  }
  closedir(d);
}

int notify_open(const char *dir, int every_user, struct notify **out)
{
  struct notify *n;
  unsigned i;
  *out = NULL;
  if ((n = calloc(1, sizeof *n)) == NULL) return -ENOMEM;
  for (i = 0; i < NOTIFY_MAX_WATCHES; i++) n->e[i].wd = -1;
  if ((n->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
    int err = -errno;
    free(n);
    return err;
  }
  n->every_user = every_user;
  n->pidns = our_pidns();
  if (dir != NULL) {
    (void)add(n, dir, K_RINGS, 1, 0, 0, NULL, NULL);
  } else {
    if (every_user) {
      every_user_in(n, "/dev/shm", K_SHARED);
      every_user_in(n, "/tmp", K_SHARED);
      every_user_in(n, RUN_USER, K_RUNUSER);
    }
    own_folders(n);
  }
  if (n->n == 0) {
    notify_free(n);
    return -ENOENT;
  }
  n->full = 0; /* what the start could not watch, the first listing finds */
  *out = n;
  return 0;
}

int notify_fd(const struct notify *n)
{
  return n->ifd;
}

unsigned notify_watches(const struct notify *n)
{
  return n->n;
}

/* A folder [name] appeared in the base [e]: watched if it is one of the
 * rule, its rings there already given. */
static void in_base(struct notify *n, struct entry *e, const char *name, int *pids, size_t *np)
{
  char path[PATH_MAX];
  unsigned uid;
  int v;
  switch (e->kind) {
  case K_ONE:
    if (strcmp(name, e->expect) != 0 || join(path, sizeof path, e->path, name) != 0) return;
    {
      struct entry *r = add(n, path, K_RINGS, 0, 1, e->uid, pids, np);
      if (r == NULL) return;
      r->rearm = 1;
    }
    /* Its folder is there: the base's other files are not ours to hear of. */
    (void)inotify_rm_watch(n->ifd, e->wd);
    forget(n, e);
    return;
  case K_SHARED:
    if (notify_name_uid(name, &uid) && join(path, sizeof path, e->path, name) == 0)
      (void)add(n, path, K_RINGS, 0, 1, uid, pids, np);
    return;
  case K_RUNUSER:
    if ((v = ocgc_proc_pid_name(name)) > 0) run_user(n, name, (unsigned)v, pids, np);
    return;
  case K_RINGS:
    return;
  }
}

/* A watch ended (its folder removed, or taken out by us): its slot freed;
 * a ring folder whose base awaited it is awaited again. */
static void ended(struct notify *n, struct entry *e)
{
  if (e->kind == K_RINGS && e->rearm) {
    char base[PATH_MAX], *slash;
    snprintf(base, sizeof base, "%s", e->path);
    slash = strrchr(base, '/');
    if (slash != NULL && slash != base) {
      unsigned uid = e->uid;
      *slash = '\0';
      forget(n, e);
      /* The caller's own: their rule may have changed meanwhile. */
      if (uid == (unsigned)geteuid() && strncmp(base, RUN_USER "/", sizeof RUN_USER) != 0)
        n->own_again = 1;
      else
        await(n, base, slash + 1, uid, 0);
      return;
    }
  }
  forget(n, e);
}

size_t notify_read(struct notify *n, int *pids, int *overflow)
{
  char buf[NOTIFY_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
  size_t np = 0;
  ssize_t len = read(n->ifd, buf, sizeof buf);
  char *p = buf;
  while (len > 0 && (size_t)len >= sizeof(struct inotify_event)) {
    struct inotify_event *ev = (struct inotify_event *)(void *)p;
    size_t step = sizeof *ev + ev->len;
    struct entry *e;
    if (step > (size_t)len) break; /* the kernel gives whole events */
    p += step;
    len -= (ssize_t)step;
    if (ev->mask & IN_Q_OVERFLOW) { *overflow = 1; continue; }
    if (ev->wd < 0 || (e = by_wd(n, ev->wd)) == NULL) continue;
    if (ev->mask & IN_IGNORED) { ended(n, e); continue; }
    /* The name is NUL-padded within len; one without a NUL is no name. */
    if (ev->len == 0 || memchr(ev->name, '\0', ev->len) == NULL) continue;
    if (!(ev->mask & (IN_CREATE | IN_MOVED_TO))) continue;
    if (e->kind == K_RINGS) {
      int pid;
      size_t i;
      if ((ev->mask & IN_ISDIR) || (pid = notify_name_pid(ev->name, n->pidns)) <= 0) continue;
      /* A ring has two names (its identity link and its alias): one pid. */
      for (i = 0; i < np && pids[i] != pid; i++) continue;
      if (i == np && np < NOTIFY_MAX_PIDS) pids[np++] = pid;
    } else if (ev->mask & IN_ISDIR) {
      in_base(n, e, ev->name, pids, &np);
    }
  }
  if (n->own_again) {
    n->own_again = 0;
    own_folders(n);
  }
  if (n->full) {
    n->full = 0;
    *overflow = 1;
  }
  return np;
}

void notify_free(struct notify *n)
{
  unsigned i;
  if (n == NULL) return;
  for (i = 0; i < NOTIFY_MAX_WATCHES; i++) free(n->e[i].path);
  close(n->ifd);
  free(n);
}
