/* html_svg.c - the pictures of the HTML report (html.h): the pause
 * timeline, the latency histograms, the rates over time and the cause
 * bars, as inline SVG with <title> hover texts.
 *
 * Invariants:
 * - every figure a test reads is a data-* attribute in integers (ns,
 *   counts, times relative to the window's start), taken from the same
 *   snapshot as the JSON (counts, percentiles, maxima, cause rows) or
 *   from the timeline (marks, series), never re-derived from what is drawn;
 * - the timeline's data-pauses is the JSON's pause count and data-drawn the
 *   marks written, so a reader sees when marks were left out;
 * - a mark's kind (colour, data-kind, hover text) is its pause's most
 *   significant collection's (ocgc_kind_outranks), as the legend says,
 *   which counts the pauses of every kind seen;
 * - names come from libocgc's tables (kinds, causes): no string of the
 *   target's reaches an attribute here, yet they go through html_text()
 *   like the rest, so a new name could not break out;
 * - output is bounded: at most OCGC_TIMELINE_MAX_MARKS marks, OCGC_TIMELINE_BUCKETS points a
 *   series, OCGC_HIST_NBOUNDS buckets a histogram. */

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

/* The plot area of a picture. */
struct frame {
  double w, h, l, r, t, b; /* size and margins */
};

static double plot_w(const struct frame *fr) { return fr->w - fr->l - fr->r; }
static double plot_h(const struct frame *fr) { return fr->h - fr->t - fr->b; }

static const char *kind_of(int kind)
{
  const char *s = kind >= 0 ? ocgc_kind_name((unsigned)kind) : NULL;
  return s != NULL ? s : "unknown";
}

static const char *cause_of(int cause, char *buf, size_t n)
{
  return cause >= 0 ? rep_cause_name((unsigned)cause, buf, n) : "unknown";
}

static uint64_t rel(const struct html_ctx *c, uint64_t t)
{
  return t > c->t0 ? t - c->t0 : 0;
}

/* x of time [t] (relative ns) over the window. */
static double x_time(const struct html_ctx *c, const struct frame *fr, uint64_t t)
{
  double span = c->span > 0 ? (double)c->span : 1, x = (double)t / span;
  return fr->l + (x > 1 ? 1 : x) * plot_w(fr);
}

/* The decades [lo, hi] (log10 of ns) that hold [min, max]. */
static void decades(uint64_t min, uint64_t max, double *lo, double *hi)
{
  *lo = floor(log10(min > 0 ? (double)min : 1));
  *hi = ceil(log10(max > 1 ? (double)max : 10));
  if (*hi <= *lo) *hi = *lo + 1;
}

static double y_log(const struct frame *fr, double lo, double hi, uint64_t ns)
{
  double v = (log10(ns > 0 ? (double)ns : 1) - lo) / (hi - lo);
  if (v < 0) v = 0;
  if (v > 1) v = 1;
  return fr->t + (1 - v) * plot_h(fr);
}

static void svg_label(FILE *f, double x, double y, const char *anchor, const char *s)
{
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
  html_text(f, s);
  fputs("</text>", f);
}

/* ---- the pause timeline ------------------------------------------------------ */

static void time_axis(const struct html_ctx *c, const struct frame *fr)
{
  char b[32];
  unsigned i;
  fprintf(c->f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", fr->l,
          fr->h - fr->b, fr->w - fr->r, fr->h - fr->b);
  for (i = 0; i <= 4; i++) {
    uint64_t t = c->span / 4 * i;
    svg_label(c->f, x_time(c, fr, t), fr->h - fr->b + 14, i == 0 ? "start" : i == 4 ? "end" : "middle",
              cm_fmt_ns(b, sizeof b, t));
  }
}

static void log_axis(FILE *f, const struct frame *fr, double lo, double hi)
{
  char b[32];
  double d;
  for (d = lo; d <= hi; d++) {
    double y = y_log(fr, lo, hi, (uint64_t)pow(10, d));
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", fr->l, y,
            fr->w - fr->r, y);
    svg_label(f, fr->l - 4, y + 4, "end", cm_fmt_ns(b, sizeof b, (uint64_t)pow(10, d)));
  }
}

