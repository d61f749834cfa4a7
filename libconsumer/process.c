/* process.c - a process's own figures from /proc/PID (ocgc/process.h).
 *
 * Invariants: every file goes through procfs.c's one bounded read into a
 * fixed buffer (a process cannot make us read without end: the fields we
 * want come early); the descriptor count stops at a bound; the command
 * name in /proc/PID/stat is skipped to the last ')', so the fields after
 * it are the kernel's; the boot time is read once per process and kept
 * with a relaxed atomic (two threads that both read it store the same
 * value). */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/process.h"
#include "opts.h"
#include "procfs.h"

#define MAX_FDS_COUNTED (1u << 20)

static uint64_t boot_time_cache; /* atomic: 0 until read (no pairing: a plain value) */

/* The boot time in seconds since the epoch (0: unknown). */
static uint64_t boot_time_s(void)
{
  uint64_t v = __atomic_load_n(&boot_time_cache, __ATOMIC_RELAXED);
  char buf[8192], *p;
  if (v != 0) return v;
  if (ocgc_proc_read_small("/proc/stat", buf, sizeof buf) > 0 &&
      (p = strstr(buf, "\nbtime ")) != NULL)
    v = strtoull(p + 7, NULL, 10);
  __atomic_store_n(&boot_time_cache, v, __ATOMIC_RELAXED);
  return v;
}

/* Fields 4.. of /proc/PID/stat (after the command and the state),
 * counted from 1 as proc(5) does. */
static int read_stat(int pid, struct ocgc_process_figures *o)
{
  char path[64], buf[4096], *p, *end;
  uint64_t f[25] = {0}, tick_ns;
  long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
  int i;
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  if (ocgc_proc_read_small(path, buf, sizeof buf) <= 0 || (p = strrchr(buf, ')')) == NULL)
    return -ESRCH;
  p += 2; /* ") " then the state, field 3 */
  if (*p == '\0') return -ESRCH;
  p++;
  for (i = 4; i < 25; i++) {
    f[i] = strtoull(p, &end, 10);
    if (end == p) return -ESRCH;
    p = end;
  }
  tick_ns = 1000000000u / (uint64_t)(tck > 0 ? tck : 100);
  o->minflt = f[10];
  o->majflt = f[12];
  o->utime_ns = f[14] * tick_ns;
  o->stime_ns = f[15] * tick_ns;
  o->threads = f[20];
  o->start_ticks = f[22];
  if (boot_time_s() > 0) o->start_time_ns = boot_time_s() * 1000000000u + f[22] * tick_ns;
  o->vsize_bytes = f[23];
  o->rss_bytes = f[24] * (uint64_t)(page > 0 ? page : 4096);
  return 0;
}

static int field_u64(const char *buf, const char *key, uint64_t *v)
{
  const char *p = strstr(buf, key);
  if (p == NULL) return -1;
  *v = strtoull(p + strlen(key), NULL, 10);
  return 0;
}

static void read_status(int pid, struct ocgc_process_figures *o)
{
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  if (ocgc_proc_read_small(path, buf, sizeof buf) <= 0) return;
  o->have_ctxt = field_u64(buf, "\nvoluntary_ctxt_switches:", &o->voluntary_ctxt) == 0 &&
                 field_u64(buf, "\nnonvoluntary_ctxt_switches:", &o->involuntary_ctxt) == 0;
}

static void read_fds(int pid, struct ocgc_process_figures *o)
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

static void read_limits(int pid, struct ocgc_process_figures *o)
{
  char path[64], buf[4096], *p;
  snprintf(path, sizeof path, "/proc/%d/limits", pid);
  if (ocgc_proc_read_small(path, buf, sizeof buf) <= 0 ||
      (p = strstr(buf, "Max open files")) == NULL)
    return;
  p += strlen("Max open files");
  while (*p == ' ') p++;
  if (strncmp(p, "unlimited", 9) == 0) o->max_fds = UINT64_MAX;
  else o->max_fds = strtoull(p, NULL, 10);
  o->have_max_fds = 1;
}

int ocgc_process_figures(int pid, struct ocgc_process_figures *out)
{
  struct ocgc_process_figures o;
  int err;
  if (out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  memset(&o, 0, sizeof o);
  o.sz = sizeof o;
  if (pid <= 0 || (err = read_stat(pid, &o)) != 0) return -ESRCH;
  read_status(pid, &o);
  read_fds(pid, &o);
  read_limits(pid, &o);
  return opts_write(out, &o, sizeof o);
}

int ocgc_sees_every_user(void)
{
  char buf[8192], *p;
  unsigned long long eff;
  if (ocgc_proc_read_small("/proc/self/status", buf, sizeof buf) <= 0 ||
      (p = strstr(buf, "\nCapEff:")) == NULL)
    return 0;
  eff = strtoull(p + strlen("\nCapEff:"), NULL, 16);
  /* CAP_DAC_READ_SEARCH (2): their rings; CAP_SYS_PTRACE (19): their maps
   * and descriptors (the unit's two, contrib/systemd). */
  return (eff >> 2 & 1) && (eff >> 19 & 1);
}
