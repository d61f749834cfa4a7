/* cpu_sampler.c - CPU samples of another process from outside it
 * (ocgc/cpu.h): one perf_event (software cpu-clock, user space only) per
 * thread, each with its own mmap'd ring, whose records cpu_ring.c reads.
 *
 * Invariants:
 * - at most max_threads events open, each ring (ring_pages + 1) pages or,
 *   where the memory a user may lock for rings runs out
 *   (kernel.perf_event_mlock_kb, then RLIMIT_MEMLOCK: mmap's EPERM), half,
 *   a quarter, ... of that, down to MIN_RING_PAGES (4 mmaps a thread at
 *   most with the default 64 pages, 8 with 1024); past that a thread is
 *   not sampled, and counted (threads_unmapped), and no other is tried in
 *   that listing: one thread's failed mmaps a read at most; the
 *   threads are /proc/PID/task's, listed again at each read, at most
 *   MAX_TASK_ENTRIES entries a listing (a process with more threads is
 *   sampled on the first it lists);
 * - a ring is read from the tail we last wrote to the head the kernel
 *   published when its reading began (acquire load of data_head, pairs with
 *   the kernel's release of it in perf_output_put_handle), and the tail is
 *   handed back (release store of data_tail, pairs with the kernel's read
 *   of it before it writes over: perf_output_begin's barrier) only after
 *   the records are copied out; a ring that fails cpu_ring.c's checks is
 *   skipped to that head whole (its records are counted corrupt, not read);
 * - after an exec record (PERF_RECORD_COMM with the exec bit) no sample is
 *   given: the addresses after it are another program's;
 * - the process is the one opened (pid and start time), checked at each
 *   listing: a pid reused is OCGC_E_STALE, never sampled. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpu_ring.h"
#include "ocgc/cpu.h"
#include "opts.h"
#include "procfs.h"

#define MAX_TASK_ENTRIES 4096u
#define MIN_RING_PAGES 8u /* two samples of a 16 KiB stack */
#define RING_LIMIT 1      /* thr_open: no ring within the lockable memory */

struct thr {
  int tid, fd;
  unsigned char *base; /* the metadata page, then the ring */
  size_t ring_bytes;   /* the ring's, a power of 2 (smaller than asked
                          where the lockable memory ran out) */
  uint64_t tail;
  int exited;          /* an exit record was read: closed once drained */
  int listed;          /* seen in the latest listing */
};

struct ocgc_cpu {
  int pid;
  uint64_t start_time;
  struct perf_event_attr attr;
  unsigned max_threads;
  size_t page, ring_bytes; /* the ring asked for */
  struct thr *t;
  size_t nt;
  unsigned char *buf; /* CPU_REC_MAX: one record copied out */
  struct ocgc_cpu_stats st;
  int stopped;        /* exec'd or gone: no more samples */
};

