/* top_spark.c - the last minute of `ocgc top`: the pause p99 and the
 * allocation rate of each second, and their sparklines.
 *
 * What it owns: an interval recorder over the aggregator (libocgc's
 * ocgc_interval: each second's pauses, each counted once, and the
 * allocation rate over the producer's clock, the same rules as `ocgc
 * stat`'s rows) and two rings of TOP_SPARK_SAMPLES values: memory fixed
 * after the start.
 *
 * Invariants: a sample covers the time since the previous one (after a
 * stall, one sample covers the stall, never a burst of them); a second
 * without a pause has no p99 (NaN, drawn as a space), not a p99 of 0; a
 * second in which the producer did not run allocated nothing. */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "top_spark.h"

int top_spark_start(struct top_spark *s, struct ocgc_agg *agg, uint64_t now_ns)
{
  memset(s, 0, sizeof *s);
  s->next_ns = now_ns + TOP_SPARK_PERIOD_NS;
  return ocgc_interval_new(agg, &s->iv);
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

int top_spark_tick(struct top_spark *s, uint64_t now_ns)
{
  struct ocgc_interval_figures f = OCGC_OPTS_INIT(struct ocgc_interval_figures);
  const struct ocgc_hist *h;
  int err;
  if (now_ns < s->next_ns) return 0;
  if ((err = ocgc_interval_next(s->iv, &f)) != 0) return err;
  h = ocgc_interval_pauses(s->iv);
  top_ring_push(&s->alloc_bps, f.rates.allocated_bytes_per_s);
  top_ring_push(&s->p99_ns, ocgc_hist_count(h) ? (double)ocgc_hist_percentile(h, 99) : NAN);
  s->samples++;
  s->next_ns += TOP_SPARK_PERIOD_NS;
  if (s->next_ns <= now_ns) s->next_ns = now_ns + TOP_SPARK_PERIOD_NS;
  return 1;
}

void top_spark_free(struct top_spark *s)
{
  ocgc_interval_free(s->iv);
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
