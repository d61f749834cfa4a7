/* rates.c - the one rule for the growth of counters and for rates between
 * two counters (rates.h), below every file that takes them: snapshots
 * (ocgc_snapshot_rates), intervals, timelines and the flight history.
 *
 * Invariants: every monotone count of OCGC_COUNTER_FIELDS grows, the rest
 * (gauges, flags, times) are the newer's; a count that went back grows by
 * 0, never wraps; rates need a newer time than the older's, else they are
 * all 0 and the answer says so. */

#include <errno.h>
#include <string.h>

#include "common/counter_fields.h"
#include "opts.h"
#include "rates.h"

/* *newer minus [older], 0 if that is less (a producer that restarted its
 * counts, or one that lies, gives no wrapped growth). */
static void sub0(uint64_t *newer, uint64_t older)
{
  *newer = *newer > older ? *newer - older : 0;
}

void ocgc_counters_growth(const struct ocgc_counters *older, const struct ocgc_counters *newer,
                          struct ocgc_counters *out)
{
  struct ocgc_counters g = OCGC_OPTS_INIT(struct ocgc_counters);
  if (older == NULL || newer == NULL || out == NULL || out->sz < sizeof out->sz) return;
  g = *newer; /* gauges, flags and times: the newer's */
  g.sz = sizeof g;
  counters_each(OCGC_COUNTER_MONOTONE, &g, older, sub0);
  (void)opts_write(out, &g, sizeof g);
}

static double per_s(uint64_t newer, uint64_t older, double seconds)
{
  return newer >= older ? (double)(newer - older) / seconds : 0.0;
}

int counters_rates(const struct ocgc_counters *o, const struct ocgc_counters *n,
                   struct ocgc_rates *out)
{
  double secs;
  unsigned k;
  memset(out, 0, sizeof *out);
  out->sz = sizeof *out;
  if (n->time_ns <= o->time_ns) return -EINVAL;
  secs = (double)(n->time_ns - o->time_ns) / 1e9;
  out->seconds = secs;
  /* by hand, not a loop over the counters' table: struct ocgc_rates (the
   * public API) has a field of its own for a few figures only, and a ratio */
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    out->collections_per_s[k] = per_s(n->collections[k], o->collections[k], secs);
  out->major_cycles_per_s = per_s(n->major_cycles, o->major_cycles, secs);
  out->allocated_bytes_per_s = per_s(n->allocated_bytes, o->allocated_bytes, secs);
  out->promoted_bytes_per_s = per_s(n->promoted_bytes, o->promoted_bytes, secs);
  if (n->allocated_bytes > o->allocated_bytes && n->promoted_bytes >= o->promoted_bytes)
    out->promotion_ratio = (double)(n->promoted_bytes - o->promoted_bytes) /
                           (double)(n->allocated_bytes - o->allocated_bytes);
  out->gc_time_share = per_s(n->gc_time_ns, o->gc_time_ns, secs) / 1e9;
  out->heap_bytes = n->heap_bytes;
  return 0;
}
