/* ocgc_hooks.c - what the GC hook sites mean: collection spans, the cause of
 * each collection, and the cumulative totals in the extension block.
 *
 * Invariants:
 * - Each collection (minor, major slice, forced cycle end, compaction) is
 *   one span, preceded at the same timestamp by exactly one cause event.
 * - MINOR spans are written only for collections that Gc counts, so their
 *   number equals Gc minor_collections; COMPACT spans equal Gc compactions.
 * - A cause is resolved when its collection begins: a one-shot cause set at
 *   the triggering site, else the innermost scope (explicit Gc.* call,
 *   policy change, shutdown, automatic compaction), else the first pending
 *   request, else "unknown".  Pending and one-shot causes of a kind are
 *   consumed by the next collection of that kind, whoever claims it.
 * - The totals are a seqlock-protected mirror of the runtime's own Gc
 *   counters, refreshed at the end of every collection and heap change.
 * All functions run on the mutator thread with the runtime lock held. */

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

#define SCOPE_MAX 8
#define KIND_CAUSE_SLOTS 2 /* one-shot and pending causes: minor, major slice */
#define DIRTY_MAX 8        /* collections nest at most a few deep between syncs */

static struct {
  int oneshot[KIND_CAUSE_SLOTS];
  int pending[KIND_CAUSE_SLOTS];
  int scope[SCOPE_MAX];
  int scope_depth;
  int alloc_trigger;          /* 0, or a CAML_OCGC_TRIGGER_* */
  int depth;                  /* nesting of collections of any kind */
  uint64_t outer_start;
  int kind_depth[OCGC_KIND_COUNT];
  uint64_t kind_start[OCGC_KIND_COUNT];
  uint64_t slice_work;
  uint64_t direct_pending;    /* words not yet reported in the ring */
  struct ocgc_wire_totals t;  /* private copy; published by sync_totals() */
  unsigned dirty[DIRTY_MAX];  /* by_cause cells changed since the last sync */
  unsigned ndirty;            /* > DIRTY_MAX: publish them all */
} S;

/* Returns nonzero when there is a ring to write into; in a forked child the
 * first event makes the child's own file. */
static inline int ready(void)
{
  if (__builtin_expect(caml_ocgc_ring.data != NULL, 1)) return 1;
  return caml_ocgc_file.lazy && caml_ocgc_file_reopen();
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

/* ---- causes --------------------------------------------------------------- */

static int take_cause(int kind)
{
  int cause = OCGC_CAUSE_UNKNOWN;
  if (kind < KIND_CAUSE_SLOTS && S.oneshot[kind]) cause = S.oneshot[kind];
  else if (S.scope_depth > 0) cause = S.scope[S.scope_depth - 1];
  else if (kind < KIND_CAUSE_SLOTS && S.pending[kind]) cause = S.pending[kind];
  if (kind < KIND_CAUSE_SLOTS) {
    S.oneshot[kind] = 0;
    S.pending[kind] = 0;
  }
  return cause;
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
    S.oneshot[OCGC_KIND_MINOR] = S.oneshot[OCGC_KIND_MAJOR_SLICE] = cause;
  } else if (kind >= 0 && kind < KIND_CAUSE_SLOTS) {
    S.oneshot[kind] = cause;
  }
}

void caml_ocgc_request(int kind, int cause)
{
  if (kind >= 0 && kind < KIND_CAUSE_SLOTS && S.pending[kind] == 0)
    S.pending[kind] = cause;
}

void caml_ocgc_scope_begin(int cause)
{
  /* Deeper nesting than SCOPE_MAX cannot happen in 4.13; if it did, the
   * outer scopes would keep answering, which is still a true cause. */
  if (S.scope_depth < SCOPE_MAX) S.scope[S.scope_depth] = cause;
  S.scope_depth++;
}

void caml_ocgc_scope_end(void)
{
  if (S.scope_depth > 0) S.scope_depth--;
}

void caml_ocgc_alloc_trigger(int trigger)
{
  S.alloc_trigger = trigger;
}

/* Mirrors the decision caml_gc_dispatch is about to take. */
void caml_ocgc_dispatch(void)
{
  int minor_due = Caml_state->young_trigger == Caml_state->young_alloc_start;
  if (S.alloc_trigger) {
    if (minor_due)
      S.oneshot[OCGC_KIND_MINOR] =
          S.alloc_trigger == CAML_OCGC_TRIGGER_FROM_CAML ? OCGC_CAUSE_MINOR_HEAP_FULL
          : S.alloc_trigger == CAML_OCGC_TRIGGER_FROM_C  ? OCGC_CAUSE_MINOR_HEAP_FULL_C
                                                          : OCGC_CAUSE_MEMPROF;
    else
      S.oneshot[OCGC_KIND_MAJOR_SLICE] = OCGC_CAUSE_MAJOR_SLICE_DUE;
    S.alloc_trigger = 0;
  } else if (!minor_due) {
    /* Whoever called, a dispatch with the trigger at the middle of the minor
     * heap also runs the slice that half a minor heap of allocation made
     * due. */
    caml_ocgc_request(OCGC_KIND_MAJOR_SLICE, OCGC_CAUSE_MAJOR_SLICE_DUE);
  }
  /* A dispatch with the trigger at the end of the minor heap always empties
   * it; when nothing asked for a minor collection, it runs on behalf of the
   * major slice that was requested. */
  if (minor_due && !S.oneshot[OCGC_KIND_MINOR])
    caml_ocgc_request(OCGC_KIND_MINOR, S.pending[OCGC_KIND_MAJOR_SLICE]);
  if (caml_gc_phase == Phase_idle) {
    caml_ocgc_request(OCGC_KIND_MINOR, OCGC_CAUSE_MAJOR_CYCLE_START);
    caml_ocgc_request(OCGC_KIND_MAJOR_SLICE, OCGC_CAUSE_MAJOR_CYCLE_START);
  }
}

