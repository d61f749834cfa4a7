/* ocgc/cpu.h - CPU samples of another process, taken from outside it: the
 * kernel's cpu-clock software event (Linux perf_event_open(2)) on each of
 * its threads, each sample with its time on CLOCK_MONOTONIC, the thread's
 * user registers and a copy of the top of its user stack, read from one
 * ring buffer per thread that the kernel writes.  No ptrace, no signal, no
 * change to the program: a sample is the kernel's copy, taken when the
 * thread was on a CPU.  ocgc/unwind.h turns a sample into a call stack.
 *
 * Permission is perf's: root, CAP_PERFMON (or CAP_SYS_ADMIN), or
 * /proc/sys/kernel/perf_event_paranoid <= 2 for a process of one's own user
 * (user space only is sampled: exclude_kernel).  A refusal is
 * OCGC_E_PERF_DENIED, and ocgc_cpu_denied_hint() is the one line saying
 * what would allow it.
 *
 * Threads: those of /proc/PID/task at the open, and those started later,
 * found by reading /proc/PID/task again at each ocgc_cpu_read() (a thread
 * that lives less than the time between two reads is not sampled).  A
 * thread that exits is closed once its ring is drained.  A process that
 * execs keeps its events (they follow the thread across exec(2)), but its
 * addresses mean another program's: the sampler stops at the exec
 * (OCGC_CPU_EXECED in the stats, no sample after it is given) and
 * ocgc_cpu_read() returns OCGC_E_STALE from then on, as it does once the
 * process is gone.  A child of fork(2) is another process: not sampled.
 *
 * Bounded: at most max_threads threads (default 64; those past it are
 * counted, not sampled), each with a ring of ring_pages pages (default 64:
 * 256 KiB, some 15 samples of a 16 KiB stack; read the rings at least every
 * 100 ms at 100 Hz, or samples are lost, and counted; where the memory a
 * user may lock for rings runs out, kernel.perf_event_mlock_kb a CPU and
 * then RLIMIT_MEMLOCK, half of that or less, 8 pages at least; past it the
 * thread is not sampled but counted, threads_unmapped: a partial profile,
 * which ocgc_cpu_partial_hint() says in one line), a copy of at most
 * stack_bytes of stack per sample (default 16 KiB).  Memory: max_threads x
 * (ring_pages + 1) pages of rings, and one 64 KiB record buffer.  One
 * ocgc_cpu_read() reads at most what the rings hold when it starts (every
 * record's size checked against the ring before it is read: a corrupt
 * record ends that ring's reading and is counted) and at most max_threads
 * + 1 entries of /proc/PID/task.
 *
 * x86-64 only for now (other machines: -ENOTSUP). */
#ifndef OCGC_PUBLIC_CPU_H
#define OCGC_PUBLIC_CPU_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Registers of a sample, in the DWARF numbering of x86-64 (what the
 * .eh_frame CFI names): rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15,
 * and the return address column 16 (rip). */
#define OCGC_CPU_NREGS 17u
#define OCGC_CPU_REG_SP 7u
#define OCGC_CPU_REG_IP 16u

/** Options of ocgc_cpu_open (0: the default). */
struct ocgc_cpu_opts {
  size_t sz;             /**< OCGC_OPTS_INIT */
  unsigned frequency_hz; /**< samples per second of CPU time per thread
                              (default 100, Go's; at most 10000) */
  unsigned max_threads;  /**< threads sampled at once (default 64, at most 1024) */
  unsigned ring_pages;   /**< pages of each thread's ring, a power of 2
                              (default 64, at most 1024) */
  unsigned stack_bytes;  /**< bytes of user stack copied per sample, a
                              multiple of 8 (default 16384, at most 65000) */
};

