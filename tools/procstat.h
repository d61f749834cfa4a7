/* procstat.h - a process's figures from /proc/PID (private to tools/;
 * code in procstat.c), as Prometheus client libraries export them in their
 * process_* family: CPU time, memory, start time, descriptors, threads,
 * context switches and page faults. */
#ifndef OCGC_TOOLS_PROCSTAT_H
#define OCGC_TOOLS_PROCSTAT_H

#include <stdint.h>

struct procstat {
  int have_stat;                  /* /proc/PID/stat read */
  uint64_t utime_ns, stime_ns;    /* CPU time in user and kernel mode */
  uint64_t minflt, majflt;        /* page faults */
  uint64_t threads;
  uint64_t start_ticks;           /* start time: clock ticks after boot */
  uint64_t start_time_ns;         /* start time: ns since the epoch (0: unknown) */
  uint64_t vsize_bytes, rss_bytes;
  int have_ctxt;                  /* /proc/PID/status had both counts */
  uint64_t voluntary_ctxt, involuntary_ctxt;
  int have_fds;                   /* /proc/PID/fd could be read (ours, or root) */
  uint64_t open_fds;
  int have_max_fds;               /* /proc/PID/limits had "Max open files" */
  uint64_t max_fds;               /* its soft limit (UINT64_MAX: unlimited) */
};

/* Read what /proc/PID tells (each file read whole but bounded; what cannot
 * be read is left out, its have_ flag 0).  Returns 0, or -1 if even
 * /proc/PID/stat could not be read (no such process). */
int procstat_read(int pid, struct procstat *out);

/* Whether this process may look into every user's processes and rings:
 * its effective capabilities hold CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH
 * (root's do, unless taken away). */
int procstat_sees_every_user(void);

#endif /* OCGC_TOOLS_PROCSTAT_H */
