/* procfs.c - reading /proc for attach.c and list.c: a process's identity
 * (/proc/PID/stat), its name (/proc/PID/comm), its memory map
 * (/proc/PID/maps, whose lines mapsline.c parses), whether it is alive
 * with no SIGKILL queued (/proc/PID/status) and the boot id.
 *
 * Invariants:
 * - It keeps no state: every call reads /proc afresh, so any number of
 *   threads may call it at once.
 * - A process is identified by (boot id, pid, start time): pids are
 *   reused, start times (field 22 of /proc/PID/stat, clock ticks after
 *   boot) are not within one boot.  The stat line is parsed after the
 *   *last* ')', since the command name may hold spaces and parentheses.
 *   A zombie counts as dead: its ring will never be written again.
 * - A maps file is read once, line by line, as the kernel writes it (its
 *   size is the kernel's: one line per mapping, vm.max_map_count at most,
 *   each path at most a page); nothing named in it is opened here.
 * - The maps device field is major:minor in hex; it is compared with
 *   st_dev through makedev(), never as text. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mapsline.h"
#include "procfs.h"

ssize_t ocgc_proc_read_small(const char *path, char *buf, size_t n)
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

/* The stat line is
 *   pid (comm) state ppid ... starttime ...
 * and comm is whatever the process called itself, ')' included, so the
 * fields start after the last ')'. */
