/* ocgc/exit.h - how a watched process ended, and its memory cgroup: what
 * the kernel says of a death (the signal, the status, whether the OOM
 * killer chose it) and the memory figures a recording of it keeps.  Filled
 * by a watch (ocgc/watch.h: ocgc_watched.exit and .memcg) from a pidfd
 * held on each process and from its memory cgroup (v1 or v2). */
#ifndef OCGC_PUBLIC_EXIT_H
#define OCGC_PUBLIC_EXIT_H

#include <stdint.h>

#include <ocgc/api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a process ended, as a metric's `how` label says it
 * (ocgc_exit_how_name). */
enum ocgc_exit_how {
  OCGC_EXIT_UNKNOWN = 0, /**< not ended, or the kernel did not say (see ocgc_exit.known) */
  OCGC_EXIT_EXITED = 1,  /**< it exited (exit status in code), mark or not */
  OCGC_EXIT_KILLED = 2,  /**< a signal ended it (signal), not the OOM killer */
  OCGC_EXIT_OOM = 3      /**< the kernel's OOM killer ended it (SIGKILL) */
};

/** How a process ended. */
struct ocgc_exit {
  /** 1: the kernel said how it ended: pidfd PIDFD_INFO_EXIT (Linux 6.15
   * and later, a pidfd opened while it lived; given once it is reaped), or
   * /proc/PID/stat's exit code read while it was a zombie (any kernel; an
   * exit code of 0 only where the reader may ptrace it: root or its user,
   * since the kernel shows others 0).  0: only that it is gone (an older
   * kernel, a process reaped before the watch looked, or no word within
   * about a second of its ring's end). */
  int known;
  /** enum ocgc_exit_how; with known 0, OCGC_EXIT_EXITED if its exit mark
   * was written (code -1), else OCGC_EXIT_UNKNOWN. */
  int how;
  int code;                /**< its exit status (how OCGC_EXIT_EXITED), else -1 */
  int signal;              /**< the signal that ended it, else 0 */
  int core_dumped;         /**< 1: it dumped core */
  /** 1: the OOM killer chose it: it died of SIGKILL and its memory
   * cgroup's oom_kill counter grew between its last read while the
   * process lived and the read as the watch saw it gone (the host's,
   * /proc/vmstat, when the cgroup has none or was removed before that
   * read).  Several processes of one cgroup killed at once are each said
   * so. */
  int oom_killed;
  /** 1: its producer wrote its exit mark (an ocgc ring whose state is
   * OCGC_STATE_EXITED): it went through the runtime's exit. */
  int exit_mark;
  /** CLOCK_MONOTONIC when the watch saw it gone; 0: it lives (on_gone of
   * a process let go alive, or whose image exec'd, says 0: no end). */
  uint64_t gone_ns;
};

/** The name of [how] for a metric's label: "exited", "killed", "oom",
 * "unknown". */
OCGC_API const char *ocgc_exit_how_name(int how);

/** A process's memory cgroup, as last read (a cgroup removed after the
 * death leaves the figures read before).  Figures in bytes;
 * UINT64_MAX: no limit.  Its path is read from /proc/PID/cgroup when the
 * watch takes the process (v1: the hierarchy whose controllers include
 * memory; else v2's), below a mount of that hierarchy in
 * /proc/self/mountinfo that shows it (else known 0). */
struct ocgc_memcg {
  int known;               /**< 1: its memory cgroup was found and read */
  int v2;                  /**< 1: cgroup v2 (memory.current, memory.max,
                                memory.events); 0: v1 (memory.usage_in_bytes, ...) */
  uint64_t usage;          /**< memory.current / memory.usage_in_bytes */
  uint64_t limit;          /**< memory.max / memory.limit_in_bytes */
  uint64_t peak;           /**< memory.peak / memory.max_usage_in_bytes (0: not kept) */
  uint64_t oom_kills;      /**< memory.events oom_kill / memory.oom_control oom_kill */
  char path[256];          /**< its path in the hierarchy, cut; the cgroup's bytes,
                                to escape */
};

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_EXIT_H */
