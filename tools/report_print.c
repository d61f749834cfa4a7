/* report_print.c - the GC report shared by `ocgc report` and `ocgc run`:
 * reading a source (its aggregator) and printing what it holds
 * as text or as JSON (schema docs/report.schema.json, version
 * REPORT_SCHEMA_VERSION).
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
 * - the JSON always has every field the schema requires, whatever the
 *   source (stock files without totals give nulls where the schema allows
 *   them), so consumers need no special cases. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "util.h"

/* ---- reading ----------------------------------------------------------------- */

int rep_follow_init(struct rep_follow *f, struct ocgc_source *src,
                    enum ocgc_cursor_start start)
{
  struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  memset(f, 0, sizeof *f);
  f->src = src;
  ao.start = start;
  return ocgc_agg_new(src, &ao, &f->agg);
}

int64_t rep_follow_poll(struct rep_follow *f)
{
  return ocgc_agg_poll(f->agg);
}

int rep_follow_drain(struct rep_follow *f, const volatile sig_atomic_t *stop)
{
  return ocgc_drain_agg(f->agg, ocgc_drain_events(f->src), stop);
}

void rep_follow_fini(struct rep_follow *f)
{
  ocgc_agg_free(f->agg);
  f->agg = NULL;
}

/* ---- the figures ----------------------------------------------------------------- */

static const double pcts[] = {50, 75, 90, 95, 99, 99.9, 99.99};
static const char *const pct_json[] = {"p50_ns", "p75_ns", "p90_ns", "p95_ns",
                                       "p99_ns", "p99_9_ns", "p99_99_ns"};
static const char *const pct_text[] = {"p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99"};
#define NPCTS (sizeof pcts / sizeof pcts[0])

/* Phase ids to look at: every numbering libocgc knows fits (the snapshot
 * answers NULL beyond its own table). */
#define MAX_PHASE_ID 64

struct figures {
  struct ocgc_source_info info;
  int have_info;
  struct ocgc_counters c;      /* newest, with counts made relative */
  uint64_t start_ns, end_ns;   /* the time the report covers, producer clock */
  uint64_t wall_ns;
  int wall_known;
};