int ocgc_proc_ident(int pid, struct ocgc_proc_ident *out)
{
  char path[64], buf[2048];
  const char *p;
  char *end;
  ssize_t len;
  int field;

  if (pid <= 0) return -ESRCH;
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  len = ocgc_proc_read_small(path, buf, sizeof buf);
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

int ocgc_proc_boot_id(char *out, size_t n)
{
  ssize_t len = ocgc_proc_read_small("/proc/sys/kernel/random/boot_id", out, n);
  if (len < 0) return (int)len;
  out[strcspn(out, "\n")] = '\0';
  return out[0] != '\0' ? 0 : -EIO;
}

int ocgc_proc_pid_name(const char *name)
{
  unsigned long v = 0;
  size_t i;
  if (name[0] < '1' || name[0] > '9') return 0;
  for (i = 0; name[i] != '\0'; i++) {
    if (name[i] < '0' || name[i] > '9' || i >= 10) return 0;
    v = v * 10 + (unsigned long)(name[i] - '0');
  }
  return v <= INT_MAX ? (int)v : 0;
}

int ocgc_proc_ns_pid(int pid, uint64_t *out)
{
  char path[64], buf[4096], *p, *end;
  ssize_t len;
  uint64_t v = (uint64_t)pid;
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  if ((len = ocgc_proc_read_small(path, buf, sizeof buf)) < 0) return len == -ENOENT ? -ESRCH : (int)len;
  if ((p = strstr(buf, "\nNSpid:")) != NULL) {
    p += strlen("\nNSpid:");
    /* The pids from the outermost namespace (ours, or one above) in: the
     * last on the line is the process's own. */
    for (;;) {
      unsigned long long n;
      while (*p == ' ' || *p == '\t') p++;
      if (*p < '0' || *p > '9') break;
      n = strtoull(p, &end, 10);
      v = (uint64_t)n;
      p = end;
    }
  }
  *out = v;
  return 0;
}

/* The value of the line "\nKEY:\t..." of a status text, parsed in [base]:
 * 0, or -1 if the line is missing or not a number. */
static int status_field(const char *text, const char *key, int base, unsigned long long *v)
{
  const char *p = strstr(text, key);
  char *end;
  if (p == NULL) return -1;
  p += strlen(key);
  while (*p == ' ' || *p == '\t') p++;
  *v = strtoull(p, &end, base);
  return end == p ? -1 : 0;
}

int ocgc_proc_status_unkilled(const char *text)
{
  const unsigned long long kill = 1ULL << (SIGKILL - 1);
  unsigned long long own, shared;
  const char *st = strstr(text, "\nState:");
  if (st == NULL) return 0;
  st += strlen("\nState:");
  while (*st == ' ' || *st == '\t') st++;
  if (*st == 'Z' || *st == 'X' || *st == 'x') return 0;
  if (status_field(text, "\nSigPnd:", 16, &own) != 0 ||
      status_field(text, "\nShdPnd:", 16, &shared) != 0)
    return 0;
  return ((own | shared) & kill) == 0;
}

int ocgc_proc_unkilled(int pid)
{
  char path[64], buf[4096];
  ssize_t len;
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  if ((len = ocgc_proc_read_small(path, buf, sizeof buf)) < 0) return len == -ENOENT ? -ESRCH : (int)len;
  return ocgc_proc_status_unkilled(buf);
}

unsigned ocgc_proc_uid(int pid)
{
  char path[32];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d", pid);
  return stat(path, &st) == 0 ? (unsigned)st.st_uid : 0;
}

void ocgc_proc_comm(int pid, char *out, size_t n)
{
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/comm", pid);
  if (ocgc_proc_read_small(path, out, n) < 0) out[0] = '\0';
  out[strcspn(out, "\n")] = '\0';
}

/* Open /proc/PID/maps; -ESRCH, -EACCES or -errno. */
static FILE *open_maps(int pid, int *err)
{
  char maps[64];
  FILE *f;
  int fd;
  *err = 0;
  if (pid <= 0) { *err = -ESRCH; return NULL; }
  snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
  fd = open(maps, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    /* The kernel checks ptrace read access at open (EACCES) or, on old
     * kernels, at read; some LSMs say EPERM. */
    *err = e == ENOENT || e == ESRCH ? -ESRCH : e == EPERM ? -EACCES : -e;
    return NULL;
  }
  if ((f = fdopen(fd, "r")) == NULL) {
    *err = -errno;
    close(fd);
  }
  return f;
}

int ocgc_proc_maps_each(int pid, ocgc_maps_fn fn, void *ctx)
{
  char *line = NULL;
  size_t cap = 0;
  int err, stop = 0;
  FILE *f = open_maps(pid, &err);
  if (f == NULL) return err;
  errno = 0;
  while (stop == 0) {
    ssize_t got = getline(&line, &cap, f);
    if (got < 0) {
      if (ferror(f)) {
        int e = errno;
        /* the process died while we read: its maps read as ESRCH */
        err = e == EACCES || e == EPERM ? -EACCES : e == ESRCH ? -ESRCH : e != 0 ? -e : -EIO;
      }
      break;
    }
    line[strcspn(line, "\n")] = '\0';
    stop = fn(line, ctx);
  }
  free(line);
  fclose(f);
  return stop != 0 ? stop : err;
}

struct file_query {
  uint64_t dev, ino;
  unsigned long start, end;   /* the first matching line's range */
};

static int is_file_line(char *line, void *ctx)
{
  struct file_query *q = ctx;
  struct ocgc_maps_line m;
  if (ocgc_maps_parse_line(line, &m) != 0) return 0;
  if (m.perms[1] != 'w' || m.perms[3] != 's') return 0;
  if ((uint64_t)makedev(m.dev_major, m.dev_minor) != q->dev || (uint64_t)m.inode != q->ino)
    return 0;
  q->start = m.start;
  q->end = m.end;
  return 1;
}

int ocgc_proc_maps_file(int pid, uint64_t dev, uint64_t ino)
{
  return ocgc_proc_maps_file_at(pid, dev, ino, NULL, NULL);
}

int ocgc_proc_maps_file_at(int pid, uint64_t dev, uint64_t ino, unsigned long *start,
                           unsigned long *end)
{
  struct file_query q = {dev, ino, 0, 0};
  int err = ocgc_proc_maps_each(pid, is_file_line, &q);
  if (err == 1 && start != NULL) *start = q.start;
  if (err == 1 && end != NULL) *end = q.end;
  return err;
}

int ocgc_proc_maps_range(int pid, unsigned long start, unsigned long end)
{
  char path[96];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d/map_files/%lx-%lx", pid, start, end);
  /* lstat: the entry itself (a link), which any reader with ptrace read
   * access may look at; following it would want CAP_SYS_ADMIN. */
  if (lstat(path, &st) == 0) return 1;
  if (errno == ENOENT) {
    /* No such range, or no such process, or no map_files at all. */
    snprintf(path, sizeof path, "/proc/%d/map_files", pid);
    if (lstat(path, &st) == 0) return 0;
    if (errno != ENOENT) return -errno;
    snprintf(path, sizeof path, "/proc/%d", pid);
    return lstat(path, &st) == 0 ? -ENOTSUP : -ESRCH;
  }
  return errno == EACCES || errno == EPERM ? -EACCES : errno == ESRCH ? -ESRCH : -errno;
}