static void mark(const struct html_ctx *c, const struct frame *fr, double lo, double hi,
                 const struct ocgc_timeline_mark *m)
{
  char cb[32], d[32], t[32];
  const char *cause = cause_of(m->cause, cb, sizeof cb);
  uint64_t at = rel(c, m->t);
  fprintf(c->f, "<circle class=\"pause\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" data-kind=\"",
          x_time(c, fr, at), y_log(fr, lo, hi, m->ns));
  html_text(c->f, kind_of(m->kind));
  fprintf(c->f, "\" data-ns=\"%" PRIu64 "\" data-t-ns=\"%" PRIu64 "\" data-cause=\"", m->ns, at);
  html_text(c->f, cause);
  fputs("\"><title>", c->f);
  html_text(c->f, kind_of(m->kind));
  fputs(", ", c->f);
  html_text(c->f, cause);
  fprintf(c->f, ": %s at %s</title></circle>\n", cm_fmt_ns(d, sizeof d, m->ns),
          cm_fmt_ns(t, sizeof t, at));
}

static void losses(const struct html_ctx *c, const struct frame *fr)
{
  uint64_t lf, lt;
  unsigned i;
  for (i = 0; c->tl != NULL && ocgc_timeline_loss(c->tl, i, &lf, &lt); i++) {
    uint64_t from = rel(c, lf), to = rel(c, lt);
    double x0 = x_time(c, fr, from), x1 = x_time(c, fr, to);
    fprintf(c->f, "<rect class=\"loss\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "data-from-ns=\"%" PRIu64 "\" data-to-ns=\"%" PRIu64 "\"><title>events lost</title>"
            "</rect>\n", x0, fr->t, x1 - x0 < 2 ? 2 : x1 - x0, plot_h(fr), from, to);
  }
}

/* Every kind the pauses had, with how many: a pause is drawn in the
 * colour of its most significant collection (ocgc_kind_outranks), so
 * the few compactions among thousands of slices are seen and counted. */
static void legend(const struct html_ctx *c)
{
  struct ocgc_timeline_info ti = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  unsigned k;
  if (c->tl != NULL) ocgc_timeline_info(c->tl, &ti);
  fputs("<p class=\"legend\" id=\"ocgc-legend\">", c->f);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    if (ti.kind_pauses[k] == 0) continue;
    fprintf(c->f, "<span data-kind=\"%s\" data-count=\"%" PRIu64 "\"><svg width=\"10\" "
            "height=\"10\" style=\"display:inline;margin:0\"><circle class=\"key\" "
            "data-k=\"%s\" cx=\"5\" cy=\"5\" r=\"4\"/></svg> %s: %" PRIu64 "</span>",
            ocgc_kind_name(k), ti.kind_pauses[k], ocgc_kind_name(k), ocgc_kind_name(k),
            ti.kind_pauses[k]);
  }
  if (ti.unknown_pauses > 0)
    fprintf(c->f, "<span data-kind=\"unknown\" data-count=\"%" PRIu64 "\"><svg width=\"10\" "
            "height=\"10\" style=\"display:inline;margin:0\"><circle class=\"key\" "
            "data-k=\"unknown\" cx=\"5\" cy=\"5\" r=\"4\"/></svg> unknown: %" PRIu64
            "</span>", ti.unknown_pauses, ti.unknown_pauses);
  fputs("<span class=\"note\">pauses by their most significant collection (compaction, "
        "major_finish, major_slice, minor); shaded: events lost</span></p>\n", c->f);
}