/** One sample: the library's memory, valid during the callback. */
struct ocgc_cpu_sample {
  int pid, tid;
  uint64_t time_ns;             /**< CLOCK_MONOTONIC */
  uint64_t ip;                  /**< where the thread was (the kernel's) */
  int regs_known;               /**< 0: the thread was in the kernel with no
                                     user registers (no stack either) */
  uint64_t regs[OCGC_CPU_NREGS]; /**< DWARF numbering (above) */
  const unsigned char *stack;   /**< the copy of [regs[7], regs[7] + stack_size) */
  size_t stack_size;            /**< bytes of it (what the kernel could copy) */
};

/** Figures of a sampler, since its open. */
struct ocgc_cpu_stats {
  size_t sz;                /**< OCGC_OPTS_INIT */
  uint64_t samples;         /**< samples given to callbacks */
  uint64_t lost;            /**< samples the kernel could not write (full ring) */
  uint64_t corrupt;         /**< records that failed the checks (their ring's
                                 reading was cut short) */
  uint64_t threads;         /**< threads sampled now */
  uint64_t threads_seen;    /**< threads ever sampled */
  uint64_t threads_over;    /**< threads found past max_threads, not sampled */
  uint64_t threads_failed;  /**< threads found after the open whose event
                                 could not be opened (a thread that was gone
                                 already is not counted) */
  int flags;                /**< OCGC_CPU_EXECED, OCGC_CPU_GONE, OCGC_CPU_RING_LIMIT */
  uint64_t threads_unmapped; /**< threads of the latest listing not sampled:
                                  no ring fits in the memory this user may
                                  lock (perf_event_mlock_kb) */
  uint64_t rings_smaller;   /**< rings made smaller than ring_pages, to fit it */
};

#define OCGC_CPU_EXECED 1     /**< the process exec'd: sampling stopped there */
#define OCGC_CPU_GONE 2       /**< the process exited */
#define OCGC_CPU_RING_LIMIT 4 /**< threads_unmapped was nonzero at a listing */

struct ocgc_cpu;

/** Start sampling process [pid] (every thread).  [start_time] (from
 * /proc/PID/stat, field 22; 0: not checked) is the process meant: another
 * is OCGC_E_STALE.  Returns 0; OCGC_E_PERF_DENIED; -ESRCH (no such
 * process); OCGC_E_STALE; -EINVAL (bad options); -ENOTSUP (not x86-64, or
 * no perf events or no cpu-clock in this kernel, or no such system call); -EMFILE; -ENOMEM. */
OCGC_API int ocgc_cpu_open(int pid, uint64_t start_time, const struct ocgc_cpu_opts *opts,
                           struct ocgc_cpu **out);

/** Called for each sample; nonzero stops the reading (its value returned). */
typedef int (*ocgc_cpu_sample_fn)(const struct ocgc_cpu_sample *s, void *arg);

/** Read the samples the rings hold now, oldest first within a thread, and
 * look for new threads.  Returns the samples given (>= 0), a callback's
 * nonzero value, or OCGC_E_STALE once the process exec'd or is gone (the
 * samples before that are given first). */
OCGC_API int ocgc_cpu_read(struct ocgc_cpu *c, ocgc_cpu_sample_fn fn, void *arg);

/** Fill *out (its sz set by the caller).  Returns 0 or -EINVAL. */
OCGC_API int ocgc_cpu_stats(const struct ocgc_cpu *c, struct ocgc_cpu_stats *out);

/** One line saying what would allow sampling (the setting and the
 * capability, and this machine's value of the setting), for an error of
 * ocgc_cpu_open; NULL for another error.  Static storage, overwritten by
 * the next call. */
OCGC_API const char *ocgc_cpu_denied_hint(int err);

/** One line saying which threads [st] counts as not sampled, and why
 * (threads_unmapped: the setting, its value here, and what would allow
 * them; threads_over: max_threads), or NULL when every thread found is
 * sampled.  Static storage, overwritten by the next call. */
OCGC_API const char *ocgc_cpu_partial_hint(const struct ocgc_cpu_stats *st);

/** Stop sampling and free [c].  NULL is accepted. */
OCGC_API void ocgc_cpu_close(struct ocgc_cpu *c);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_CPU_H */
