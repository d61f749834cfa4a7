/* ocgc/process.h - a process's own figures from /proc/PID (CPU, memory,
 * descriptors, threads, switches, faults), as Prometheus client libraries
 * export them in their process_* family, and whether this process may
 * look at every user's. */
#ifndef OCGC_PUBLIC_PROCESS_H
#define OCGC_PUBLIC_PROCESS_H

#include <ocgc/api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What /proc/PID says of a process: each figure the kernel's (the one
 * string a process chooses, its command name, is not read here).  What
 * could not be read is left 0 with its have_ flag 0: another user's
 * descriptors without privilege, a kernel without the field. */
struct ocgc_process_figures {
  size_t sz;                      /**< set by the caller: sizeof(struct ocgc_process_figures) */
  uint64_t utime_ns, stime_ns;    /**< CPU time in user and kernel mode */
  uint64_t minflt, majflt;        /**< page faults, minor and major */
  uint64_t threads;               /**< threads now */
  uint64_t start_ticks;           /**< start: clock ticks after boot (with the pid, its identity) */
  uint64_t start_time_ns;         /**< start: ns since the epoch (0: unknown) */
  uint64_t vsize_bytes, rss_bytes; /**< virtual and resident memory */
  int have_ctxt;                  /**< /proc/PID/status gave both counts */
  uint64_t voluntary_ctxt, involuntary_ctxt; /**< context switches */
  int have_fds;                   /**< /proc/PID/fd could be read (ours, or privilege) */
  uint64_t open_fds;              /**< open descriptors, counted up to 2^20 */
  int have_max_fds;               /**< /proc/PID/limits had "Max open files" */
  uint64_t max_fds;               /**< its soft limit (UINT64_MAX: unlimited) */
};

/** Read the figures of process [pid] into *out, as far as out->sz says
 * (OCGC_OPTS_INIT).  Each file is read once, bounded, and parsed as the
 * kernel writes it (the command name in /proc/PID/stat, which may hold
 * spaces and parentheses, is skipped to its last ')').  Returns 0, -ESRCH
 * when /proc/PID/stat cannot be read (no such process), -EINVAL for an
 * out of too small an sz. */
OCGC_API int ocgc_process_figures(int pid, struct ocgc_process_figures *out);

/** Whether this process may look into every user's processes and rings:
 * its effective capabilities hold CAP_SYS_PTRACE (their maps and
 * descriptors) and CAP_DAC_READ_SEARCH (their ring folders); root's do
 * unless taken away.  1 or 0. */
OCGC_API int ocgc_sees_every_user(void);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_PROCESS_H */
