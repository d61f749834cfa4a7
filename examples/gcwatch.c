/* gcwatch.c - a minimal GC monitor built on libocgc: attach to an OCaml
 * process by pid and print, every second, its collection rates, allocation
 * rate, GC time share and pause percentiles.  Copy it to start your own.
 *
 *   cc gcwatch.c $(pkg-config --cflags --libs ocgc) -o gcwatch
 *   ./gcwatch PID [SECONDS]
 *
 * It stops after SECONDS (10), when the process exits, or within one poll
 * of SIGINT or SIGTERM (exit status 130 or 143, as a shell reports them).
 */
/* sigtimedwait, sigprocmask: POSIX, beyond the C11 the example is built as */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <ocgc/consumer.h>

/* SIGINT and SIGTERM stop the watch.  They stay blocked and are taken by
 * sigtimedwait() where we wait, and looked for between polls, so no signal
 * can fall between a check and a wait, and the watch ends within one poll
 * (10 ms) of it however fast the process writes. */
static sigset_t stop_signals;

/* Block them, with their default action: one that arrives ignored (as in a
 * program a script starts in the background) would be discarded, never
 * pending, and a monitor must stop when it is told to. */
static void take_stop_signals(void)
{
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop_signals, NULL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

static int stop_pending(void)
{
  sigset_t pending;
  return sigpending(&pending) == 0 &&
         (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

/* Read what was written since the last poll.  A poll stops after 10 ms
 * (the cursor's budget), so a process that writes faster than we read
 * cannot hold us; a few more polls catch up with an ordinary one. */
static int poll_some(struct ocgc_agg *agg)
{
  struct ocgc_cursor_stats st;
  int polls = 0;
  int64_t got;
  do {
    if ((got = ocgc_agg_poll(agg)) < 0) return (int)got;
    ocgc_agg_cursor_stats(agg, &st);
  } while (st.behind && ++polls < 10 && !stop_pending());
  return 0;
}

int main(int argc, char **argv)
{
  struct ocgc_source *src = NULL;
  struct ocgc_agg *agg = NULL;
  struct ocgc_snapshot *prev = NULL, *now = NULL;
  /* Live figures: from now on, not from the oldest events still in the ring. */
  struct ocgc_agg_opts ao = {.sz = sizeof ao, .start = OCGC_START_NOW};
  int pid, seconds, i, err, stopped = 0;

  if (argc < 2) {
    fprintf(stderr, "usage: gcwatch PID [SECONDS]\n");
    return 2;
  }
  take_stop_signals();
  pid = atoi(argv[1]);
  seconds = argc > 2 ? atoi(argv[2]) : 10;
  if ((err = ocgc_source_open_pid(pid, NULL, &src)) != 0) {
    fprintf(stderr, "gcwatch: process %d: %s\n", pid, ocgc_strerror(err));
    return 1;
  }
  if ((err = ocgc_agg_new(src, &ao, &agg)) != 0 || (err = poll_some(agg)) < 0 ||
      (err = ocgc_agg_snapshot(agg, &prev)) != 0)
    goto out;
  printf("%8s %8s %10s %7s %9s %9s %9s\n", "minor/s", "slices/s", "alloc_MiB/s",
         "gc_%", "p50_us", "p99_us", "max_us");
  for (i = 0; i < seconds; i++) {
    struct ocgc_rates r;
    const struct ocgc_hist *pauses;
    const struct timespec second = {1, 0};
    if ((stopped = sigtimedwait(&stop_signals, NULL, &second)) > 0) break;
    stopped = 0; /* the second passed (EAGAIN) */
    /* A corrupt or truncated ring ends the watch, saying so. */
    if ((err = poll_some(agg)) < 0 || (err = ocgc_agg_snapshot(agg, &now)) != 0) break;
    pauses = ocgc_snapshot_pauses(now);
    if (ocgc_rates(prev, now, &r) == 0)
      printf("%8.1f %8.1f %10.1f %7.2f %9.1f %9.1f %9.1f\n",
             r.collections_per_s[OCGC_KIND_MINOR], r.collections_per_s[OCGC_KIND_MAJOR_SLICE],
             r.allocated_bytes_per_s / 1048576, r.gc_time_share * 100,
             ocgc_hist_percentile(pauses, 50) / 1e3, ocgc_hist_percentile(pauses, 99) / 1e3,
             ocgc_hist_max(pauses) / 1e3);
    fflush(stdout);
    ocgc_snapshot_free(prev);
    prev = now;
    now = NULL;
    if (ocgc_source_check_alive(src) != 0) break; /* the process exited */
  }
out:
  if (err != 0) fprintf(stderr, "gcwatch: process %d: %s\n", pid, ocgc_strerror(err));
  ocgc_snapshot_free(prev);
  ocgc_agg_free(agg);
  ocgc_source_close(src);
  if (err != 0) return 1;
  return stopped ? 128 + stopped : 0;
}