void html_timeline(const struct html_ctx *c)
{
  static const struct frame fr = {960, 300, 64, 12, 10, 26};
  const struct ocgc_hist *p = ocgc_snapshot_pauses(c->snap);
  struct ocgc_timeline_mark *marks = c->tl != NULL ? malloc(sizeof *marks * OCGC_TIMELINE_MAX_MARKS) : NULL;
  unsigned n = marks != NULL ? ocgc_timeline_marks(c->tl, marks) : 0, i;
  int k;
  uint64_t min = UINT64_MAX;
  double lo, hi;
  for (i = 0; i < n; i++) if (marks[i].ns < min) min = marks[i].ns;
  decades(n > 0 ? min : ocgc_hist_min(p), ocgc_hist_max(p), &lo, &hi);
  fputs("<h2>Pauses over time</h2>\n", c->f);
  legend(c);
  fprintf(c->f, "<svg id=\"ocgc-timeline\" viewBox=\"0 0 960 300\" width=\"960\" height=\"300\" "
          "data-pauses=\"%" PRIu64 "\" data-drawn=\"%u\" data-max-ns=\"%" PRIu64 "\">\n",
          ocgc_hist_count(p), n, ocgc_hist_max(p));
  log_axis(c->f, &fr, lo, hi);
  losses(c, &fr);
  /* the rarer kinds last, on top: a compaction is not hidden under the
   * slices around it */
  for (k = OCGC_KIND_NONE; k < (int)OCGC_KIND_COUNT; k++)
    for (i = 0; i < n; i++)
      if (marks[i].kind == k || (k == OCGC_KIND_NONE && (marks[i].kind < 0 || marks[i].kind >= (int)OCGC_KIND_COUNT)))
        mark(c, &fr, lo, hi, &marks[i]);
  time_axis(c, &fr);
  fputs("</svg>\n", c->f);
  if (n < ocgc_hist_count(p))
    fprintf(c->f, "<p class=\"note\">%u of %" PRIu64 " pauses drawn: every pause while there are "
            "at most %u; past that the %u longest, the longest of each of %u time slices "
            "(so the maximum and the tail are always there) and a uniform sample of %u.</p>\n",
            n, ocgc_hist_count(p), OCGC_TIMELINE_EXACT, OCGC_TIMELINE_TOP, OCGC_TIMELINE_BUCKETS, OCGC_TIMELINE_SAMPLE);
  free(marks);
}

/* ---- histograms --------------------------------------------------------------- */

#define HIST_MAX_BUCKETS OCGC_HIST_NBOUNDS

/* Bucket bounds: libocgc's one scheme (ocgc_hist_bounds, 1-2-5, as ocgc
 * top and ocgc serve count them), from the bucket of the minimum to the
 * bucket of the maximum. */
static unsigned hist_bounds(const struct ocgc_hist *h, uint64_t *b)
{
  unsigned lo = ocgc_hist_bucket(ocgc_hist_min(h)), hi = ocgc_hist_bucket(ocgc_hist_max(h)), n = 0;
  for (; lo <= hi; lo++) b[n++] = ocgc_hist_bounds()[lo];
  return n;
}

static double x_hist(const struct frame *fr, double lo, double hi, uint64_t ns)
{
  double v = (log10(ns > 0 ? (double)ns : 1) - lo) / (hi - lo);
  return fr->l + (v < 0 ? 0 : v > 1 ? 1 : v) * plot_w(fr);
}

static void hist_bars(FILE *f, const struct frame *fr, const struct ocgc_hist *h, const uint64_t *b,
                      unsigned n, double lo, double hi)
{
  uint64_t prev = 0, most = 1, cnt[HIST_MAX_BUCKETS];
  char t[32];
  unsigned i;
  for (i = 0; i < n; i++) {
    uint64_t le = ocgc_hist_count_le(h, b[i]);
    cnt[i] = le - prev;
    prev = le;
    if (cnt[i] > most) most = cnt[i];
  }
  for (i = 0; i < n; i++) {
    double x0 = i == 0 ? fr->l : x_hist(fr, lo, hi, b[i - 1]), x1 = x_hist(fr, lo, hi, b[i]);
    double hgt = plot_h(fr) * (double)cnt[i] / (double)most;
    fprintf(f, "<rect class=\"bucket\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "data-le-ns=\"%" PRIu64 "\" data-count=\"%" PRIu64 "\"><title>&lt;= %s: %" PRIu64
            "</title></rect>\n", x0 + 0.5, fr->t + plot_h(fr) - hgt, x1 - x0 > 1.5 ? x1 - x0 - 1 : 0.5,
            hgt, b[i], cnt[i], cm_fmt_ns(t, sizeof t, b[i]), cnt[i]);
  }
}

