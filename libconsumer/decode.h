/* decode.h - one event from a word buffer (private). */
#ifndef OCGC_DECODE_H
#define OCGC_DECODE_H

#include <stdint.h>

#include "ocgc/consumer.h"

/* Decode the event starting at w[0], with [avail] words available.
 * Returns its length in words (>= 1), 0 if it does not fit in [avail] yet,
 * or OCGC_E_CORRUPT.  Sets *padding for a padding record (ev then holds
 * nothing useful); otherwise fills ev (ring and name are the caller's). */
int64_t ocgc_decode(const uint64_t *w, uint64_t avail, struct ocgc_event *ev, int *padding);

#endif /* OCGC_DECODE_H */
