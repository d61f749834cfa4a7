/* ocgc_hooks.c - what the GC hook sites mean: collection spans, the cause of
 * each collection, and the cumulative totals in the extension block.
 *
 * Invariants:
 * - Each collection (minor, major slice, forced cycle end, compaction) is
 *   one span, preceded at the same timestamp by exactly one cause event.
 * - MINOR spans are written only for collections that Gc counts, so their
 *   number equals Gc minor_collections; COMPACT spans equal Gc compactions.
 * - The cause of a collection is resolved when it begins, from state that
 *   never outlives the runtime lock's holder (see "causes" below).
 * - The totals are a seqlock-protected mirror of the runtime's own Gc
 *   counters, refreshed at the end of every collection and heap change; a
 *   collection is counted by cause when it ends, as Gc counts it, so the
 *   by-cause cells never run ahead of the Gc counters.
 * - Every hook that writes into the mapping does so between
 *   caml_ocgc_hook_enter() and caml_ocgc_hook_leave() (ocgc_ring.h).
 * All functions run on the mutator thread with the runtime lock held, but
 * caml_ocgc_stop(), which the exit handler calls once it owns the ring. */

#define CAML_INTERNALS
#include <string.h>
#include <unistd.h>

#include "caml/domain_state.h"
#include "caml/eventlog.h"
#include "caml/major_gc.h"
#include "caml/minor_gc.h"
#include "caml/ocgc.h"
#include "ocgc_clock.h"
#include "ocgc_file.h"
#include "ocgc_ring.h"

/* ---- user event slots ---------------------------------------------------- */

enum {
  UEV_CAUSE_FIRST = 0, /* one slot per cause, in cause order; those with a
                          5.2 counter are registered but never written */
  UEV_SLICE_WORK = OCGC_CAUSE_COUNT,
  UEV_CYCLE_START,
  UEV_CYCLE_END,
  UEV_FORCED_MAJOR,
  UEV_HEAP_GROW,
  UEV_HEAP_SHRINK,
  UEV_DIRECT_ALLOC,
  UEV_COUNT
};

const char *const caml_ocgc_user_event_names[UEV_COUNT] = {
  OCGC_UEV_CAUSE_PREFIX "unknown",
  OCGC_UEV_CAUSE_PREFIX "minor_heap_full",
  OCGC_UEV_CAUSE_PREFIX "minor_heap_full_c",
  OCGC_UEV_CAUSE_PREFIX "major_slice_due",
  OCGC_UEV_CAUSE_PREFIX "major_cycle_start",
  OCGC_UEV_CAUSE_PREFIX "alloc_shr",
  OCGC_UEV_CAUSE_PREFIX "custom_major",
  OCGC_UEV_CAUSE_PREFIX "custom_minor",
  OCGC_UEV_CAUSE_PREFIX "ref_table",
  OCGC_UEV_CAUSE_PREFIX "ephe_ref_table",
  OCGC_UEV_CAUSE_PREFIX "custom_table",
  OCGC_UEV_CAUSE_PREFIX "make_vect",
  OCGC_UEV_CAUSE_PREFIX "weak",
  OCGC_UEV_CAUSE_PREFIX "memprof",
  OCGC_UEV_CAUSE_PREFIX "minor_heap_resize",
  OCGC_UEV_CAUSE_PREFIX "policy_change",
  OCGC_UEV_CAUSE_PREFIX "explicit",
  OCGC_UEV_CAUSE_PREFIX "shutdown",
  OCGC_UEV_CAUSE_PREFIX "heap_overhead",
  OCGC_UEV_CAUSE_PREFIX "c_call",
  OCGC_UEV_SLICE_WORK,
  OCGC_UEV_CYCLE_START,
  OCGC_UEV_CYCLE_END,
  OCGC_UEV_FORCED_MAJOR,
  OCGC_UEV_HEAP_GROW,
  OCGC_UEV_HEAP_SHRINK,
  OCGC_UEV_DIRECT_ALLOC,
};
const unsigned caml_ocgc_user_event_count = UEV_COUNT;
_Static_assert(OCGC_CAUSE_C_CALL + 1 == OCGC_CAUSE_COUNT, "name table covers causes");

/* ---- state ---------------------------------------------------------------- */

#define KIND_CAUSE_SLOTS 2 /* kinds with requests and one-shot causes: minor, slice */
#define DIRTY_MAX 8        /* collections nest at most a few deep between syncs */

