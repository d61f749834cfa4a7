/* follow.c - `make bench`, third figure for libocgc: follow a live process
 * with the aggregator, polling every INTERVAL_MS, until it exits; print
 * events read and lost and this reader's CPU use.  Public API only.
 *
 *   follow PID INTERVAL_MS */

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *s;
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  struct rusage ru;
  /* Live: from now on (the oldest events of a full ring are about to go). */
  struct ocgc_agg_opts ao = {.sz = sizeof ao, .start = OCGC_START_NOW};
  double t0, wall, cpu;
  int interval, err;

  if (argc < 3) { fprintf(stderr, "usage: follow PID INTERVAL_MS\n"); return 0; }
  interval = atoi(argv[2]);
  t0 = now_s();
  if ((err = ocgc_source_open_pid(atoi(argv[1]), NULL, &src)) != 0 ||
      (err = ocgc_agg_new(src, &ao, &agg)) != 0) {
    printf("follow: %s\n", ocgc_strerror(err));
    return 0;
  }
  printf("attach: %.2f ms from pid to a polling aggregator\n", (now_s() - t0) * 1e3);
  while (ocgc_source_check_alive(src) == 0) {
    if (ocgc_agg_poll(agg) < 0) break;
    usleep((useconds_t)interval * 1000);
  }
  (void)ocgc_agg_poll(agg);
  wall = now_s() - t0;
  getrusage(RUSAGE_SELF, &ru);
  cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  if (ocgc_agg_snapshot(agg, &s) == 0) {
    ocgc_snapshot_counters(s, &c);
    printf("events read %llu, lost %llu (%s), over %.2f s: %.0f events/s\n",
           (unsigned long long)c.events_seen, (unsigned long long)c.events_lost,
           c.lost_exact ? "exact" : "estimated", wall, (double)c.events_seen / wall);
    printf("reader CPU %.3f s = %.2f%% of a core; max RSS %ld KiB\n", cpu, 100 * cpu / wall,
           ru.ru_maxrss);
    ocgc_snapshot_free(s);
  }
  ocgc_agg_free(agg);
  ocgc_source_close(src);
  return 0;
}
