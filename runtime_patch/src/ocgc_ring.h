/* ocgc_ring.h - the producer's ring writer (private to runtime/ocgc_*.c).
 *
 * One writer per ring: every hook that writes holds the OCaml 4 runtime lock
 * and brackets its writes with caml_ocgc_hook_enter/leave; the exit handler,
 * which may run on a thread that does not hold the lock, writes only after
 * caml_ocgc_guard_close() has shut the hooks out (see the guard below).  The
 * writer keeps its own copies of head, tail and the event counts and never
 * reads them back from the shared mapping, so nothing a reader (or anyone
 * else) writes into the file can steer the writer's pointers; when the ring
 * is full it frees whole batches of old events found in its own private
 * index (the marks below), never by reading old words back.  The hot path
 * is reserve/put/commit below: no system call (timestamps are a TSC read,
 * see ocgc_clock.h), no allocation, no lock, no loop. */
#ifndef CAML_OCGC_RING_H
#define CAML_OCGC_RING_H

#include <stdint.h>

#include "ocgc/wire.h"

/* The most words one hook writes at once (ocgc_hooks.c's batches). */
#define CAML_OCGC_BATCH_MAX 16u

struct caml_ocgc_ring {
  uint64_t *data;          /* ring words in the mapping; NULL when no ring */
  uint64_t size;           /* words, a power of two */
  uint64_t mask;           /* size - 1 */
  uint64_t head, tail;     /* writer's copies of the ring header counters */
  uint64_t head_events;    /* events before head (overwritten) */
  uint64_t written;        /* events written (padding not counted) */
  uint64_t seq;            /* writer's copy of ext ring seq */
  unsigned block_shift;    /* log2 of the words of a block (see marks) */
  uint64_t block_mask;     /* blocks in the ring - 1 */
  uint64_t marked_block;   /* absolute block of the newest mark; ~0: none */
  struct ocgc_wire_ring_header *rh;
  struct ocgc_wire_ext_ring *er;
};

extern struct caml_ocgc_ring caml_ocgc_ring;

/* The overwrite index.  The ring is cut into blocks of 2^block_shift words
 * (at least 64, at most CAML_OCGC_MARKS blocks, at least 16: the smallest
 * ring has 1024 words); for each block the writer marks where the first
 * batch of events starting in it begins and how many events were written
 * before that.  A batch is at most CAML_OCGC_BATCH_MAX words, less than a
 * block, so every block of the last lap has a mark.  When old events must
 * go, the writer moves head to the mark two blocks past where enough room
 * would begin: a batch boundary, with its exact count of events before it,
 * found in O(1) from private memory.  So a full ring frees one to two
 * blocks at once (64 to 128 words of a default ring) and publishes a new
 * head about once a block. */
#define CAML_OCGC_MARKS 1024u
#define CAML_OCGC_MIN_BLOCK_SHIFT 6u

struct caml_ocgc_mark {
  uint64_t pos;    /* absolute word position of a batch's first event */
  uint64_t events; /* events written before it */
};

extern struct caml_ocgc_mark caml_ocgc_marks[CAML_OCGC_MARKS];

/* The one-writer guard.  An asymmetric Dekker handshake: the hooks pay two
 * plain stores and a load; the closer (the exit handler, once per process)
 * pays a process-wide memory barrier.
 *   hook:   busy = 1; [compiler barrier]; if (closed) back off; ...write...;
 *           busy = 0 (release)
 *   closer: closed = 1; process-wide barrier; wait until busy == 0
 * After the barrier, either the closer sees a hook's busy = 1 (and waits for
 * it), or that hook sees closed = 1 (and writes nothing). */
struct caml_ocgc_guard {
  int busy;   /* the mutator is inside a writing hook */
  int closed; /* the ring belongs to the closer from now on */
};

extern struct caml_ocgc_guard caml_ocgc_guard;

