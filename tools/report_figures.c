/* report_figures.c - the GC report's model (report.h): the figures of a
 * report, worked out once from a source and its snapshots, and the names
 * and shares every form of it uses (the text, report_print.c; the JSON,
 * report_json.c; a recording's section, report_flight.c; the HTML report,
 * html*.c), with the aggregator a report reads its source with.
 *
 * Invariants:
 * - only libocgc's public API is used, and no other file of the report:
 *   every form of the report is above this one;
 * - counts (collections, cycles, bytes, GC time) are the producer's
 *   cumulative counters: for a window (REP_PID) the difference of the
 *   snapshots at its ends, else the newest snapshot as it is, i.e. since
 *   the process started; heap sizes are never differenced (they are
 *   levels, not counts);
 * - a name libocgc has none for (a cause, a phase, a signal) is made up
 *   of its number, never left empty. */

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "report.h"

int rep_agg_new(struct ocgc_source *src, enum ocgc_cursor_start start, struct ocgc_timeline *tl,
                struct ocgc_agg **out)
{
  struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  ao.start = start;
  if (tl != NULL) { /* the HTML report keeps each pause and loss */
    ao.on_pause = ocgc_timeline_on_pause;
    ao.on_lost = ocgc_timeline_on_lost;
    ao.ctx = tl;
  }
  return ocgc_agg_new(src, &ao, out);
}

/* ---- the figures ----------------------------------------------------------------- */

const double rep_pcts[REP_NPCTS] = {50, 75, 90, 95, 99, 99.9, 99.99};
const char *const rep_pct_json[REP_NPCTS] = {"p50_ns", "p75_ns", "p90_ns", "p95_ns",
                                             "p99_ns", "p99_9_ns", "p99_99_ns"};

void rep_figures_get(struct rep_figures *x, const struct rep_meta *m,
                    const struct ocgc_source *src, const struct ocgc_snapshot *base,
                    const struct ocgc_snapshot *snap)
{
  struct ocgc_coverage cov = OCGC_OPTS_INIT(struct ocgc_coverage);
  memset(x, 0, sizeof *x);
  x->info.sz = sizeof x->info;
  x->have_info = ocgc_source_info(src, &x->info) == 0;
  x->ext = x->have_info && x->info.has_ext;
  tool_ids(src, &x->ids);
  ocgc_snapshot_coverage(src, m->mode == REP_PID ? base : NULL, snap, m->ended_ns, &cov);
  x->c = cov.counts;
  x->start_ns = cov.start_ns;
  x->end_ns = cov.end_ns;
  x->wall_ns = cov.wall_ns;
  x->wall_known = cov.known;
}

const char *rep_state_name(const struct rep_meta *m, const struct rep_figures *x)
{
  /* a killed producer never marks its ring: its state still says running */
  if (m->mode == REP_RUN && m->has_status && m->signal != 0) return "killed";
  /* a recording says how its process ended */
  if (m->flight != NULL && m->flight->have && m->flight->meta.exit.known &&
      m->flight->meta.exit.signal != 0 && m->flight->meta.exit.how != OCGC_EXIT_EXITED)
    return "killed";
  if (!x->ext) return "unknown";
  return x->info.state == OCGC_STATE_EXITED ? "exited"
         : x->info.state == OCGC_STATE_RUNNING ? "running" : "unknown";
}

double rep_share(uint64_t part, uint64_t whole)
{
  double s;
  if (whole == 0) return 0;
  s = (double)part / (double)whole;
  return s > 1 ? 1 : s;
}

const char *rep_signal_name(int sig)
{
  static const struct { int sig; const char *name; } names[] = {
    {SIGHUP, "SIGHUP"}, {SIGINT, "SIGINT"}, {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
    {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"}, {SIGTTIN, "SIGTTIN"},
    {SIGTTOU, "SIGTTOU"}, {SIGURG, "SIGURG"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
    {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGSYS, "SIGSYS"},
  };
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == sig) return names[i].name;
  return "SIG?";
}

const char *rep_cause_name(unsigned c, char *buf, size_t n)
{
  const char *s = ocgc_cause_name(c);
  if (s != NULL) return s;
  snprintf(buf, n, "cause_%u", c);
  return buf;
}

const char *rep_phase_name(const struct rep_figures *x, unsigned id, char *buf, size_t n)
{
  const char *s = ocgc_phase_name(x->have_info ? x->info.ids : OCGC_IDS_52, id);
  if (s != NULL) return s;
  snprintf(buf, n, "phase_%u", id);
  return buf;
}
