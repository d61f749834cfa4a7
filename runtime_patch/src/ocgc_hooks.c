/* ocgc_hooks.c - what the GC hook sites mean: collection spans, the cause of
 * each collection, the stops of the mutator, and the cumulative totals in
 * the extension block.
 *
 * Invariants:
 * - Each collection (minor, major slice, forced cycle end, compaction) is
 *   one span, preceded at the same timestamp by exactly one cause event,
 *   and, if it continues the stop of the mutator an earlier collection
 *   began, by a stop-join mark before that (see "stops" below).
 * - MINOR spans are written only for collections that Gc counts, so their
 *   number equals Gc minor_collections; COMPACT spans equal Gc compactions.
 * - The cause of a collection and its stop are resolved when it begins,
 *   from state that never outlives the runtime lock's holder (see "causes"
 *   and "stops" below).
 * - The totals are a seqlock-protected mirror of the runtime's own Gc
 *   counters, refreshed at the end of every collection and heap change; a
 *   collection is counted by cause when it ends, as Gc counts it, so the
 *   by-cause cells never run ahead of the Gc counters.
 * - Every hook that writes into the mapping does so between
 *   caml_ocgc_hook_enter() and caml_ocgc_hook_leave() (ocgc_ring.h), and
 *   takes its timestamp there, as it enters.
 * - Sub-phase events inside a collection are held, at most HELD_MAX, and
 *   every batch writes what is held first: a ring's timestamps never
 *   decrease, and nothing is held across a release of the runtime lock
 *   (see "batches").
 * All functions run on the mutator thread with the runtime lock held, but
 * caml_ocgc_stop(), which the exit handler calls once it owns the ring. */

#define CAML_INTERNALS
#include <string.h>
#include <unistd.h>

#include "caml/domain_state.h"
#include "caml/eventlog.h"
#include "caml/freelist.h"
#include "caml/major_gc.h"
#include "caml/minor_gc.h"
#include "caml/ocgc.h"
#include "ocgc_clock.h"
#include "ocgc_hooks.h"
#include "ocgc_memprof.h"
#include "ocgc_names.h"
#include "ocgc_ring.h"
#include "ocgc_writer.h"

/* ---- state ---------------------------------------------------------------- */

/* All of it belongs to the thread that holds the runtime lock (see "causes"
 * and "stops" for what is saved around a release of the lock). */

#define KIND_CAUSE_SLOTS 2 /* kinds with requests and one-shot causes: minor, slice */
#define DIRTY_MAX 8        /* collections nest at most a few deep between syncs */

/* What the next collections are caused by: see "causes" below. */
static struct {
  int next[KIND_CAUSE_SLOTS];
  int pending[KIND_CAUSE_SLOTS];
  int scope;
  int in_call;                /* a Gc.* primitive's collections run: its
                                 scope and stop scope are open */
  int alloc_trigger;          /* 0, or a CAML_OCGC_TRIGGER_* */
  int plan_trigger;           /* dispatch: the cause the allocation gave, or 0 */
  int plan_minor_due;         /* dispatch: the trigger was at the heap's start */
  int plan_idle;              /* dispatch: no major cycle was running */
} causes;

/* The span of the Gc.* call in progress, as its phase id + 1, or 0: see
 * "Gc.* calls" below. */
static unsigned call_span;

/* The stop of the mutator in progress: see "stops" below. */
static struct {
  int depth;                  /* stop scopes open (a dispatch, a Gc.* call) */
  int begun;                  /* an outermost collection began this stop */
} stop;

/* The collections in progress, and what they report when they begin or end. */
static struct {
  int depth;                  /* nesting of collections of any kind */
  uint64_t outer_start;
  int kind_depth[OCGC_KIND_COUNT];
  int kind_cause[OCGC_KIND_COUNT];
  uint64_t kind_start[OCGC_KIND_COUNT];
  uint64_t slice_work;
  uint64_t direct_pending;    /* words not yet reported in the ring */
} running;

/* The totals: a private copy, published by sync_totals(). */
static struct {
  struct ocgc_wire_totals t;
  unsigned dirty[DIRTY_MAX];  /* by_cause cells changed since the last sync */
  unsigned ndirty;            /* > DIRTY_MAX: publish them all */
  int cycle_ended;            /* a major cycle ended since the last sync:
                                 the short publication adds its words */
  int full;                   /* a word sync_collection's short publication
                                 leaves out has changed: publish all */
} totals;

/* Enter a hook that writes, and take its timestamp (ocgc_writer.h says
 * how): nonzero when there is a ring to write into; a nonzero return must
 * be paired with leave(). */
static inline uint64_t enter(void)
{
  return caml_ocgc_writer_begin();
}

static inline void leave(void)
{
  caml_ocgc_hook_leave();
}

/* ---- batches and held phase events -------------------------------------------- */

