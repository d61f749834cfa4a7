/* flight_record.c - make a recording of a running process with libocgc's
 * public calls, as a watch will (tests/cmd/flight_record.sh):
 *
 *   flight_record PID OUT [SECONDS [KILLSIG [oom]]]
 *
 * opens PID's ring (ocgc_source_open_pid), reads it from its oldest event
 * for SECONDS (default 1) through an aggregator whose on_pause/on_lost
 * feed a history (ocgc_flight_hist_*), sampling /proc every 100 ms, then
 * writes the recording (reason "demand", ocgc_flight_ident for its
 * executable) to OUT with ocgc_flight_write.  With KILLSIG, the process
 * is first killed with that signal and the recording made of its dead
 * ring, as a watch makes one at a death (reason "death", the exit known:
 * killed by KILLSIG; with "oom", said to be the OOM killer's, which a test
 * cannot cause).  Prints "seconds N" (the history's), "pauses N" (what
 * the aggregator gave it) and "write_us N" (ocgc_flight_write's time);
 * exits 0, or 1 with a line on stderr. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"

static uint64_t pauses;

static void on_pause(const struct ocgc_agg_pause *p, void *ctx)
{
  pauses++;
  ocgc_flight_hist_on_pause(p, ctx);
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int die(const char *what, int err)
{
  fprintf(stderr, "flight_record: %s: %s\n", what, ocgc_strerror(err));
  return 1;
}

int main(int argc, char **argv)
{
  struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  struct ocgc_flight_meta m = OCGC_OPTS_INIT(struct ocgc_flight_meta);
  struct ocgc_flight_second sec[OCGC_FLIGHT_WINDOW_S];
  struct ocgc_process_figures f = OCGC_OPTS_INIT(struct ocgc_process_figures);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_source *src = NULL;
  struct ocgc_flight_hist *h = NULL;
  struct ocgc_agg *agg = NULL;
  struct timespec now;
  uint64_t end, t0;
  int pid, fd, err;
  if (argc < 3) {
    fprintf(stderr, "usage: flight_record PID OUT [SECONDS]\n");
    return 2;
  }
  pid = atoi(argv[1]);
  end = mono_ns() + (uint64_t)((argc > 3 ? atof(argv[3]) : 1.0) * 1e9);
  if ((err = ocgc_source_open_pid(pid, NULL, &src)) != 0) return die("open", err);
  if ((err = ocgc_flight_hist_new(0, &h)) != 0) return die("history", err);
  ao.start = OCGC_START_OLDEST;
  ao.on_pause = on_pause;
  ao.on_lost = ocgc_flight_hist_on_lost;
  ao.ctx = h;
  if ((err = ocgc_agg_new(src, &ao, &agg)) != 0) return die("aggregator", err);
  do {
    if ((err = (int)ocgc_agg_drain(agg, NULL, NULL)) != 0) return die("drain", err);
    if (ocgc_process_figures(pid, &f) == 0) ocgc_flight_hist_sample(h, mono_ns(), &f, NULL);
    usleep(100000);
  } while (mono_ns() < end);
  if (ocgc_agg_drain(agg, NULL, NULL) != 0 || ocgc_agg_finish(agg) != 0) return die("finish", -EIO);
  m.reason = OCGC_FLIGHT_DEMAND;
  snprintf(m.detail, sizeof m.detail, "asked for by flight_record");
  m.pid = pid;
  if (ocgc_source_info(src, &info) == 0 && info.has_ext) {
    m.start_ticks = info.start_time;
    snprintf(m.program, sizeof m.program, "%s", info.program);
  }
  if ((err = ocgc_flight_ident(pid, &m)) != 0) return die("ident", err);
  m.rss_bytes = f.rss_bytes;
  if (argc > 4) { /* a death: the ring read after it, as a watch does */
    int sig = atoi(argv[4]), tries;
    if (kill(pid, sig) != 0) return die("kill", -errno);
    for (tries = 0; !ocgc_source_gone(src); tries++) {
      if (tries > 1000) return die("the process did not die", -ETIME);
      usleep(10000);
    }
    m.reason = OCGC_FLIGHT_DEATH;
    snprintf(m.detail, sizeof m.detail, "it died without its exit mark");
    m.exit.known = 1;
    m.exit.how = argc > 5 ? OCGC_EXIT_OOM : OCGC_EXIT_KILLED;
    m.exit.code = -1;
    m.exit.signal = sig;
    m.exit.oom_killed = argc > 5;
    m.exit.gone_ns = mono_ns();
  }
  clock_gettime(CLOCK_REALTIME, &now);
  m.recorded_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  m.window_s = OCGC_FLIGHT_WINDOW_S;
  fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return die(argv[2], -errno);
  t0 = mono_ns();
  if ((err = ocgc_flight_write(fd, src, h, &m)) != 0) return die("write", err);
  t0 = mono_ns() - t0;
  if (close(fd) != 0) return die("close", -errno);
  printf("seconds %u\npauses %llu\nwrite_us %llu\n",
         ocgc_flight_hist_seconds(h, sec, OCGC_FLIGHT_WINDOW_S), (unsigned long long)pauses,
         (unsigned long long)(t0 / 1000));
  ocgc_agg_free(agg);
  ocgc_flight_hist_free(h);
  ocgc_source_close(src);
  return 0;
}
