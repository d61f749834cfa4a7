/* report_print.c - the GC report shared by `ocgc report` and `ocgc run`:
 * its figures, worked out once from a source and its snapshots, and the
 * text form (the JSON form is report_json.c's, from the same figures).
 *
 * Invariants:
 * - only libocgc's public API is used;
 * - counts (collections, cycles, bytes, GC time) are the producer's
 *   cumulative counters: for a window (REP_PID) the difference of the
 *   snapshots at its ends, else the newest snapshot as it is, i.e. since
 *   the process started; heap sizes are never differenced (they are
 *   levels, not counts);
 * - distributions (percentiles, cause table, phases) are of the events
 *   the aggregator saw, so they miss what the ring overwrote: the report
 *   says how many events were seen and lost, and what time they cover;
 * - strings the target controls (its program name, its OCaml version) and
 *   the file's name are escaped (tool_esc) in the text. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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
static const char *const pct_text[REP_NPCTS] = {"p50", "p75", "p90", "p95", "p99", "p99.9",
                                                "p99.99"};

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

/* ---- text ------------------------------------------------------------------------ */

/* What this is a report of, and over what time. */
static void text_title(FILE *out, const struct rep_meta *m, const struct rep_figures *x)
{
  char esc[TOOL_ESC_SIZE(PATH_MAX)], ver[TOOL_ESC_SIZE(sizeof x->info.ocaml_version)];
  char *const *a;
  fputs("GC report: ", out);
  if (m->mode == REP_PID) fprintf(out, "process %d", m->pid);
  else if (m->mode == REP_FILE) fprintf(out, "ring file %s", tool_esc(m->path, esc, sizeof esc));
  else
    for (a = m->command; *a != NULL; a++)
      fprintf(out, "%s%s", tool_esc(*a, esc, sizeof esc), a[1] ? " " : "");
  if (x->ext)
    fprintf(out, " (program %s, pid %" PRIu64 ", OCaml %s %s, %s)",
            tool_esc(x->info.program, esc, sizeof esc), x->info.pid,
            tool_esc(x->info.ocaml_version, ver, sizeof ver),
            x->info.flags & OCGC_EXT_NATIVE ? "native" : "bytecode", rep_state_name(m, x));
  else if (x->ids.ids != NULL)
    fprintf(out, " (stock OCaml 5 ring, no producer totals; OCaml %s event ids, %s)",
            x->ids.ids, x->ids.why);
  else
    fputs(" (stock OCaml ring: no producer totals)", out);
  fputc('\n', out);
  if (m->mode == REP_RUN && m->has_status) {
    if (m->signal != 0)
      fprintf(out, "  the program was killed by signal %d (%s)%s\n", m->signal,
              rep_signal_name(m->signal), m->core_dumped ? ", core dumped" : "");
    else
      fprintf(out, "  the program exited with status %d\n", m->exit_code);
  }
  if (m->mode != REP_PID) {
    fputs("  since the process started\n", out);
    return;
  }
  fprintf(out, "  window of %s", cm_fmt_ns(esc, sizeof esc, x->wall_ns));
  if (m->ended_early)
    fprintf(out, " (of %s asked: %s)", cm_fmt_ns(ver, sizeof ver, m->requested_ns),
            m->end_reason ? m->end_reason : "ended early");
  fputs(", counted from the attach\n", out);
}

static void text_counts(FILE *out, const struct rep_figures *x, const struct ocgc_snapshot *snap)
{
  const struct ocgc_counters *c = &x->c;
  char b[32];
  unsigned k;
  fputs("\nTime\n", out);
  fprintf(out, "  %-24s %s\n", "wall time", x->wall_known ? cm_fmt_ns(b, sizeof b, x->wall_ns) : "-");
  fprintf(out, "  %-24s %s (%.2f%% of wall time)\n", "GC time", cm_fmt_ns(b, sizeof b, c->gc_time_ns),
          100.0 * rep_share(c->gc_time_ns, x->wall_ns));
  fputs("\nCounts\n", out);
  /* by hand, not a loop over the counters' table: each line has its label
   * for people, its unit's form and its own remark (a share, a rule) */
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    char name[32];
    snprintf(name, sizeof name, "%s collections", ocgc_kind_name(k));
    fprintf(out, "  %-24s %12" PRIu64 "\n", name, c->collections[k]);
  }
  fprintf(out, "  %-24s %12" PRIu64 "\n", "major cycles", c->major_cycles);
  fprintf(out, "  %-24s %12" PRIu64 "\n", "forced majors", c->forced_majors);
  fprintf(out, "  %-24s %12" PRIu64 "  (%s)\n", "pauses (seen)",
          ocgc_hist_count(ocgc_snapshot_pauses(snap)),
          c->pause_rule == OCGC_PAUSE_MARKS ? "one per stop, as the runtime marks them"
                                            : "no stop marks: one per collection");
  fprintf(out, "  %-24s %12s\n", "allocated (minor heap)", cm_fmt_bytes(b, sizeof b, c->allocated_bytes));
  fprintf(out, "  %-24s %12s  (%.1f%% of allocated)\n", "promoted",
          cm_fmt_bytes(b, sizeof b, c->promoted_bytes), 100.0 * rep_share(c->promoted_bytes, c->allocated_bytes));
  fprintf(out, "  %-24s %12s\n", "allocated (major heap)", cm_fmt_bytes(b, sizeof b, c->direct_major_bytes));
  fprintf(out, "  %-24s %12s\n", "heap", cm_fmt_bytes(b, sizeof b, c->heap_bytes));
  fprintf(out, "  %-24s %12s\n", "top heap", cm_fmt_bytes(b, sizeof b, c->top_heap_bytes));
  if (c->live_bytes != 0)
    fprintf(out, "  %-24s %12s\n", "heap after GC", cm_fmt_bytes(b, sizeof b, c->live_bytes));
  fprintf(out, "  (%s)\n", c->exact ? "exact: the producer's own counters"
                                    : "counted from the events: no producer totals");
}