static struct {
  /* causes: see "causes" below */
  int next[KIND_CAUSE_SLOTS];
  int pending[KIND_CAUSE_SLOTS];
  int scope;
  unsigned scope_span;        /* the Gc.* span open in this scope, or 0 */
  int alloc_trigger;          /* 0, or a CAML_OCGC_TRIGGER_* */
  int plan_trigger;           /* dispatch: the cause the allocation gave, or 0 */
  int plan_minor_due;         /* dispatch: the trigger was at the heap's start */
  int plan_idle;              /* dispatch: no major cycle was running */
  /* collections in progress */
  int depth;                  /* nesting of collections of any kind */
  uint64_t outer_start;
  int kind_depth[OCGC_KIND_COUNT];
  int kind_cause[OCGC_KIND_COUNT];
  uint64_t kind_start[OCGC_KIND_COUNT];
  uint64_t slice_work;
  uint64_t direct_pending;    /* words not yet reported in the ring */
  struct ocgc_wire_totals t;  /* private copy; published by sync_totals() */
  unsigned dirty[DIRTY_MAX];  /* by_cause cells changed since the last sync */
  unsigned ndirty;            /* > DIRTY_MAX: publish them all */
} S;

/* Enter a hook that writes: returns nonzero when there is a ring to write
 * into and the exit handler has not taken it over; in a forked child the
 * first event makes the child's own file.  A nonzero return must be paired
 * with leave(). */
static inline int enter(void)
{
  if (!caml_ocgc_hook_enter()) return 0;
  if (__builtin_expect(caml_ocgc_ring.data != NULL, 1)) return 1;
  if (caml_ocgc_file.lazy && caml_ocgc_file_reopen()) return 1;
  caml_ocgc_hook_leave();
  return 0;
}

static inline void leave(void)
{
  caml_ocgc_hook_leave();
}

/* A timestamp for an event that is not a collection boundary: inside a
 * collection it is timed from the collection's clock reading. */
static inline uint64_t stamp(void)
{
  return S.depth > 0 ? caml_ocgc_now_inner() : caml_ocgc_now();
}

/* ---- totals --------------------------------------------------------------- */

static void mark_dirty(unsigned cell)
{
  unsigned i;
  for (i = 0; i < S.ndirty && i < DIRTY_MAX; i++)
    if (S.dirty[i] == cell) return;
  if (S.ndirty < DIRTY_MAX) S.dirty[S.ndirty] = cell;
  if (S.ndirty <= DIRTY_MAX) S.ndirty++;
}

static void store(uint64_t *dst, uint64_t v)
{
  __atomic_store_n(dst, v, __ATOMIC_RELAXED);
}

/* Mirror the runtime's counters and ours into the mapping (seqlock write;
 * readers retry while seq is odd or changes). */
static void sync_totals(uint64_t now)
{
  struct ocgc_wire_totals *t = &S.t, *m = caml_ocgc_file.totals;
  unsigned k, c;

  t->minor_collections = (uint64_t)Caml_state->stat_minor_collections;
  t->major_collections = (uint64_t)Caml_state->stat_major_collections;
  t->compactions = (uint64_t)Caml_state->stat_compactions;
  t->forced_major_collections = (uint64_t)Caml_state->stat_forced_major_collections;
  t->minor_words = (uint64_t)Caml_state->stat_minor_words;
  t->promoted_words = (uint64_t)Caml_state->stat_promoted_words;
  t->major_words = (uint64_t)(Caml_state->stat_major_words + (double)caml_allocated_words);
  t->heap_words = (uint64_t)Caml_state->stat_heap_wsz;
  t->top_heap_words = (uint64_t)Caml_state->stat_top_heap_wsz;
  t->heap_chunks = (uint64_t)Caml_state->stat_heap_chunks;
  t->updated_ns = now;
  caml_ocgc_ring_publish_written();

  t->seq += 2;
  store(&m->seq, t->seq - 1);
  /* Release: the odd seq is visible before any field below (pairs with the
   * reader's acquire fence before it re-reads seq). */
  __atomic_thread_fence(__ATOMIC_RELEASE);
  store(&m->minor_collections, t->minor_collections);
  store(&m->major_collections, t->major_collections);
  store(&m->compactions, t->compactions);
  store(&m->forced_major_collections, t->forced_major_collections);
  store(&m->major_slices, t->major_slices);
  store(&m->minor_words, t->minor_words);
  store(&m->promoted_words, t->promoted_words);
  store(&m->major_words, t->major_words);
  store(&m->direct_major_words, t->direct_major_words);
  store(&m->heap_words, t->heap_words);
  store(&m->top_heap_words, t->top_heap_words);
  store(&m->heap_chunks, t->heap_chunks);
  store(&m->gc_time_ns, t->gc_time_ns);
  for (k = 0; k < OCGC_KIND_COUNT; k++) store(&m->kind_time_ns[k], t->kind_time_ns[k]);
  store(&m->updated_ns, t->updated_ns);
  if (S.ndirty > DIRTY_MAX) {
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      for (c = 0; c < OCGC_CAUSE_COUNT; c++) store(&m->by_cause[k][c], t->by_cause[k][c]);
  } else {
    for (k = 0; k < S.ndirty; k++) {
      unsigned kind = S.dirty[k] / OCGC_CAUSE_SLOTS, cause = S.dirty[k] % OCGC_CAUSE_SLOTS;
      store(&m->by_cause[kind][cause], t->by_cause[kind][cause]);
    }
  }
  S.ndirty = 0;
  /* Release: pairs with the reader's acquire load of seq. */
  __atomic_store_n(&m->seq, t->seq, __ATOMIC_RELEASE);
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
 *   Gc.* call's span is closed and reopened there too, so that it covers
 *   only the time the call itself stops the mutator, and spans of
 *   different threads never interleave.
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
    cause = S.next[kind];
    S.next[kind] = 0;
  }
  if (cause == 0) cause = S.scope;
  if (cause == 0 && kind < KIND_CAUSE_SLOTS) cause = S.pending[kind];
  return valid_cause(cause);
}

