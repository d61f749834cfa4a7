/* rates.h - rates between two counters (private; code in rates.c, with
 * ocgc_counters_growth of ocgc/interval.h): the one rule of rates, for
 * snapshots and intervals alike. */
#ifndef OCGC_RATES_H
#define OCGC_RATES_H

#include "ocgc/consumer.h"

/* Rates from [o] to [n] into *out (zeroed): 0, or -EINVAL (out all 0) if
 * [n] is not later than [o]. */
int counters_rates(const struct ocgc_counters *o, const struct ocgc_counters *n,
                   struct ocgc_rates *out);

#endif /* OCGC_RATES_H */