static void text_hist_row(FILE *out, const char *name, const struct ocgc_hist *h)
{
  char b[32];
  uint64_t cnt = h ? ocgc_hist_count(h) : 0;
  size_t i;
  fprintf(out, "  %-24s %9" PRIu64, name, cnt);
  if (cnt == 0) {
    fputs("        -\n", out);
    return;
  }
  fprintf(out, " %8s", cm_fmt_ns(b, sizeof b, ocgc_hist_sum(h) / cnt));
  for (i = 0; i < REP_NPCTS; i++)
    fprintf(out, " %8s", cm_fmt_ns(b, sizeof b, ocgc_hist_percentile(h, rep_pcts[i])));
  fprintf(out, " %8s\n", cm_fmt_ns(b, sizeof b, ocgc_hist_max(h)));
}

static void text_durations(FILE *out, const struct rep_figures *x,
                           const struct ocgc_snapshot *snap)
{
  char name[32];
  unsigned k, id;
  size_t i;
  int any = 0;
  fprintf(out, "\nDurations %-16s %9s %8s", "", "count", "mean");
  for (i = 0; i < REP_NPCTS; i++) fprintf(out, " %8s", pct_text[i]);
  fprintf(out, " %8s\n", "max");
  text_hist_row(out, "pause", ocgc_snapshot_pauses(snap));
  for (k = 0; k < OCGC_KIND_COUNT; k++) text_hist_row(out, ocgc_kind_name(k), ocgc_snapshot_kind(snap, k));
  for (id = 0; id < REP_MAX_PHASE_ID; id++) {
    const struct ocgc_hist *h = ocgc_snapshot_phase(snap, id);
    if (h == NULL || ocgc_hist_count(h) == 0) continue;
    if (!any) fputs(" by phase\n", out);
    any = 1;
    text_hist_row(out, rep_phase_name(x, id, name, sizeof name), h);
  }
}

#define STOCK_UNKNOWN "unknown (OCaml 5 does not record it)"

static void text_causes(FILE *out, const struct rep_figures *x, const struct ocgc_snapshot *snap)
{
  char b1[32], b2[32], b3[32];
  unsigned k, cause;
  int any = 0;
  /* stock rings: room for what OCaml 5 cannot tell */
  int w = x->ext ? 20 : (int)sizeof STOCK_UNKNOWN - 1;
  fprintf(out, "\nCauses\n  %-13s %-*s %9s %9s %9s\n", "kind", w, "cause", "count", "total", "worst");
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_SLOTS; cause++) {
      struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
      if (ocgc_snapshot_cause(snap, k, cause, &row) != 0 || row.count == 0) continue;
      any = 1;
      fprintf(out, "  %-13s %-*s %9" PRIu64 " %9s %9s\n", ocgc_kind_name(k), w,
              cause == OCGC_CAUSE_UNKNOWN && !x->ext ? STOCK_UNKNOWN
                                                     : rep_cause_name(cause, b3, sizeof b3),
              row.count, cm_fmt_ns(b1, sizeof b1, row.total_ns),
              cm_fmt_ns(b2, sizeof b2, row.worst_ns));
    }
  if (!any) fputs("  (no collection seen)\n", out);
}

static void text_events(FILE *out, const struct rep_figures *x)
{
  const struct ocgc_counters *c = &x->c;
  char b[32];
  uint64_t span = c->last_event_ns - c->first_event_ns;
  fputs("\nEvents\n", out);
  fprintf(out, "  %-24s %" PRIu64 "\n", "seen", c->events_seen);
  fprintf(out, "  %-24s %" PRIu64 " (%s)\n", "lost", c->events_lost,
          c->lost_exact ? "exact" : "estimated");
  if (c->first_event_ns != 0) {
    fprintf(out, "  %-24s %s", "they cover", cm_fmt_ns(b, sizeof b, span));
    if (x->wall_known && x->wall_ns > 0)
      fprintf(out, " (%.1f%% of the wall time)", 100.0 * rep_share(span, x->wall_ns));
    fputc('\n', out);
  } else {
    fprintf(out, "  %-24s nothing\n", "they cover");
  }
  if (c->events_lost > 0)
    fputs("  the ring overwrote events before they were read: durations and causes\n"
          "  are of the events seen (counts are not, when exact); a larger ring\n"
          "  (OCAMLRUNPARAM=e=N) keeps more\n", out);
}

int rep_print(FILE *out, int json, const struct rep_meta *m, const struct ocgc_source *src,
              const struct ocgc_snapshot *base, const struct ocgc_snapshot *snap)
{
  struct rep_figures x;
  rep_figures_get(&x, m, src, base, snap);
  if (json) {
    rep_print_json(out, m, &x, snap);
  } else {
    text_title(out, m, &x);
    rep_flight_text(out, m);
    text_counts(out, &x, snap);
    text_durations(out, &x, snap);
    text_causes(out, &x, snap);
    rep_slicework_text(out, snap);
    text_events(out, &x);
    rep_profile_text(out, m);
  }
  if (fflush(out) != 0 || ferror(out)) return errno ? -errno : -EIO;
  return 0;
}
