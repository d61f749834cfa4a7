/* writecost.c - `make bench`, part 4: what one event costs the producer to
 * write when the ring is full, so that writes overwrite old events.
 *
 * What is measured: the producer's own writer, one event at a time
 * (caml_ocgc_emit_span/counter: reserve, put, commit from ocgc_ring.h,
 * inlined here as the runtime inlines them) and the cold path it calls,
 * caml_ocgc_ring_make_room() from ocgc_ring.c, which is linked in from
 * WRITECOST_RING_C (default: the tree's runtime_patch/src/ocgc_ring.c), so
 * that an older writer can be measured the same way if it has the same
 * caml_ocgc_ring_attach and emit functions (no guard).
 *
 * How: a ring of 2^16 words (the runtime's default; -s LOG2) in an anonymous
 * shared mapping laid out as ocgc_file.c lays out the file (header, ext
 * block, ring header, data, names), so data sits at the same offset within
 * its cache lines.  It is filled until the writer overwrites, then for two
 * more ring lengths (the overwrite's steady state).  Then N events (-n,
 * default 2,000,000) are written and each one is timed: 2/3 spans (2 words,
 * caml_ocgc_emit_span) and 1/3 counters (3 words, caml_ocgc_emit_counter) in
 * a fixed pseudo-random order.  Timer: lfence;rdtsc;lfence before and
 * rdtscp;lfence after, minus the median of an empty timed region; cycles to
 * ns at the TSC rate measured against CLOCK_MONOTONIC over the whole run.
 * No mfence inside the region: a write costs the program the instructions it
 * retires and the loads it waits for; its stores drain in the background, as
 * in the runtime.
 *
 * Modes:
 *   warm  back-to-back writes;
 *   cold  before each write, outside the timed region, clflush every data
 *         line the write can touch: the writer's struct, the ring header, the
 *         ext ring record (seqlock), the event's words and, when the write
 *         will make room, the ring words from head on, as far as one write
 *         moved head in the warm run (+2 lines: what an older writer walks;
 *         the current one reads its private marks instead); then mfence.  That is the
 *         state after a GC phase has streamed through more than the caches
 *         hold.  Code, TLB and branch predictors stay warm: a lower bound.
 *
 * Prints p50 p90 p99 p99.9 p99.99 max and mean in ns per event for each mode,
 * and head publications per 1000 events.  Exits 1 only if the ring is
 * inconsistent afterwards (a broken writer or harness). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS, getopt under -std=c11 */
#endif
#define CAML_INTERNALS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ocgc_clock.h" /* <x86intrin.h> on x86-64 */
#include "ocgc_ring.h"

/* ---- timer ------------------------------------------------------------------ */

#if defined(__x86_64__)
#define HAVE_CLFLUSH 1
/* The lfences keep the write from starting before the first read and the
 * second read from starting before the write's loads are done; the "memory"
 * clobbers keep the compiler from moving the write out of the region. */
static inline uint64_t t_begin(void)
{
  uint32_t lo, hi;
  __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
  return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t t_end(void)
{
  uint32_t lo, hi, aux;
  __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
  (void)aux;
  return ((uint64_t)hi << 32) | lo;
}
static inline void flush(const void *p) { _mm_clflush(p); }
static inline void fence(void) { __asm__ volatile("mfence" ::: "memory"); }
#else
/* Elsewhere: the clock itself (ns "cycles"), and no cold mode. */
#define HAVE_CLFLUSH 0
static inline uint64_t t_begin(void)
{
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return caml_ocgc_clock_read();
}
static inline uint64_t t_end(void)
{
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return caml_ocgc_clock_read();
}
#endif

/* ---- the ring, as ocgc_file.c makes it ------------------------------------- */

static void make_ring(unsigned log2)
{
  uint64_t words = UINT64_C(1) << log2;
  struct ocgc_wire_header g = {.version = OCGC_WIRE_VERSION}, *h;
  size_t bytes = (size_t)ocgc_wire_layout(&g, 1, words, ocgc_wire_ext_size(1));
  char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) { perror("writecost: mmap"); exit(1); }
  h = (struct ocgc_wire_header *)map;
  *h = g;
  caml_ocgc_ring_attach(map, h, OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext));
}

/* ---- events ------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15u, ts = 1000000;

/* Length of the next event (drawn outside the timed region). */
static unsigned next_len(void)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; /* xorshift64 */
  return rng % 3 == 0 ? 3 : 2;
}

