/* caml/ocgc.h - the ocgc producer's hooks, as the patched runtime sees them.
 *
 * Every hook is called through CAML_OCGC(), which costs one load and one
 * predictable branch when the ring is off (OCGC_DISABLE set, or creation
 * failed).  All hooks run with the runtime lock held: OCaml 4 has a single
 * mutator, so the ring has a single writer (the exit handler, which may run
 * on any thread, takes the ring over only after a handshake, see
 * ocgc_ring.h).  Added by ocgc; not part of upstream OCaml. */
#ifndef CAML_OCGC_H
#define CAML_OCGC_H

#ifdef CAML_INTERNALS

#include <stdint.h>

/* Nonzero while the hooks must run (ring live, or lazily re-created in a
 * forked child).  Written by the mutator at startup and by the exit handler,
 * which may run on another thread: hence the relaxed atomic load (a plain
 * load on every CPU we build for). */
extern int caml_ocgc_enabled;

#define CAML_OCGC(call)                                                        \
  do {                                                                         \
    if (__atomic_load_n(&caml_ocgc_enabled, __ATOMIC_RELAXED)) call;           \
  } while (0)

/* ocgc's collection kinds and causes, under the runtime's own prefix, as
 * the hook sites name them: CAML_OCGC_KIND_<K> and CAML_OCGC_CAUSE_<C> for
 * every row of the tables in wire.h (which the build copies to
 * runtime/ocgc/wire.h), and CAML_OCGC_KIND_ALL. */
#include "../ocgc/wire.h"

#define CAML_OCGC_KIND_ROW_(suffix, num, name, phase) \
  CAML_OCGC_KIND_##suffix = OCGC_KIND_##suffix,
#define CAML_OCGC_CAUSE_ROW_(suffix, num, name, counter) \
  CAML_OCGC_CAUSE_##suffix = OCGC_CAUSE_##suffix,
enum { OCGC_KIND_TABLE(CAML_OCGC_KIND_ROW_) CAML_OCGC_KIND_ALL = -1 };
enum { OCGC_CAUSE_TABLE(CAML_OCGC_CAUSE_ROW_) };
#undef CAML_OCGC_KIND_ROW_
#undef CAML_OCGC_CAUSE_ROW_

/* Why caml_gc_dispatch is about to run for lack of room in the minor heap
 * (argument of caml_ocgc_alloc_trigger). */
#define CAML_OCGC_TRIGGER_FROM_C 1
#define CAML_OCGC_TRIGGER_FROM_CAML 2
#define CAML_OCGC_TRIGGER_MEMPROF 3

/* Startup (replaces CAML_EVENTLOG_INIT): read the environment, create the
 * ring.  Never fails the program: on error, one line on stderr. */
void caml_ocgc_init(void);

/* Spans, with OCaml 5.2 phase ids (OCGC_PH_*; the 4.13 eventlog probes
 * reach them through caml/ocgc_eventlog.h): a Gc.* call that collects,
 * inside which collections are "explicit"; Gc.set or Gc.stat; a plain
 * phase; a compaction (a collection of its own).  One span per Gc.* call,
 * which ends at the call's first pending action if it runs any (see
 * "Gc.* calls" in ocgc_hooks.c).  raise: the runtime raises an exception
 * from C (caml_raise), which ends the open call's span and scopes. */
void caml_ocgc_explicit(unsigned id, int begin);
void caml_ocgc_call(unsigned id, int begin);
void caml_ocgc_raise(void);

/* The sub-phase spans written: bit [id] set for a phase whose spans are
 * (OCGC_PHASES, read at start: caml_ocgc_set_phases).  Tested inline, at
 * the probe, so a phase not written costs a load and a branch. */
extern uint64_t caml_ocgc_phase_mask;
void caml_ocgc_set_phases(int level);
void caml_ocgc_phase_begin(unsigned id);
void caml_ocgc_phase_end(unsigned id);

static inline void caml_ocgc_phase(unsigned id, int begin)
{
  if (caml_ocgc_phase_mask >> id & 1) {
    if (begin) caml_ocgc_phase_begin(id);
    else caml_ocgc_phase_end(id);
  }
}
void caml_ocgc_compaction(int begin);

/* Collections.  minor_begin/end bracket the non-empty branch of
 * caml_empty_minor_heap, so MINOR spans equal Gc minor_collections. */
void caml_ocgc_minor_begin(uintptr_t young_words);
void caml_ocgc_minor_end(uintptr_t promoted_words);
void caml_ocgc_minor_none(void);
void caml_ocgc_slice_begin(void);
void caml_ocgc_slice_work(intptr_t work);
void caml_ocgc_slice_end(void);
void caml_ocgc_finish_begin(void);
void caml_ocgc_finish_end(void);