static inline int caml_ocgc_hook_enter(void)
{
  struct caml_ocgc_guard *g = &caml_ocgc_guard;
  __atomic_store_n(&g->busy, 1, __ATOMIC_RELAXED);
  /* Compiler barrier only: the CPU may still let the load below pass the
   * store above, which is what the closer's process-wide barrier is for
   * (pairs with caml_ocgc_guard_close). */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (__builtin_expect(__atomic_load_n(&g->closed, __ATOMIC_RELAXED), 0)) {
    __atomic_store_n(&g->busy, 0, __ATOMIC_RELAXED);
    return 0;
  }
  return 1;
}

static inline void caml_ocgc_hook_leave(void)
{
  /* Release: every ring write of the hook is visible before busy drops
   * (pairs with the closer's acquire load of busy). */
  __atomic_store_n(&caml_ocgc_guard.busy, 0, __ATOMIC_RELEASE);
}

/* Exit handler, any thread: shut the hooks out and wait (at most 250 ms,
 * by the clock) for one in progress.  Returns 1 when the caller is now the only
 * writer, 0 when that cannot be known (a hook did not finish in time, or no
 * process-wide barrier is available): then the caller must not write. */
int caml_ocgc_guard_close(void);

/* Field [field] (numbered as in proc(5), 3 or more) of a /proc/PID/stat
 * file [path], as a number; 0 if it cannot be read.  Here, not in
 * ocgc_proc.c, because the guard needs it and benchmarks/writecost.c links
 * this file alone. */
uint64_t caml_ocgc_proc_stat_field(const char *path, int field);

/* Point the writer at a new ring (also in a forked child, whose address
 * space is new) and prepare the barrier that caml_ocgc_guard_close needs.
 * [map] is the file, laid out as [geometry] says, with its ext ring record
 * at [ext_ring_offset]: the creator's private copies, so that nothing is
 * read back from the mapping, which others may write. */
void caml_ocgc_ring_attach(char *map, const struct ocgc_wire_header *geometry,
                           uint64_t ext_ring_offset);

/* In a forked child, whose copy of the parent's mapping is gone: no ring
 * until the child makes its own, and the guard open again. */
void caml_ocgc_ring_detach(void);

/* Cold path: make room for [len] words at the tail, writing a padding
 * record if they would straddle the end and advancing head past whole old
 * batches (flight-recorder overwrite). */
void caml_ocgc_ring_make_room(struct caml_ocgc_ring *r, uint64_t len);

/* Writing: a hook reserves room for all the events it writes at once,
 * stores them with put2/put3, and makes them visible together with one
 * commit, so that a hook of several events pays one room check and one
 * release store of tail.  Between reserve and commit nothing else may
 * write: both run inside one hook, under the guard. */

/* Room for up to [words] contiguous words at the tail; returns where the
 * first event goes.  [words] is at most CAML_OCGC_BATCH_MAX. */

static inline uint64_t *caml_ocgc_ring_reserve(uint64_t words)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  uint64_t off = r->tail & r->mask, block;

  if (__builtin_expect(off + words > r->size || r->tail + words - r->head > r->mask, 0)) {
    caml_ocgc_ring_make_room(r, words);
    off = r->tail & r->mask;
  }
  /* The first batch that starts in a block marks it (every reserve is
   * followed by a commit of at least one event). */
  block = r->tail >> r->block_shift;
  if (block != r->marked_block) {
    struct caml_ocgc_mark *m = &caml_ocgc_marks[block & r->block_mask];
    m->pos = r->tail;
    m->events = r->written;
    r->marked_block = block;
  }
  return r->data + off;
}

/* Relaxed stores: a concurrent reader may copy these words; it validates
 * them against tail (commit) and head (make_room) before trusting them. */
static inline uint64_t *caml_ocgc_put2(uint64_t *p, uint64_t header, uint64_t ts)
{
  __atomic_store_n(&p[0], header, __ATOMIC_RELAXED);
  __atomic_store_n(&p[1], ts, __ATOMIC_RELAXED);
  return p + 2;
}

static inline uint64_t *caml_ocgc_put3(uint64_t *p, uint64_t header, uint64_t ts,
                                       uint64_t value)
{
  __atomic_store_n(&p[0], header, __ATOMIC_RELAXED);
  __atomic_store_n(&p[1], ts, __ATOMIC_RELAXED);
  __atomic_store_n(&p[2], value, __ATOMIC_RELAXED);
  return p + 3;
}

