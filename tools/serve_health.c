/* serve_health.c - what /-/healthy says: whether `ocgc serve` can answer
 * /metrics now.
 *
 * Invariant: it says ok only if the poll thread ended a turn within
 * SERVE_HEALTH_TURN_NS (the rings are being read) and the last /metrics
 * answer it rendered is whole (not over SERVE_BUF_MAX gzipped, not cut by a
 * lack of memory: such an answer is a 500 to every scrape); otherwise its
 * sentence says which of the two failed. */
#include <stdio.h>

#include "serve.h"

int serve_health(uint64_t turn_age_ns, int metrics_failed, char *why, size_t n)
{
  if (turn_age_ns >= SERVE_HEALTH_TURN_NS) {
    snprintf(why, n, "unhealthy: the rings have not been read for %.1f s\n",
             (double)turn_age_ns / 1e9);
    return 0;
  }
  if (metrics_failed) {
    snprintf(why, n, "unhealthy: the last answer to /metrics could not be made (over "
             "%u MiB gzipped, or out of memory)\n", SERVE_BUF_MAX >> 20);
    return 0;
  }
  snprintf(why, n, "ok\n");
  return 1;
}
