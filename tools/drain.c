/* drain.c - the bounded drain of a reader (common.h): poll an aggregator or
 * a cursor until it has caught up, and never longer than a bound that
 * depends on the ring's size, so that a producer writing as fast as we
 * read, or one holding its seqlock, cannot keep a subcommand from its
 * screen, its signals or its end.
 *
 * Invariant: progress is counted from before the first poll (a drain that
 * passed no event at all still ends after 100 idle polls, or after one
 * that a held seqlock ended with nothing passed). */

#include "common.h"

/* Events a cursor has passed: what a drain counts as progress. */
static uint64_t passed(const struct ocgc_cursor_stats *st)
{
  return st->seen + st->skipped + st->lost;
}

/* The loop of every drain; [poll] polls, [stats] fills *st; [deadline]
 * (tool_now_ns(), 0: none) ends it too, and *stuck (may be NULL) says
 * whether it ended behind with a last poll that passed nothing. */
static int drain(int64_t (*poll)(void *), void (*stats)(const void *, struct ocgc_cursor_stats *),
                 void *h, uint64_t max_events, const volatile sig_atomic_t *stop,
                 uint64_t deadline, int *stuck)
{
  struct ocgc_cursor_stats st;
  uint64_t first, last, busy;
  unsigned idle = 0;
  if (stuck != NULL) *stuck = 0;
  stats(h, &st);
  first = last = passed(&st);
  for (;;) {
    int64_t got;
    busy = st.busy_polls;
    if ((got = poll(h)) < 0) return (int)got;
    stats(h, &st);
    idle = passed(&st) == last ? idle + 1 : 0;
    last = passed(&st);
    if (!st.behind || last - first >= max_events || idle >= 100 || (stop != NULL && *stop))
      break;
    /* A producer held its seqlock past the library's wait and nothing
     * moved: polling again at once would wait again for nothing (a
     * stopped producer, a liar); the next drain comes back to it. */
    if (st.busy_polls > busy && idle > 0) break;
    if (deadline != 0 && tool_now_ns() >= deadline) break;
  }
  if (stuck != NULL) *stuck = st.behind && idle > 0;
  return 0;
}

static int64_t poll_agg(void *h) { return ocgc_agg_poll(h); }
static int64_t poll_cursor(void *h) { return ocgc_cursor_poll(h, 0); }
static void stats_agg(const void *h, struct ocgc_cursor_stats *st) { ocgc_agg_cursor_stats(h, st); }
static void stats_cursor(const void *h, struct ocgc_cursor_stats *st) { ocgc_cursor_stats(h, st); }

int tool_drain_agg(struct ocgc_agg *agg, uint64_t max_events, const volatile sig_atomic_t *stop,
                   uint64_t deadline)
{
  return drain(poll_agg, stats_agg, agg, max_events, stop, deadline, NULL);
}

int tool_drain_agg_for(struct ocgc_agg *agg, uint64_t max_events, uint64_t max_ns, int *stuck)
{
  return drain(poll_agg, stats_agg, agg, max_events, NULL, tool_now_ns() + max_ns, stuck);
}

int tool_drain_cursor(struct ocgc_cursor *cur, uint64_t max_events,
                      const volatile sig_atomic_t *stop, uint64_t deadline)
{
  return drain(poll_cursor, stats_cursor, cur, max_events, stop, deadline, NULL);
}

uint64_t tool_drain_events(const struct ocgc_source *src)
{
  struct ocgc_source_info info;
  if (ocgc_source_info(src, &info) != 0) return UINT64_C(1) << 22;
  return 4 * (info.max_domains ? info.max_domains : 1) * (info.ring_words / 2 + 1);
}
