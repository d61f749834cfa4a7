/* ocgc_ring.c - the producer ring's setup and cold paths: attaching the
 * writer to a new ring, wrap, overwrite, and the one-writer guard's closing
 * side.
 *
 * Invariants (with ocgc_ring.h): head <= tail; tail - head <= size - 1; head
 * and tail always sit on event boundaries; an event never straddles the end
 * of the ring (a padding record, type 0 id 0, no timestamp, fills the gap);
 * the shared head and the ext block's (head_pos, head_events) are published
 * before any word below the new head is overwritten; head moves only to a
 * mark (ocgc_ring.h), so an overwrite reads nothing from the mapping and
 * takes constant time.  Once caml_ocgc_guard_close() returned 1, no hook
 * writes again. */

#define CAML_INTERNALS
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ocgc_clock.h"
#include "ocgc_ring.h"

struct caml_ocgc_ring caml_ocgc_ring;
struct caml_ocgc_guard caml_ocgc_guard;
/* Here with the writer's other state, not with OCGC_IDS's parsing in
 * ocgc_start.c: the inline emitters read it, and benchmarks/writecost.c
 * links this file alone. */
int caml_ocgc_ids53;
uint64_t caml_ocgc_span_begin_header[CAML_OCGC_PHASE_SLOTS];
struct caml_ocgc_mark caml_ocgc_marks[CAML_OCGC_MARKS];

/* ---- the guard's closing side --------------------------------------------- */

/* membarrier(2)'s commands.  <linux/membarrier.h> declares them as enum
 * values, which no #ifdef can see: a test for them once compiled the
 * expedited barrier out, and every exit paid MEMBARRIER_CMD_GLOBAL, an RCU
 * grace period (9-14 ms).  They are ABI, fixed since Linux 4.14. */
#define MB_GLOBAL 1                        /* MEMBARRIER_CMD_GLOBAL */
#define MB_PRIVATE_EXPEDITED (1 << 3)      /* MEMBARRIER_CMD_PRIVATE_EXPEDITED */
#define MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

/* How long the closer waits for a hook in flight on another thread: a hook
 * takes microseconds, so this is for a mutator preempted mid-hook, or this
 * very thread interrupted inside one (then the wait ends with the bound).
 * An exit waits only in that race.  50 ms was too short for a loaded
 * machine (exit_thread.sh at load 12: one exit in 200 gave up); the naps
 * of the count it replaced lasted about 240 ms in all. */
#define GUARD_WAIT_NS UINT64_C(250000000) /* 250 ms, by the clock */

static int expedited; /* MB_PRIVATE_EXPEDITED is registered for this mm */

/* Registration is per address space (a forked child registers anew), and
 * cheap while the process has one thread, which it has when the runtime
 * starts; it lets the closer's barrier interrupt only the CPUs that run a
 * thread of ours, in microseconds. */
static void guard_prepare(void)
{
  expedited = 0;
#if defined(__NR_membarrier)
  expedited = syscall(__NR_membarrier, MB_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

uint64_t caml_ocgc_proc_stat_field(const char *path, int field)
{
  char buf[1024], *p;
  int f, fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  if (fd >= 0) close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  /* The command name may hold spaces and ')': count after the last ')'. */
  if ((p = strrchr(buf, ')')) == NULL) return 0;
  for (f = 2; *p != '\0' && f < field; p++)
    if (*p == ' ') f++;
  return strtoull(p, NULL, 10);
}

/* The number of threads of this process (field 20), or 0 if unknown. */
static uint64_t own_threads(void)
{
  return caml_ocgc_proc_stat_field("/proc/self/stat", 20);
}

/* Make every other thread of the process execute a full memory barrier.
 * Returns 1 if that was done (or nothing needed it). */
static int process_barrier(void)
{
#if defined(__NR_membarrier)
  /* Microseconds: it interrupts only the CPUs that run a thread of ours. */
  if (expedited && syscall(__NR_membarrier, MB_PRIVATE_EXPEDITED, 0, 0) == 0) return 1;
#endif
  /* Alone, there is no other thread to order: a thread made from now on
   * could only be made by another.  (closed is already stored.) */
  if (own_threads() == 1) return 1;
#if defined(__NR_membarrier)
  /* Registration failed or was denied: the global barrier, an RCU grace
   * period (milliseconds), still correct. */
  if (syscall(__NR_membarrier, MB_GLOBAL, 0, 0) == 0) return 1;
#endif
#if defined(__x86_64__) || defined(__i386__)
  {
    /* No membarrier (an old kernel, or a seccomp filter): take a written
     * page away.  The kernel shoots down its TLB entries with an
     * interrupt on every CPU that runs a thread of ours, and on x86 an
     * interrupt drains the store buffer: the barrier we need. */
    long pg = sysconf(_SC_PAGESIZE);
    volatile char *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok;
    if (p == MAP_FAILED) return 0;
    p[0] = 1;
    ok = mprotect((void *)p, (size_t)pg, PROT_NONE) == 0;
    munmap((void *)p, (size_t)pg);
    return ok;
  }
#else
  return 0;
#endif
}

int caml_ocgc_guard_close(void)
{
  struct caml_ocgc_guard *g = &caml_ocgc_guard;
  struct timespec nap = {0, 20000}; /* 20 us */
  uint64_t deadline;

  __atomic_store_n(&g->closed, 1, __ATOMIC_RELAXED);
  /* Pairs with the compiler barrier in caml_ocgc_hook_enter. */
  if (!process_barrier()) return 0;
  deadline = caml_ocgc_clock_read() + GUARD_WAIT_NS;
  for (;;) {
    /* Acquire: pairs with the release store in caml_ocgc_hook_leave. */
    if (!__atomic_load_n(&g->busy, __ATOMIC_ACQUIRE)) return 1;
    if (caml_ocgc_clock_read() >= deadline) return 0;
    nanosleep(&nap, NULL);
  }
}

/* ---- setup ------------------------------------------------------------------ */

static void fill_span_headers(void)
{
  unsigned id;
  for (id = 0; id < CAML_OCGC_PHASE_SLOTS; id++)
    caml_ocgc_span_begin_header[id] =
      OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, caml_ocgc_ids53 ? ocgc_phase_id_53(id) : id);
}

void caml_ocgc_ring_attach(char *map, const struct ocgc_wire_header *geometry,
                           uint64_t ext_ring_offset)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  guard_prepare();
  memset(r, 0, sizeof *r);
  r->size = geometry->ring_size_elements;
  r->mask = r->size - 1;
  r->rh = (struct ocgc_wire_ring_header *)(map + geometry->headers_offset);
  r->er = (struct ocgc_wire_ext_ring *)(map + ext_ring_offset);
  r->data = (uint64_t *)(map + geometry->data_offset);
  r->block_shift = CAML_OCGC_MIN_BLOCK_SHIFT;
  while ((r->size >> r->block_shift) > CAML_OCGC_MARKS) r->block_shift++;
  r->block_mask = (r->size >> r->block_shift) - 1;
  r->marked_block = ~UINT64_C(0);
  fill_span_headers();
}

