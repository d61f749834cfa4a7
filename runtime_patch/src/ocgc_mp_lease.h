/* ocgc_mp_lease.h - the producer's side of the rate leases
 * (ocgc_mp_lease.c), as ocgc_memprof.c and the hooks' poll see it. */
#ifndef CAML_OCGC_MP_LEASE_H
#define CAML_OCGC_MP_LEASE_H

#include <stdint.h>

#include "ocgc/wire.h"

/* A slot unchanged for longer than this, in the producer's clock, is
 * dead: its holder renews every second (libocgc's memprof_lease.c). */
#define CAML_OCGC_LEASE_NS UINT64_C(10000000000)

/* What the inline check below reads: the file's slots (NULL: no file) and
 * whether a slot was last seen held (its end or expiry must be noticed). */
struct caml_ocgc_lease_view {
  uint64_t *slots;
  int held;
};
extern struct caml_ocgc_lease_view caml_ocgc_lease_view;

/* The slots of a new file (the header's reserved[0..]): all free. */
void caml_ocgc_lease_attach(uint64_t *reserved);
/* A forked child: its parent's leases are not its own (its rate is the
 * base again); nonzero when the rate in force must change. */
int caml_ocgc_lease_forked(void);
/* The base rate (OCGC_MEMPROF's, then the control word's): 0 off. */
void caml_ocgc_lease_set_base(uint64_t bytes);
/* The rate to sample at: the finest of the base and the live leases. */
uint64_t caml_ocgc_lease_rate(void);
/* Read the slots at [now]: nonzero when what is published changed (the
 * rate to sample at, the live slots, the refused count). */
int caml_ocgc_lease_poll(uint64_t now);
/* Store the producer's lease words into [reserved] (the header's), inside
 * the table's seqlock. */
void caml_ocgc_lease_publish(uint64_t *reserved);

/* Whether caml_ocgc_lease_poll has anything to look at: one to four
 * relaxed loads per minor collection while no slot is held. */
static inline int caml_ocgc_lease_due(void)
{
  const uint64_t *s = caml_ocgc_lease_view.slots;
  uint64_t any = 0;
  unsigned i;
  if (s == NULL) return 0;
  if (caml_ocgc_lease_view.held) return 1;
  for (i = 0; i < OCGC_MP_LEASE_SLOTS; i++) any |= __atomic_load_n(&s[i], __ATOMIC_RELAXED);
  return any != 0;
}

#endif /* CAML_OCGC_MP_LEASE_H */