/* ---- collections ---------------------------------------------------------- */

static void enter(int kind, int cause, uint64_t now)
{
  if (S.depth++ == 0) S.outer_start = now;
  if (S.kind_depth[kind]++ == 0) S.kind_start[kind] = now;
  S.t.by_cause[kind][cause]++;
  mark_dirty((unsigned)kind * OCGC_CAUSE_SLOTS + (unsigned)cause);
}

static void leave(int kind, uint64_t now)
{
  if (S.kind_depth[kind] > 0 && --S.kind_depth[kind] == 0)
    S.t.kind_time_ns[kind] += now - S.kind_start[kind];
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
  enter(kind, cause, now);
}

static void collection_end(int kind, unsigned phase, uint64_t now)
{
  caml_ocgc_emit_span(0, phase, now);
  leave(kind, now);
  sync_totals(now);
}

void caml_ocgc_minor_begin(uintptr_t young_words)
{
  uint64_t now;
  if (!ready()) return;
  now = caml_ocgc_now();
  collection_begin(OCGC_KIND_MINOR, OCGC_PH_MINOR, now);
  caml_ocgc_emit_counter(OCGC_CT_MINOR_ALLOCATED, now, (uint64_t)young_words * 8);
}

void caml_ocgc_minor_end(uintptr_t promoted_words)
{
  uint64_t now;
  if (!ready()) return;
  now = caml_ocgc_now();
  caml_ocgc_emit_counter(OCGC_CT_MINOR_PROMOTED, now, (uint64_t)promoted_words * 8);
  collection_end(OCGC_KIND_MINOR, OCGC_PH_MINOR, now);
}

/* caml_empty_minor_heap found nothing to collect: the one-shot cause meant
 * for it is void, and so is any pending request (the heap is empty), which
 * would otherwise be charged to some later, unrelated collection. */
void caml_ocgc_minor_none(void)
{
  S.oneshot[OCGC_KIND_MINOR] = 0;
  S.pending[OCGC_KIND_MINOR] = 0;
}

void caml_ocgc_slice_begin(void)
{
  if (!ready()) return;
  S.slice_work = 0;
  collection_begin(OCGC_KIND_MAJOR_SLICE, OCGC_PH_MAJOR_SLICE, caml_ocgc_now());
}

void caml_ocgc_slice_work(intptr_t work)
{
  S.slice_work = work > 0 ? (uint64_t)work : 0;
}

void caml_ocgc_slice_end(void)
{
  uint64_t now;
  if (!ready()) return;
  now = caml_ocgc_now();
  S.t.major_slices++;
  caml_ocgc_emit_user_int(UEV_SLICE_WORK, now, S.slice_work);
  collection_end(OCGC_KIND_MAJOR_SLICE, OCGC_PH_MAJOR_SLICE, now);
}

void caml_ocgc_finish_begin(void)
{
  if (!ready()) return;
  collection_begin(OCGC_KIND_MAJOR_FINISH, OCGC_PH_MAJOR_FINISH_CYCLE, caml_ocgc_now());
}

void caml_ocgc_finish_end(void)
{
  if (!ready()) return;
  collection_end(OCGC_KIND_MAJOR_FINISH, OCGC_PH_MAJOR_FINISH_CYCLE, caml_ocgc_now());
}

/* ---- spans ---------------------------------------------------------------- */

void caml_ocgc_phase(unsigned id, int begin)
{
  if (!ready()) return;
  caml_ocgc_emit_span(begin, id, stamp());
}

void caml_ocgc_explicit(unsigned id, int begin)
{
  if (!ready()) return;
  if (begin) caml_ocgc_scope_begin(OCGC_CAUSE_EXPLICIT);
  else caml_ocgc_scope_end();
  caml_ocgc_emit_span(begin, id, caml_ocgc_now());
}

void caml_ocgc_compaction(int begin)
{
  if (!ready()) return;
  if (begin) collection_begin(OCGC_KIND_COMPACTION, OCGC_PH_COMPACT, caml_ocgc_now());
  else collection_end(OCGC_KIND_COMPACTION, OCGC_PH_COMPACT, caml_ocgc_now());
}

/* ---- major cycle and heap ------------------------------------------------- */

void caml_ocgc_cycle_start(void)
{
  if (!ready()) return;
  caml_ocgc_emit_user_int(UEV_CYCLE_START, stamp(),
                          (uint64_t)Caml_state->stat_major_collections + 1);
}

void caml_ocgc_cycle_end(void)
{
  if (!ready()) return;
  caml_ocgc_emit_user_int(UEV_CYCLE_END, stamp(),
                          (uint64_t)Caml_state->stat_major_collections);
  /* sweep_slice asks for a minor collection so the next cycle can start. */
  caml_ocgc_request(OCGC_KIND_MINOR, OCGC_CAUSE_MAJOR_CYCLE_START);
}

void caml_ocgc_forced_major(void)
{
  if (!ready()) return;
  caml_ocgc_emit_user_int(UEV_FORCED_MAJOR, stamp(),
                          (uint64_t)Caml_state->stat_forced_major_collections);
}

void caml_ocgc_heap_change(int grew)
{
  uint64_t now;
  if (!ready()) return;
  now = stamp();
  caml_ocgc_emit_user_int(grew ? UEV_HEAP_GROW : UEV_HEAP_SHRINK, now,
                          (uint64_t)Caml_state->stat_heap_wsz);
  sync_totals(now);
}

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
