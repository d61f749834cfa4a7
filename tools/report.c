/* report.c - `ocgc report`: the GC summary of a live process over a window
 * (PID [--duration D]) or of a ring file (--file F), as text or JSON.
 *
 * Owns the command line and the timing of the window; what is printed, and
 * how it is read from libocgc, is report_print.c's (shared with `ocgc run`);
 * the target, signals and the drain are common.h's.
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
 * - a file is read from its oldest event, in a bounded number of polls;
 * - the aggregator is finished (ocgc_agg_finish) before the last snapshot,
 *   with or without --html, so the JSON is the same bytes either way;
 * - --html OUT is opened (a temporary file beside OUT) before the target,
 *   so a folder we cannot write to fails at once; the HTML is written after
 *   the usual report, from the same snapshot, with the pauses the
 *   aggregator gave the timeline (html.h) and, live, /proc samples taken
 *   at each poll;
 * - the allocation profile of the window (a copy at its start and one at
 *   its end; a file's one copy) goes into every form, text, JSON and HTML;
 *   a process that samples has its names read as the window begins
 *   (html_prof_begin), so a window of any length, or one the process
 *   ends, is named;
 * - with --cpu the sampler is opened before the window (a refusal is
 *   libocgc's one line, exit 8, and no window), turned at each poll after
 *   the aggregator, ended with the window; its profile (report_cpu*.c)
 *   goes into the JSON member "cpu" and the HTML report, not the text. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu_window.h"
#include "html.h"
#include "report.h"

#define POLL_NS UINT64_C(50000000) /* 50 ms */
#define DEFAULT_DURATION_NS UINT64_C(10000000000)

struct report_opts {
  struct tool_target t;
  int json;
  uint64_t duration;
  const char *html;   /* --html FILE, or NULL */
  int cpu;            /* --cpu: sample the window's CPU too */
  unsigned cpu_hz;    /* --frequency */
};

static void report_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc report [--json] [--html OUT] [--duration D] [--dir DIR] PID\n"
          "       ocgc report [--json] [--html OUT] --file FILE\n\n"
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
          "producer's exact counters; durations and causes are of the events seen.\n"
          "A program that samples its allocations (OCGC_MEMPROF, ocgc profile --rate)\n"
          "also has its allocation profile: the top allocating and top promoting\n"
          "functions, with their bytes and share.\n\n"
          "  --json          JSON (schema \"ocgc-report\", version %d: see\n"
          "                  docs/report-json.md and docs/report.schema.json)\n"
          "  --html OUT      also write the report as one self-contained HTML file\n"
          "                  (pause timeline, latency histograms, rates over time,\n"
          "                  causes: docs/html-report.md); stdout is as without it\n"
          "  --duration D    length of the window (PID only)\n"
          "  --cpu           also sample the process's CPU over the window (PID only;\n"
          "                  perf_event_open, as 'ocgc profile --cpu'; it costs the\n"
          "                  program a little): the JSON member \"cpu\" and the HTML\n"
          "                  report's \"Where the CPU goes\", a flame graph by GC phase\n"
          "  --frequency HZ  samples a second with --cpu (default 100, 1 to 1000)\n"
          "  --ids 5.2|5.3|5.4\n"
          "                  the event numbering of a stock OCaml 5 ring (default:\n"
          "                  from the process's executable; for a file, 5.2)\n"
          "  --dir DIR       look for DIR/PID.events instead of searching the\n"
          "                  process's memory map\n"
          "  --file FILE     report on a ring file\n"
          "  -h, --help      this help\n",
          REPORT_SCHEMA_VERSION);
}

/* Follow the process for the window; sets m->ended_early and its reason.
 * Ctrl-C ends the window early, with a report. */
