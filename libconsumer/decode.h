/* decode.h - the event word format (wire.h) into struct ocgc_event: one
 * event from a word buffer (private).
 *
 * Invariant: an event is accepted only if its length is the one its type
 * (and, for lifecycle events, its id) has in format version 1 and its
 * reserved bits are zero, so a reader that trusts the returned length never
 * walks outside what it copied.  Inline: it runs once per event, in the
 * cursor's innermost loop. */
#ifndef OCGC_DECODE_H
#define OCGC_DECODE_H

#include <stdint.h>

#include "ocgc/consumer.h"

/* Whether [len] is the length a runtime event of [type] and [id] has. */
static inline int ocgc_rt_length_ok(unsigned type, unsigned id, uint64_t len)
{
  switch (type) {
  case OCGC_RT_PADDING: return len >= 1;
  case OCGC_RT_LIFECYCLE: return len == (id == OCGC_LC_RING_STOP ? 2u : 3u);
  case OCGC_RT_BEGIN:
  case OCGC_RT_END: return len == 2;
  case OCGC_RT_COUNTER: return len == 3;
  case OCGC_RT_ALLOC: return len == 22;
  default: return 0;
  }
}

static inline int ocgc_user_length_ok(unsigned type, uint64_t len)
{
  switch (type) {
  case OCGC_USER_UNIT:
  case OCGC_USER_SPAN_BEGIN:
  case OCGC_USER_SPAN_END: return len == 2;
  case OCGC_USER_INT: return len == 3;
  case OCGC_USER_CUSTOM: return len >= 3;
  default: return 0;
  }
}

/* Decode the event starting at w[0], with [avail] words available.
 * Returns its length in words (>= 1), 0 if it does not fit in [avail] yet,
 * or OCGC_E_CORRUPT.  Sets *padding for a padding record (ev then holds
 * nothing useful); otherwise fills ev (ring and name are the caller's). */
static inline int64_t ocgc_decode(const uint64_t *w, uint64_t avail, struct ocgc_event *ev, int *padding)
{
  uint64_t h = w[0];
  uint64_t len = OCGC_EV_LENGTH(h);
  unsigned user = OCGC_EV_IS_USER(h), type = OCGC_EV_TYPE(h), id = OCGC_EV_ID(h);

  if (len == 0 || len > OCGC_WIRE_MAX_EVENT_WORDS || (h & OCGC_EV_RESERVED_MASK))
    return OCGC_E_CORRUPT;
  if (user ? !ocgc_user_length_ok(type, len) : !ocgc_rt_length_ok(type, id, len)) return OCGC_E_CORRUPT;
  if (!user && type == OCGC_RT_PADDING) {
    if (id != 0) return OCGC_E_CORRUPT;
    *padding = 1;
    return len > avail ? 0 : (int64_t)len;
  }
  *padding = 0;
  if (len > avail) return 0;
  ev->timestamp = w[1];
  ev->user = user;
  ev->type = type;
  ev->id = id;
  ev->payload = w + 2;
  ev->payload_words = (unsigned)(len - 2);
  ev->value = len > 2 ? w[2] : 0;
  ev->name = NULL;
  return (int64_t)len;
}

#endif /* OCGC_DECODE_H */