/* A phase span inside a collection (the default's marking, sweeping and
 * the minor collection's local roots) is not written when it begins or
 * ends: its events are held here, a timestamp and two private stores each,
 * and written at the front of the next batch, usually the collection's
 * end, which publishes them with its own.  A phase event written alone
 * cost a room check, a mark and a release store of tail (issue 30).
 * Readers see a collection's phases when it ends (its begin, as ever, at
 * once).  Every batch writes what is held first, and held events are older
 * than anything written after them, so a ring's timestamps never decrease.
 * Nothing is held across a release of the runtime lock: collections run
 * no OCaml code, and the collection's end writes them (were its end not
 * written, the ring has closed, and nothing more is). */
#define HELD_MAX 4u
static struct {
  unsigned n;
  uint64_t w[2 * HELD_MAX]; /* header, timestamp */
} held;

/* A batch being written: where it starts, the next word, its events. */
struct batch {
  uint64_t *start, *p;
  unsigned events;
};

/* Reserve room for what is held and [words] more, and put what is held
 * first. */
static inline void batch_reserve(struct batch *b, uint64_t words)
{
  unsigned i, n = held.n;
  b->start = b->p = caml_ocgc_ring_reserve(2u * n + words);
  b->events = n;
  for (i = 0; i < n; i++) b->p = caml_ocgc_put2(b->p, held.w[2 * i], held.w[2 * i + 1]);
  held.n = 0;
}

static inline void batch_close(const struct batch *b)
{
  caml_ocgc_ring_commit(b->start, b->p, b->events);
}

/* What is held, as a batch of its own. */
static __attribute__((noinline)) void flush_held(void)
{
  struct batch b;
  batch_reserve(&b, 0);
  batch_close(&b);
}

/* Open a batch of at most [words] words of the caller's, after what is
 * held (on its own before, if the two would not fit in one batch). */
static inline void batch_open(struct batch *b, uint64_t words)
{
  if (__builtin_expect(held.n != 0, 0) && 2u * held.n + words > CAML_OCGC_BATCH_MAX) flush_held();
  batch_reserve(b, words);
}

static inline void batch_put2(struct batch *b, uint64_t header, uint64_t ts)
{
  b->p = caml_ocgc_put2(b->p, header, ts);
  b->events++;
}

static inline void batch_put3(struct batch *b, uint64_t header, uint64_t ts, uint64_t v)
{
  b->p = caml_ocgc_put3(b->p, header, ts, v);
  b->events++;
}

/* One event alone (behind what is held). */
static void write2(uint64_t header, uint64_t ts)
{
  struct batch b;
  batch_open(&b, 2);
  batch_put2(&b, header, ts);
  batch_close(&b);
}

static void write3(uint64_t header, uint64_t ts, uint64_t v)
{
  struct batch b;
  batch_open(&b, 3);
  batch_put3(&b, header, ts, v);
  batch_close(&b);
}

/* ---- totals --------------------------------------------------------------- */

static void mark_dirty(unsigned cell)
{
  unsigned i;
  for (i = 0; i < totals.ndirty && i < DIRTY_MAX; i++)
    if (totals.dirty[i] == cell) return;
  if (totals.ndirty < DIRTY_MAX) totals.dirty[totals.ndirty] = cell;
  if (totals.ndirty <= DIRTY_MAX) totals.ndirty++;
}

static void store(uint64_t *dst, uint64_t v)
{
  __atomic_store_n(dst, v, __ATOMIC_RELAXED);
}

/* The totals are published with a seqlock: readers retry while seq is odd
 * or changes.  Odd first; the release fence orders it before every field
 * stored after it (pairs with the reader's acquire fence before it re-reads
 * seq). */