static int follow_window(struct ocgc_agg *agg, const struct ocgc_source *src,
                         struct rep_meta *m, struct ocgc_timeline *tl, struct cpu_window *cw)
{
  uint64_t poll = cw != NULL && cpu_window_poll_ns(cw) < POLL_NS ? cpu_window_poll_ns(cw) : POLL_NS;
  struct tool_signals sig;
  uint64_t t0 = cm_mono_ns(), now, duration = m->requested_ns;
  int64_t got;
  int err = 0;
  tool_signals_catch(&sig);
  for (;;) {
    if ((got = ocgc_agg_poll(agg)) < 0) { err = (int)got; break; }
    html_sample(tl, m->pid);
    /* the ring read first, then the samples (cpu_window.h's turn); an
     * exec or the exit ends the sampling, the report goes on */
    if (cw != NULL && (got = cpu_window_turn(cw)) != 0) {
      if (got > 0) { err = -ENOMEM; break; }
      cw = NULL;
    }
    if (ocgc_source_gone(src)) m->end_reason = "the process exited";
    else if (tool_stop != 0) m->end_reason = "interrupted";
    if ((m->ended_early = m->end_reason != NULL) != 0) break;
    now = cm_mono_ns();
    if (now - t0 >= duration) break;
    tool_sleep_ns(duration - (now - t0) < poll ? duration - (now - t0) : poll);
  }
  /* What was written up to the end, read for a grace at most: a producer
   * writing as fast as we read would hold a drain for seconds. */
  if (err == 0) {
    struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
    d.stop = &tool_stop;
    d.deadline_ns = cm_mono_ns() + TOOL_DRAIN_GRACE_NS;
    err = ocgc_agg_drain(agg, &d, NULL);
  }
  tool_signals_restore(&sig);
  return err;
}

/* The options and operands into *o: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct report_opts *o)
{
  static const struct option longopts[] = {
    TOOL_LONGOPT_JSON,
    {"duration", required_argument, NULL, 't'},
    TOOL_LONGOPT_DIR,
    TOOL_LONGOPT_FILE,
    {"html", required_argument, NULL, 'H'},
    {"cpu", no_argument, NULL, 'C'},
    {"frequency", required_argument, NULL, 'F'},
    TOOL_LONGOPT_IDS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c, duration_given = 0;
  memset(o, 0, sizeof *o);
  o->duration = DEFAULT_DURATION_NS;
  o->cpu_hz = 100;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &o->t, &o->json)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 't':
      duration_given = 1;
      if (tool_parse_duration(optarg, &o->duration) != 0 || o->duration == 0)
        return tool_usage_error("--duration takes a duration above zero such as 10s, 500ms "
                                "or 2m, not '%s'", optarg);
      break;
    case 'H': o->html = optarg; break;
    case 'C': o->cpu = 1; break;
    case 'F': {
      uint64_t hz;
      if (tool_parse_count(optarg, &hz) != 0 || hz == 0 || hz > 1000)
        return tool_usage_error("--frequency takes 1 to 1000 samples a second, not '%s'", optarg);
      o->cpu_hz = (unsigned)hz;
      break;
    }
    case 'h': report_usage(stdout); exit(0);
    default: report_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (o->t.file != NULL && duration_given && optind == argc)
    return tool_usage_error("--duration goes with a PID, not with --file");
  if (o->t.file != NULL && o->cpu && optind == argc)
    return tool_usage_error("--cpu samples a running process: it goes with a PID, not with --file");
  return tool_target_operands(&o->t, argc - optind, argv + optind);
}

/* Where the timeline's time starts: the window's start if known now. */
static void timeline_origin(struct ocgc_timeline *tl, const struct ocgc_source *src, int live)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  if (tl == NULL) return;
  if (live) ocgc_timeline_origin(tl, cm_mono_ns());
  else if (ocgc_source_info(src, &info) == 0 && info.has_ext && info.created_ns != 0)
    ocgc_timeline_origin(tl, info.created_ns);
}

/* Read the target into [agg]: the window of a process, or a whole file;
 * then finish it (the last pauses go to the timeline) and snapshot; and
 * the window's allocation profile into [hp]. */
static int read_target(const struct report_opts *o, struct ocgc_source *src, struct rep_meta *m,
                       struct ocgc_agg *agg, struct ocgc_timeline *tl, struct html_prof *hp,
                       struct cpu_window *cw, struct ocgc_snapshot **base,
                       struct ocgc_snapshot **snap)
{
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  int err = 0;
  if (m->mode == REP_PID) {
    html_prof_begin(hp, src, m->pid, 0);
    err = ocgc_agg_snapshot(agg, base);
    if (err == 0) tool_say_ids(src, tool_target_label(&o->t)); /* the window has begun */
    if (err == 0) html_sample(tl, m->pid);
    if (err == 0) err = follow_window(agg, src, m, tl, cw);
    if (cw != NULL) {
      cpu_window_end(cw);
      cpu_window_say(cw);
    }
  } else {
    err = ocgc_agg_drain(agg, NULL, NULL);
  }
  if (err == 0) html_prof_end(hp, src);
  if (err == 0) err = ocgc_agg_finish(agg);
  if (err == 0) err = ocgc_agg_snapshot(agg, snap);
  if (err == 0 && tl != NULL) {
    ocgc_snapshot_counters(*snap, &c);
    ocgc_timeline_end(tl, c.last_event_ns);
  }
  return err;
}

