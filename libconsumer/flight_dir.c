/* flight_dir.c - a folder of recordings (ocgc/flight.h): their names, the
 * bounds on their number and bytes (per program and in all), the
 * cooldown per program, and how a file is made.
 *
 * Invariants:
 * - the folder is held by a descriptor opened once (O_NOFOLLOW on its last
 *   component, refused when others may write to it); every name is made,
 *   renamed and removed relative to it, never through a link: a file is
 *   made O_CREAT|O_EXCL|O_NOFOLLOW under a temporary name
 *   (.ocgcrec-tmp.*), mode 0600 whatever the umask, and renamed into place
 *   with RENAME_NOREPLACE, so a recording appears whole or not at all and
 *   never replaces a file;
 * - only names of our own form (NAME.ocgcrec that are regular files, and
 *   our temporary files) are counted or removed: an operator's other files
 *   in the folder are never touched;
 * - the index of recordings (names, sizes, times) is bounded by the
 *   folder's bounds plus one; the cooldown table by
 *   OCGC_FLIGHT_DIR_PROGRAMS; a folder of hostile names is read at most
 *   OCGC_FLIGHT_DIR_SCAN entries when opened;
 * - used by one thread at a time. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "ocgc/flight.h"
#include "opts.h"

#define SUFFIX ".ocgcrec"
#define TMP_PREFIX ".ocgcrec-tmp."
#define PROG_MAX 32 /* a program's name in a file name, at most */

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

struct rec {
  char name[128];
  char prog[PROG_MAX + 1];
  uint64_t bytes;
  uint64_t mtime_ns;          /* its age, for which goes first */
};

struct cool {
  char prog[PROG_MAX + 1];
  uint64_t at_ns;             /* cm_mono_ns() of its last recording */
};

struct ocgc_flight_dir {
  int fd;
  struct ocgc_flight_dir_opts o;
  struct rec *recs;           /* the recordings, any order */
  size_t nrecs, cap;
  struct cool *cools;
  size_t ncools;
  struct ocgc_flight_dir_stats st;
  unsigned seq;               /* makes temporary names unique within the process */
};

/* The program's name as a file name has it: letters, digits and ._+ kept,
 * others _, at most PROG_MAX bytes, never a leading dot. */
