/* ls.c - `ocgc ls`: the processes on this host that ocgc can attach to,
 * and the ring files left behind by processes that are gone.
 *
 * What it owns: one listing, built in two passes and printed sorted by pid
 * (then path):
 * 1. every process in /proc whose memory map holds a ring
 *    (ocgc_find_ring(): a shared writable mapping of a *.events file, in any
 *    folder);
 * 2. the *.events files of the default ring folders of the caller
 *    ($XDG_RUNTIME_DIR/ocgc, /dev/shm/ocgc-UID, /tmp/ocgc-UID, as the
 *    producer chooses them) and of every --dir, except the files some
 *    process of pass 1 maps.
 * Each file is opened through a descriptor of our own (O_NOFOLLOW) and read
 * by libocgc as /proc/self/fd/N, so that what is classified, what is
 * compared with the maps (device and inode) and what --prune removes are
 * the same file, whatever happens to the name meanwhile.
 *
 * States: "running" (ocgc file whose producer is the live process it names,
 * or any ring a live process maps), "exited" (the producer exited normally,
 * OCAML_RUNTIME_EVENTS_PRESERVE kept the file), "stale" (the producer was
 * killed, or its pid now names another process), "stock" (an OCaml 5 file
 * found in a folder: it carries no identity, so whether its process lives
 * cannot be told), "corrupt" and "denied" (files that cannot be read).
 *
 * --prune removes exited and stale ocgc files found in the folders, only if
 * they belong to the caller: never another user's file, never a file some
 * process maps, never a stock file (no identity: it might be live).  The
 * name may be taken over between the check and the removal by a new process
 * that got the same pid (the producer replaces a stale file by renaming its
 * new one over it), so the file is first renamed to a private name, checked
 * to still be the file that was classified, and only then unlinked; if it is
 * not, it is renamed back (without replacing anything).
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

#include "cmd.h"
#include "util.h"

#define EVENTS_SUFFIX ".events"
#define MAX_DIRS 64

struct entry {
  int pid;               /* 0: unknown (a stock file with an odd name) */
  char *path;
  dev_t dev;
  ino_t ino;
  uid_t uid;
  int mapped;            /* found in a live process's memory map */
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
  int rc; /* exit status so far */
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

static int seen_file(const struct listing *l, dev_t dev, ino_t ino)
{
  size_t i;
  for (i = 0; i < l->n; i++)
    if (l->v[i].dev == dev && l->v[i].ino == ino) return 1;
  return 0;
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
  len = (size_t)ocgc_cmd_parse_pid(buf);
  return (int)len > 0 ? (int)len : 0;
}

/* /proc/PID/comm into buf, or "-". */
static void comm_of(int pid, char *buf, size_t n)
{
  char p[64];
  FILE *f;
  snprintf(p, sizeof p, "/proc/%d/comm", pid);
  copy_str(buf, n, "-");
  if ((f = fopen(p, "r")) == NULL) return;
  if (fgets(buf, (int)n, f) != NULL) buf[strcspn(buf, "\n")] = '\0';
  else copy_str(buf, n, "-");
  fclose(f);
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
    if (e->mapped) comm_of(e->pid, e->program, sizeof e->program);
    else copy_str(e->program, sizeof e->program, "-");
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

/* Add the ring file at [path] (pid: the process that maps it, or 0 for a
 * file found in a folder).  Files already listed, and anything but a
 * regular file, are skipped.  Returns 0, or -ENOMEM. */
static int probe(struct listing *l, const char *path, int pid)
{
  struct ocgc_source *src = NULL;
  struct entry *e;
  struct stat st;
  char fdpath[64];
  int fd, err;

  fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno != EACCES && errno != EPERM) return 0; /* gone, or a link: not a ring */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || seen_file(l, st.st_dev, st.st_ino))
      return 0;
  } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
             seen_file(l, st.st_dev, st.st_ino)) {
    close(fd);
    return 0;
  }
  if ((e = add_entry(l)) == NULL) {
    if (fd >= 0) close(fd);
    return -ENOMEM;
  }
  e->pid = pid;
  e->mapped = pid > 0;
  e->dev = st.st_dev;
  e->ino = st.st_ino;
  e->uid = st.st_uid;
  e->path = strdup(path);
  if (e->path == NULL) {
    l->n--;
    if (fd >= 0) close(fd);
    return -ENOMEM;
  }
  if (!e->mapped) e->pid = pid_of_name(strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
  copy_str(e->program, sizeof e->program, "-");
  copy_str(e->ocaml, sizeof e->ocaml, "-");
  copy_str(e->ocgc, sizeof e->ocgc, "-");
  if (fd < 0) {
    e->state = e->mapped ? "running" : "denied";
    if (e->mapped) comm_of(pid, e->program, sizeof e->program);
    return 0;
  }
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
  err = ocgc_source_open_path(fdpath, NULL, &src);
  close(fd);
  if (err == 0) {
    classify(e, src);
    ocgc_source_close(src);
  } else {
    e->state = err == -EACCES || err == -EPERM ? "denied" : "corrupt";
    if (e->mapped) {
      comm_of(pid, e->program, sizeof e->program);
      e->state = "running";
    }
  }
  return 0;
}

