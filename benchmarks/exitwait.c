/* exitwait.c - `make bench`, part 5: how long the exit handler waits to own
 * the ring (caml_ocgc_guard_close, runtime_patch/src/ocgc_ring.c, linked in
 * alone, as in writecost.c).  The closer stores "closed", makes every
 * thread of the process run a memory barrier, then waits for a hook in
 * progress on another thread to leave, at most GUARD_WAIT_NS (250 ms) by
 * the clock.  Three cases, each timed from the call to its return:
 * - alone: one thread, no hook in progress (every exit of a program that
 *   never made a thread);
 * - threads: other threads running, none in a hook (every exit of a
 *   threaded program, nearly always);
 * - stuck: another thread inside a hook that never leaves (a mutator
 *   preempted or stopped mid-hook; or the exiting thread interrupted in
 *   one): the wait's real bound, which the machine's load and the kernel's
 *   timer slack stretch past 250 ms;
 * - loaded: the same with a spinning thread per CPU.
 * Prints the median and the range of each, in microseconds; exits 0.
 * Usage: exitwait [ROUNDS] (default 20; stuck is run 5 times). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#endif
#define CAML_INTERNALS
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ocgc_clock.h"
#include "ocgc_ring.h"

static double now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A ring to attach to: caml_ocgc_ring_attach prepares the barrier. */
static void attach(void)
{
  struct ocgc_wire_header g = {.version = OCGC_WIRE_VERSION};
  size_t bytes = (size_t)ocgc_wire_layout(&g, 1, UINT64_C(1) << 10, ocgc_wire_ext_size(1));
  char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    perror("exitwait: mmap");
    exit(0);
  }
  memcpy(map, &g, sizeof g);
  caml_ocgc_ring_attach(map, &g, OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext));
}

/* One close, from an open guard; returns its time, and what it returned. */
static double close_once(int *owned)
{
  double t0;
  __atomic_store_n(&caml_ocgc_guard.closed, 0, __ATOMIC_SEQ_CST);
  t0 = now_us();
  *owned = caml_ocgc_guard_close();
  return now_us() - t0;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n, int owned, const char *note)
{
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("  %-8s median %10.1f us  range %.1f..%.1f us  (%d closes, %d owned the ring)  %s\n", what,
         t[n / 2], t[0], t[n - 1], n, owned, note);
}

static volatile int stop_spinning;

/* Another thread of the process, running (so the barrier has a CPU to
 * interrupt), never in a hook. */
static void *spin(void *arg)
{
  (void)arg;
  while (!stop_spinning) __asm__ volatile("" ::: "memory");
  return NULL;
}

/* Another thread that enters a hook and stays in it. */
static void *stuck_in_hook(void *arg)
{
  (void)arg;
  caml_ocgc_hook_enter();
  while (!stop_spinning) __asm__ volatile("" ::: "memory");
  caml_ocgc_hook_leave();
  return NULL;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 20, i, owned, total;
  double *t;
  pthread_t th;

  if (rounds < 1 || rounds > 100000) rounds = 20;
  t = calloc((size_t)rounds, sizeof *t);
  if (t == NULL) return 0;
  attach();

  for (i = 0, total = 0; i < rounds; i++) t[i] = close_once(&owned), total += owned;
  report("alone", t, rounds, total, "(one thread, no hook)");

  stop_spinning = 0;
  if (pthread_create(&th, NULL, spin, NULL) == 0) {
    for (i = 0, total = 0; i < rounds; i++) t[i] = close_once(&owned), total += owned;
    stop_spinning = 1;
    pthread_join(th, NULL);
    report("threads", t, rounds, total, "(another thread running, no hook)");
  }

  stop_spinning = 0;
  __atomic_store_n(&caml_ocgc_guard.closed, 0, __ATOMIC_SEQ_CST); /* let it in */
  if (pthread_create(&th, NULL, stuck_in_hook, NULL) == 0) {
    /* until the thread is inside */
    while (!__atomic_load_n(&caml_ocgc_guard.busy, __ATOMIC_ACQUIRE)) {
    }
    for (i = 0, total = 0; i < 5; i++) t[i] = close_once(&owned), total += owned;
    stop_spinning = 1;
    pthread_join(th, NULL);
    report("stuck", t, 5, total, "(another thread in a hook that never leaves: the bound)");
  }

  /* The same with every CPU busy: a thread that spins per CPU. */
  {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), k, made = 0;
    pthread_t *hogs = calloc((size_t)(cpus > 0 && cpus < 256 ? cpus : 1), sizeof *hogs);
    stop_spinning = 0;
    __atomic_store_n(&caml_ocgc_guard.closed, 0, __ATOMIC_SEQ_CST);
    if (hogs != NULL && pthread_create(&th, NULL, stuck_in_hook, NULL) == 0) {
      for (k = 0; k < cpus && k < 256; k++)
        if (pthread_create(&hogs[made], NULL, spin, NULL) == 0) made++;
      while (!__atomic_load_n(&caml_ocgc_guard.busy, __ATOMIC_ACQUIRE)) {
      }
      for (i = 0, total = 0; i < 5; i++) t[i] = close_once(&owned), total += owned;
      stop_spinning = 1;
      pthread_join(th, NULL);
      for (k = 0; k < made; k++) pthread_join(hogs[k], NULL);
      report("loaded", t, 5, total, "(the same, every CPU busy with a spinning thread)");
    }
    free(hogs);
  }
  free(t);
  return 0;
}
