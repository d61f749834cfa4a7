/* report.c - `ocgc report`: the GC summary of a live process over a window
 * (PID [--duration D]) or of a ring file (--file F), as text or JSON.
 *
 * Owns the command line and the timing of the window; what is printed, and
 * how it is read from libocgc, is report_print.c's (shared with `ocgc run`).
 *
 * Invariants:
 * - a live window starts with the aggregator's cursor at OCGC_START_NOW and
 *   a snapshot taken before the first poll: the counts are the difference
 *   between that snapshot and the last one, the distributions are of the
 *   events written after the attach;
 * - the aggregator is polled every POLL_NS so the ring does not overwrite
 *   events before we read them; the window ends after D, when the process
 *   exits (its final totals are then read after a last drain), or on
 *   SIGINT/SIGTERM (the report of what was seen so far is still printed);
 * - a file is read from its oldest event, in a bounded number of polls. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "report.h"
#include "util.h"

#define POLL_NS UINT64_C(50000000) /* 50 ms */
#define DEFAULT_DURATION_NS UINT64_C(10000000000)

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig) { stop_sig = sig; }

static void report_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc report [--json] [--duration D] [--dir DIR] PID\n"
          "       ocgc report [--json] --file FILE\n\n"
          "Summarise the garbage collector of the running process PID over a\n"
          "window of D (default 10s; e.g. 500ms, 30s, 2m), or of the ring file FILE\n"
          "(a <pid>.events file) from its oldest event.  The window ends early if the\n"
          "process exits or on Ctrl-C; the report of what was seen is still printed.\n\n"
          "The report gives the wall time covered and the GC time in it; the counts\n"
          "(collections by kind, major cycles, forced majors, bytes allocated and\n"
          "promoted: for PID, during the window; for FILE, since the process\n"
          "started), heap and top heap; count, mean, p50 p75 p90 p95 p99 p99.9\n"
          "p99.99 and max of the pauses, of each collection kind and of each phase\n"
          "seen; the cause table (kind, cause, count, total time, worst); and how\n"
          "many events were seen and lost, and the time they cover.  Counts are the\n"
          "producer's exact counters; durations and causes are of the events seen.\n\n"
          "  --json          JSON (schema \"ocgc-report\", version %d: see\n"
          "                  docs/report-json.md and docs/report.schema.json)\n"
          "  --duration D    length of the window (PID only)\n"
          "  --dir DIR       look for DIR/PID.events instead of searching the\n"
          "                  process's memory map\n"
          "  --file FILE     report on a ring file\n"
          "  -h, --help      this help\n",
          REPORT_SCHEMA_VERSION);
}

/* Follow process [src] for [duration] ns; sets m->ended_early and reason. */
static int follow_window(struct rep_follow *f, uint64_t duration, struct rep_meta *m)
{
  uint64_t t0 = ocgc_now_ns(), now;
  int64_t got;
  int alive;
  for (;;) {
    if ((got = rep_follow_poll(f)) < 0) return (int)got;
    alive = ocgc_source_check_alive(f->src);
    if (alive == OCGC_E_STALE) {
      m->ended_early = 1;
      m->end_reason = "the process exited";
      break;
    }
    if (stop_sig != 0) {
      m->ended_early = 1;
      m->end_reason = "interrupted";
      break;
    }
    now = ocgc_now_ns();
    if (now - t0 >= duration) break;
    ocgc_sleep_ns(duration - (now - t0) < POLL_NS ? duration - (now - t0) : POLL_NS);
  }
  return rep_follow_drain(f, &stop_sig);
}

int cmd_report(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"duration", required_argument, NULL, 't'},
    {"dir", required_argument, NULL, 'd'},
    {"file", required_argument, NULL, 'f'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  struct rep_meta m;
  struct rep_follow f;
  struct ocgc_source *src = NULL;
  struct ocgc_snapshot *base = NULL, *snap = NULL;
  struct sigaction sa, old_int, old_term;
  const char *dir = NULL, *file = NULL, *dur_arg = NULL;
  uint64_t duration = DEFAULT_DURATION_NS;
  int opt, json = 0, pid = 0, err;

  memset(&m, 0, sizeof m);
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': json = 1; break;
    case 't':
      dur_arg = optarg;
      if (ocgc_parse_duration(optarg, &duration) != 0 || duration == 0) {
        fprintf(stderr, "ocgc report: --duration takes a duration above zero such as 10s, "
                "500ms or 2m, not '%s'\n", optarg);
        return OCGC_EXIT_USAGE;
      }
      break;
    case 'd': dir = optarg; break;
    case 'f': file = optarg; break;
    case 'h': report_usage(stdout); return 0;
    default: report_usage(stderr); return OCGC_EXIT_USAGE;
    }
  }
  if (file != NULL) {
    if (optind != argc) {
      fprintf(stderr, "ocgc report: give a PID or --file FILE, not both\n");
      return OCGC_EXIT_USAGE;
    }
    if (dir != NULL || dur_arg != NULL) {
      fprintf(stderr, "ocgc report: --%s goes with a PID, not with --file\n",
              dir != NULL ? "dir" : "duration");
      return OCGC_EXIT_USAGE;
    }
  } else {
    if (optind != argc - 1) {
      if (optind == argc) fprintf(stderr, "ocgc report: give a PID or --file FILE (see --help)\n");
      else fprintf(stderr, "ocgc report: one PID only, not '%s'\n", argv[optind + 1]);
      return OCGC_EXIT_USAGE;
    }
    pid = ocgc_cmd_parse_pid(argv[optind]);
    if (pid < 0) {
      fprintf(stderr, "ocgc report: '%s' is not a process id (for a ring file use --file)\n",
              argv[optind]);
      return OCGC_EXIT_USAGE;
    }
  }

  if ((err = ocgc_cmd_open("report", pid, dir, file, &src)) != 0) return ocgc_exit_code(err);
  m.mode = pid ? REP_PID : REP_FILE;
  m.pid = pid;
  m.path = file;
  m.requested_ns = duration;
  err = rep_follow_init(&f, src, pid ? OCGC_START_NOW : OCGC_START_OLDEST);
  if (err) goto out_src;

  if (pid) {
    /* Ctrl-C ends the window early, with a report. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_sig = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    err = ocgc_agg_snapshot(f.agg, &base);
    if (err == 0) err = follow_window(&f, duration, &m);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  } else {
    err = rep_follow_drain(&f, NULL);
  }
  if (err == 0) err = ocgc_agg_snapshot(f.agg, &snap);
  if (err == 0) {
    err = rep_print(stdout, json, &m, &f, base, snap);
    if (err) {
      fprintf(stderr, "ocgc report: writing the report: %s\n", strerror(-err));
      ocgc_snapshot_free(snap);
      ocgc_snapshot_free(base);
      rep_follow_fini(&f);
      ocgc_source_close(src);
      return OCGC_EXIT_ERROR;
    }
  }
  ocgc_snapshot_free(snap);
  ocgc_snapshot_free(base);
  rep_follow_fini(&f);
out_src:
  if (err) {
    if (pid) fprintf(stderr, "ocgc report: process %d: %s\n", pid, ocgc_strerror(err));
    else fprintf(stderr, "ocgc report: %s: %s\n", file, ocgc_strerror(err));
  }
  ocgc_source_close(src);
  return ocgc_exit_code(err);
}
