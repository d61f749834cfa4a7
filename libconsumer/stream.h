/* stream.h - what the aggregator reads from a collection stream besides
 * its public API (private). */
#ifndef OCGC_STREAM_H
#define OCGC_STREAM_H

#include <stdint.h>

#include "ocgc/consumer.h"

/* Stock OCaml 5 files: major cycles completed, each counted once however
 * many domains wrote its MAJOR_GC_CYCLE_DOMAINS span (stw.c). */
uint64_t stream_stw_cycles(const struct ocgc_stream *st);


#endif /* OCGC_STREAM_H */