/* Publish the [events] events stored from [start], what reserve returned,
 * up to [end].  (Given start, the words are a subtraction: the stores
 * above may alias the writer's struct as far as the compiler knows, so
 * recomputing start from it would reload three of its fields.) */
static inline void caml_ocgc_ring_commit(const uint64_t *start, const uint64_t *end,
                                         unsigned events)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  r->tail += (uint64_t)(end - start);
  r->written += events;
  /* Release: pairs with the reader's acquire load of tail, so the words
   * above are visible before the tail that covers them. */
  __atomic_store_n(&r->rh->tail, r->tail, __ATOMIC_RELEASE);
}

/* Publish the count of events written (a statistic for readers such as
 * `ocgc ls`; exact loss accounting uses the head seqlock, not this).  Done
 * with the totals (at each collection's end and each full publication)
 * and at each overwrite, not per event: it shares its cache line with the
 * head seqlock that readers poll. */
static inline void caml_ocgc_ring_publish_written(void)
{
  struct caml_ocgc_ring *r = &caml_ocgc_ring;
  __atomic_store_n(&r->er->written_events, r->written, __ATOMIC_RELAXED);
}

/* OCGC_IDS=5.3: phases are written in OCaml 5.3's numbering (set once at
 * start, before any event; a forked child keeps its parent's). */
extern int caml_ocgc_ids53;

/* Span headers by 5.2 phase id, in the numbering OCGC_IDS chose: filled
 * by caml_ocgc_ring_attach, so that a span's header is one load. */
#define CAML_OCGC_PHASE_SLOTS 64u
extern uint64_t caml_ocgc_span_begin_header[CAML_OCGC_PHASE_SLOTS];

static inline uint64_t caml_ocgc_span_header(int begin, unsigned phase)
{
  uint64_t h = caml_ocgc_span_begin_header[phase & (CAML_OCGC_PHASE_SLOTS - 1)];
  /* BEGIN and END differ in the type field only. */
  return begin ? h : h ^ OCGC_EV_HEADER(0, 0, OCGC_RT_BEGIN ^ OCGC_RT_END, 0);
}

#define CAML_OCGC_COUNTER_HEADER(id) OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id)
#define CAML_OCGC_USER_INT_HEADER(slot) OCGC_EV_HEADER(3, 1, OCGC_USER_INT, slot)
#define CAML_OCGC_USER_UNIT_HEADER(slot) OCGC_EV_HEADER(2, 1, OCGC_USER_UNIT, slot)
/* RING_STOP has no payload (2 words), every other lifecycle event one. */
#define CAML_OCGC_LIFECYCLE_HEADER(id) \
  OCGC_EV_HEADER((id) == OCGC_LC_RING_STOP ? 2 : 3, 0, OCGC_RT_LIFECYCLE, id)

/* One event alone, the writer by itself: for benchmarks/writecost.c and the
 * unit tests.  The hooks write through ocgc_hooks.c's batches, which put
 * the phase events they hold first. */
static inline void caml_ocgc_emit2(uint64_t header, uint64_t ts)
{
  uint64_t *p = caml_ocgc_ring_reserve(2);
  caml_ocgc_ring_commit(p, caml_ocgc_put2(p, header, ts), 1);
}

static inline void caml_ocgc_emit3(uint64_t header, uint64_t ts, uint64_t value)
{
  uint64_t *p = caml_ocgc_ring_reserve(3);
  caml_ocgc_ring_commit(p, caml_ocgc_put3(p, header, ts, value), 1);
}

static inline void caml_ocgc_emit_span(int begin, unsigned phase, uint64_t ts)
{
  caml_ocgc_emit2(caml_ocgc_span_header(begin, phase), ts);
}

static inline void caml_ocgc_emit_counter(unsigned id, uint64_t ts, uint64_t v)
{
  caml_ocgc_emit3(CAML_OCGC_COUNTER_HEADER(id), ts, v);
}

#endif /* CAML_OCGC_RING_H */