/* Pass 1: the rings live processes map. */
static int scan_procs(struct listing *l)
{
  DIR *d = opendir("/proc");
  struct dirent *de;
  char path[PATH_MAX];
  int err = 0;
  if (d == NULL) {
    fprintf(stderr, "ocgc ls: /proc: %s (is /proc mounted?)\n", strerror(errno));
    note_rc(l, OCGC_EXIT_ERROR);
    return 0;
  }
  while (err == 0 && (de = readdir(d)) != NULL) {
    int pid = ocgc_cmd_parse_pid(de->d_name);
    if (pid <= 0 || pid == (int)getpid()) continue;
    /* -ESRCH (gone), -EACCES (another user's), OCGC_E_NORING: nothing to list */
    if (ocgc_find_ring(pid, path, sizeof path) == 0) err = probe(l, path, pid);
  }
  closedir(d);
  return err;
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
      fprintf(stderr, "ocgc ls: %s: %s\n", dir, strerror(errno));
      note_rc(l, errno == ENOENT || errno == ENOTDIR ? OCGC_EXIT_NOTFOUND
                 : errno == EACCES ? OCGC_EXIT_DENIED : OCGC_EXIT_ERROR);
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
    err = probe(l, path, 0);
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

/* ---- --prune -------------------------------------------------------------------- */

static int prunable(const struct entry *e)
{
  return !e->mapped && e->has_ext && e->uid == getuid() &&
         (strcmp(e->state, "exited") == 0 || strcmp(e->state, "stale") == 0);
}

/* Remove e's file if the name still holds it (see the top of the file).
 * Returns 0 (removed), 1 (not: the name now holds another file) or -errno. */
static int prune_file(const struct entry *e)
{
  char tmp[PATH_MAX];
  const char *slash = strrchr(e->path, '/');
  struct stat st;
  int n;
  if (slash == NULL) n = snprintf(tmp, sizeof tmp, ".ocgc-prune.%d.%s", (int)getpid(), e->path);
  else n = snprintf(tmp, sizeof tmp, "%.*s/.ocgc-prune.%d.%s", (int)(slash - e->path), e->path,
                    (int)getpid(), slash + 1);
  if (n < 0 || (size_t)n >= sizeof tmp) return -ENAMETOOLONG;
  if (rename(e->path, tmp) != 0) return -errno;
  if (lstat(tmp, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino) {
    if (unlink(tmp) != 0) return -errno;
    return 0;
  }
  /* Another file took the name: give it back, replacing nothing. */
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, e->path, RENAME_NOREPLACE) != 0)
    fprintf(stderr, "ocgc ls: %s: a new file took the name while pruning; it is now %s\n",
            e->path, tmp);
  return 1;
}