static void emit_cause(int cause, uint64_t now)
{
  int counter = ocgc_cause_counter((unsigned)cause);
  if (counter >= 0)
    caml_ocgc_emit_counter((unsigned)counter, now, 1);
  else
    caml_ocgc_emit_user_int(UEV_CAUSE_FIRST + (unsigned)cause, now, 1);
}

void caml_ocgc_cause(int kind, int cause)
{
  if (kind == CAML_OCGC_KIND_ALL) {
    S.next[OCGC_KIND_MINOR] = S.next[OCGC_KIND_MAJOR_SLICE] = cause;
  } else if (kind >= 0 && kind < KIND_CAUSE_SLOTS) {
    S.next[kind] = cause;
  }
}

void caml_ocgc_request(int kind, int cause)
{
  if (kind >= 0 && kind < KIND_CAUSE_SLOTS && S.pending[kind] == 0)
    S.pending[kind] = cause;
}

void caml_ocgc_resize_minor(void)
{
  S.next[OCGC_KIND_MINOR] = OCGC_CAUSE_MINOR_HEAP_RESIZE;
  S.pending[OCGC_KIND_MINOR] = 0; /* the runtime clears requested_minor_gc */
}

int caml_ocgc_scope_enter(int cause)
{
  int old = S.scope;
  S.scope = cause;
  return old;
}

void caml_ocgc_scope_leave(int scope)
{
  S.scope = scope;
}

static void emit_explicit_span(int begin, unsigned id)
{
  if (!enter()) return;
  caml_ocgc_emit_span(begin, id, caml_ocgc_now());
  leave();
}

/* The saved state packs the scope's cause (below 256) and its span id. */
int caml_ocgc_foreign_begin(void)
{
  int saved = S.scope | (int)(S.scope_span << 8);
  if (S.scope_span != 0) emit_explicit_span(0, S.scope_span);
  S.scope = 0;
  S.scope_span = 0;
  return saved;
}

void caml_ocgc_foreign_end(int saved)
{
  S.scope = saved & 0xff;
  S.scope_span = (unsigned)saved >> 8;
  if (S.scope_span != 0) emit_explicit_span(1, S.scope_span);
}

void caml_ocgc_alloc_trigger(int trigger)
{
  S.alloc_trigger = trigger;
}

/* caml_gc_dispatch is about to decide: note what it starts from. */
void caml_ocgc_dispatch(void)
{
  int minor_due = Caml_state->young_trigger == Caml_state->young_alloc_start;
  int trigger = S.alloc_trigger;
  S.alloc_trigger = 0;
  S.plan_minor_due = minor_due;
  S.plan_idle = caml_gc_phase == Phase_idle;
  /* An allocation found no room: the trigger at the heap's start means the
   * minor heap is full; at its middle, that the slice it paces is due. */
  S.plan_trigger = trigger == 0 ? 0
                   : !minor_due ? OCGC_CAUSE_MAJOR_SLICE_DUE
                   : trigger == CAML_OCGC_TRIGGER_FROM_CAML ? OCGC_CAUSE_MINOR_HEAP_FULL
                   : trigger == CAML_OCGC_TRIGGER_FROM_C ? OCGC_CAUSE_MINOR_HEAP_FULL_C
                                                         : OCGC_CAUSE_MEMPROF;
}