static void publish_open(struct ocgc_wire_totals *m)
{
  totals.t.seq += 2;
  store(&m->seq, totals.t.seq - 1);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void publish_close(struct ocgc_wire_totals *m)
{
  /* Release: pairs with the reader's acquire load of seq. */
  __atomic_store_n(&m->seq, totals.t.seq, __ATOMIC_RELEASE);
}

/* Publish the whole private copy into the mapping. */
static void publish_totals(void)
{
  struct ocgc_wire_totals *t = &totals.t, *m = caml_ocgc_file.totals;
  unsigned k, c;

  publish_open(m);
#define STORE_WORD(field) store(&m->field, t->field);
  OCGC_TOTALS_WORDS(STORE_WORD)
  OCGC_CONFIG_WORDS(STORE_WORD)
#undef STORE_WORD
  store(&m->live_words, t->live_words);
  store(&m->program_memprof, t->program_memprof);
  for (k = 0; k < OCGC_KIND_COUNT; k++) store(&m->kind_time_ns[k], t->kind_time_ns[k]);
  if (totals.ndirty > DIRTY_MAX) {
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      for (c = 0; c < OCGC_CAUSE_COUNT; c++) store(&m->by_cause[k][c], t->by_cause[k][c]);
  } else {
    for (k = 0; k < totals.ndirty; k++) {
      unsigned kind = totals.dirty[k] / OCGC_CAUSE_SLOTS;
      unsigned cause = totals.dirty[k] % OCGC_CAUSE_SLOTS;
      store(&m->by_cause[kind][cause], t->by_cause[kind][cause]);
    }
  }
  totals.ndirty = 0;
  totals.full = 0;
  totals.cycle_ended = 0;
  publish_close(m);
}

/* The runtime's GC settings; they have no header (gc_ctrl.c declares them
 * so too). */
extern uintnat caml_percent_free, caml_percent_max, caml_allocation_policy;

/* A count the runtime keeps in a double, as a word.  Through int64_t:
 * x86-64 converts a double to a signed word in one instruction, to an
 * unsigned one in six, and no count comes near 2^63. */
static inline uint64_t word_count(double d)
{
  return (uint64_t)(int64_t)d;
}

/* As Gc.quick_stat counts them (gc_ctrl.c): minor words with what the
 * minor heap holds now (nothing at a minor collection's end, but not at a
 * slice, a Gc.set, a heap change or the exit), major words with what was
 * allocated since the last slice. */
static inline uint64_t minor_words_now(void)
{
  return word_count(Caml_state->stat_minor_words +
                    (double)(Caml_state->young_alloc_end - Caml_state->young_ptr));
}

static inline uint64_t major_words_now(void)
{
  return word_count(Caml_state->stat_major_words + (double)caml_allocated_words);
}

/* The runtime's counters that collections change. */
static void read_gc_counters(struct ocgc_wire_totals *t)
{
  t->minor_collections = (uint64_t)Caml_state->stat_minor_collections;
  t->minor_words = minor_words_now();
  t->promoted_words = word_count(Caml_state->stat_promoted_words);
  t->major_words = major_words_now();
  t->major_collections = (uint64_t)Caml_state->stat_major_collections;
}

/* Mirror the runtime's counters and ours into the mapping, every word. */
static void sync_totals(uint64_t now)
{
  struct ocgc_wire_totals *t = &totals.t;

  read_gc_counters(t);
  t->compactions = (uint64_t)Caml_state->stat_compactions;
  t->forced_major_collections = (uint64_t)Caml_state->stat_forced_major_collections;
  t->heap_words = (uint64_t)Caml_state->stat_heap_wsz;
  t->top_heap_words = (uint64_t)Caml_state->stat_top_heap_wsz;
  t->heap_chunks = (uint64_t)Caml_state->stat_heap_chunks;
  t->updated_ns = now;
  t->minor_heap_words = (uint64_t)Caml_state->minor_heap_wsz;
  t->space_overhead = (uint64_t)caml_percent_free;
  t->max_overhead = (uint64_t)caml_percent_max;
  t->allocation_policy = (uint64_t)caml_allocation_policy;
  caml_ocgc_ring_publish_written();
  publish_totals();
}

/* At the end of a collection of [kind]: publish what it changed.  A minor
 * collection changes the runtime's minor count, its minor, promoted and
 * major words; a major slice its minor words (the minor heap has filled
 * meanwhile) and major words; both the time and cause cell of their kind
 * and our direct-allocation count; a slice, our slice count.  That is what
 * is published at the two most frequent collections, a quarter of a full
 * sync's stores; with the major count and the live words if a major cycle
 * ended (where the runtime counts it) in the collection.  Every other word
 * changes only where totals.full is set (a forced major, a heap change,
 * Gc.set, a minor heap resize) or at the end of a finish or a compaction:
 * those publish all.  Inlined into the two hooks,
 * whose kind is a constant. */
static inline __attribute__((always_inline)) void sync_collection(int kind, uint64_t now)
{
  struct ocgc_wire_totals *t = &totals.t, *m = caml_ocgc_file.totals;
  int cause = running.kind_cause[kind];
  int minor = kind == OCGC_KIND_MINOR;

  if (totals.full || (!minor && kind != OCGC_KIND_MAJOR_SLICE)) {
    mark_dirty((unsigned)kind * OCGC_CAUSE_SLOTS + (unsigned)cause);
    sync_totals(now);
    return;
  }
  t->minor_words = minor_words_now();
  t->major_words = major_words_now();
  if (minor) {
    t->minor_collections = (uint64_t)Caml_state->stat_minor_collections;
    t->promoted_words = word_count(Caml_state->stat_promoted_words);
  }
  t->updated_ns = now;
  caml_ocgc_ring_publish_written();
  publish_open(m);
  if (minor) {
    store(&m->minor_collections, t->minor_collections);
    store(&m->promoted_words, t->promoted_words);
  } else {
    store(&m->major_slices, t->major_slices);
  }
  if (totals.cycle_ended) {
    t->major_collections = (uint64_t)Caml_state->stat_major_collections;
    store(&m->major_collections, t->major_collections);
    store(&m->live_words, t->live_words);
    totals.cycle_ended = 0;
  }
  store(&m->minor_words, t->minor_words);
  store(&m->major_words, t->major_words);
  store(&m->direct_major_words, t->direct_major_words);
  store(&m->gc_time_ns, t->gc_time_ns);
  store(&m->updated_ns, now);
  store(&m->kind_time_ns[kind], t->kind_time_ns[kind]);
  store(&m->by_cause[kind][cause], t->by_cause[kind][cause]);
  publish_close(m);
}

/* ---- stops ------------------------------------------------------------------- */

/* A stop of the mutator is what readers call a pause: the time from the
 * first collection the runtime runs after OCaml code last ran to the end
 * of the last one before OCaml code runs again.  The producer knows its
 * bounds: a *stop scope* is open while caml_gc_dispatch runs (it promises
 * to call no OCaml code) and while a Gc.* primitive runs its collections;
 * scopes nest (Gc.minor dispatches), and one stop lasts while any is open.
 * The first outermost collection of a stop begins it; every later one
 * writes OCGC_UEV_STOP_JOIN just before its cause.  A collection outside
 * any scope is a stop of its own.
 * Like the causes, the stop state belongs to the thread that holds the
 * runtime lock: foreign_begin (OCaml code is about to run, the lock may go
 * to another thread) ends the stop and saves the depth on the caller's own
 * C stack; foreign_end restores the depth and begins a new stop, since the
 * mutator ran in between.  So no stop crosses a master-lock release, no
 * thread's collection joins another's stop, and a forked child (fork runs
 * from OCaml code, with no scope open) starts with none. */

static void stop_clear(unsigned depth)
{
  stop.depth = (int)depth;
  stop.begun = 0;
}

static void stop_enter(void)
{
  if (stop.depth++ == 0) stop.begun = 0;
}

static void stop_leave(void)
{
  if (stop.depth > 0 && --stop.depth == 0) stop.begun = 0;
}

/* An outermost collection begins: returns 1 when it continues the stop
 * that an earlier collection began (it then writes a stop-join mark). */
static int stop_collection(void)
{
  int joins;
  if (running.depth != 0 || stop.depth == 0) return 0;
  joins = stop.begun;
  stop.begun = 1;
  return joins;
}

/* ---- causes ------------------------------------------------------------------ */

/* Cause state.  All of it is read and written by the thread that holds the
 * runtime lock, and none of it is left behind when that thread gives the
 * lock up, so no thread ever sees another's causes:
 * - next[k]: set by a site just before it runs a collection of kind k
 *   itself (Array.make, Weak, custom blocks, minor heap resize, and
 *   caml_gc_dispatch once it has decided); consumed by that collection, or
 *   voided when the minor heap turns out empty.
 * - scope: the cause of every collection that the running code performs
 *   directly (a Gc.* call, a policy change, shutdown, automatic
 *   compaction).  Whoever runs OCaml code in between (pending actions:
 *   signal handlers, memprof callbacks, finalisers, the tick thread's
 *   yield) calls foreign_begin first, which leaves no scope, and
 *   foreign_end after, which restores it from the caller's own C stack: a
 *   scope never crosses a master-lock release, a preempted thread finds its
 *   own again, and a forked child starts with the forking thread's.  The
 *   Gc.* call's span ends there for good (see "Gc.* calls").
 * - pending[k]: mirror of the runtime's requested_minor_gc /
 *   requested_major_slice: the first cause given since the runtime last
 *   cleared its flag, cleared exactly where the runtime clears the flag
 *   (caml_gc_dispatch, caml_set_minor_heap_wsz).
 * A collection takes next[k], else scope, else pending[k] (which a
 * collection run outside caml_gc_dispatch does not consume: the runtime's
 * request is still outstanding). */

static int valid_cause(int cause)
{
  return cause > 0 && cause < OCGC_CAUSE_COUNT ? cause : OCGC_CAUSE_UNKNOWN;
}

static int take_cause(int kind)
{
  int cause = 0;
  if (kind < KIND_CAUSE_SLOTS) {
    cause = causes.next[kind];
    causes.next[kind] = 0;
  }
  if (cause == 0) cause = causes.scope;
  if (cause == 0 && kind < KIND_CAUSE_SLOTS) cause = causes.pending[kind];
  return valid_cause(cause);
}

/* The cause event: OCaml 5's counter where it has one, else ours. */
static uint64_t cause_header(int cause)
{
  int counter = ocgc_cause_counter((unsigned)cause);
  return counter >= 0 ? CAML_OCGC_COUNTER_HEADER((unsigned)counter)
                      : CAML_OCGC_USER_INT_HEADER(CAML_OCGC_UEV_CAUSES + (unsigned)cause);
}

void caml_ocgc_cause(int kind, int cause)
{
  if (kind == CAML_OCGC_KIND_ALL) {
    causes.next[OCGC_KIND_MINOR] = causes.next[OCGC_KIND_MAJOR_SLICE] = cause;
  } else if (kind >= 0 && kind < KIND_CAUSE_SLOTS) {
    causes.next[kind] = cause;
  }
}

void caml_ocgc_request(int kind, int cause)
{
  if (kind >= 0 && kind < KIND_CAUSE_SLOTS && causes.pending[kind] == 0)
    causes.pending[kind] = cause;
}

void caml_ocgc_resize_minor(void)
{
  totals.full = 1;
  causes.next[OCGC_KIND_MINOR] = OCGC_CAUSE_MINOR_HEAP_RESIZE;
  causes.pending[OCGC_KIND_MINOR] = 0; /* the runtime clears requested_minor_gc */
}

int caml_ocgc_scope_enter(int cause)
{
  int old = causes.scope;
  causes.scope = cause;
  return old;
}

void caml_ocgc_scope_leave(int scope)
{
  causes.scope = scope;
}

/* ---- Gc.* calls ------------------------------------------------------------- */

/* Each Gc.* call writes exactly one EXPLICIT_GC_* span, so that readers
 * count calls by counting spans.  It begins when the primitive is called
 * and ends at the first of: its return; the first time it runs pending
 * actions (OCaml code: finalisers, signal handlers, the systhreads tick
 * that yields the runtime lock); an exception raised from the runtime
 * (caml_ocgc_raise).  It never reopens.  So a span never contains program
 * code, no other thread's event falls inside one, and the spans of two
 * threads never interleave.  The work a call does after program code ran
 * (the second round of 4.x's Gc.full_major and Gc.compact) is still caused
 * "explicit" (the scope is restored) and visible as its own collections. */

static void call_span_open(unsigned id)
{
  uint64_t now = enter();
  struct batch b;
  if (!now) return;
  batch_open(&b, 4);
  /* Program code runs between two calls, and closes a span left open. */
  if (call_span != 0) batch_put2(&b, caml_ocgc_span_header(0, call_span - 1), now);
  batch_put2(&b, caml_ocgc_span_header(1, id), now);
  batch_close(&b);
  call_span = id + 1;
  leave();
}

/* Ends the open call span, if any; returns when it did so. */
static uint64_t call_span_close(void)
{
  uint64_t now;
  if (call_span == 0 || !(now = enter())) return 0;
  write2(caml_ocgc_span_header(0, call_span - 1), now);
  call_span = 0;
  leave();
  return now;
}

/* The saved state packs three small numbers, a byte each: the scope's
 * cause (below OCGC_CAUSE_SLOTS), whether a Gc.* call's scope is open and
 * the stop scopes open (a few at most: a dispatch inside a Gc.* call). */
#define SAVED_CALL_SHIFT 8
#define SAVED_STOP_SHIFT 16
#define SAVED_FIELD 0xff

int caml_ocgc_foreign_begin(void)
{
  int saved = causes.scope | causes.in_call << SAVED_CALL_SHIFT |
              (stop.depth & SAVED_FIELD) << SAVED_STOP_SHIFT;
  if (call_span != 0) call_span_close();
  if (saved == 0) {
    /* Nothing open, the common case (pending actions after a minor
     * collection that a full minor heap ran): nothing to save. */
    stop.begun = 0;
    return 0;
  }
  causes.scope = 0;
  causes.in_call = 0;
  stop_clear(0);
  return saved;
}

/* The mutator ran meanwhile: what comes next is a new stop. */
void caml_ocgc_foreign_end(int saved)
{
  causes.scope = saved & SAVED_FIELD;
  causes.in_call = saved >> SAVED_CALL_SHIFT & 1;
  stop_clear((unsigned)saved >> SAVED_STOP_SHIFT & SAVED_FIELD);
}

/* A Gc.* primitive that collects.  Its direct collections are explicit and
 * one stop; whatever runs in its pending actions is not (see "causes" and
 * "stops").  No other scope can be open when OCaml code calls a primitive,
 * so the end returns to none. */
void caml_ocgc_explicit(unsigned id, int begin)
{
  causes.scope = begin ? OCGC_CAUSE_EXPLICIT : 0;
  causes.in_call = begin;
  stop_clear(begin ? 1 : 0);
  if (begin) call_span_open(id);
  else if (call_span == id + 1) call_span_close();
}

/* Gc.set and Gc.stat, which collect nothing by themselves. */
void caml_ocgc_call(unsigned id, int begin)
{
  uint64_t now;
  if (begin) {
    call_span_open(id);
  } else if (call_span == id + 1) {
    now = call_span_close();
    /* Gc.set changed settings that the totals mirror (a new minor heap
     * size only after the collection that precedes the resize published
     * the old one): publish them now, not at the next collection, which
     * may be a long way off. */
    if (now != 0 && id == OCGC_PH_EXPLICIT_GC_SET && enter()) {
      /* (timed as the span's end: the same moment) */
      sync_totals(now);
      leave();
    }
  }
}

/* The runtime raises an exception from C.  Program code never runs inside
 * a call's span or scope, so what is open is the primitive's own, which
 * the exception leaves for good (Gc.set's minor heap resize raising
 * Out_of_memory): end its span, leave its scopes. */
void caml_ocgc_raise(void)
{
  if (call_span != 0) call_span_close();
  causes.scope = 0;
  causes.in_call = 0;
  stop_clear(0);
}

void caml_ocgc_alloc_trigger(int trigger)
{
  causes.alloc_trigger = trigger;
}

/* caml_gc_dispatch is about to decide: note what it starts from. */
void caml_ocgc_dispatch(void)
{
  int minor_due = Caml_state->young_trigger == Caml_state->young_alloc_start;
  int trigger = causes.alloc_trigger;
  /* Called from OCaml code (no Gc.* call open), a dispatch is a stop of
   * its own whatever an earlier one left behind, so that a dispatch left
   * without its end (by an exception) cannot fuse every later stop. */
  if (!causes.in_call) stop_clear(1);
  else stop_enter();
  causes.alloc_trigger = 0;
  causes.plan_minor_due = minor_due;
  causes.plan_idle = caml_gc_phase == Phase_idle;
  /* An allocation found no room: the trigger at the heap's start means the
   * minor heap is full; at its middle, that the slice it paces is due. */
  causes.plan_trigger = trigger == 0 ? 0
                        : !minor_due ? OCGC_CAUSE_MAJOR_SLICE_DUE
                        : trigger == CAML_OCGC_TRIGGER_FROM_CAML ? OCGC_CAUSE_MINOR_HEAP_FULL
                        : trigger == CAML_OCGC_TRIGGER_FROM_C ? OCGC_CAUSE_MINOR_HEAP_FULL_C
                                                              : OCGC_CAUSE_MEMPROF;
}

/* caml_gc_dispatch has run its collections: its stop scope ends. */
void caml_ocgc_dispatch_end(void)
{
  if (!causes.in_call) stop_clear(0);
  else stop_leave();
}

/* caml_gc_dispatch clears the runtime's request flag for [kind] and runs
 * that collection: give it its cause and clear the mirror. */
void caml_ocgc_dispatch_runs(int kind)
{
  int minor = kind == OCGC_KIND_MINOR;
  int cause = 0;

  if (kind < 0 || kind >= KIND_CAUSE_SLOTS) return;
  if (minor ? causes.plan_minor_due : !causes.plan_minor_due) cause = causes.plan_trigger;
  if (cause == 0) cause = causes.scope;
  if (cause == 0) cause = causes.pending[kind];
  if (minor) {
    /* A minor collection nobody asked for runs on behalf of the major
     * slice that needs an empty minor heap (the requested one, or the one
     * that starts a cycle). */
    if (cause == 0) cause = causes.pending[OCGC_KIND_MAJOR_SLICE];
  } else if (cause == 0 && !causes.plan_minor_due) {
    /* Whoever called, a dispatch with the trigger at the middle of the
     * minor heap runs the slice that half a heap of allocation made due. */
    cause = OCGC_CAUSE_MAJOR_SLICE_DUE;
  }
  if (cause == 0 && causes.plan_idle) cause = OCGC_CAUSE_MAJOR_CYCLE_START;
  if (causes.next[kind] == 0) causes.next[kind] = cause;
  causes.pending[kind] = 0;
}

/* ---- collections ------------------------------------------------------------- */

static inline void collection_enter(int kind, int cause, uint64_t now)
{
  if (running.depth++ == 0) running.outer_start = now;
  if (running.kind_depth[kind]++ == 0) {
    running.kind_start[kind] = now;
    running.kind_cause[kind] = cause;
  }
}

static inline void collection_leave(int kind, uint64_t now)
{
  if (running.kind_depth[kind] > 0 && --running.kind_depth[kind] == 0) {
    int cause = running.kind_cause[kind];
    totals.t.kind_time_ns[kind] += now - running.kind_start[kind];
    totals.t.by_cause[kind][cause]++;
    /* sync_collection publishes the cell. */
  }
  if (running.depth > 0 && --running.depth == 0) totals.t.gc_time_ns += now - running.outer_start;
}

static void flush_direct(uint64_t now)
{
  if (running.direct_pending) {
    write3(CAML_OCGC_USER_INT_HEADER(CAML_OCGC_UEV_DIRECT_ALLOC), now, running.direct_pending);
    running.direct_pending = 0;
  }
}

/* The span of each kind: its 5.2 phase (wire.h's kind table). */
#define KIND_PHASE(suffix, num, name, phase) [OCGC_KIND_##suffix] = phase,
static const unsigned kind_phase[OCGC_KIND_COUNT] = {OCGC_KIND_TABLE(KIND_PHASE)};
#undef KIND_PHASE

/* What a collection's begin writes, one batch at one timestamp: the major
 * words allocated directly since the last collection, a stop-join mark,
 * its cause, its span's begin, and [extra_header]'s 3-word event unless
 * that is 0. */
#define BEGIN_WORDS_MAX (3u + 2u + 3u + 2u + 3u)

/* Inlined into each hook, whose kind and extra event are constants. */
static inline __attribute__((always_inline)) void collection_begin(int kind, uint64_t now,
                                                                   uint64_t extra_header,
                                                                   uint64_t extra)
{
  int cause = take_cause(kind);
  struct batch b;

  batch_open(&b, BEGIN_WORDS_MAX);
  if (running.direct_pending) {
    batch_put3(&b, CAML_OCGC_USER_INT_HEADER(CAML_OCGC_UEV_DIRECT_ALLOC), now,
               running.direct_pending);
    running.direct_pending = 0;
  }
  if (stop_collection()) batch_put2(&b, CAML_OCGC_USER_UNIT_HEADER(CAML_OCGC_UEV_STOP_JOIN), now);
  batch_put3(&b, cause_header(cause), now, 1);
  batch_put2(&b, caml_ocgc_span_header(1, kind_phase[kind]), now);
  if (extra_header != 0) batch_put3(&b, extra_header, now, extra);
  batch_close(&b);
  collection_enter(kind, cause, now);
}

/* A collection's end, one batch: [extra_header]'s 3-word event unless
 * that is 0, then the span's end. */
static inline __attribute__((always_inline)) void collection_end(int kind, uint64_t now,
                                                                 uint64_t extra_header,
                                                                 uint64_t extra)
{
  struct batch b;

  batch_open(&b, 3 + 2);
  if (extra_header != 0) batch_put3(&b, extra_header, now, extra);
  batch_put2(&b, caml_ocgc_span_header(0, kind_phase[kind]), now);
  batch_close(&b);
  collection_leave(kind, now);
  sync_collection(kind, now);
}

void caml_ocgc_minor_begin(uintptr_t young_words)
{
  uint64_t now = enter();
  if (!now) return;
  collection_begin(OCGC_KIND_MINOR, now, CAML_OCGC_COUNTER_HEADER(OCGC_CT_MINOR_ALLOCATED),
                   (uint64_t)young_words * 8);
  leave();
}

void caml_ocgc_minor_end(uintptr_t promoted_words)
{
  uint64_t now = enter();
  if (!now) return;
  collection_end(OCGC_KIND_MINOR, now, CAML_OCGC_COUNTER_HEADER(OCGC_CT_MINOR_PROMOTED),
                 (uint64_t)promoted_words * 8);
  caml_ocgc_mp_poll(now);
  leave();
}

/* caml_empty_minor_heap found nothing to collect: the cause meant for this
 * collection is void.  A pending request is not: the runtime's flag is
 * still set (a dispatch has cleared both already). */
void caml_ocgc_minor_none(void)
{
  causes.next[OCGC_KIND_MINOR] = 0;
}

void caml_ocgc_slice_begin(void)
{
  uint64_t now = enter();
  if (!now) return;
  running.slice_work = 0;
  collection_begin(OCGC_KIND_MAJOR_SLICE, now, 0, 0);
  leave();
}

void caml_ocgc_slice_work(intptr_t work)
{
  running.slice_work = work > 0 ? (uint64_t)work : 0;
}

void caml_ocgc_slice_end(void)
{
  uint64_t now = enter();
  if (!now) return;
  totals.t.major_slices++;
  collection_end(OCGC_KIND_MAJOR_SLICE, now, CAML_OCGC_USER_INT_HEADER(CAML_OCGC_UEV_SLICE_WORK),
                 running.slice_work);
  leave();
}

void caml_ocgc_finish_begin(void)
{
  uint64_t now = enter();
  if (!now) return;
  collection_begin(OCGC_KIND_MAJOR_FINISH, now, 0, 0);
  leave();
}

void caml_ocgc_finish_end(void)
{
  uint64_t now = enter();
  if (!now) return;
  collection_end(OCGC_KIND_MAJOR_FINISH, now, 0, 0);
  leave();
}

/* ---- spans ------------------------------------------------------------------ */

/* Which sub-phase spans are written (OCGC_PHASES, see caml/ocgc.h; the
 * Gc.* calls' spans are always, see "Gc.* calls"): at level 1, the default, the phases that measure more
 * than their two events cost; at level 2 every phase the runtime marks.
 * minor_remembered_set and minor_finalized last 20-60 ns in most programs
 * (p50 30 ns at every GC rate of the benchmarks' workloads), less than
 * their own begin and end events (about 2 x 30 ns on this writer), and they
 * make every minor collection's reported pause longer by that much. */
uint64_t caml_ocgc_phase_mask = ~UINT64_C(0);

#define PHASE_BIT(id) (UINT64_C(1) << (id))
#define PHASES_MEASURED                                                                     \
  (PHASE_BIT(OCGC_PH_MAJOR_SWEEP) | PHASE_BIT(OCGC_PH_MAJOR_MARK_ROOTS) |                   \
   PHASE_BIT(OCGC_PH_MAJOR_MARK) | PHASE_BIT(OCGC_PH_MINOR_LOCAL_ROOTS))

void caml_ocgc_set_phases(int level)
{
  caml_ocgc_phase_mask = level <= 0 ? 0 : level == 1 ? PHASES_MEASURED : ~UINT64_C(0);
}

/* Inside a collection a phase's events are held (see "batches"); outside
 * one, or with HELD_MAX held, written at once. */
static inline void phase_event(int begin, unsigned id)
{
  uint64_t header = caml_ocgc_span_header(begin, id), now;
  unsigned n;
  /* (after enter: a forked child's first event makes a new file, which
   * holds nothing) */
  if (!(now = enter())) return;
  n = held.n;
  if (__builtin_expect(running.depth != 0 && n < HELD_MAX, 1)) {
    held.w[2 * n] = header;
    held.w[2 * n + 1] = now;
    held.n = n + 1;
  } else {
    write2(header, now);
  }
  leave();
}

void caml_ocgc_phase_begin(unsigned id) { phase_event(1, id); }
void caml_ocgc_phase_end(unsigned id) { phase_event(0, id); }

void caml_ocgc_compaction(int begin)
{
  uint64_t now = enter();
  if (!now) return;
  if (begin) collection_begin(OCGC_KIND_COMPACTION, now, 0, 0);
  else collection_end(OCGC_KIND_COMPACTION, now, 0, 0);
  leave();
}

/* ---- major cycle and heap ------------------------------------------------------ */

/* One user int event, timed now. */
static void emit_point(unsigned slot, uint64_t value)
{
  uint64_t now = enter();
  if (!now) return;
  write3(CAML_OCGC_USER_INT_HEADER(slot), now, value);
  leave();
}

void caml_ocgc_cycle_start(void)
{
  caml_ocgc_mp_cycle_start(); /* in use: as of the marking that begins */
  emit_point(CAML_OCGC_UEV_CYCLE_START, (uint64_t)Caml_state->stat_major_collections + 1);
}

void caml_ocgc_cycle_end(void)
{
  /* The sweep is done: every block is either free (on the free list) or
   * live, so this is Gc.stat's heap_words - free_words now.  Published,
   * with the major count, by the collection this cycle end is part of. */
  totals.t.live_words = (uint64_t)(Caml_state->stat_heap_wsz - caml_fl_cur_wsz);
  totals.cycle_ended = 1;
  emit_point(CAML_OCGC_UEV_CYCLE_END, (uint64_t)Caml_state->stat_major_collections);
  /* sweep_slice asks for a minor collection so the next cycle can start. */
  caml_ocgc_request(OCGC_KIND_MINOR, OCGC_CAUSE_MAJOR_CYCLE_START);
}

void caml_ocgc_forced_major(void)
{
  totals.full = 1;
  emit_point(CAML_OCGC_UEV_FORCED_MAJOR, (uint64_t)Caml_state->stat_forced_major_collections);
}

void caml_ocgc_heap_change(int grew)
{
  uint64_t now = enter();
  if (!now) return;
  write3(CAML_OCGC_USER_INT_HEADER(grew ? CAML_OCGC_UEV_HEAP_GROW : CAML_OCGC_UEV_HEAP_SHRINK),
         now, (uint64_t)Caml_state->stat_heap_wsz);
  sync_totals(now);
  leave();
}

void caml_ocgc_memprof(int started)
{
  uint64_t now;
  totals.t.program_memprof = started != 0;
  caml_ocgc_mp_program(started);
  if (!(now = enter())) return;
  sync_totals(now);
  leave();
}

/* Called once the allocation has succeeded (it may raise Out_of_memory). */
void caml_ocgc_direct_alloc(uintptr_t wosize)
{
  running.direct_pending += (uint64_t)wosize + 1;
  totals.t.direct_major_words += (uint64_t)wosize + 1;
}

/* ---- ring start and stop -------------------------------------------------- */

void caml_ocgc_started(uint64_t parent_pid, uint64_t now)
{
  /* A new file (a forked child's) starts from zeroed totals: publish every
   * cell, since the counts carry over from the parent as Gc's own do. */
  totals.ndirty = DIRTY_MAX + 1;
  held.n = 0; /* a new file: nothing of the parent's belongs in it */
  write3(CAML_OCGC_LIFECYCLE_HEADER(OCGC_LC_RING_START), now, (uint64_t)getpid());
  if (parent_pid != 0) write3(CAML_OCGC_LIFECYCLE_HEADER(OCGC_LC_FORK_CHILD), now, parent_pid);
  sync_totals(now);
}

void caml_ocgc_stop(void)
{
  uint64_t now;
  if (caml_ocgc_ring.data == NULL) return;
  now = caml_ocgc_now();
  flush_direct(now);
  /* Held events of a collection the exit cut short: older than the stop. */
  write2(CAML_OCGC_LIFECYCLE_HEADER(OCGC_LC_RING_STOP), now);
  sync_totals(now);
  __atomic_store_n(&caml_ocgc_file.ext->exited_ns, now, __ATOMIC_RELAXED);
  /* Release: pairs with the reader's acquire load of state, so a reader that
   * sees EXITED also sees RING_STOP and the final totals. */
  __atomic_store_n(&caml_ocgc_file.ext->state, (uint64_t)OCGC_STATE_EXITED,
                   __ATOMIC_RELEASE);
}
