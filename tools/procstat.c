/* procstat.c - a process's figures from /proc/PID (procstat.h).
 *
 * Invariants: every file is read with one bounded read into a fixed buffer
 * (a process cannot make us read without end: its comm is at most 16
 * bytes, and the fields we want come early); the fd count stops at a
 * bound; the command name in /proc/PID/stat, which may hold spaces and
 * parentheses, is skipped to the last ')', so the fields after it are the
 * kernel's. */

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

#define MAX_FDS_COUNTED (1u << 20)

/* Read at most n-1 bytes of [path] into buf, NUL-terminated: the length,
 * or -1. */
static ssize_t read_small(const char *path, char *buf, size_t n)
{
  ssize_t got, total = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  while ((size_t)total < n - 1 && (got = read(fd, buf + total, n - 1 - (size_t)total)) > 0)
    total += got;
  close(fd);
  buf[total] = '\0';
  return total;
}

/* The boot time in seconds since the epoch (0: unknown), read once. */
static uint64_t boot_time_s(void)
{
  static int done;
  static uint64_t btime;
  char buf[8192], *p;
  if (done) return btime;
  done = 1;
  if (read_small("/proc/stat", buf, sizeof buf) > 0 && (p = strstr(buf, "\nbtime ")) != NULL)
    btime = strtoull(p + 7, NULL, 10);
  return btime;
}

/* Fields 3.. of /proc/PID/stat (after the command), counted from 3. */
static int read_stat(int pid, struct procstat *o)
{
  char path[64], buf[4096], *p, *end;
  uint64_t f[25] = {0};
  long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
  int i;
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  if (read_small(path, buf, sizeof buf) <= 0 || (p = strrchr(buf, ')')) == NULL) return -1;
  p += 2; /* ") " then the state, field 3 */
  if (*p == '\0') return -1;
  p++;
  for (i = 4; i < 25; i++) {
    f[i] = strtoull(p, &end, 10);
    if (end == p) return -1;
    p = end;
  }
  if (tck <= 0) tck = 100;
  o->minflt = f[10];
  o->majflt = f[12];
  o->utime_ns = f[14] * (1000000000u / (uint64_t)tck);
  o->stime_ns = f[15] * (1000000000u / (uint64_t)tck);
  o->threads = f[20];
  o->start_ticks = f[22];
  if (boot_time_s() > 0)
    o->start_time_ns = boot_time_s() * 1000000000u + f[22] * (1000000000u / (uint64_t)tck);
  o->vsize_bytes = f[23];
  o->rss_bytes = f[24] * (uint64_t)(page > 0 ? page : 4096);
  o->have_stat = 1;
  return 0;
}

static int field_u64(const char *buf, const char *key, uint64_t *v)
{
  const char *p = strstr(buf, key);
  if (p == NULL) return -1;
  *v = strtoull(p + strlen(key), NULL, 10);
  return 0;
}

static void read_status(int pid, struct procstat *o)
{
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  if (read_small(path, buf, sizeof buf) <= 0) return;
  o->have_ctxt = field_u64(buf, "\nvoluntary_ctxt_switches:", &o->voluntary_ctxt) == 0 &&
                 field_u64(buf, "\nnonvoluntary_ctxt_switches:", &o->involuntary_ctxt) == 0;
}

static void read_fds(int pid, struct procstat *o)
{
  char path[64];
  struct dirent *d;
  DIR *dir;
  snprintf(path, sizeof path, "/proc/%d/fd", pid);
  if ((dir = opendir(path)) == NULL) return;
  o->open_fds = 0;
  while (o->open_fds < MAX_FDS_COUNTED && (d = readdir(dir)) != NULL)
    if (d->d_name[0] != '.') o->open_fds++;
  closedir(dir);
  o->have_fds = 1;
}

static void read_limits(int pid, struct procstat *o)
{
  char path[64], buf[4096], *p;
  snprintf(path, sizeof path, "/proc/%d/limits", pid);
  if (read_small(path, buf, sizeof buf) <= 0 || (p = strstr(buf, "Max open files")) == NULL)
    return;
  p += strlen("Max open files");
  while (*p == ' ') p++;
  if (strncmp(p, "unlimited", 9) == 0) o->max_fds = UINT64_MAX;
  else o->max_fds = strtoull(p, NULL, 10);
  o->have_max_fds = 1;
}

int procstat_read(int pid, struct procstat *out)
{
  memset(out, 0, sizeof *out);
  if (read_stat(pid, out) != 0) return -1;
  read_status(pid, out);
  read_fds(pid, out);
  read_limits(pid, out);
  return 0;
}

int procstat_sees_every_user(void)
{
  char buf[8192], *p;
  unsigned long long eff;
  if (read_small("/proc/self/status", buf, sizeof buf) <= 0 || (p = strstr(buf, "\nCapEff:")) == NULL)
    return 0;
  eff = strtoull(p + strlen("\nCapEff:"), NULL, 16);
  /* CAP_DAC_READ_SEARCH (2): their rings; CAP_SYS_PTRACE (19): their maps
   * and descriptors (the unit's two, contrib/systemd). */
  return (eff >> 2 & 1) && (eff >> 19 & 1);
}
