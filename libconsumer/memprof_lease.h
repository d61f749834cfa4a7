/* memprof_lease.h - memprof_lease.c's part of a copy (private to libocgc). */
#ifndef OCGC_MEMPROF_LEASE_H
#define OCGC_MEMPROF_LEASE_H

#include <stdint.h>

#include "ocgc/memprof.h"

/* The lease figures of a copy whose header words reserved[] are [reserved]
 * (copied under the table's seqlock) into [p]. */
void memprof_take_leases(struct ocgc_memprof *p, const uint64_t *reserved);

#endif /* OCGC_MEMPROF_LEASE_H */