static uint64_t sub0(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

static void figures(struct figures *x, const struct rep_meta *m, const struct rep_follow *f,
                    const struct ocgc_snapshot *base, const struct ocgc_snapshot *snap)
{
  unsigned k;
  memset(x, 0, sizeof *x);
  x->have_info = ocgc_source_info(f->src, &x->info) == 0;
  ocgc_snapshot_counters(snap, &x->c);
  if (m->mode == REP_PID && base != NULL) {
    struct ocgc_counters b;
    ocgc_snapshot_counters(base, &b);
    for (k = 0; k < OCGC_KIND_COUNT; k++)
      x->c.collections[k] = sub0(x->c.collections[k], b.collections[k]);
    x->c.major_cycles = sub0(x->c.major_cycles, b.major_cycles);
    x->c.forced_majors = sub0(x->c.forced_majors, b.forced_majors);
    x->c.allocated_bytes = sub0(x->c.allocated_bytes, b.allocated_bytes);
    x->c.promoted_bytes = sub0(x->c.promoted_bytes, b.promoted_bytes);
    x->c.direct_major_bytes = sub0(x->c.direct_major_bytes, b.direct_major_bytes);
    x->c.gc_time_ns = sub0(x->c.gc_time_ns, b.gc_time_ns);
    x->start_ns = b.time_ns;
    x->end_ns = x->c.time_ns;
    x->wall_known = 1;
  } else if (x->have_info && x->info.has_ext && x->info.created_ns != 0) {
    /* the whole life of the producer, up to its exit or now */
    x->start_ns = x->info.created_ns;
    x->end_ns = x->c.time_ns > x->c.last_event_ns ? x->c.time_ns : x->c.last_event_ns;
    /* a producer that did not exit normally has no exit time: the counters'
     * time is "now", so end when ocgc saw it die instead */
    if (m->ended_ns != 0 && x->info.state != OCGC_STATE_EXITED && m->ended_ns < x->end_ns)
      x->end_ns = m->ended_ns > x->c.last_event_ns ? m->ended_ns : x->c.last_event_ns;
    x->wall_known = 1;
  } else if (x->c.first_event_ns != 0) {
    /* stock files: all we know of time is what the events say */
    x->start_ns = x->c.first_event_ns;
    x->end_ns = x->c.last_event_ns;
    x->wall_known = 1;
  }
  x->wall_ns = sub0(x->end_ns, x->start_ns);
}

static const char *state_name(const struct rep_meta *m, const struct figures *x)
{
  /* a killed producer never marks its ring: its state still says running */
  if (m->mode == REP_RUN && m->has_status && m->signal != 0) return "killed";
  if (!x->have_info || !x->info.has_ext) return "unknown";
  return x->info.state == OCGC_STATE_EXITED ? "exited"
         : x->info.state == OCGC_STATE_RUNNING ? "running" : "unknown";
}

static const char *mode_name(enum rep_mode m)
{
  return m == REP_PID ? "pid" : m == REP_FILE ? "file" : "run";
}

static double share(uint64_t part, uint64_t whole)
{
  double s;
  if (whole == 0) return 0;
  s = (double)part / (double)whole;
  return s > 1 ? 1 : s;
}

const char *rep_signal_name(int sig)
{
  switch (sig) {
  case SIGHUP: return "SIGHUP";
  case SIGINT: return "SIGINT";
  case SIGQUIT: return "SIGQUIT";
  case SIGILL: return "SIGILL";
  case SIGTRAP: return "SIGTRAP";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGKILL: return "SIGKILL";
  case SIGUSR1: return "SIGUSR1";
  case SIGSEGV: return "SIGSEGV";
  case SIGUSR2: return "SIGUSR2";
  case SIGPIPE: return "SIGPIPE";
  case SIGALRM: return "SIGALRM";
  case SIGTERM: return "SIGTERM";
  case SIGCHLD: return "SIGCHLD";
  case SIGCONT: return "SIGCONT";
  case SIGSTOP: return "SIGSTOP";
  case SIGTSTP: return "SIGTSTP";
  case SIGTTIN: return "SIGTTIN";
  case SIGTTOU: return "SIGTTOU";
  case SIGURG: return "SIGURG";
  case SIGXCPU: return "SIGXCPU";
  case SIGXFSZ: return "SIGXFSZ";
  case SIGVTALRM: return "SIGVTALRM";
  case SIGPROF: return "SIGPROF";
  case SIGSYS: return "SIGSYS";
  default: return "SIG?";
  }
}

static const char *cause_name(unsigned c, char *buf, size_t n)
{
  const char *s = ocgc_cause_name(c);
  if (s != NULL) return s;
  snprintf(buf, n, "cause_%u", c);
  return buf;
}

static const char *phase_name(const struct figures *x, unsigned id, char *buf, size_t n)
{
  const char *s = ocgc_phase_name(x->have_info ? x->info.ids : OCGC_IDS_52, id);
  if (s != NULL) return s;
  snprintf(buf, n, "phase_%u", id);
  return buf;
}

/* ---- text ------------------------------------------------------------------------ */

/* A duration in 3 significant digits and the unit that fits: "850ns",
 * "12.3us", "1.25ms", "2.50s". */
static const char *fmt_ns(char *buf, size_t n, uint64_t ns)
{
  static const struct { double div; const char *unit; } u[] = {
    {1e3, "us"}, {1e6, "ms"}, {1e9, "s"},
  };
  double v;
  int i;
  if (ns < 1000) {
    snprintf(buf, n, "%" PRIu64 "ns", ns);
    return buf;
  }
  for (i = 0; i < 2 && (double)ns >= u[i + 1].div; i++)
    ;
  v = (double)ns / u[i].div;
  if (v >= 999.5 && i < 2) { i++; v = (double)ns / u[i].div; }
  snprintf(buf, n, v < 9.995 ? "%.2f%s" : v < 99.95 ? "%.1f%s" : "%.0f%s", v, u[i].unit);
  return buf;
}

static const char *fmt_bytes(char *buf, size_t n, uint64_t b)
{
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)b;
  int i = 0;
  if (b < 1024) {
    snprintf(buf, n, "%" PRIu64 " B", b);
    return buf;
  }
  while (v >= 1024 && i < 5) { v /= 1024; i++; }
  snprintf(buf, n, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, unit[i]);
  return buf;
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
  fprintf(out, " %8s", fmt_ns(b, sizeof b, ocgc_hist_sum(h) / cnt));
  for (i = 0; i < NPCTS; i++) fprintf(out, " %8s", fmt_ns(b, sizeof b, ocgc_hist_percentile(h, pcts[i])));
  fprintf(out, " %8s\n", fmt_ns(b, sizeof b, ocgc_hist_max(h)));
}