/* caml_gc_dispatch clears the runtime's request flag for [kind] and runs
 * that collection: give it its cause and clear the mirror. */
void caml_ocgc_dispatch_runs(int kind)
{
  int minor = kind == OCGC_KIND_MINOR;
  int cause = 0;

  if (kind < 0 || kind >= KIND_CAUSE_SLOTS) return;
  if (minor ? S.plan_minor_due : !S.plan_minor_due) cause = S.plan_trigger;
  if (cause == 0) cause = S.scope;
  if (cause == 0) cause = S.pending[kind];
  if (minor) {
    /* A minor collection nobody asked for runs on behalf of the major
     * slice that needs an empty minor heap (the requested one, or the one
     * that starts a cycle). */
    if (cause == 0) cause = S.pending[OCGC_KIND_MAJOR_SLICE];
  } else if (cause == 0 && !S.plan_minor_due) {
    /* Whoever called, a dispatch with the trigger at the middle of the
     * minor heap runs the slice that half a heap of allocation made due. */
    cause = OCGC_CAUSE_MAJOR_SLICE_DUE;
  }
  if (cause == 0 && S.plan_idle) cause = OCGC_CAUSE_MAJOR_CYCLE_START;
  if (S.next[kind] == 0) S.next[kind] = cause;
  S.pending[kind] = 0;
}

/* ---- collections ------------------------------------------------------------- */

static void collection_enter(int kind, int cause, uint64_t now)
{
  if (S.depth++ == 0) S.outer_start = now;
  if (S.kind_depth[kind]++ == 0) {
    S.kind_start[kind] = now;
    S.kind_cause[kind] = cause;
  }
}

static void collection_leave(int kind, uint64_t now)
{
  if (S.kind_depth[kind] > 0 && --S.kind_depth[kind] == 0) {
    int cause = S.kind_cause[kind];
    S.t.kind_time_ns[kind] += now - S.kind_start[kind];
    S.t.by_cause[kind][cause]++;
    mark_dirty((unsigned)kind * OCGC_CAUSE_SLOTS + (unsigned)cause);
  }
  if (S.depth > 0 && --S.depth == 0) S.t.gc_time_ns += now - S.outer_start;
}

static void flush_direct(uint64_t now)
{
  if (S.direct_pending) {
    caml_ocgc_emit_user_int(UEV_DIRECT_ALLOC, now, S.direct_pending);
    S.direct_pending = 0;
  }
}

static void collection_begin(int kind, unsigned phase, uint64_t now)
{
  int cause = take_cause(kind);
  flush_direct(now);
  emit_cause(cause, now);
  caml_ocgc_emit_span(1, phase, now);
  collection_enter(kind, cause, now);
}

static void collection_end(int kind, unsigned phase, uint64_t now)
{
  caml_ocgc_emit_span(0, phase, now);
  collection_leave(kind, now);
  sync_totals(now);
}

void caml_ocgc_minor_begin(uintptr_t young_words)
{
  uint64_t now;
  if (!enter()) return;
  now = caml_ocgc_now();
  collection_begin(OCGC_KIND_MINOR, OCGC_PH_MINOR, now);
  caml_ocgc_emit_counter(OCGC_CT_MINOR_ALLOCATED, now, (uint64_t)young_words * 8);
  leave();
}

void caml_ocgc_minor_end(uintptr_t promoted_words)
{
  uint64_t now;
  if (!enter()) return;
  now = caml_ocgc_now();
  caml_ocgc_emit_counter(OCGC_CT_MINOR_PROMOTED, now, (uint64_t)promoted_words * 8);
  collection_end(OCGC_KIND_MINOR, OCGC_PH_MINOR, now);
  leave();
}

/* caml_empty_minor_heap found nothing to collect: the cause meant for this
 * collection is void.  A pending request is not: the runtime's flag is
 * still set (a dispatch has cleared both already). */
void caml_ocgc_minor_none(void)
{
  S.next[OCGC_KIND_MINOR] = 0;
}

void caml_ocgc_slice_begin(void)
{
  if (!enter()) return;
  S.slice_work = 0;
  collection_begin(OCGC_KIND_MAJOR_SLICE, OCGC_PH_MAJOR_SLICE, caml_ocgc_now());
  leave();
}

void caml_ocgc_slice_work(intptr_t work)
{
  S.slice_work = work > 0 ? (uint64_t)work : 0;
}

void caml_ocgc_slice_end(void)
{
  uint64_t now;
  if (!enter()) return;
  now = caml_ocgc_now();
  S.t.major_slices++;
  caml_ocgc_emit_user_int(UEV_SLICE_WORK, now, S.slice_work);
  collection_end(OCGC_KIND_MAJOR_SLICE, OCGC_PH_MAJOR_SLICE, now);
  leave();
}