/* Read the target, then print (and write the HTML to [hf], if open). */
static int report(const struct report_opts *o, struct ocgc_source *src, struct rep_meta *m,
                  struct html_file *hf, struct cpu_window *cw, struct rep_cpu *cpu)
{
  struct ocgc_agg *agg = NULL;
  struct ocgc_snapshot *base = NULL, *snap = NULL;
  struct ocgc_timeline *tl = NULL;
  struct html_prof hp;
  int cpu_failed = 0, err = hf->f != NULL ? ocgc_timeline_new(&tl) : 0;
  memset(&hp, 0, sizeof hp);
  /* before the cursor starts: no event of the window is before the
   * timeline's origin, where its time (pause time, the first bin) begins */
  if (err == 0) timeline_origin(tl, src, m->mode == REP_PID);
  if (err == 0)
    err = rep_agg_new(src, m->mode == REP_PID ? OCGC_START_NOW : OCGC_START_OLDEST, tl, &agg);
  if (err == 0) err = read_target(o, src, m, agg, tl, &hp, cw, &base, &snap);
  m->prof = hp.window;
  m->syms = hp.syms;
  /* a profile that cannot be taken is said, the report says "cpu": null
   * and the exit status is 5 */
  if (err == 0 && cw != NULL && (o->json || hf->f != NULL) && rep_cpu_take(cpu, cw) != 0)
    cpu_failed = 1;
  if (err) {
    err = tool_target_error(&o->t, err);
  } else if ((err = rep_print(stdout, o->json, m, src, base, snap)) != 0) {
    tool_say("writing the report: %s", strerror(-err));
    err = TOOL_EXIT_ERROR;
  }
  if (hf->f != NULL && err == 0) {
    struct html_in in = {m, src, base, snap, tl, hp.window, hp.syms};
    err = html_finish(hf, &in);
  }
  if (err == 0 && cpu_failed) err = TOOL_EXIT_ERROR;
  html_prof_free(&hp);
  ocgc_timeline_free(tl);
  ocgc_snapshot_free(snap);
  ocgc_snapshot_free(base);
  ocgc_agg_free(agg);
  return err;
}

int cmd_report(int argc, char **argv)
{
  struct report_opts o;
  struct rep_meta m;
  struct html_file hf;
  struct ocgc_source *src = NULL;
  struct cpu_window *cw = NULL;
  struct rep_cpu cpu;
  struct rep_flight fl;
  int rc = parse_args(argc, argv, &o);
  if (rc != 0) return rc;
  memset(&hf, 0, sizeof hf);
  if (o.html != NULL && (rc = html_begin(&hf, o.html)) != 0) return rc;
  if ((rc = tool_target_open(&o.t, &src)) != 0) {
    html_file_abort(&hf);
    return tool_exit_code(rc);
  }
  memset(&m, 0, sizeof m);
  m.mode = o.t.pid ? REP_PID : REP_FILE;
  m.pid = o.t.pid;
  m.path = o.t.file;
  m.requested_ns = o.duration;
  memset(&cpu, 0, sizeof cpu);
  /* The sampler before the window: a refusal is libocgc's one line and
   * costs no window. */
  if (o.cpu && m.mode == REP_PID &&
      (rc = cpu_window_open(&cw, m.pid, tool_target_label(&o.t), src, NULL, o.cpu_hz, 0)) != 0) {
    html_file_abort(&hf);
    ocgc_source_close(src);
    return rc;
  }
  if (cw != NULL) m.cpu = &cpu;
  /* a recording (ocgc/flight.h) says what the ring cannot */
  memset(&fl, 0, sizeof fl);
  if (m.mode == REP_FILE) {
    if (rep_flight_take(&fl, src) != 0) {
      tool_say("out of memory");
      html_file_abort(&hf);
      ocgc_source_close(src);
      return TOOL_EXIT_ERROR;
    }
    m.flight = &fl;
  }
  rc = report(&o, src, &m, &hf, cw, &cpu);
  rep_flight_free(&fl);
  rep_cpu_free(&cpu);
  cpu_window_free(cw);
  html_file_abort(&hf); /* nothing if it was committed */
  ocgc_source_close(src);
  return rc;
}