static void hist_pcts(FILE *f, const struct frame *fr, const struct ocgc_hist *h, double lo, double hi)
{
  static const struct { double pct; const char *name; } marks[] = {
    {50, "p50"}, {99, "p99"}, {99.9, "p99.9"}, {100, "max"}};
  char t[32];
  unsigned i;
  for (i = 0; i < sizeof marks / sizeof marks[0]; i++) {
    uint64_t v = marks[i].pct < 100 ? ocgc_hist_percentile(h, marks[i].pct) : ocgc_hist_max(h);
    double x = x_hist(fr, lo, hi, v);
    fprintf(f, "<line class=\"pct\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "data-pct=\"%s\" data-ns=\"%" PRIu64 "\"><title>%s %s</title></line>", x, fr->t, x,
            fr->h - fr->b, marks[i].name, v, marks[i].name, cm_fmt_ns(t, sizeof t, v));
    if (x > fr->w - 60) svg_label(f, x - 2, fr->t + 10 + 11 * i, "end", marks[i].name);
    else svg_label(f, x + 2, fr->t + 10 + 11 * i, "start", marks[i].name);
  }
}

static void pct_table(FILE *f, const struct ocgc_hist *h)
{
  static const char *const names[REP_NPCTS] = {"p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99"};
  char t[32];
  unsigned i;
  fprintf(f, "<table class=\"pcts\"><tr><th>count</th><td>%" PRIu64 "</td></tr>", ocgc_hist_count(h));
  fprintf(f, "<tr><th>min</th><td>%s</td></tr>", cm_fmt_ns(t, sizeof t, ocgc_hist_min(h)));
  for (i = 0; i < REP_NPCTS; i++)
    fprintf(f, "<tr><th>%s</th><td>%s</td></tr>", names[i],
            cm_fmt_ns(t, sizeof t, ocgc_hist_percentile(h, rep_pcts[i])));
  fprintf(f, "<tr><th>max</th><td>%s</td></tr></table>\n", cm_fmt_ns(t, sizeof t, ocgc_hist_max(h)));
}

static void hist_one(FILE *f, const char *name, const struct ocgc_hist *h)
{
  static const struct frame fr = {520, 180, 10, 10, 8, 22};
  uint64_t b[HIST_MAX_BUCKETS];
  unsigned n = hist_bounds(h, b);
  double lo = log10((double)b[0]) - 0.2, hi = log10((double)b[n - 1]);
  char t[32];
  fprintf(f, "<h3>%s</h3>\n<div class=\"hist\">\n<svg class=\"ocgc-hist\" viewBox=\"0 0 520 180\" "
          "width=\"520\" height=\"180\" data-kind=\"%s\" data-count=\"%" PRIu64 "\" data-p50-ns=\"%"
          PRIu64 "\" data-p99-ns=\"%" PRIu64 "\" data-p999-ns=\"%" PRIu64 "\" data-max-ns=\"%" PRIu64
          "\">\n", strcmp(name, "pause") == 0 ? "pauses" : name, name, ocgc_hist_count(h),
          ocgc_hist_percentile(h, 50), ocgc_hist_percentile(h, 99), ocgc_hist_percentile(h, 99.9),
          ocgc_hist_max(h));
  if (hi <= lo) hi = lo + 1;
  hist_bars(f, &fr, h, b, n, lo, hi);
  hist_pcts(f, &fr, h, lo, hi);
  fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", fr.l,
          fr.h - fr.b, fr.w - fr.r, fr.h - fr.b);
  svg_label(f, fr.l, fr.h - 6, "start", cm_fmt_ns(t, sizeof t, b[0]));
  svg_label(f, fr.w - fr.r, fr.h - 6, "end", cm_fmt_ns(t, sizeof t, b[n - 1]));
  fputs("</svg>\n", f);
  pct_table(f, h);
  fputs("</div>\n", f);
}

