/* ocgc_mp_lease.c - the producer's side of the rate leases: which rate the
 * program samples at, given its base rate (OCGC_MEMPROF's, or the last
 * control word's) and the lease slots that readers hold in the ring's
 * allocation-profile header (include/ocgc/wire.h, OCGC_MP_LEASE_*).
 *
 * The rule: the rate in force is the finest (fewest bytes between samples)
 * of the base rate, when it is not 0, and of the rates of the slots alive.
 * A slot is alive when its word is not 0, its rate within
 * OCGC_MP_RATE_MIN..MAX, and the word changed (its holder renewed it)
 * within CAML_OCGC_LEASE_NS of the producer's clock: the time of a change
 * is when a poll first saw the new word.  So a holder that died stops
 * counting at the first poll more than CAML_OCGC_LEASE_NS after the poll
 * that saw its last renewal, and nobody needs to clean up after it.
 *
 * Invariants:
 * - Nothing read from a slot steers more than one choice among bounded
 *   rates: a rate out of bounds is ignored (and counted as refused), a
 *   pid is never read, the work per poll is OCGC_MP_LEASE_SLOTS loads and
 *   at most as many compare-and-swaps.
 * - The producer writes a slot only to free a dead one, with a
 *   compare-and-swap from the word it found dead: a holder that renewed
 *   meanwhile, or a reader that claimed the slot, keeps its word.
 * - Pure C on the runtime's lock, with no OCaml runtime header, so that a
 *   unit test (tests/unit/test_mp_lease.c) runs the rule itself. */

#include <stddef.h>
#include <string.h>

#include "ocgc_mp_lease.h"

struct caml_ocgc_lease_view caml_ocgc_lease_view;

static struct {
  uint64_t seen[OCGC_MP_LEASE_SLOTS];  /* each slot's word at the last poll */
  uint64_t since[OCGC_MP_LEASE_SLOTS]; /* when that word was first seen */
  uint64_t base;                       /* the base rate, 0: off */
  uint64_t rate;                       /* in force: base or a lease's */
  uint64_t alive;                      /* mask of the slots alive */
  uint64_t refused;                    /* slot words out of bounds */
  int leased;                          /* rate is a lease's, finer than base */
} ls;

static void forget_slots(void)
{
  memset(ls.seen, 0, sizeof ls.seen);
  memset(ls.since, 0, sizeof ls.since);
  ls.alive = 0;
  ls.leased = 0;
  ls.rate = ls.base;
  caml_ocgc_lease_view.held = 0;
}

void caml_ocgc_lease_attach(uint64_t *reserved)
{
  forget_slots();
  ls.refused = 0;
  caml_ocgc_lease_view.slots = reserved;
}

int caml_ocgc_lease_forked(void)
{
  uint64_t before = ls.rate;
  caml_ocgc_lease_view.slots = NULL;
  forget_slots();
  return before != ls.rate;
}

static void choose(void)
{
  uint64_t best = 0;
  unsigned i;
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++)
    if (ls.alive & (UINT64_C(1) << i)) {
      uint64_t r = OCGC_MP_LEASE_RATE(ls.seen[i]);
      if (best == 0 || r < best) best = r;
    }
  ls.leased = best != 0 && (ls.base == 0 || best < ls.base);
  ls.rate = ls.leased ? best : ls.base;
}

void caml_ocgc_lease_set_base(uint64_t bytes)
{
  ls.base = bytes;
  choose();
}

uint64_t caml_ocgc_lease_rate(void) { return ls.rate; }

int caml_ocgc_lease_poll(uint64_t now)
{
  uint64_t *slots = caml_ocgc_lease_view.slots;
  uint64_t alive = 0, rate = ls.rate, refused = ls.refused, was_alive = ls.alive;
  int leased = ls.leased, held = 0;
  unsigned i;
  if (slots == NULL) return 0;
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++) {
    /* Acquire: pairs with the compare-and-swap (seq_cst) of the reader
     * that wrote the word (libocgc's memprof_lease.c). */
    uint64_t w = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE), r = OCGC_MP_LEASE_RATE(w);
    if (w != ls.seen[i]) {
      ls.seen[i] = w;
      ls.since[i] = now;
      if (w != 0 && (r < OCGC_MP_RATE_MIN || r > OCGC_MP_RATE_MAX)) ls.refused++;
    }
    if (w == 0) continue;
    if (now > ls.since[i] && now - ls.since[i] > CAML_OCGC_LEASE_NS) {
      /* Dead: freed, unless its word changed since the load (seq_cst:
       * pairs with the readers' own compare-and-swaps of the slot). */
      uint64_t expect = w;
      if (__atomic_compare_exchange_n(&slots[i], &expect, 0, 0, __ATOMIC_SEQ_CST,
                                      __ATOMIC_RELAXED))
        ls.seen[i] = 0;
      else
        held = 1; /* a new word: the next poll sees it */
      continue;
    }
    held = 1;
    if (r >= OCGC_MP_RATE_MIN && r <= OCGC_MP_RATE_MAX) alive |= UINT64_C(1) << i;
  }
  caml_ocgc_lease_view.held = held;
  ls.alive = alive;
  choose();
  return ls.rate != rate || ls.leased != leased || ls.refused != refused || alive != was_alive;
}

void caml_ocgc_lease_publish(uint64_t *reserved)
{
  uint64_t state = ls.alive | (ls.leased ? OCGC_MP_LEASE_IN_FORCE : 0);
  __atomic_store_n(&reserved[OCGC_MP_LEASE_STATE], state, __ATOMIC_RELAXED);
  __atomic_store_n(&reserved[OCGC_MP_LEASE_REFUSED], ls.refused, __ATOMIC_RELAXED);
  __atomic_store_n(&reserved[OCGC_MP_LEASE_BASE], ls.base, __ATOMIC_RELAXED);
  __atomic_store_n(&reserved[OCGC_MP_LEASE_NS], CAML_OCGC_LEASE_NS, __ATOMIC_RELAXED);
}