void caml_ocgc_ring_detach(void)
{
  memset(&caml_ocgc_ring, 0, sizeof caml_ocgc_ring);
  /* fork() is called by the thread that holds the runtime lock, outside
   * any hook; the exit of a parent's other thread is not ours. */
  caml_ocgc_guard.busy = 0;
  caml_ocgc_guard.closed = 0;
}

/* ---- overwrite -------------------------------------------------------------- */

static void publish_head(struct caml_ocgc_ring *r)
{
  /* Seqlock write: odd, pair, even.  The release fence orders the odd seq
   * before the pair (pairs with the reader's acquire fence before it
   * re-reads seq). */
  __atomic_store_n(&r->er->seq, r->seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&r->er->head_pos, r->head, __ATOMIC_RELAXED);
  __atomic_store_n(&r->er->head_events, r->head_events, __ATOMIC_RELAXED);
  __atomic_store_n(&r->er->written_events, r->written, __ATOMIC_RELAXED);
  /* Release: pairs with the reader's acquire load of head. */
  __atomic_store_n(&r->rh->head, r->head, __ATOMIC_RELEASE);
  r->seq += 2;
  /* Release: pairs with the reader's acquire load of seq. */
  __atomic_store_n(&r->er->seq, r->seq, __ATOMIC_RELEASE);
  /* The old words may be overwritten only once the new head is visible: this
   * fence orders the head store before the event stores that follow it
   * (pairs with the acquire fence a reader issues between copying words and
   * re-loading head).  Stock OCaml 5.2 lacks it. */
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

void caml_ocgc_ring_make_room(struct caml_ocgc_ring *r, uint64_t len)
{
  uint64_t off = r->tail & r->mask;
  uint64_t pad = off + len > r->size ? r->size - off : 0;
  uint64_t head = r->head;

  if (r->tail + pad + len - head > r->mask) {
    /* Room begins at [need].  The mark two blocks on is a batch past it
     * by one to two blocks (the next block's could be a word past it, and
     * the next write would have to make room again).  need lies a whole
     * ring behind tail, so that block was written in the last lap and its
     * mark is current; were it not (nothing that this writer does makes it
     * so), the whole ring goes. */
    uint64_t need = r->tail + pad + len - r->mask;
    uint64_t block = (need >> r->block_shift) + 2;
    const struct caml_ocgc_mark *m = &caml_ocgc_marks[block & r->block_mask];
    if (m->pos >> r->block_shift == block && m->pos >= need && m->pos <= r->tail) {
      head = m->pos;
      r->head_events = m->events;
    } else {
      head = r->tail;
      r->head_events = r->written;
    }
  }
  if (head != r->head) {
    r->head = head;
    publish_head(r);
  }
  if (pad) {
    __atomic_store_n(&r->data[off], OCGC_EV_HEADER(pad, 0, OCGC_RT_PADDING, 0),
                     __ATOMIC_RELAXED);
    r->tail += pad;
    /* The padding becomes visible with the next event's tail store. */
  }
}