static int perf_open(struct perf_event_attr *a, int tid)
{
  return (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int denied(int e)
{
  return e == EACCES || e == EPERM;
}

/* Open thread [tid]'s event and ring: 0, -ESRCH (gone), RING_LIMIT (the
 * event opened, but no ring of MIN_RING_PAGES fits in what this user may
 * lock), or another error. */
static int thr_open(struct ocgc_cpu *c, int tid)
{
  struct thr *t = &c->t[c->nt];
  void *m = MAP_FAILED;
  size_t ring = c->ring_bytes;
  int fd = perf_open(&c->attr, tid), e = 0;
  if (fd < 0) {
    e = errno;
    if (denied(e)) return OCGC_E_PERF_DENIED;
    if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP || e == ENOSYS) return -ENOTSUP;
    return -e;
  }
  /* EPERM from mmap: over perf_event_mlock_kb (a CPU) and RLIMIT_MEMLOCK,
   * for one without CAP_IPC_LOCK; a smaller ring may still fit */
  for (;;) {
    m = mmap(NULL, ring + c->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED || !denied(e = errno) || ring / 2 < MIN_RING_PAGES * c->page) break;
    ring /= 2;
  }
  if (m == MAP_FAILED) {
    close(fd);
    return denied(e) ? RING_LIMIT : -e;
  }
  if (ring < c->ring_bytes) c->st.rings_smaller++;
  memset(t, 0, sizeof *t);
  t->tid = tid;
  t->fd = fd;
  t->base = m;
  t->ring_bytes = ring;
  t->listed = 1;
  c->nt++;
  c->st.threads_seen++;
  return 0;
}

static void thr_close(struct ocgc_cpu *c, size_t i)
{
  struct thr *t = &c->t[i];
  munmap(t->base, t->ring_bytes + c->page);
  close(t->fd);
  c->t[i] = c->t[--c->nt];
}

/* List /proc/PID/task: open the new threads, close those gone (drained
 * before, by the caller).  Returns 0, or an error of the first thread
 * (the open's only: later, a thread that cannot be opened is counted). */
static int scan(struct ocgc_cpu *c, int first)
{
  char path[64];
  struct ocgc_proc_ident id;
  struct dirent *d;
  DIR *dir;
  size_t i;
  unsigned entries = 0, over = 0, unmapped = 0;
  int err = 0;
  if ((err = ocgc_proc_ident(c->pid, &id)) == 0 && c->start_time != 0 &&
      id.start_time != c->start_time)
    err = OCGC_E_STALE;
  if (err != 0) {
    c->stopped = 1;
    c->st.flags |= OCGC_CPU_GONE;
    return first ? err : 0;
  }
  snprintf(path, sizeof path, "/proc/%d/task", c->pid);
  if ((dir = opendir(path)) == NULL) return first ? -errno : 0;
  for (i = 0; i < c->nt; i++) c->t[i].listed = 0;
  while ((d = readdir(dir)) != NULL && entries++ < MAX_TASK_ENTRIES) {
    int tid = ocgc_proc_pid_name(d->d_name), r;
    for (i = 0; i < c->nt && c->t[i].tid != tid; i++) {}
    if (tid == 0) continue;
    if (i < c->nt) {
      c->t[i].listed = 1;
      continue;
    }
    if (c->nt >= c->max_threads) {
      over++;
      continue;
    }
    if (unmapped > 0) { /* the limit is reached: not tried again now */
      unmapped++;
      continue;
    }
    r = thr_open(c, tid);
    if (r == -ESRCH) continue;
    /* the first thread without a ring is the open's refusal; a later one,
     * a partial profile */
    if (r == RING_LIMIT && (!first || c->nt > 0)) {
      unmapped++;
      continue;
    }
    if (r == RING_LIMIT) r = OCGC_E_PERF_DENIED;
    if (r != 0) {
      if (first && err == 0) err = r;
      c->st.threads_failed++;
    }
  }
  closedir(dir);
  c->st.threads_over = over;
  c->st.threads_unmapped = unmapped;
  if (unmapped > 0) c->st.flags |= OCGC_CPU_RING_LIMIT;
  if (first && err != 0) return err;
  for (i = c->nt; i-- > 0;)
    if (!c->t[i].listed || c->t[i].exited) thr_close(c, i);
  c->st.threads = c->nt;
  return 0;
}

int ocgc_cpu_open(int pid, uint64_t start_time, const struct ocgc_cpu_opts *opts,
                  struct ocgc_cpu **out)
{
  struct ocgc_cpu_opts o;
  struct ocgc_cpu *c;
  long page = sysconf(_SC_PAGESIZE);
  int err;
  *out = NULL;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
#if !defined(__x86_64__)
  (void)pid;
  (void)start_time;
  return -ENOTSUP;
#else
  if (pid <= 0 || page <= 0) return -EINVAL;
  if (o.frequency_hz == 0) o.frequency_hz = 100;
  if (o.max_threads == 0) o.max_threads = 64;
  if (o.ring_pages == 0) o.ring_pages = 64;
  if (o.stack_bytes == 0) o.stack_bytes = 16384;
  if (o.frequency_hz > 10000 || o.max_threads > 1024 || o.ring_pages > 1024 ||
      (o.ring_pages & (o.ring_pages - 1)) != 0 || o.stack_bytes > 65000 || (o.stack_bytes & 7) != 0)
    return -EINVAL;
  if ((c = calloc(1, sizeof *c)) == NULL) return -ENOMEM;
  c->pid = pid;
  c->start_time = start_time;
  c->max_threads = o.max_threads;
  c->page = (size_t)page;
  c->ring_bytes = (size_t)o.ring_pages * c->page;
  c->st.sz = sizeof c->st;
  c->attr.size = sizeof c->attr;
  c->attr.type = PERF_TYPE_SOFTWARE;
  c->attr.config = PERF_COUNT_SW_CPU_CLOCK;
  c->attr.freq = 1;
  c->attr.sample_freq = o.frequency_hz;
  c->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                        PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  c->attr.sample_regs_user = CPU_REGS_MASK;
  c->attr.sample_stack_user = o.stack_bytes;
  c->attr.exclude_kernel = 1; /* what perf_event_paranoid 2 allows */
  c->attr.exclude_hv = 1;
  c->attr.use_clockid = 1;
  c->attr.clockid = CLOCK_MONOTONIC;
  c->attr.comm = 1;
  c->attr.comm_exec = 1;
  c->attr.task = 1;
  c->t = calloc(o.max_threads, sizeof *c->t);
  c->buf = malloc(CPU_REC_MAX);
  if (c->t == NULL || c->buf == NULL) {
    ocgc_cpu_close(c);
    return -ENOMEM;
  }
  if ((err = scan(c, 1)) != 0 || (err = c->nt == 0 ? -ESRCH : 0) != 0) {
    ocgc_cpu_close(c);
    return err;
  }
  *out = c;
  return 0;
#endif
}

/* Read thread [t]'s ring up to the head published now. */
static int drain(struct ocgc_cpu *c, struct thr *t, ocgc_cpu_sample_fn fn, void *arg, int *given)
{
  struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)t->base;
  struct cpu_ring r;
  struct ocgc_cpu_sample s;
  int n, rv = 0;
  r.data = t->base + c->page;
  r.size = t->ring_bytes;
  r.head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  while ((n = cpu_ring_next(&r, &t->tail, c->buf)) > 0) {
    uint32_t type;
    uint16_t misc;
    memcpy(&type, c->buf, 4);
    memcpy(&misc, c->buf + 4, 2);
    if (type == CPU_REC_SAMPLE) {
      if (cpu_ring_sample(c->buf, (size_t)n, &s) != 0) {
        c->st.corrupt++;
      } else if (!c->stopped) {
        c->st.samples++;
        (*given)++;
        if ((rv = fn(&s, arg)) != 0) break;
      }
    } else if (type == CPU_REC_LOST) {
      c->st.lost += cpu_ring_lost(c->buf, (size_t)n);
    } else if (type == CPU_REC_COMM && (misc & CPU_MISC_COMM_EXEC) != 0) {
      c->stopped = 1;
      c->st.flags |= OCGC_CPU_EXECED;
    } else if (type == CPU_REC_EXIT) {
      t->exited = 1;
    }
  }
  if (n < 0) {
    c->st.corrupt++;
    t->tail = r.head;
  }
  __atomic_store_n(&meta->data_tail, t->tail, __ATOMIC_RELEASE);
  return rv;
}

