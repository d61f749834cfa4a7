/* ocgc_ring.c - the producer ring's cold path: wrap and overwrite.
 *
 * Invariants (with ocgc_ring.h): head <= tail; tail - head <= size - 1; head
 * and tail always sit on event boundaries; an event never straddles the end
 * of the ring (a padding record, type 0 id 0, no timestamp, fills the gap);
 * the shared head and the ext block's (head_pos, head_events) are published
 * before any word below the new head is overwritten. */

#define CAML_INTERNALS
#include "ocgc_clock.h"
#include "ocgc_ring.h"

struct caml_ocgc_ring caml_ocgc_ring;
struct caml_ocgc_clock caml_ocgc_clock;

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
  /* When old events must go, free 1/32 of the ring beyond what this event
   * needs, so that the writes that follow find room without publishing a
   * new head each time (a full ring would otherwise pay for it per event). */
  uint64_t room = r->tail + pad + len - head > r->mask ? r->mask - (r->size >> 5) : r->mask;

  while (head < r->tail && r->tail + pad + len - head > room) {
    uint64_t h = __atomic_load_n(&r->data[head & r->mask], __ATOMIC_RELAXED);
    uint64_t l = OCGC_EV_LENGTH(h);
    if (l == 0 || l > r->tail - head) {
      /* Our own words were overwritten by someone else (the file is
       * writable by its owner): drop everything rather than walk garbage. */
      head = r->tail;
      r->head_events = r->written;
      break;
    }
    if (OCGC_EV_IS_USER(h) || OCGC_EV_TYPE(h) != OCGC_RT_PADDING)
      r->head_events++;
    head += l;
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