void html_hists(const struct html_ctx *c)
{
  const struct ocgc_hist *p = ocgc_snapshot_pauses(c->snap);
  unsigned k;
  fputs("<h2>Latency</h2>\n<p class=\"note\">log-scaled buckets at 1, 2 and 5 times each power "
        "of ten (as ocgc top and ocgc serve count them), each holding the values above the "
        "bound before it up to its own; red lines: p50, p99, p99.9, max</p>\n", c->f);
  if (ocgc_hist_count(p) > 0) hist_one(c->f, "pause", p);
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    const struct ocgc_hist *h = ocgc_snapshot_kind(c->snap, k);
    if (h != NULL && ocgc_hist_count(h) > 0) hist_one(c->f, ocgc_kind_name(k), h);
  }
  if (ocgc_hist_count(p) == 0) fputs("<p>No pause seen.</p>\n", c->f);
}

/* ---- cause bars ----------------------------------------------------------------- */

static void cause_row(FILE *f, unsigned row, unsigned k, unsigned cause, const struct ocgc_cause_row *r,
                      uint64_t most)
{
  char cb[32], t1[32], t2[32], label[96];
  const char *cn = rep_cause_name(cause, cb, sizeof cb);
  double y = 6 + 22.0 * row, w = 480.0 * (double)r->total_ns / (double)(most ? most : 1);
  snprintf(label, sizeof label, "%s / %s", ocgc_kind_name(k), cn);
  svg_label(f, 250, y + 13, "end", label);
  fprintf(f, "<rect class=\"cause-bar\" x=\"258\" y=\"%.1f\" width=\"%.1f\" height=\"16\" "
          "data-kind=\"%s\" data-cause=\"", y, w < 1 ? 1 : w, ocgc_kind_name(k));
  html_text(f, cn);
  fprintf(f, "\" data-count=\"%" PRIu64 "\" data-total-ns=\"%" PRIu64 "\" data-max-ns=\"%" PRIu64
          "\"><title>", r->count, r->total_ns, r->worst_ns);
  html_text(f, label);
  fprintf(f, ": %" PRIu64 " collections, %s in all, worst %s</title></rect>", r->count,
          cm_fmt_ns(t1, sizeof t1, r->total_ns), cm_fmt_ns(t2, sizeof t2, r->worst_ns));
  snprintf(label, sizeof label, "%" PRIu64 " x, %s, worst %s", r->count, t1, t2);
  svg_label(f, 262 + (w < 1 ? 1 : w), y + 13, "start", label);
  fputc('\n', f);
}

void html_causes(const struct html_ctx *c)
{
  struct ocgc_cause_row r = OCGC_OPTS_INIT(struct ocgc_cause_row);
  unsigned k, cause, rows = 0, row = 0;
  uint64_t most = 0;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_SLOTS; cause++)
      if (ocgc_snapshot_cause(c->snap, k, cause, &r) == 0 && r.count > 0) {
        rows++;
        if (r.total_ns > most) most = r.total_ns;
      }
  fputs("<h2>Causes</h2>\n<p class=\"note\">time in collections by kind and cause "
        "(bar: total time)</p>\n", c->f);
  fprintf(c->f, "<svg id=\"ocgc-causes\" viewBox=\"0 0 960 %u\" width=\"960\" height=\"%u\">\n",
          22 * rows + 12, 22 * rows + 12);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_SLOTS; cause++)
      if (ocgc_snapshot_cause(c->snap, k, cause, &r) == 0 && r.count > 0)
        cause_row(c->f, row++, k, cause, &r, most);
  fputs("</svg>\n", c->f);
}