int ocgc_cpu_read(struct ocgc_cpu *c, ocgc_cpu_sample_fn fn, void *arg)
{
  size_t i;
  int given = 0, rv;
  if (c == NULL || fn == NULL) return -EINVAL;
  for (i = 0; i < c->nt; i++)
    if ((rv = drain(c, &c->t[i], fn, arg, &given)) != 0) return rv;
  if (!c->stopped) scan(c, 0);
  if (c->stopped) {
    /* what the rings still hold predates the end: given, then stale */
    for (i = 0; i < c->nt; i++)
      if ((rv = drain(c, &c->t[i], fn, arg, &given)) != 0) return rv;
    if (given == 0) return OCGC_E_STALE;
  }
  return given;
}

int ocgc_cpu_stats(const struct ocgc_cpu *c, struct ocgc_cpu_stats *out)
{
  if (c == NULL) return -EINVAL;
  return opts_write(out, &c->st, sizeof c->st);
}

const char *ocgc_cpu_denied_hint(int err)
{
  static char line[400];
  char v[32] = "unknown";
  ssize_t n;
  if (err != OCGC_E_PERF_DENIED) return NULL;
  n = ocgc_proc_read_small("/proc/sys/kernel/perf_event_paranoid", v, sizeof v);
  if (n > 0 && v[n - 1] == '\n') v[n - 1] = '\0';
  if (n <= 0) snprintf(v, sizeof v, "unknown");
  snprintf(line, sizeof line,
           "CPU sampling needs root, or the capability CAP_PERFMON (CAP_SYS_ADMIN before "
           "Linux 5.8), or sysctl kernel.perf_event_paranoid=2 or lower to sample one's own "
           "processes (it is %s here), and its rings within kernel.perf_event_mlock_kb or "
           "CAP_IPC_LOCK",
           v);
  return line;
}

const char *ocgc_cpu_partial_hint(const struct ocgc_cpu_stats *st)
{
  static char line[512];
  char v[32] = "unknown";
  ssize_t n;
  size_t at = 0;
  if (st == NULL || (st->threads_over == 0 && st->threads_unmapped == 0)) return NULL;
  line[0] = '\0';
  if (st->threads_unmapped > 0) {
    n = ocgc_proc_read_small("/proc/sys/kernel/perf_event_mlock_kb", v, sizeof v);
    if (n > 0 && v[n - 1] == '\n') v[n - 1] = '\0';
    if (n <= 0) snprintf(v, sizeof v, "unknown");
    at = (size_t)snprintf(line, sizeof line,
                          "%llu threads not sampled: their rings would pass the memory this "
                          "user may lock (kernel.perf_event_mlock_kb, %s KiB a CPU here, then "
                          "RLIMIT_MEMLOCK); root, CAP_IPC_LOCK, a larger setting or smaller "
                          "rings would sample them",
                          (unsigned long long)st->threads_unmapped, v);
  }
  if (st->threads_over > 0 && at < sizeof line)
    snprintf(line + at, sizeof line - at, "%s%llu threads not sampled: past max_threads",
             at > 0 ? "; " : "", (unsigned long long)st->threads_over);
  return line;
}

void ocgc_cpu_close(struct ocgc_cpu *c)
{
  if (c == NULL) return;
  while (c->nt > 0) thr_close(c, c->nt - 1);
  free(c->t);
  free(c->buf);
  free(c);
}