static inline void emit(unsigned len)
{
  ts += 17;
  if (len == 2) caml_ocgc_emit_span((int)(ts & 1), OCGC_PH_MINOR_LOCAL_ROOTS, ts);
  else caml_ocgc_emit_counter(OCGC_CT_MINOR_PROMOTED, ts, ts);
}

/* ---- cold mode ---------------------------------------------------------------- */

#if HAVE_CLFLUSH
/* Flush the lines of ring words [from, to) (counters, taken mod size).
 * Data is not line-aligned (as in the file), so step one line (8 words) from
 * the first word and flush the last word's line explicitly. */
static void flush_words(uint64_t from, uint64_t to)
{
  const struct caml_ocgc_ring *r = &caml_ocgc_ring;
  for (uint64_t c = from; c < to; c += 8) flush(&r->data[c & r->mask]);
  flush(&r->data[(to - 1) & r->mask]);
}

/* Evict what the next write of [len] words can touch (see the top). */
static void evict(unsigned len, uint64_t walk)
{
  const struct caml_ocgc_ring *r = &caml_ocgc_ring;
  uint64_t off = r->tail & r->mask, tail = r->tail, head = r->head;
  /* The writer's own test for calling make_room. */
  int room = off + len > r->size || tail + len - head > r->mask;
  flush_words(tail, tail + len);
  if (off + len > r->size) flush_words(0, len); /* it wraps to the start */
  if (room) flush_words(head, head + walk + 16);
  flush(r->rh);
  flush(r->er);
  flush(r);
  flush((const char *)r + sizeof *r - 1);
  fence();
}
#endif

/* ---- one mode ----------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Times n writes into t[]; returns the head publications; *walk: the most
 * words one write moved head (warm), or the walk to flush (cold). */
static uint64_t run(uint32_t *t, size_t n, int cold, uint64_t *walk)
{
  uint64_t seq0 = caml_ocgc_ring.seq;
  for (size_t i = 0; i < n; i++) {
    unsigned len = next_len();
    uint64_t h0 = caml_ocgc_ring.head, a, b;
#if HAVE_CLFLUSH
    if (cold) evict(len, *walk);
#endif
    a = t_begin();
    emit(len);
    b = t_end();
    t[i] = b - a > UINT32_MAX ? UINT32_MAX : (uint32_t)(b - a);
    if (!cold && caml_ocgc_ring.head - h0 > *walk) *walk = caml_ocgc_ring.head - h0;
  }
  return (caml_ocgc_ring.seq - seq0) / 2; /* seq moves by 2 per publication */
}

static void report(const char *mode, uint32_t *t, size_t n, uint64_t pubs,
                   uint64_t overhead, double ns_per_tick)
{
  static const double ps[] = {0.50, 0.90, 0.99, 0.999, 0.9999};
  double sum = 0;
  size_t slow = 0;
  qsort(t, n, sizeof *t, cmp_u32);
  printf("| %-4s | %zu |", mode, n);
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    size_t k = (size_t)(ps[i] * (double)n + 0.999999); /* nearest rank */
    uint64_t v = t[k ? k - 1 : 0];
    printf(" %.1f |", (double)(v > overhead ? v - overhead : 0) * ns_per_tick);
  }
  for (size_t i = 0; i < n; i++) {
    double v = (double)(t[i] > overhead ? t[i] - overhead : 0) * ns_per_tick;
    sum += v;
    if (v > 10000) slow++;
  }
  printf(" %.1f | %.2f | %.2f | %zu |\n",
         (double)(t[n - 1] > overhead ? t[n - 1] - overhead : 0) * ns_per_tick,
         sum / (double)n, 1000.0 * (double)pubs / (double)n, slow);
}

/* Walk the ring from head to tail: events must tile it exactly, and the
 * shared header must say what the writer's copies say. */
static int ring_ok(void)
{
  const struct caml_ocgc_ring *r = &caml_ocgc_ring;
  uint64_t c = r->head;
  if (r->tail - r->head > r->mask || r->rh->head != r->head || r->rh->tail != r->tail ||
      r->er->head_pos != r->head || (r->er->seq & 1))
    return 0;
  while (c < r->tail) {
    uint64_t l = OCGC_EV_LENGTH(r->data[c & r->mask]);
    if (l == 0 || l > r->tail - c) return 0;
    c += l;
  }
  return c == r->tail;
}

