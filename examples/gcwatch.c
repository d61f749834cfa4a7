/* gcwatch.c - an example agent on libocgc: attach to an OCaml process by
 * pid and print, each second, the row `ocgc stat --json PID` prints (the
 * interval's counts, pause percentiles and heap, under the same names),
 * from the library's drain and interval recorder.  Copy it to start yours.
 *
 *   cc gcwatch.c $(pkg-config --cflags --libs ocgc) -o gcwatch
 *   ./gcwatch PID [SECONDS]
 *
 * It stops after SECONDS rows (10; 0: no limit), when the process exits
 * (after a last, shorter row, as ocgc stat), or within one poll of SIGINT
 * or SIGTERM (exit status 130 or 143, as a shell reports them). */
#define _POSIX_C_SOURCE 200809L /* sigaction, nanosleep */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ocgc/consumer.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { stop = sig; }

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A pause percentile in microseconds, null in an interval without one. */
static void pct(const char *name, const struct ocgc_hist *h, double p)
{
  if (ocgc_hist_count(h) == 0) printf(", \"%s\": null", name);
  else printf(", \"%s\": %.3f", name, (p > 100 ? ocgc_hist_max(h) : ocgc_hist_percentile(h, p)) / 1e3);
}

static void print_row(const struct ocgc_interval_figures *f, const struct ocgc_hist *h)
{
  const struct ocgc_counters *g = &f->growth;
  /* the fields by name, as a program of one's own would print them (the
   * table, OCGC_COUNTER_FIELDS, is there to loop over them all) */
  printf("{\"interval_s\": %.6f, \"minor_collections\": %" PRIu64 ", \"major_slices\": %" PRIu64
         ", \"major_cycles\": %" PRIu64 ", \"compactions\": %" PRIu64 ", \"forced_majors\": %" PRIu64
         ", \"pauses\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64 ", \"promoted_bytes\": %" PRIu64
         ", \"gc_time_ns\": %" PRIu64, f->rates_known ? f->rates.seconds : 0.0,
         g->collections[OCGC_KIND_MINOR], g->collections[OCGC_KIND_MAJOR_SLICE], g->major_cycles,
         g->collections[OCGC_KIND_COMPACTION], g->forced_majors, g->pauses, g->allocated_bytes,
         g->promoted_bytes, g->gc_time_ns);
  pct("pause_p50_us", h, 50);
  pct("pause_p99_us", h, 99);
  pct("pause_max_us", h, 101);
  printf(", \"heap_bytes\": %" PRIu64 ", \"events_lost\": %" PRIu64 ", \"exact\": %s}\n",
         g->heap_bytes, g->events_lost, g->exact ? "true" : "false");
  fflush(stdout);
}

int main(int argc, char **argv)
{
  struct ocgc_agg_opts go = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct sigaction sa = {.sa_handler = on_signal};
  struct ocgc_source *src = NULL;
  struct ocgc_agg *agg = NULL;
  struct ocgc_interval *iv = NULL;
  int pid = argc > 1 ? atoi(argv[1]) : 0, err, alive = 1;
  long rows = argc > 2 ? atol(argv[2]) : 10, n = 0;
  uint64_t next = now_ns() + 1000000000u;
  sigaction(SIGINT, &sa, NULL); /* also where a shell started us with it ignored */
  sigaction(SIGTERM, &sa, NULL);
  go.start = OCGC_START_NOW;
  if ((err = ocgc_source_open_pid(pid, NULL, &src)) == 0 && (err = ocgc_agg_new(src, &go, &agg)) == 0)
    err = ocgc_interval_new(agg, &iv);
  while (err == 0 && !stop && alive && (rows == 0 || n < rows)) {
    struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
    struct ocgc_interval_figures f = OCGC_OPTS_INIT(struct ocgc_interval_figures);
    const struct timespec tick = {0, 50000000};
    /* Alive before the drain: what it wrote before an exit is read whole. */
    alive = ocgc_source_check_alive(src) != OCGC_E_STALE;
    d.stop = &stop;
    d.deadline_ns = alive ? next : 0;
    if ((err = ocgc_agg_drain(agg, &d, NULL)) != 0 || stop) break;
    if (alive && now_ns() < next) {
      nanosleep(&tick, NULL);
      continue;
    }
    if ((err = ocgc_interval_next(iv, &f)) != 0) break;
    print_row(&f, ocgc_interval_pauses(iv));
    n++;
    next += 1000000000u;
  }
  if (err != 0) fprintf(stderr, "gcwatch: process %d: %s\n", pid, ocgc_strerror(err));
  ocgc_interval_free(iv);
  ocgc_agg_free(agg);
  ocgc_source_close(src);
  return stop ? 128 + stop : err != 0;
}
