/* drain.c - the bounded drain: poll an aggregator or a cursor until it has
 * caught up with its producer, never longer than a bound that depends on
 * the ring's size (and the caller's deadline and stop flag), so that a
 * producer writing as fast as we read, or one holding its seqlock, cannot
 * keep an agent from its screen, its signals, its scrape or its end.
 *
 * Invariant: progress is counted from before the first poll (a drain that
 * passed no event at all still ends after 100 idle polls, or after one
 * that a held seqlock ended with nothing passed: polling again at once
 * would wait out the same seqlock for nothing; the next drain comes back
 * to it). */

#include <errno.h>

#include "agg.h"
#include "clock.h"
#include "opts.h"
#include "source.h"

#define IDLE_POLLS 100

/* Events a cursor has passed: what a drain counts as progress. */
static uint64_t passed(const struct ocgc_cursor_stats *st)
{
  return st->seen + st->skipped + st->lost;
}

uint64_t ocgc_source_drain_bound(const struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  if (ocgc_source_info(src, &info) != 0) return UINT64_C(1) << 22;
  return 4 * (info.max_domains ? info.max_domains : 1) * (info.ring_words / 2 + 1);
}

/* The loop of both drains; [poll] polls, [stats] fills *st. */
static int drain(int64_t (*poll)(void *), void (*stats)(const void *, struct ocgc_cursor_stats *),
                 void *h, const struct ocgc_source *src, const struct ocgc_drain_opts *opts,
                 struct ocgc_drain_result *out)
{
  struct ocgc_drain_opts o;
  struct ocgc_drain_result r = {sizeof r, 0, 0, 0, 0};
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  uint64_t first, last, busy;
  unsigned idle = 0;
  int err = opts_read(&o, sizeof o, opts);
  /* A result struct that cannot be filled is refused before any poll:
   * never a drain done and then called failed. */
  if (err != 0 || (out != NULL && out->sz < sizeof out->sz)) return -EINVAL;
  if (o.max_events == 0) o.max_events = ocgc_source_drain_bound(src);
  stats(h, &st);
  first = last = passed(&st);
  for (;;) {
    int64_t got;
    busy = st.busy_polls;
    r.polls++;
    if ((got = poll(h)) < 0) {
      err = (int)got;
      break;
    }
    stats(h, &st);
    idle = passed(&st) == last ? idle + 1 : 0;
    last = passed(&st);
    if (!st.behind || last - first >= o.max_events || idle >= IDLE_POLLS ||
        (o.stop != NULL && *o.stop))
      break;
    if (st.busy_polls > busy && idle > 0) break;
    if (o.deadline_ns != 0 && cm_mono_ns() >= o.deadline_ns) break;
  }
  r.passed = last - first;
  r.caught_up = err == 0 && !st.behind;
  r.stuck = err == 0 && st.behind && idle > 0;
  if (out != NULL) (void)opts_write(out, &r, sizeof r);
  return err;
}

static int64_t poll_agg(void *h) { return ocgc_agg_poll(h); }
static int64_t poll_cursor(void *h) { return ocgc_cursor_poll(h, 0); }
static void stats_agg(const void *h, struct ocgc_cursor_stats *st) { ocgc_agg_cursor_stats(h, st); }
static void stats_cursor(const void *h, struct ocgc_cursor_stats *st) { ocgc_cursor_stats(h, st); }

int ocgc_agg_drain(struct ocgc_agg *agg, const struct ocgc_drain_opts *opts,
                   struct ocgc_drain_result *out)
{
  if (agg == NULL) return -EINVAL;
  return drain(poll_agg, stats_agg, agg, agg->src, opts, out);
}

int ocgc_cursor_drain(struct ocgc_cursor *cur, const struct ocgc_drain_opts *opts,
                      struct ocgc_drain_result *out)
{
  if (cur == NULL) return -EINVAL;
  return drain(poll_cursor, stats_cursor, cur, cursor_source(cur), opts, out);
}