static void text_command(FILE *out, char *const *argv)
{
  for (; *argv != NULL; argv++) fprintf(out, "%s%s", *argv, argv[1] ? " " : "");
}

static void print_text(FILE *out, const struct rep_meta *m,
                       const struct figures *x, const struct ocgc_snapshot *snap)
{
  const struct ocgc_counters *c = &x->c;
  char b1[32], b2[32], b3[32], esc[OCGC_ESC_SIZE(PATH_MAX)];
  unsigned k, id, cause;
  size_t i;
  int any;

  /* what this is a report of */
  fputs("GC report: ", out);
  switch (m->mode) {
  case REP_PID:
    fprintf(out, "process %d", m->pid);
    break;
  case REP_FILE:
    fprintf(out, "ring file %s", ocgc_esc(m->path, esc, sizeof esc));
    break;
  case REP_RUN:
    text_command(out, m->command);
    break;
  }
  if (x->have_info && x->info.has_ext) {
    char ver[OCGC_ESC_SIZE(sizeof x->info.ocaml_version)];
    fprintf(out, " (program %s, pid %" PRIu64 ", OCaml %s %s, %s)",
            ocgc_esc(x->info.program, esc, sizeof esc), x->info.pid,
            ocgc_esc(x->info.ocaml_version, ver, sizeof ver),
            x->info.flags & OCGC_EXT_NATIVE ? "native" : "bytecode", state_name(m, x));
  } else {
    fputs(" (stock OCaml ring: no producer totals)", out);
  }
  fputc('\n', out);
  if (m->mode == REP_RUN && m->has_status) {
    if (m->signal != 0)
      fprintf(out, "  the program was killed by signal %d (%s)%s\n", m->signal,
              rep_signal_name(m->signal), m->core_dumped ? ", core dumped" : "");
    else
      fprintf(out, "  the program exited with status %d\n", m->exit_code);
  }
  if (m->mode == REP_PID) {
    fprintf(out, "  window of %s", fmt_ns(b1, sizeof b1, x->wall_ns));
    if (m->ended_early)
      fprintf(out, " (of %s asked: %s)", fmt_ns(b2, sizeof b2, m->requested_ns),
              m->end_reason ? m->end_reason : "ended early");
    fputs(", counted from the attach\n", out);
  } else {
    fputs("  since the process started\n", out);
  }

  fputs("\nTime\n", out);
  fprintf(out, "  %-24s %s\n", "wall time", x->wall_known ? fmt_ns(b1, sizeof b1, x->wall_ns) : "-");
  fprintf(out, "  %-24s %s (%.2f%% of wall time)\n", "GC time", fmt_ns(b1, sizeof b1, c->gc_time_ns),
          100.0 * share(c->gc_time_ns, x->wall_ns));

  fputs("\nCounts\n", out);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    snprintf(b1, sizeof b1, "%s collections", ocgc_kind_name(k));
    fprintf(out, "  %-24s %12" PRIu64 "\n", b1, c->collections[k]);
  }
  fprintf(out, "  %-24s %12" PRIu64 "\n", "major cycles", c->major_cycles);
  fprintf(out, "  %-24s %12" PRIu64 "\n", "forced majors", c->forced_majors);
  fprintf(out, "  %-24s %12" PRIu64 "\n", "pauses (seen)", ocgc_hist_count(ocgc_snapshot_pauses(snap)));
  fprintf(out, "  %-24s %12s\n", "allocated (minor heap)", fmt_bytes(b1, sizeof b1, c->allocated_bytes));
  fprintf(out, "  %-24s %12s  (%.1f%% of allocated)\n", "promoted",
          fmt_bytes(b1, sizeof b1, c->promoted_bytes), 100.0 * share(c->promoted_bytes, c->allocated_bytes));
  fprintf(out, "  %-24s %12s\n", "allocated (major heap)", fmt_bytes(b1, sizeof b1, c->direct_major_bytes));
  fprintf(out, "  %-24s %12s\n", "heap", fmt_bytes(b1, sizeof b1, c->heap_bytes));
  fprintf(out, "  %-24s %12s\n", "top heap", fmt_bytes(b1, sizeof b1, c->top_heap_bytes));
  fprintf(out, "  (%s)\n", c->exact ? "exact: the producer's own counters"
                                    : "counted from the events: no producer totals");

  fprintf(out, "\nDurations %-16s %9s %8s", "", "count", "mean");
  for (i = 0; i < NPCTS; i++) fprintf(out, " %8s", pct_text[i]);
  fprintf(out, " %8s\n", "max");
  text_hist_row(out, "pause", ocgc_snapshot_pauses(snap));
  for (k = 0; k < OCGC_KIND_COUNT; k++) text_hist_row(out, ocgc_kind_name(k), ocgc_snapshot_kind(snap, k));
  any = 0;
  for (id = 0; id < MAX_PHASE_ID; id++) {
    const struct ocgc_hist *h = ocgc_snapshot_phase(snap, id);
    if (h == NULL || ocgc_hist_count(h) == 0) continue;
    if (!any) fputs(" by phase\n", out);
    any = 1;
    snprintf(b1, sizeof b1, "%s", phase_name(x, id, b2, sizeof b2));
    text_hist_row(out, b1, h);
  }

  fprintf(out, "\nCauses\n  %-13s %-20s %9s %9s %9s\n", "kind", "cause", "count", "total", "worst");
  any = 0;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_SLOTS; cause++) {
      struct ocgc_cause_row row;
      if (ocgc_snapshot_cause(snap, k, cause, &row) != 0 || row.count == 0) continue;
      any = 1;
      fprintf(out, "  %-13s %-20s %9" PRIu64 " %9s %9s\n", ocgc_kind_name(k),
              cause_name(cause, b3, sizeof b3), row.count, fmt_ns(b1, sizeof b1, row.total_ns),
              fmt_ns(b2, sizeof b2, row.worst_ns));
    }
  if (!any) fputs("  (no collection seen)\n", out);

  fputs("\nEvents\n", out);
  fprintf(out, "  %-24s %" PRIu64 "\n", "seen", c->events_seen);
  fprintf(out, "  %-24s %" PRIu64 " (%s)\n", "lost", c->events_lost,
          c->lost_exact ? "exact" : "estimated");
  if (x->c.first_event_ns != 0) {
    fprintf(out, "  %-24s %s", "they cover", fmt_ns(b1, sizeof b1, x->c.last_event_ns - x->c.first_event_ns));
    if (x->wall_known && x->wall_ns > 0)
      fprintf(out, " (%.1f%% of the wall time)", 100.0 * share(x->c.last_event_ns - x->c.first_event_ns, x->wall_ns));
    fputc('\n', out);
  } else {
    fprintf(out, "  %-24s nothing\n", "they cover");
  }
  if (c->events_lost > 0)
    fputs("  the ring overwrote events before they were read: durations and causes\n"
          "  are of the events seen (counts are not, when exact); a larger ring\n"
          "  (OCAMLRUNPARAM=e=N) keeps more\n", out);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_hist(FILE *out, const struct ocgc_hist *h)
{
  uint64_t cnt = h ? ocgc_hist_count(h) : 0;
  size_t i;
  fprintf(out, "{\"count\": %" PRIu64 ", \"mean_ns\": %" PRIu64 ", \"min_ns\": %" PRIu64, cnt,
          cnt ? ocgc_hist_sum(h) / cnt : 0, cnt ? ocgc_hist_min(h) : 0);
  for (i = 0; i < NPCTS; i++)
    fprintf(out, ", \"%s\": %" PRIu64, pct_json[i], cnt ? ocgc_hist_percentile(h, pcts[i]) : 0);
  fprintf(out, ", \"max_ns\": %" PRIu64 ", \"sum_ns\": %" PRIu64 "}", cnt ? ocgc_hist_max(h) : 0,
          cnt ? ocgc_hist_sum(h) : 0);
}