static void prog_key(const char *program, char out[PROG_MAX + 1])
{
  size_t i, n = 0;
  for (i = 0; program != NULL && program[i] != '\0' && n < PROG_MAX; i++) {
    unsigned char c = (unsigned char)program[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '+';
    out[n++] = ok ? (char)c : '_';
  }
  if (n == 0) n = (size_t)snprintf(out, PROG_MAX + 1, "unknown");
  out[n] = '\0';
  if (out[0] == '.') out[0] = '_';
}

/* The program part of one of our names (PROG-PID-TIME-REASON.ocgcrec):
 * 0, or -1 when it is not of that form. */
static int parse_name(const char *name, char prog[PROG_MAX + 1])
{
  size_t len = strlen(name), sl = strlen(SUFFIX);
  const char *end;
  int dashes = 0;
  if (len <= sl || len >= sizeof ((struct rec *)0)->name || name[0] == '.' ||
      strcmp(name + len - sl, SUFFIX) != 0)
    return -1;
  /* From the end: -REASON, -TIME, -PID (a program may hold no dash: ours
   * are made _, but a suffix -N of a second file of one second comes
   * after REASON). */
  end = name + len - sl;
  while (end > name && dashes < 3) {
    end--;
    if (*end == '-') dashes++;
  }
  if (dashes < 3 || end == name || (size_t)(end - name) > PROG_MAX) return -1;
  memcpy(prog, name, (size_t)(end - name));
  prog[end - name] = '\0';
  return 0;
}

static int rec_add(struct ocgc_flight_dir *d, const char *name, const char *prog, uint64_t bytes,
                   uint64_t mtime_ns)
{
  struct rec *r;
  if (d->nrecs == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    if ((r = realloc(d->recs, cap * sizeof *r)) == NULL) return -ENOMEM;
    d->recs = r;
    d->cap = cap;
  }
  r = &d->recs[d->nrecs++];
  snprintf(r->name, sizeof r->name, "%s", name);
  snprintf(r->prog, sizeof r->prog, "%s", prog);
  r->bytes = bytes;
  r->mtime_ns = mtime_ns;
  d->st.files++;
  d->st.bytes += bytes;
  return 0;
}

/* Remove recording [i] (the file and its entry). */
static void rec_remove(struct ocgc_flight_dir *d, size_t i)
{
  if (unlinkat(d->fd, d->recs[i].name, 0) != 0 && errno != ENOENT) return; /* kept counted */
  d->st.files--;
  d->st.bytes -= d->recs[i].bytes;
  d->st.removed++;
  d->recs[i] = d->recs[--d->nrecs];
}

/* The oldest recording (of [prog], or of any when NULL), or -1. */
static long oldest(const struct ocgc_flight_dir *d, const char *prog)
{
  size_t i;
  long best = -1;
  for (i = 0; i < d->nrecs; i++) {
    if (prog != NULL && strcmp(d->recs[i].prog, prog) != 0) continue;
    if (best < 0 || d->recs[i].mtime_ns < d->recs[best].mtime_ns) best = (long)i;
  }
  return best;
}

static size_t count_of(const struct ocgc_flight_dir *d, const char *prog)
{
  size_t i, n = 0;
  for (i = 0; i < d->nrecs; i++) n += strcmp(d->recs[i].prog, prog) == 0;
  return n;
}

/* Remove the oldest until [more] more recordings (0 or 1) of [prog], of
 * [bytes], fit (prog NULL: only the bounds in all). */
static void make_room(struct ocgc_flight_dir *d, const char *prog, unsigned more, uint64_t bytes)
{
  long i;
  while (prog != NULL && count_of(d, prog) + more > d->o.per_program &&
         (i = oldest(d, prog)) >= 0) {
    size_t before = d->nrecs;
    rec_remove(d, (size_t)i);
    if (d->nrecs == before) return; /* could not: do not loop */
  }
  while ((d->nrecs + more > d->o.files || d->st.bytes + bytes > d->o.bytes) &&
         (i = oldest(d, NULL)) >= 0) {
    size_t before = d->nrecs;
    rec_remove(d, (size_t)i);
    if (d->nrecs == before) return;
  }
}

/* Read what the folder holds: our recordings into the index, our
 * temporary files removed; at most OCGC_FLIGHT_DIR_SCAN entries. */
static int scan(struct ocgc_flight_dir *d)
{
  int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir;
  struct dirent *e;
  unsigned seen = 0;
  if (fd < 0) return -errno;
  if ((dir = fdopendir(fd)) == NULL) {
    int err = -errno;
    close(fd);
    return err;
  }
  while (seen++ < OCGC_FLIGHT_DIR_SCAN && (e = readdir(dir)) != NULL) {
    char prog[PROG_MAX + 1];
    struct stat st;
    if (fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
      unlinkat(d->fd, e->d_name, 0); /* a run that stopped mid-write */
      continue;
    }
    if (parse_name(e->d_name, prog) != 0) continue;
    if (rec_add(d, e->d_name, prog, (uint64_t)st.st_size,
                (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec) != 0)
      break;
  }
  closedir(dir);
  make_room(d, NULL, 0, 0);
  return 0;
}

int ocgc_flight_dir_open(const char *path, const struct ocgc_flight_dir_opts *opts,
                         struct ocgc_flight_dir **out)
{
  struct ocgc_flight_dir *d;
  struct stat st;
  int err;
  if (path == NULL || out == NULL) return -EINVAL;
  *out = NULL;
  if ((d = calloc(1, sizeof *d)) == NULL) return -ENOMEM;
  if ((err = opts_read(&d->o, sizeof d->o, opts)) != 0) { free(d); return err; }
  if (d->o.per_program == 0) d->o.per_program = OCGC_FLIGHT_DIR_PER_PROGRAM;
  if (d->o.files == 0) d->o.files = OCGC_FLIGHT_DIR_FILES;
  if (d->o.bytes == 0) d->o.bytes = OCGC_FLIGHT_DIR_BYTES;
  if (d->o.cooldown_ns == 0) d->o.cooldown_ns = OCGC_FLIGHT_DIR_COOLDOWN_NS;
  d->st.sz = sizeof d->st;
  d->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d->fd < 0) { err = -errno; free(d); return err; }
  /* Others that may write there could swap our files under us (a link in
   * place of a name we remove is only a link removed, but a reader of the
   * folder is then misled); a sticky folder (/tmp) lets each remove only
   * their own, and is still refused: recordings name code and paths. */
  if (fstat(d->fd, &st) != 0 || (st.st_mode & 0022) != 0) {
    err = fstat(d->fd, &st) != 0 ? -errno : -EPERM;
    close(d->fd);
    free(d);
    return err;
  }
  if ((err = scan(d)) != 0) {
    ocgc_flight_dir_close(d);
    return err;
  }
  *out = d;
  return 0;
}

void ocgc_flight_dir_close(struct ocgc_flight_dir *d)
{
  if (d == NULL) return;
  close(d->fd);
  free(d->recs);
  free(d->cools);
  free(d);
}

static struct cool *cool_of(const struct ocgc_flight_dir *d, const char *prog)
{
  size_t i;
  for (i = 0; i < d->ncools; i++)
    if (strcmp(d->cools[i].prog, prog) == 0) return &d->cools[i];
  return NULL;
}

int ocgc_flight_dir_ready(const struct ocgc_flight_dir *d, const char *program, int reason)
{
  char prog[PROG_MAX + 1];
  const struct cool *c;
  if (d == NULL) return 0;
  if (reason == OCGC_FLIGHT_DEMAND) return 1;
  prog_key(program, prog);
  c = cool_of(d, prog);
  return c == NULL || cm_mono_ns() - c->at_ns >= d->o.cooldown_ns;
}

/* [prog] recorded now: its cooldown starts (past the table's bound, the
 * program recorded longest ago is forgotten). */
static void cool_start(struct ocgc_flight_dir *d, const char *prog)
{
  struct cool *c = cool_of(d, prog);
  if (c == NULL) {
    if (d->cools == NULL && (d->cools = calloc(OCGC_FLIGHT_DIR_PROGRAMS, sizeof *c)) == NULL)
      return;
    if (d->ncools < OCGC_FLIGHT_DIR_PROGRAMS) {
      c = &d->cools[d->ncools++];
    } else {
      size_t i;
      c = &d->cools[0];
      for (i = 1; i < d->ncools; i++)
        if (d->cools[i].at_ns < c->at_ns) c = &d->cools[i];
    }
    snprintf(c->prog, sizeof c->prog, "%s", prog);
  }
  c->at_ns = cm_mono_ns();
}

/* CLOCK_REALTIME now, ns: a recording's age beside the files' mtimes. */
static uint64_t real_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The final name of a recording of [m] made now, the [k]th try. */
static void make_name(char *out, size_t n, const char *prog, const struct ocgc_flight_meta *m,
                      unsigned k)
{
  time_t now = time(NULL);
  struct tm tm;
  char when[32] = "00000000T000000Z";
  if (gmtime_r(&now, &tm) != NULL) strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
  if (k == 0)
    snprintf(out, n, "%s-%d-%s-%s" SUFFIX, prog, m->pid, when, ocgc_flight_reason_name(m->reason));
  else
    snprintf(out, n, "%s-%d-%s-%s.%u" SUFFIX, prog, m->pid, when,
             ocgc_flight_reason_name(m->reason), k);
}

int ocgc_flight_dir_record(struct ocgc_flight_dir *d, const struct ocgc_source *src,
                           const struct ocgc_flight_hist *h, const struct ocgc_flight_meta *m,
                           char *name, size_t n)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  char prog[PROG_MAX + 1], tmp[64], final[128];
  struct stat st;
  unsigned k;
  int fd, err;
  if (d == NULL || src == NULL || m == NULL) return -EINVAL;
  if (m->reason < OCGC_FLIGHT_DEATH || m->reason > OCGC_FLIGHT_DEMAND) return -EINVAL;
  if (!ocgc_flight_dir_ready(d, m->program, m->reason)) {
    d->st.cooled++;
    return -EAGAIN;
  }
  prog_key(m->program, prog);
  if (ocgc_source_info(src, &info) != 0 || info.file_size > OCGC_FLIGHT_MAX_BYTES) {
    d->st.failed++;
    return -EFBIG;
  }
  make_room(d, prog, 1, info.file_size);
  snprintf(tmp, sizeof tmp, TMP_PREFIX "%ld.%u", (long)getpid(), d->seq++);
  fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    d->st.failed++;
    return -errno;
  }
  /* 0600 whatever the umask made of it: a recording names code, paths and
   * a process's memory figures. */
  err = fchmod(fd, 0600) != 0 ? -errno : ocgc_flight_write(fd, src, h, m);
  if (err == 0 && fdatasync(fd) != 0) err = -errno;
  if (err == 0 && fstat(fd, &st) != 0) err = -errno;
  if (close(fd) != 0 && err == 0) err = -errno;
  for (k = 0; err == 0; k++) {
    make_name(final, sizeof final, prog, m, k);
    if (renameat2(d->fd, tmp, d->fd, final, RENAME_NOREPLACE) == 0) break;
    if (errno != EEXIST || k >= 16) err = -errno;
  }
  if (err != 0) {
    unlinkat(d->fd, tmp, 0);
    d->st.failed++;
    return err;
  }
  rec_add(d, final, prog, (uint64_t)st.st_size, real_ns());
  /* One asked for neither waits for the cooldown nor starts it: an
   * operator's look must not hide the death that follows. */
  if (m->reason != OCGC_FLIGHT_DEMAND) cool_start(d, prog);
  d->st.recorded[m->reason]++;
  if (name != NULL && n > 0) snprintf(name, n, "%s", final);
  return 0;
}

int ocgc_flight_dir_stats(const struct ocgc_flight_dir *d, struct ocgc_flight_dir_stats *out)
{
  if (d == NULL) return -EINVAL;
  return opts_write(out, &d->st, sizeof d->st);
}