static void prune(struct listing *l)
{
  size_t i, j = 0;
  for (i = 0; i < l->n; i++) {
    struct entry *e = &l->v[i];
    int err;
    if (!e->mapped && e->has_ext && e->uid != getuid() &&
        (strcmp(e->state, "exited") == 0 || strcmp(e->state, "stale") == 0))
      fprintf(stderr, "ocgc ls: not removing %s: it belongs to uid %u, not to you\n", e->path,
              (unsigned)e->uid);
    if (!prunable(e)) {
      l->v[j++] = *e;
      continue;
    }
    err = prune_file(e);
    if (err == 0) {
      fprintf(stderr, "ocgc ls: removed %s (process %d, %s)\n", e->path, e->pid, e->state);
      free(e->path);
      continue;
    }
    if (err < 0) {
      fprintf(stderr, "ocgc ls: cannot remove %s: %s\n", e->path, strerror(-err));
      note_rc(l, err == -EACCES || err == -EPERM ? OCGC_EXIT_DENIED : OCGC_EXIT_ERROR);
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
    if (e->pid > 0) snprintf(pid, sizeof pid, "%d", e->pid);
    else copy_str(pid, sizeof pid, "-");
    if (e->has_info) snprintf(ring, sizeof ring, "%" PRIu64, e->ring_bytes / 1024);
    else copy_str(ring, sizeof ring, "-");
    if (e->have_written) snprintf(written, sizeof written, "%" PRIu64, e->written);
    else copy_str(written, sizeof written, "-");
    printf("%7s %-16s %-7s %-7s %8s %12s %-7s %s\n", pid, e->program, e->ocaml, e->ocgc, ring,
           written, e->state, e->path);
  }
}

/* A string field, or null for "-" (unknown). */
static void json_str_or_null(const char *s)
{
  if (strcmp(s, "-") == 0) printf("null");
  else ocgc_json_string(stdout, s);
}

static void print_json(const struct listing *l)
{
  size_t i;
  for (i = 0; i < l->n; i++) {
    const struct entry *e = &l->v[i];
    if (e->pid > 0) printf("{\"pid\": %d, \"program\": ", e->pid);
    else printf("{\"pid\": null, \"program\": ");
    json_str_or_null(e->program);
    printf(", \"ocaml\": ");
    json_str_or_null(e->ocaml);
    printf(", \"ocgc\": ");
    json_str_or_null(e->ocgc);
    if (e->has_info) printf(", \"ring_bytes\": %" PRIu64, e->ring_bytes);
    else printf(", \"ring_bytes\": null");
    if (e->have_written) printf(", \"written\": %" PRIu64, e->written);
    else printf(", \"written\": null");
    printf(", \"state\": \"%s\", \"code\": %s, \"mapped\": %s, \"uid\": %u, \"path\": ", e->state,
           !e->has_ext ? "null" : e->native ? "\"native\"" : "\"bytecode\"",
           e->mapped ? "true" : "false", (unsigned)e->uid);
    ocgc_json_string(stdout, e->path);
    printf("}\n");
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
          "Other users' processes are listed only when you may read their memory\n"
          "map (as root).\n\n"
          "Columns: PID, PROGRAM, OCAML (the producer's OCaml version; 5 for a\n"
          "stock OCaml 5 file), OCGC (the producer's ocgc version, - for stock\n"
          "files), RING_KiB (ring size), WRITTEN (events written so far), STATE, PATH.\n"
          "STATE is running (attachable), exited (it exited; the file was kept),\n"
          "stale (killed, or its pid now names another process), stock (an OCaml 5\n"
          "file no live process maps: it says nothing of its process), corrupt or\n"
          "denied (the file cannot be read).\n\n"
          "  --json             one JSON object per line and per file instead\n"
          "  --prune            remove the exited and stale files that belong to you\n"
          "                     (never a file a process maps, never a stock file);\n"
          "                     says on stderr what it removed\n"
          "  --dir DIR          look in DIR too (OCAML_RUNTIME_EVENTS_DIR); repeatable\n"
          "  --no-default-dirs  look only in the --dir folders\n"
          "  --help             this text\n\n"
          "Exit status 0, also when nothing is found (then the table has only its\n"
          "header).\n");
}

int cmd_ls(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"prune", no_argument, NULL, 'p'},
    {"dir", required_argument, NULL, 'd'},
    {"no-default-dirs", no_argument, NULL, 'n'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct listing l = {NULL, 0, 0, 0};
  const char *dirs[MAX_DIRS];
  char defaults[3][PATH_MAX];
  unsigned ndirs = 0, i;
  int opt, json = 0, do_prune = 0, no_defaults = 0, err;
  size_t k;

  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': json = 1; break;
    case 'p': do_prune = 1; break;
    case 'n': no_defaults = 1; break;
    case 'd':
      if (ndirs == MAX_DIRS) {
        fprintf(stderr, "ocgc ls: at most %d --dir\n", MAX_DIRS);
        return OCGC_EXIT_USAGE;
      }
      dirs[ndirs++] = optarg;
      break;
    case 'h': ls_usage(stdout); return 0;
    default: ls_usage(stderr); return OCGC_EXIT_USAGE;
    }
  }
  if (optind != argc) {
    fprintf(stderr, "ocgc ls: takes no operand ('%s'); 'ocgc ls --help' tells more\n",
            argv[optind]);
    return OCGC_EXIT_USAGE;
  }

  err = scan_procs(&l);
  if (err == 0 && !no_defaults) {
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    unsigned uid = (unsigned)getuid();
    snprintf(defaults[0], sizeof defaults[0], "%s/ocgc", xdg && xdg[0] == '/' ? xdg : "");
    snprintf(defaults[1], sizeof defaults[1], "/dev/shm/ocgc-%u", uid);
    snprintf(defaults[2], sizeof defaults[2], "/tmp/ocgc-%u", uid);
    for (i = xdg && xdg[0] == '/' ? 0 : 1; i < 3 && err == 0; i++)
      err = scan_dir(&l, defaults[i], 0);
  }
  for (i = 0; i < ndirs && err == 0; i++) err = scan_dir(&l, dirs[i], 1);
  if (err) {
    fprintf(stderr, "ocgc ls: %s\n", strerror(-err));
    note_rc(&l, OCGC_EXIT_ERROR);
  } else {
    if (do_prune) prune(&l);
    if (l.n > 1) qsort(l.v, l.n, sizeof l.v[0], cmp_entry);
    if (json) print_json(&l);
    else print_table(&l);
    fflush(stdout);
    if (ferror(stdout)) note_rc(&l, OCGC_EXIT_ERROR);
  }
  for (k = 0; k < l.n; k++) free(l.v[k].path);
  free(l.v);
  return l.rc;
}
