/* report_print.c - the GC report shared by `ocgc report` and `ocgc run`
 * in the form asked (rep_print: the JSON form is report_json.c's), and its
 * text form, from the figures report_figures.c works out.
 *
 * Invariants:
 * - only libocgc's public API is used, and the files of the report below
 *   this one (report_figures.c, report_json.c, report_flight.c,
 *   report_profile.c): none of them calls back here;
 * - distributions (percentiles, cause table, phases) are of the events
 *   the aggregator saw, so they miss what the ring overwrote: the report
 *   says how many events were seen and lost, and what time they cover;
 * - strings the target controls (its program name, its OCaml version) and
 *   the file's name are escaped (tool_esc) in the text. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "report.h"

static const char *const pct_text[REP_NPCTS] = {"p50", "p75", "p90", "p95", "p99", "p99.9",
                                                "p99.99"};

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
   * for people, its unit's form and its own remark (a share, a rule: the
   * promoted bytes' share of the allocated, the pauses' rule), in an
   * order of their own (the events' figures are their own section) */
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