static void json_str_or_null(FILE *out, int have, const char *s)
{
  if (have) ocgc_json_string(out, s);
  else fputs("null", out);
}

static void print_json(FILE *out, const struct rep_meta *m,
                       const struct figures *x, const struct ocgc_snapshot *snap)
{
  const struct ocgc_counters *c = &x->c;
  int ext = x->have_info && x->info.has_ext;
  unsigned k, id, cause;
  char b[32];
  int first;

  fprintf(out, "{\n  \"schema\": \"ocgc-report\",\n  \"schema_version\": %d,\n",
          REPORT_SCHEMA_VERSION);
  fputs("  \"ocgc_version\": ", out);
  ocgc_json_string(out, ocgc_version());
  fprintf(out, ",\n  \"mode\": \"%s\",\n", mode_name(m->mode));

  fputs("  \"source\": {\"path\": ", out);
  json_str_or_null(out, m->path != NULL, m->path);
  fputs(", \"pid\": ", out);
  if (ext) fprintf(out, "%" PRIu64, x->info.pid);
  else if (m->pid > 0) fprintf(out, "%d", m->pid);
  else fputs("null", out);
  fputs(", \"program\": ", out);
  json_str_or_null(out, ext, x->info.program);
  fputs(", \"ocaml_version\": ", out);
  json_str_or_null(out, ext, x->info.ocaml_version);
  fputs(", \"code\": ", out);
  json_str_or_null(out, ext, x->info.flags & OCGC_EXT_NATIVE ? "native" : "bytecode");
  fprintf(out, ", \"state\": \"%s\", \"ocgc_ring\": %s},\n", state_name(m, x), ext ? "true" : "false");

  fputs("  \"command\": ", out);
  if (m->mode == REP_RUN && m->command != NULL) {
    char *const *a;
    fputc('[', out);
    for (a = m->command; *a != NULL; a++) {
      if (a != m->command) fputs(", ", out);
      ocgc_json_string(out, *a);
    }
    fputs("],\n", out);
  } else {
    fputs("null,\n", out);
  }
  fputs("  \"exit\": ", out);
  if (m->mode == REP_RUN && m->has_status) {
    fputs("{\"code\": ", out);
    if (m->signal == 0) fprintf(out, "%d", m->exit_code);
    else fputs("null", out);
    fputs(", \"signal\": ", out);
    if (m->signal != 0) fprintf(out, "%d, \"signal_name\": \"%s\"", m->signal, rep_signal_name(m->signal));
    else fputs("null, \"signal_name\": null", out);
    fprintf(out, ", \"core_dumped\": %s, \"status\": %d},\n", m->core_dumped ? "true" : "false",
            m->signal != 0 ? 128 + m->signal : m->exit_code);
  } else {
    fputs("null,\n", out);
  }

  fprintf(out, "  \"window\": {\"from\": \"%s\", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
          ", \"wall_ns\": %" PRIu64 ", \"requested_ns\": ",
          m->mode == REP_PID ? "attach" : "process_start", x->start_ns, x->end_ns, x->wall_ns);
  if (m->mode == REP_PID) fprintf(out, "%" PRIu64, m->requested_ns);
  else fputs("null", out);
  fprintf(out, ", \"ended_early\": %s, \"end_reason\": ", m->ended_early ? "true" : "false");
  json_str_or_null(out, m->ended_early && m->end_reason != NULL, m->end_reason);
  fputs("},\n", out);

  fprintf(out, "  \"gc_time_ns\": %" PRIu64 ",\n  \"gc_time_share\": %.6f,\n", c->gc_time_ns,
          share(c->gc_time_ns, x->wall_ns));
  fprintf(out, "  \"counts\": {\"exact\": %s, \"collections\": {", c->exact ? "true" : "false");
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    fprintf(out, "%s\"%s\": %" PRIu64, k ? ", " : "", ocgc_kind_name(k), c->collections[k]);
  fprintf(out, "}, \"major_cycles\": %" PRIu64 ", \"forced_majors\": %" PRIu64
          ", \"pauses_seen\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64
          ", \"promoted_bytes\": %" PRIu64 ", \"direct_major_bytes\": %" PRIu64 "},\n",
          c->major_cycles, c->forced_majors, ocgc_hist_count(ocgc_snapshot_pauses(snap)),
          c->allocated_bytes, c->promoted_bytes, c->direct_major_bytes);
  fprintf(out, "  \"heap\": {\"heap_bytes\": %" PRIu64 ", \"top_heap_bytes\": %" PRIu64 "},\n",
          c->heap_bytes, c->top_heap_bytes);

  fputs("  \"pauses\": ", out);
  json_hist(out, ocgc_snapshot_pauses(snap));
  fputs(",\n  \"kinds\": {\n", out);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    fprintf(out, "    \"%s\": ", ocgc_kind_name(k));
    json_hist(out, ocgc_snapshot_kind(snap, k));
    fputs(k + 1 < OCGC_KIND_COUNT ? ",\n" : "\n", out);
  }
  fputs("  },\n  \"phases\": {", out);
  first = 1;
  for (id = 0; id < MAX_PHASE_ID; id++) {
    const struct ocgc_hist *h = ocgc_snapshot_phase(snap, id);
    if (h == NULL || ocgc_hist_count(h) == 0) continue;
    fputs(first ? "\n    " : ",\n    ", out);
    first = 0;
    ocgc_json_string(out, phase_name(x, id, b, sizeof b));
    fputs(": ", out);
    json_hist(out, h);
  }
  fputs(first ? "},\n" : "\n  },\n", out);

  fputs("  \"causes\": [", out);
  first = 1;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_SLOTS; cause++) {
      struct ocgc_cause_row row;
      if (ocgc_snapshot_cause(snap, k, cause, &row) != 0 || row.count == 0) continue;
      fputs(first ? "\n    " : ",\n    ", out);
      first = 0;
      fprintf(out, "{\"kind\": \"%s\", \"cause\": ", ocgc_kind_name(k));
      ocgc_json_string(out, cause_name(cause, b, sizeof b));
      fprintf(out, ", \"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"worst_ns\": %" PRIu64 "}",
              row.count, row.total_ns, row.worst_ns);
    }
  fputs(first ? "],\n" : "\n  ],\n", out);

  fprintf(out, "  \"events\": {\"seen\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"lost_exact\": %s, "
          "\"collections_seen\": {", c->events_seen, c->events_lost, c->lost_exact ? "true" : "false");
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    fprintf(out, "%s\"%s\": %" PRIu64, k ? ", " : "", ocgc_kind_name(k), c->event_collections[k]);
  fputs("}, \"first_ns\": ", out);
  if (x->c.first_event_ns != 0)
    fprintf(out, "%" PRIu64 ", \"last_ns\": %" PRIu64 ", \"span_ns\": %" PRIu64, x->c.first_event_ns,
            x->c.last_event_ns, x->c.last_event_ns - x->c.first_event_ns);
  else
    fputs("null, \"last_ns\": null, \"span_ns\": 0", out);
  fputs("}\n}\n", out);
}

int rep_print(FILE *out, int json, const struct rep_meta *m, const struct rep_follow *f,
              const struct ocgc_snapshot *base, const struct ocgc_snapshot *snap)
{
  struct figures x;
  figures(&x, m, f, base, snap);
  if (json) print_json(out, m, &x, snap);
  else print_text(out, m, &x, snap);
  if (fflush(out) != 0 || ferror(out)) return errno ? -errno : -EIO;
  return 0;
}