int main(int argc, char **argv)
{
  unsigned log2 = 16;
  size_t n = 2000000;
  uint64_t walk = 0, overhead, pubs, tsc0, tsc1, ns0, ns1;
  uint32_t *t;
  double ns_per_tick = 1.0;
  int opt;

  while ((opt = getopt(argc, argv, "s:n:")) != -1) {
    if (opt == 's') log2 = (unsigned)strtoul(optarg, NULL, 10);
    else if (opt == 'n') n = (size_t)strtoull(optarg, NULL, 10);
    else { fprintf(stderr, "usage: %s [-s RING_LOG2 (10..28)] [-n EVENTS]\n", argv[0]); return 2; }
  }
  if (log2 < 10 || log2 > 28 || n < 1) { fprintf(stderr, "writecost: bad -s or -n\n"); return 2; }
  t = malloc(n * sizeof *t);
  if (t == NULL) { perror("writecost: malloc"); return 1; }

  ns0 = caml_ocgc_clock_read();
  tsc0 = t_begin();
  make_ring(log2);
  /* Fill until the first overwrite, then two ring lengths more. */
  while (caml_ocgc_ring.head == 0) emit(next_len());
  for (uint64_t end = caml_ocgc_ring.tail + 2 * caml_ocgc_ring.size; caml_ocgc_ring.tail < end;)
    emit(next_len());

  /* The timer's own cost: median of an empty timed region. */
  for (size_t i = 0; i < 100000 && i < n; i++) {
    uint64_t a = t_begin(), b = t_end();
    t[i] = (uint32_t)(b - a);
  }
  qsort(t, n < 100000 ? n : 100000, sizeof *t, cmp_u32);
  overhead = t[(n < 100000 ? n : 100000) / 2];

  /* Warm first: it also tells cold mode how far one overwrite walks. */
  pubs = run(t, n, 0, &walk);
  /* At least 20 ms between the two clock readings, for a good rate. */
  while ((ns1 = caml_ocgc_clock_read()) - ns0 < 20000000) continue;
  tsc1 = t_end();
#if HAVE_CLFLUSH
  if (tsc1 > tsc0 && ns1 > ns0) ns_per_tick = (double)(ns1 - ns0) / (double)(tsc1 - tsc0);
  printf("TSC %.3f GHz (measured against CLOCK_MONOTONIC); timer overhead %llu cycles = %.1f ns "
         "(median of an empty timed region), subtracted\n",
         1.0 / ns_per_tick, (unsigned long long)overhead, (double)overhead * ns_per_tick);
#else
  printf("timer: CLOCK_MONOTONIC (no TSC); overhead %llu ns, subtracted\n",
         (unsigned long long)overhead);
#endif
  printf("ring 2^%u words (%llu KiB), full; %zu events per mode, 2/3 spans (2 words) and 1/3 "
         "counters (3 words); one overwrite moves head by up to %llu words\n",
         log2, (unsigned long long)(caml_ocgc_ring.size / 128), n, (unsigned long long)walk);
#if defined(__SANITIZE_ADDRESS__)
  printf("(built with AddressSanitizer: the figures mean nothing)\n");
#endif
  printf("\n| mode | events | p50 ns | p90 ns | p99 ns | p99.9 ns | p99.99 ns | max ns | mean ns "
         "| head publications /1000 events | over 10 us |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  report("warm", t, n, pubs, overhead, ns_per_tick);
#if HAVE_CLFLUSH
  pubs = run(t, n, 1, &walk);
  report("cold", t, n, pubs, overhead, ns_per_tick);
  printf("\nwarm: back-to-back writes.  cold: before each write, clflush of the writer's struct, "
         "the ring header, the ext ring record, the event's lines and, when it makes room, the "
         "ring words from head that an older writer walks (%llu); then mfence (code, TLB, "
         "branch predictors stay warm).\n", (unsigned long long)walk + 16);
#else
  printf("| cold | n/a: needs x86-64 clflush |\n");
#endif
  /* An interrupt or a preemption inside a timed region adds microseconds
   * to that one sample; they hit a few samples in 10^4 on a busy machine. */
  printf("over 10 us: samples that took longer, mostly interrupts or preemption; only %zu "
         "samples lie above p99.99, so p99.99 shows the machine, not the writer, when they "
         "approach that many.\n", n - (size_t)(0.9999 * (double)n + 0.999999));
  free(t);
  if (!ring_ok()) { printf("ring check: FAILED (the ring does not tile from head to tail)\n"); return 1; }
  printf("ring check: ok (events tile the ring from head to tail; shared header agrees)\n");
  return 0;
}
