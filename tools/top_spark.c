/* top_spark.c - the last minute of `ocgc top`: the pause p99 and the
 * allocation rate of each second, and their sparklines.
 *
 * What it owns: one pause histogram (the pauses of the second in progress,
 * fed by the aggregator's on_pause, so that a second's p99 is exact to the
 * histogram's 0.1% and never a difference of two cumulative copies, which
 * a pause still growing at a snapshot would spoil), two snapshots reused
 * (the counters at the last two samples: the allocation rate over the
 * producer's clock between them, ocgc_rates) and two rings of
 * TOP_SPARK_SAMPLES values: memory fixed after the start.
 *
 * Invariants: a sample covers the time since the previous one (after a
 * stall, one sample covers the stall, never a burst of them); a second
 * without a pause has no p99 (NaN, drawn as a space), not a p99 of 0; the
 * pauses of a stop of every domain count once (its first domain's, as the
 * aggregator's pause histogram counts them). */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "top_spark.h"

int top_spark_new(struct top_spark *s)
{
  memset(s, 0, sizeof *s);
  return ocgc_hist_new(&s->second);
}

void top_spark_on_pause(const struct ocgc_agg_pause *p, void *ctx)
{
  struct top_spark *s = ctx;
  if (!p->pause.stw_member) ocgc_hist_record(s->second, p->pause.duration_ns);
}

int top_spark_start(struct top_spark *s, struct ocgc_agg *agg, uint64_t now_ns)
{
  ocgc_hist_reset(s->second);
  s->next_ns = now_ns + TOP_SPARK_PERIOD_NS;
  return ocgc_agg_snapshot_update(agg, &s->prev);
}

void top_ring_push(struct top_ring *r, double v)
{
  r->v[r->head] = v;
  r->head = (r->head + 1) % TOP_SPARK_SAMPLES;
  if (r->n < TOP_SPARK_SAMPLES) r->n++;
}

/* The i-th newest value (0: the newest), i < r->n. */
static double ring_at(const struct top_ring *r, unsigned i)
{
  return r->v[(r->head + TOP_SPARK_SAMPLES - 1 - i) % TOP_SPARK_SAMPLES];
}

int top_spark_tick(struct top_spark *s, struct ocgc_agg *agg, uint64_t now_ns)
{
  struct ocgc_snapshot *t;
  struct ocgc_rates rates;
  int err;
  if (now_ns < s->next_ns) return 0;
  if ((err = ocgc_agg_snapshot_update(agg, &s->cur)) != 0) return err;
  /* No producer update in the second: nothing ran, nothing was allocated. */
  if (ocgc_rates(s->prev, s->cur, &rates) != 0) rates.allocated_bytes_per_s = 0;
  top_ring_push(&s->alloc_bps, rates.allocated_bytes_per_s);
  top_ring_push(&s->p99_ns, ocgc_hist_count(s->second)
                            ? (double)ocgc_hist_percentile(s->second, 99) : NAN);
  ocgc_hist_reset(s->second);
  t = s->prev;
  s->prev = s->cur;
  s->cur = t;
  s->samples++;
  s->next_ns += TOP_SPARK_PERIOD_NS;
  if (s->next_ns <= now_ns) s->next_ns = now_ns + TOP_SPARK_PERIOD_NS;
  return 1;
}

void top_spark_free(struct top_spark *s)
{
  ocgc_hist_free(s->second);
  ocgc_snapshot_free(s->prev);
  ocgc_snapshot_free(s->cur);
  memset(s, 0, sizeof *s);
}

double top_ring_last(const struct top_ring *r)
{
  return r->n ? ring_at(r, 0) : NAN;
}

double top_ring_max(const struct top_ring *r, unsigned width)
{
  double max = 0;
  unsigned i;
  for (i = 0; i < r->n && i < width; i++)
    if (!isnan(ring_at(r, i)) && ring_at(r, i) > max) max = ring_at(r, i);
  return max;
}

unsigned top_spark_line(const struct top_ring *r, unsigned width, int utf8, char *out,
                        size_t size)
{
  static const char ascii[] = "_.-:=+*#";
  unsigned shown = width < r->n ? width : r->n, i, drawn = 0;
  double max = top_ring_max(r, shown);
  size_t len = 0, step = utf8 ? 3 : 1;
  if (size == 0) return 0;
  for (i = shown; i-- > 0 && len + step < size; drawn++) {
    double v = ring_at(r, i);
    /* level 0..7: the value's eighth of the largest, rounded up, so that
     * only a zero is at the floor */
    int level = isnan(v) || max <= 0 ? 0 : (int)ceil(v / max * 8) - 1;
    if (level < 0) level = 0;
    if (level > 7) level = 7;
    if (isnan(v)) {
      out[len++] = ' ';
    } else if (utf8) { /* U+2581 + level: E2 96 81..88 */
      out[len++] = (char)0xe2;
      out[len++] = (char)0x96;
      out[len++] = (char)(0x81 + level);
    } else {
      out[len++] = ascii[level];
    }
  }
  out[len] = '\0';
  return drawn;
}