/* Causes (see "causes" in ocgc_hooks.c for the rules).
 * alloc_trigger: the minor heap has no room for an allocation, and
 *   caml_gc_dispatch follows;
 * dispatch: caml_gc_dispatch is about to decide; dispatch_runs: it has
 *   cleared the runtime's request flag for [kind] and runs that collection;
 *   dispatch_end: it returns (dispatch and dispatch_end bound one stop
 *   scope, see "stops" in ocgc_hooks.c);
 * cause: a one-shot cause for the collection of [kind] that the caller
 *   runs next, itself;
 * resize_minor: caml_set_minor_heap_wsz empties the minor heap (and clears
 *   requested_minor_gc);
 * request: the runtime sets its request flag for [kind]; the first cause
 *   since the flag was last cleared wins;
 * scope_enter/leave: every collection that the caller runs directly until
 *   scope_leave is caused by [cause]; scope_enter returns the scope to hand
 *   back to scope_leave, which the caller keeps on its own stack;
 * foreign_begin/end: around code that runs OCaml code and may give the
 *   runtime lock away (pending actions): no scope, no stop and no Gc.*
 *   span of the caller's stays open meanwhile; foreign_begin returns what
 *   foreign_end must restore.  These four work with the ring off too. */
void caml_ocgc_alloc_trigger(int trigger);
void caml_ocgc_dispatch(void);
void caml_ocgc_dispatch_runs(int kind);
void caml_ocgc_dispatch_end(void);
void caml_ocgc_cause(int kind, int cause);
void caml_ocgc_resize_minor(void);
void caml_ocgc_request(int kind, int cause);
int caml_ocgc_scope_enter(int cause);
void caml_ocgc_scope_leave(int scope);
int caml_ocgc_foreign_begin(void);
void caml_ocgc_foreign_end(int saved);

/* Points in the major GC's life and the heap's. */
void caml_ocgc_cycle_start(void);
void caml_ocgc_cycle_end(void);
void caml_ocgc_forced_major(void);
void caml_ocgc_heap_change(int grew);
/* The program's own Gc.Memprof was started (1) or stopped (0): said in the
 * totals at once (memprof.c). */
void caml_ocgc_memprof(int started);
void caml_ocgc_direct_alloc(uintptr_t wosize);

/* ocgc's own allocation sampling (ocgc_memprof.c), called by memprof.c
 * only while the program's own Gc.Memprof is not started (its lambda 0 and
 * its [started] 0), so that a program running Gc.Memprof sees a stock
 * runtime.  caml_ocgc_mp_on is nonzero while ocgc samples (its rate not
 * 0); only the runtime lock's holder writes it.
 *   young_trigger: where in the minor heap the next sampled word lies, for
 *     caml_memprof_renew_minor_sample: drawn when an allocation crossed the
 *     last one, the minor heap was emptied or made anew, the rate changed
 *     or the program's Gc.Memprof stopped; never at a thread switch or a
 *     blocking section (caml_memprof_set_suspended), where it stays valid;
 *   young: the allocation that crossed that trigger (from
 *     caml_memprof_track_young, before the blocks are initialised);
 *   block: a block made outside the minor heap's fast path ([words]: its
 *     words, header included, or a custom block's bytes outside the heap in
 *     words; kind CAML_OCGC_MP_*);
 *   interned: the blocks unmarshalled into [block, blockend);
 *   minor_update, clean_phase, invert: what the collector tells
 *     statmemprof's tracked blocks, told to ocgc's too;
 *   cycle_start: a marking begins (from caml_ocgc_cycle_start): in use
 *     is what a marking finds live of what was sampled before it. */
#include "mlvalues.h"
extern int caml_ocgc_mp_on;
#define CAML_OCGC_MP(call)                                                     \
  do {                                                                         \
    if (caml_ocgc_mp_on) call;                                                 \
  } while (0)
#define CAML_OCGC_MP_MAJOR OCGC_MP_MAJOR
#define CAML_OCGC_MP_CUSTOM OCGC_MP_CUSTOM
value *caml_ocgc_mp_young_trigger(void);
void caml_ocgc_mp_young(uintnat wosize, int nallocs, unsigned char *encoded_alloc_lens);
void caml_ocgc_mp_block(value block, uintnat words, int kind);
void caml_ocgc_mp_interned(header_t *block, header_t *blockend);
void caml_ocgc_mp_minor_update(void);
void caml_ocgc_mp_clean_phase(void);
void caml_ocgc_mp_invert(void);
void caml_ocgc_mp_cycle_start(void);

#endif /* CAML_INTERNALS */

#endif /* CAML_OCGC_H */