void caml_ocgc_finish_begin(void)
{
  if (!enter()) return;
  collection_begin(OCGC_KIND_MAJOR_FINISH, OCGC_PH_MAJOR_FINISH_CYCLE, caml_ocgc_now());
  leave();
}

void caml_ocgc_finish_end(void)
{
  if (!enter()) return;
  collection_end(OCGC_KIND_MAJOR_FINISH, OCGC_PH_MAJOR_FINISH_CYCLE, caml_ocgc_now());
  leave();
}

/* ---- spans ------------------------------------------------------------------ */

void caml_ocgc_phase(unsigned id, int begin)
{
  if (!enter()) return;
  caml_ocgc_emit_span(begin, id, stamp());
  leave();
}

/* A Gc.* primitive.  Its direct collections are explicit; whatever runs in
 * its pending actions is not, and its span is cut there (see "causes").
 * No other scope can be open when OCaml code calls a primitive, so the end
 * returns to none. */
void caml_ocgc_explicit(unsigned id, int begin)
{
  S.scope = begin ? OCGC_CAUSE_EXPLICIT : 0;
  S.scope_span = begin ? id : 0;
  emit_explicit_span(begin, id);
}

void caml_ocgc_compaction(int begin)
{
  if (!enter()) return;
  if (begin) collection_begin(OCGC_KIND_COMPACTION, OCGC_PH_COMPACT, caml_ocgc_now());
  else collection_end(OCGC_KIND_COMPACTION, OCGC_PH_COMPACT, caml_ocgc_now());
  leave();
}

/* ---- major cycle and heap ------------------------------------------------------ */

/* One user int event at an inner timestamp. */
static void emit_point(unsigned slot, uint64_t value)
{
  if (!enter()) return;
  caml_ocgc_emit_user_int(slot, stamp(), value);
  leave();
}

void caml_ocgc_cycle_start(void)
{
  emit_point(UEV_CYCLE_START, (uint64_t)Caml_state->stat_major_collections + 1);
}

void caml_ocgc_cycle_end(void)
{
  emit_point(UEV_CYCLE_END, (uint64_t)Caml_state->stat_major_collections);
  /* sweep_slice asks for a minor collection so the next cycle can start. */
  caml_ocgc_request(OCGC_KIND_MINOR, OCGC_CAUSE_MAJOR_CYCLE_START);
}

void caml_ocgc_forced_major(void)
{
  emit_point(UEV_FORCED_MAJOR, (uint64_t)Caml_state->stat_forced_major_collections);
}

void caml_ocgc_heap_change(int grew)
{
  uint64_t now;
  if (!enter()) return;
  now = stamp();
  caml_ocgc_emit_user_int(grew ? UEV_HEAP_GROW : UEV_HEAP_SHRINK, now,
                          (uint64_t)Caml_state->stat_heap_wsz);
  sync_totals(now);
  leave();
}

/* Called once the allocation has succeeded (it may raise Out_of_memory). */
void caml_ocgc_direct_alloc(uintptr_t wosize)
{
  S.direct_pending += (uint64_t)wosize + 1;
  S.t.direct_major_words += (uint64_t)wosize + 1;
}

/* ---- ring start and stop -------------------------------------------------- */

void caml_ocgc_started(uint64_t parent_pid)
{
  uint64_t now = caml_ocgc_now();
  /* A new file (a forked child's) starts from zeroed totals: publish every
   * cell, since the counts carry over from the parent as Gc's own do. */
  S.ndirty = DIRTY_MAX + 1;
  caml_ocgc_emit_lifecycle(OCGC_LC_RING_START, now, (uint64_t)getpid());
  if (parent_pid != 0) caml_ocgc_emit_lifecycle(OCGC_LC_FORK_CHILD, now, parent_pid);
  sync_totals(now);
}

void caml_ocgc_stop(void)
{
  uint64_t now;
  if (caml_ocgc_ring.data == NULL) return;
  now = caml_ocgc_now();
  flush_direct(now);
  caml_ocgc_emit_lifecycle(OCGC_LC_RING_STOP, now, 0);
  sync_totals(now);
  __atomic_store_n(&caml_ocgc_file.ext->exited_ns, now, __ATOMIC_RELAXED);
  /* Release: pairs with the reader's acquire load of state, so a reader that
   * sees EXITED also sees RING_STOP and the final totals. */
  __atomic_store_n(&caml_ocgc_file.ext->state, (uint64_t)OCGC_STATE_EXITED,
                   __ATOMIC_RELEASE);
}
