/* top.c - `ocgc top`: a live full-screen view of one process's GC.
 *
 * What it owns: the screen.  The figures all come from libocgc's
 * aggregator (public API only): a header (program, pid, OCaml version,
 * uptime, heap), the rates between the last two refreshes (an ocgc_interval),
 * sparklines of the last minute (top_spark.c), a pause histogram per
 * collection kind drawn as bars over libocgc's one bucket scheme
 * (ocgc_hist_bounds: 1-2-5, three a decade, as the HTML report and serve
 * have them), counted at the bounds (ocgc_hist_count_le), under them for
 * a stock OCaml 5.3+ process the line of the major slices' work (why a
 * slice was long: top_slicework.c), the cause
 * table (worst total time first), the top allocating functions of the
 * last interval (top_alloc.c) when the process samples, the CPU panel
 * (top_cpu.c: the hottest functions by CPU samples over the last few
 * seconds and the GC share of the samples by phase; off until --cpu or
 * the key c, since sampling costs the process some CPU), and the loss.  Block characters only
 * when the locale's character set is UTF-8 (ncursesw draws them), '#'
 * and an ASCII ramp otherwise.  The aggregator reads from the oldest
 * event the ring still holds, so the histograms and the cause table have
 * something to show at once; the counters are the producer's exact
 * totals.
 *
 * Invariants:
 * - the terminal is restored (endwin) on every way out after it was taken:
 *   q, the process's exit, SIGINT/SIGTERM (caught, turned into a flag the
 *   loop checks), errors;
 * - everything that can fail with a one-line message (arguments, attach)
 *   is done before the screen is taken, so the message is readable;
 * - the ring is read every POLL_MS (not only at each refresh), so that a
 *   long refresh interval does not let a small ring wrap;
 * - a SIGINT/SIGTERM ends the wait for a key at once (wait_key), so the
 *   exit follows the signal within one poll, not after POLL_MS;
 * - when stdout is not a terminal there is no screen to draw: `ocgc stat`'s
 *   rows (stat_rows) instead, with the same target, interval and count,
 *   and every message still says `ocgc top`;
 * - when the process exits, its last figures stay on screen until a key
 *   (or a stop signal), as the screen says: only a terminal that can give
 *   no key any more (hung up, its input at its end) ends the wait.
 * Attaching, liveness, signals and the bounded drain are common.h's. */

#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "common.h"
#include "top_alloc.h"
#include "top_cpu.h"
#include "top_spark.h"
#include "top_slicework.h"

#define POLL_MS 100
#define MAX_ROWS (OCGC_KIND_COUNT * OCGC_CAUSE_COUNT)
#define BAR_BUCKETS OCGC_HIST_NBOUNDS
#define MIN_BARS 3
#define MAX_BARS 18     /* six decades */
#define CAUSE_ROOM 4    /* the cause table's title and first rows */

struct top {
  const struct tool_target *target;
  int pid;
  uint64_t interval_ns;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_source_info info;
  char program[TOOL_ESC_SIZE(sizeof ((struct ocgc_source_info *)0)->program)]; /* escaped */
  char ocaml[TOOL_ESC_SIZE(sizeof ((struct ocgc_source_info *)0)->ocaml_version)];
  struct ocgc_snapshot *cur;  /* at the last refresh */
  struct ocgc_interval *iv;   /* from one refresh to the next: the rates */
  struct ocgc_rates rates;
  int have_rates;
  int exited;
  uint64_t refreshes;
  int utf8;                   /* the locale's: block characters drawn */
  struct top_spark spark;     /* the last minute */
  struct top_alloc alloc;     /* the top allocating functions, each refresh */
  struct top_cpu cpu;         /* the CPU panel: off until --cpu or the key c */
};

struct cause_line {
  unsigned kind, cause;
  struct ocgc_cause_row row;
};

/* A size in bytes as MiB (CM_MIB, as every subcommand). */
static double mib(uint64_t bytes)
{
  return (double)bytes / CM_MIB;
}

/* Fields separated by three spaces, moving to the next line when one would
 * not fit; returns the row after the last one used. */
static int draw_fields(int row, const char *title, char fields[][48], int nfields)
{
  int i, col = 0;
  attron(A_BOLD);
  mvaddstr(row, 0, title);
  attroff(A_BOLD);
  col = 9;
  for (i = 0; i < nfields; i++) {
    int len = (int)strlen(fields[i]);
    if (col > 9 && col + len > COLS) { row++; col = 9; }
    mvaddstr(row, col, fields[i]);
    col += len + 3;
  }
  return row + 1;
}

static int draw_header(struct top *tp, const struct ocgc_counters *c)
{
  char line[512], up[32] = "?";
  const struct ocgc_source_info *in = &tp->info;
  if (in->has_ext && in->created_ns) cm_fmt_uptime(up, sizeof up, cm_mono_ns() - in->created_ns);
  snprintf(line, sizeof line, " ocgc top - %s (pid %d)   OCaml %s %s   up %s   heap %.1f MiB "
           "(top %.1f MiB)", in->has_ext ? tp->program : "?", tp->pid,
           in->has_ext ? tp->ocaml : "5", in->flags & OCGC_EXT_BYTECODE ? "bytecode"
           : in->flags & OCGC_EXT_NATIVE ? "native" : "", up, mib(c->heap_bytes),
           mib(c->top_heap_bytes));
  attron(A_REVERSE);
  mvhline(0, 0, ' ', COLS);
  mvaddnstr(0, 0, line, COLS);
  attroff(A_REVERSE);
  return 2;
}

static int draw_rates(struct top *tp, int row, const struct ocgc_counters *c)
{
  char f[8][48];
  const struct ocgc_rates *r = &tp->rates;
  if (tp->have_rates) {
    snprintf(f[0], 48, "minor/s %.1f", r->collections_per_s[OCGC_KIND_MINOR]);
    snprintf(f[1], 48, "slices/s %.1f", r->collections_per_s[OCGC_KIND_MAJOR_SLICE]);
    snprintf(f[2], 48, "cycles/s %.2f", r->major_cycles_per_s);
    snprintf(f[3], 48, "alloc %.1f MiB/s", r->allocated_bytes_per_s / CM_MIB);
    snprintf(f[4], 48, "promoted %.2f MiB/s", r->promoted_bytes_per_s / CM_MIB);
    snprintf(f[5], 48, "promotion %.1f%%", 100 * r->promotion_ratio);
    snprintf(f[6], 48, "GC %.1f%%", 100 * r->gc_time_share);
  } else {
    static const char *const names[] = {"minor/s", "slices/s", "cycles/s", "alloc MiB/s",
                                        "promoted MiB/s", "promotion %", "GC %"};
    int i;
    for (i = 0; i < 7; i++) snprintf(f[i], 48, "%s -", names[i]);
  }
  row = draw_fields(row, "rates", f, 7);
  /* by hand, not a loop over the counters' table: a panel of 8 short
   * fields, its own words and units (MiB, s) */
  snprintf(f[0], 48, "minor %" PRIu64, c->collections[OCGC_KIND_MINOR]);
  snprintf(f[1], 48, "slices %" PRIu64, c->collections[OCGC_KIND_MAJOR_SLICE]);
  snprintf(f[2], 48, "cycles %" PRIu64, c->major_cycles);
  snprintf(f[3], 48, "forced %" PRIu64, c->forced_majors);
  snprintf(f[4], 48, "compactions %" PRIu64, c->collections[OCGC_KIND_COMPACTION]);
  snprintf(f[5], 48, "allocated %.1f MiB", mib(c->allocated_bytes));
  snprintf(f[6], 48, "promoted %.1f MiB", mib(c->promoted_bytes));
  snprintf(f[7], 48, "GC time %.3fs", (double)c->gc_time_ns / 1e9);
  return draw_fields(row, "totals", f, 8) + 1;
}

/* One sparkline row: [title], the newest samples of [r] that fit beside
 * the figures (the newest sample, the largest shown and how many, in
 * [fmt]'s form). */
static int draw_spark(struct top *tp, int row, const char *title, const struct top_ring *r,
                      void (*fmt)(char *, size_t, double))
{
  char now[24], max[24], fig[96], line[TOP_SPARK_SAMPLES * 3 + 1];
  int width = COLS - 9 - 2;
  unsigned drawn;
  fmt(now, sizeof now, top_ring_last(r));
  fmt(max, sizeof max, r->n ? top_ring_max(r, TOP_SPARK_SAMPLES) : NAN);
  snprintf(fig, sizeof fig, "%s now, max %s", now, max);
  width -= (int)strlen(fig) + 6;
  if (width < 0) width = 0;
  drawn = top_spark_line(r, (unsigned)width, tp->utf8, line, sizeof line);
  if (r->n) { /* the max of what is drawn, and over how long */
    fmt(max, sizeof max, top_ring_max(r, drawn));
    snprintf(fig, sizeof fig, "%s now, max %s (%us)", now, max, drawn);
  }
  attron(A_BOLD);
  mvaddstr(row, 0, title);
  attroff(A_BOLD);
  mvaddstr(row, 9, line);
  mvaddnstr(row, 9 + (int)drawn + 2, fig, COLS - 11 - (int)drawn > 0 ? COLS - 11 - (int)drawn : 0);
  return row + 1;
}

static void fmt_p99(char *buf, size_t n, double ns)
{
  if (isnan(ns)) snprintf(buf, n, "-");
  else cm_fmt_ns(buf, n, (uint64_t)ns);
}

static void fmt_rate(char *buf, size_t n, double bytes_per_s)
{
  if (isnan(bytes_per_s)) snprintf(buf, n, "-");
  else snprintf(buf, n, "%.1f MiB/s", bytes_per_s / CM_MIB);
}

/* The last minute: a sample a second (top_spark.c). */
static int draw_sparks(struct top *tp, int row)
{
  row = draw_spark(tp, row, "p99", &tp->spark.p99_ns, fmt_p99);
  return draw_spark(tp, row, "alloc", &tp->spark.alloc_bps, fmt_rate) + 1;
}

/* "<=500ns", "<=20us", "<=1ms", "<=5s": a bound, exactly (a bucket holds
 * the values above the bound before it, up to its own). */
static void fmt_bound(char *buf, size_t n, uint64_t ns)
{
  if (ns < 1000) snprintf(buf, n, "<=%" PRIu64 "ns", ns);
  else if (ns < 1000000) snprintf(buf, n, "<=%" PRIu64 "us", ns / 1000);
  else if (ns < 1000000000) snprintf(buf, n, "<=%" PRIu64 "ms", ns / 1000000);
  else snprintf(buf, n, "<=%" PRIu64 "s", ns / 1000000000);
}

/* [h]'s values by bar bucket, counted at the bounds (within the
 * histogram's 0.1%). */
static void bar_counts(const struct ocgc_hist *h, uint64_t counts[BAR_BUCKETS])
{
  const uint64_t *b = ocgc_hist_bounds();
  uint64_t prev = 0, le;
  unsigned i;
  for (i = 0; i < BAR_BUCKETS; i++) {
    le = i + 1 < BAR_BUCKETS ? ocgc_hist_count_le(h, b[i]) : ocgc_hist_count(h);
    counts[i] = le - prev;
    prev = le;
  }
}

/* A bar of [count] out of [max] over [width] columns into [out]: '#'s, or
 * full blocks and the last column's eighth (U+2589..U+258F) in UTF-8. */
static void fmt_bar(char *out, size_t size, uint64_t count, uint64_t max, int width, int utf8)
{
  uint64_t eighths = max && width > 0 ? (count * (uint64_t)width * 8 + max - 1) / max : 0;
  size_t len = 0;
  if (!utf8) eighths = (eighths + 7) / 8 * 8; /* whole columns, rounded up */
  for (; eighths > 0 && len + 4 < size; eighths -= eighths >= 8 ? 8 : eighths) {
    unsigned part = eighths >= 8 ? 8 : (unsigned)eighths;
    if (!utf8) { out[len++] = '#'; continue; }
    out[len++] = (char)0xe2;
    out[len++] = (char)0x96;
    out[len++] = (char)(part == 8 ? 0x88 : 0x90 - part);
  }
  out[len] = '\0';
}

/* The bar buckets [*lo, *hi] that fit [nbars] rows: from the smallest
 * value's to the largest's, the rare ones below p1 folded into the first
 * (its label, an upper bound like every label, still holds), then more of
 * the low end up to p50's; if that is not enough, the top folds into a last
 * row (1 is returned: that row holds what is above the bound of the row
 * before it). */
static int bar_span(const struct ocgc_hist *h, int nbars, uint64_t counts[BAR_BUCKETS],
                    unsigned *lo, unsigned *hi)
{
  unsigned p1 = ocgc_hist_bucket(ocgc_hist_percentile(h, 1));
  unsigned p50 = ocgc_hist_bucket(ocgc_hist_percentile(h, 50)), n = nbars > 1 ? (unsigned)nbars : 1;
  *lo = ocgc_hist_bucket(ocgc_hist_min(h));
  *hi = ocgc_hist_bucket(ocgc_hist_max(h));
  for (; *lo < p1 || (*hi - *lo + 1 > n && *lo < p50); (*lo)++) counts[*lo + 1] += counts[*lo];
  if (*hi - *lo + 1 <= n) return 0;
  for (; *hi - *lo + 1 > n; (*hi)--) counts[*hi - 1] += counts[*hi];
  return 1;
}

/* One kind's histogram at (row, col) in a box of [width] columns: a title
 * and at most [nbars] bars (bar_span).  Returns the rows used. */
static int draw_hist(struct top *tp, int row, int col, int width, int nbars, const char *name,
                     const struct ocgc_hist *h)
{
  uint64_t counts[BAR_BUCKETS], max = 0, total = ocgc_hist_count(h);
  char p50[16], p99[16], mx[16], line[160], label[16], bar[2048];
  unsigned lo, hi, i;
  int barw = width - 8 - 12 - 2, r = 1, top_folded;
  bar_counts(h, counts);
  top_folded = bar_span(h, nbars, counts, &lo, &hi);
  for (i = lo; i <= hi; i++) if (counts[i] > max) max = counts[i];
  cm_fmt_ns(p50, sizeof p50, ocgc_hist_percentile(h, 50));
  cm_fmt_ns(p99, sizeof p99, ocgc_hist_percentile(h, 99));
  cm_fmt_ns(mx, sizeof mx, ocgc_hist_max(h));
  snprintf(line, sizeof line, "%-12s n=%" PRIu64 "  p50 %s  p99 %s  max %s", name, total, p50,
           p99, mx);
  attron(A_BOLD);
  mvaddnstr(row, col, line, width);
  attroff(A_BOLD);
  for (i = lo; total && i <= hi; i++, r++) {
    int folded = i == hi && top_folded;
    fmt_bound(label, sizeof label, ocgc_hist_bounds()[folded ? i - 1 : i]);
    fmt_bar(bar, sizeof bar, counts[i], max, barw, tp->utf8);
    /* the folded top: "<=2ms" read as ">2ms" (above the row before's) */
    mvprintw(row + r, col, " %s%-*s|", folded ? ">" : "", folded ? 6 : 7, label + 2 * folded);
    mvaddstr(row + r, col + 9, bar);
    mvprintw(row + r, col + 9 + (barw > 0 ? barw : 0), " %" PRIu64, counts[i]);
  }
  return r;
}

/* The kinds with a histogram to show: minor always, so that the panel is
 * there before the first pause, and the others that had a collection. */
static unsigned hist_kinds(const struct ocgc_snapshot *snap, unsigned kinds[OCGC_KIND_COUNT])
{
  unsigned k, n = 0;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    const struct ocgc_hist *h = ocgc_snapshot_kind(snap, k);
    if (h != NULL && (k == OCGC_KIND_MINOR || ocgc_hist_count(h) > 0)) kinds[n++] = k;
  }
  return n;
}

static int draw_hists(struct top *tp, int row, const struct ocgc_snapshot *snap, int max_row)
{
  unsigned kinds[OCGC_KIND_COUNT], n = hist_kinds(snap, kinds), i;
  int ncols = COLS >= 100 ? 2 : 1, width = COLS / ncols - 2, used = 0, grid, nbars;
  attron(A_BOLD | A_UNDERLINE);
  mvaddstr(row++, 0, "pause histograms by kind (collections seen)");
  attroff(A_BOLD | A_UNDERLINE);
  /* An equal share of the room above the cause table's first lines for
   * each row of histograms: its title, its bars and a blank line. */
  grid = (int)(n + (unsigned)ncols - 1) / ncols;
  nbars = grid ? (max_row - row - CAUSE_ROOM) / grid - 2 : 0;
  if (nbars < MIN_BARS) nbars = MIN_BARS;
  if (nbars > MAX_BARS) nbars = MAX_BARS;
  for (i = 0; i < n; i++) {
    int col = (int)(i % (unsigned)ncols) * (width + 2), r;
    if (row + nbars + 1 > max_row) break;
    r = draw_hist(tp, row, col, width, nbars, ocgc_kind_name(kinds[i]),
                  ocgc_snapshot_kind(snap, kinds[i]));
    if (r > used) used = r;
    if ((i + 1) % (unsigned)ncols == 0) { row += used + 1; used = 0; }
  }
  return used ? row + used + 1 : row;
}

static int by_total_time(const void *a, const void *b)
{
  const struct cause_line *x = a, *y = b;
  if (x->row.total_ns != y->row.total_ns) return x->row.total_ns > y->row.total_ns ? -1 : 1;
  if (x->row.count != y->row.count) return x->row.count > y->row.count ? -1 : 1;
  return 0;
}

static int draw_causes(int row, const struct ocgc_snapshot *snap, int max_row)
{
  struct cause_line lines[MAX_ROWS];
  unsigned k, c, n = 0, i;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
      struct ocgc_cause_row r = OCGC_OPTS_INIT(struct ocgc_cause_row);
      if (ocgc_snapshot_cause(snap, k, c, &r) != 0 || r.count == 0) continue;
      lines[n].kind = k;
      lines[n].cause = c;
      lines[n].row = r;
      n++;
    }
  qsort(lines, n, sizeof lines[0], by_total_time);
  if (row >= max_row) return row;
  attron(A_BOLD | A_UNDERLINE);
  mvprintw(row++, 0, "%-14s %-20s %10s %11s %10s", "KIND", "CAUSE", "COUNT", "TOTAL_MS",
           "WORST_MS");
  attroff(A_BOLD | A_UNDERLINE);
  /* When the rows do not all fit, the last line says how many are left out. */
  for (i = 0; i < n && row < max_row && (i + 1 == n || row + 1 < max_row); i++, row++) {
    const char *cn = ocgc_cause_name(lines[i].cause);
    mvprintw(row, 0, "%-14s %-20s %10" PRIu64 " %11.3f %10.3f", ocgc_kind_name(lines[i].kind),
             cn ? cn : "?", lines[i].row.count, (double)lines[i].row.total_ns / 1e6,
             (double)lines[i].row.worst_ns / 1e6);
  }
  if (n == 0 && row < max_row) mvaddstr(row++, 0, "(no collection seen yet)");
  else if (i < n) mvprintw(row++, 0, "(%u more rows: a taller terminal shows them)", n - i);
  return row;
}

#define ALLOC_ROWS 5

/* The top allocating functions of the last interval, in at most
 * ALLOC_ROWS + 1 lines before [max_row]. */
static int draw_alloc(struct top *tp, int row, int max_row)
{
  const struct top_alloc *a = &tp->alloc;
  char esc[TOOL_ESC_SIZE(64)], rate[32];
  size_t i;
  if (!a->has_profile || row >= max_row) return row;
  if (a->state != OCGC_MP_ON && (a->fns == NULL || a->fns->n == 0)) {
    mvprintw(row++, 0, "allocation sampling is %s: 'ocgc profile %d --rate 512k' samples "
             "for 10 s", a->state == OCGC_MP_ASIDE ? "aside (the program's Gc.Memprof runs)"
                                                    : "off", tp->pid);
    return row;
  }
  attron(A_BOLD | A_UNDERLINE);
  mvprintw(row++, 0, "%-56s %12s %7s", "TOP ALLOCATING FUNCTIONS (sampled)", "MiB/s", "%");
  attroff(A_BOLD | A_UNDERLINE);
  {
    int64_t total = 0;
    for (i = 0; a->fns != NULL && i < a->fns->n; i++) total += a->fns->fn[i].flat[OCGC_PV_ALLOC_SPACE];
    for (i = 0; a->fns != NULL && i < a->fns->n && i < ALLOC_ROWS && row < max_row; i++) {
      const struct ocgc_profile_function *fn = &a->fns->fn[i];
      int64_t b = fn->flat[OCGC_PV_ALLOC_SPACE];
      if (b <= 0) break;
      /* a name of the target's executable: escaped, cut to its column */
      mvprintw(row++, 0, "%-56.56s %12.1f %6.1f%%", tool_esc(fn->name, esc, sizeof esc),
               a->window_ns ? mib((uint64_t)b) * 1e9 / (double)a->window_ns : 0.0,
               total > 0 ? 100.0 * (double)b / (double)total : 0.0);
    }
    if (i == 0 && row < max_row) mvprintw(row++, 0, "(nothing sampled in the last %s)",
                                          cm_fmt_uptime(rate, sizeof rate, a->window_ns));
  }
  return row + 1;
}

#define CPU_ROWS 5

/* [s] from [row] on, cut into lines of the screen's width at spaces, at most [n]
 * lines before [max_row]. */
static int draw_wrapped(int row, const char *s, int n, int max_row)
{
  size_t len = strlen(s), at = 0, w = COLS > 1 ? (size_t)COLS : 80;
  while (at < len && n-- > 0 && row < max_row) {
    size_t take = len - at <= w ? len - at : w;
    /* at a space where there is one, so that no word (a setting's name a
     * reader would copy) is cut in two */
    if (take < len - at) {
      size_t sp = take;
      while (sp > 0 && s[at + sp] != ' ') sp--;
      if (sp > 0) take = sp;
    }
    mvaddnstr(row++, 0, s + at, (int)take);
    at += take;
    while (at < len && s[at] == ' ') at++;
  }
  return row;
}

/* The CPU panel, in at most CPU_ROWS + 3 lines before [max_row]. */
static int draw_cpu(struct top *tp, int row, int max_row)
{
  const struct top_cpu *t = &tp->cpu;
  const struct rep_cpu *c = &t->last;
  char esc[TOOL_ESC_SIZE(64)], line[512];
  unsigned i;
  int p, n;
  if (row >= max_row) return row;
  if (t->denied || (!t->on && t->why[0] != '\0')) {
    /* libocgc's one line: which setting, which capability */
    return draw_wrapped(row, t->why, 3, max_row) + 1;
  }
  if (!t->on && !c->have) {
    mvprintw(row++, 0, "CPU sampling off: press c to sample this process's CPU (it costs the "
             "process some CPU: a few %% at %d Hz)", TOP_CPU_HZ);
    return row + 1;
  }
  attron(A_BOLD | A_UNDERLINE);
  snprintf(line, sizeof line, "CPU (sampled at %d Hz%s; c: off)", TOP_CPU_HZ,
           t->on ? ", it costs the process some CPU" : ": stopped, the process changed");
  mvprintw(row++, 0, "%-.*s", COLS > 0 ? COLS : 80, line);
  attroff(A_BOLD | A_UNDERLINE);
  if (!c->have) {
    mvprintw(row++, 0, "(gathering the first %.0f s)", (double)TOP_CPU_WINDOW_NS / 1e9);
    return row + 1;
  }
  /* the two shares first, so a narrow screen cuts the phases, not them */
  n = snprintf(line, sizeof line, "GC %.1f%% of %" PRIu64 " samples in the last %.1f s",
               100.0 * c->gc_share_samples, c->samples, (double)c->window_ns / 1e9);
  if (c->ring_known && n > 0 && (size_t)n < sizeof line)
    n += snprintf(line + n, sizeof line - (size_t)n, " (the ring: %.1f%% of wall time)",
                  100.0 * c->gc_share_ring);
  if (n > 0 && (size_t)n < sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, ":");
  for (p = 1; p < OCGC_GC_PHASE_COUNT && n > 0 && (size_t)n < sizeof line; p++)
    if (c->phase[p] > 0)
      n += snprintf(line + n, sizeof line - (size_t)n, " %s %.1f%%",
                    ocgc_gc_phase_name((enum ocgc_gc_phase)p),
                    c->samples ? 100.0 * (double)c->phase[p] / (double)c->samples : 0.0);
  if (row < max_row) mvaddnstr(row++, 0, line, COLS);
  if (row < max_row) {
    attron(A_BOLD);
    mvprintw(row++, 0, "%-56s %12s %7s", "HOTTEST FUNCTIONS (CPU samples)", "samples", "%");
    attroff(A_BOLD);
  }
  for (i = 0; i < c->ntop && i < CPU_ROWS && row < max_row; i++)
    /* a name of the target's executable: escaped, cut to its column */
    mvprintw(row++, 0, "%-56.56s %12" PRIu64 " %6.1f%%", tool_esc(c->top[i].name, esc, sizeof esc),
             c->top[i].samples,
             c->samples ? 100.0 * (double)c->top[i].samples / (double)c->samples : 0.0);
  return row + 1;
}

static void draw(struct top *tp, const char *message)
{
  struct ocgc_counters c = OCGC_OPTS_INIT(struct ocgc_counters);
  char interval[32], line[256], slicework[256];
  int row, sw;
  erase();
  if (tp->cur == NULL) { refresh(); return; }
  ocgc_snapshot_counters(tp->cur, &c);
  row = draw_header(tp, &c);
  row = draw_rates(tp, row, &c);
  row = draw_sparks(tp, row);
  /* The histograms get what they need, the cause table the rest, the last
   * two lines are the loss and the keys. */
  /* the histograms leave room for the allocating functions, if any, and
   * the line of the major slices' work (stock OCaml 5.3+) */
  sw = top_slicework_line(tp->cur, slicework, sizeof slicework);
  row = draw_hists(tp, row, tp->cur, LINES - 4 - (tp->alloc.has_profile ? ALLOC_ROWS + 1 : 0) -
                   (tp->cpu.on || tp->cpu.last.have ? CPU_ROWS + 4 : 2) - sw);
  if (sw) mvaddnstr(row++, 0, slicework, COLS);
  row = draw_alloc(tp, row, LINES - 4);
  row = draw_cpu(tp, row, LINES - 4);
  row = draw_causes(row, tp->cur, LINES - 2);
  snprintf(line, sizeof line, "events seen %" PRIu64 "   lost %" PRIu64 "%s", c.events_seen,
           c.events_lost, c.events_lost ? (c.lost_exact ? " (exact; counters stay exact)"
                                                       : " (estimated)") : "");
  mvaddnstr(LINES - 2, 0, line, COLS);
  cm_fmt_uptime(interval, sizeof interval, tp->interval_ns);
  if (message != NULL) {
    attron(A_REVERSE);
    mvhline(LINES - 1, 0, ' ', COLS);
    mvaddnstr(LINES - 1, 0, message, COLS);
    attroff(A_REVERSE);
  } else {
    snprintf(line, sizeof line, "q quit   c CPU panel %s   refresh every %s (-d)",
             tp->cpu.on ? "off" : "on", interval);
    mvaddnstr(LINES - 1, 0, line, COLS);
  }
  (void)row;
  refresh();
}

/* Read what the producer wrote since the last poll (bounded, so that a
 * producer writing flat out cannot keep us from the keyboard, nor from
 * the refresh due at [deadline]). */
static int poll_agg(struct top *tp, uint64_t deadline)
{
  struct ocgc_drain_opts d = OCGC_OPTS_INIT(struct ocgc_drain_opts);
  d.stop = &tool_stop;
  d.deadline_ns = deadline;
  return ocgc_agg_drain(tp->agg, &d, NULL);
}

/* A new snapshot, and the rates since the one before (the first begins
 * the first interval).  A producer that did not run in the interval has
 * rates of zero. */
static int take_snapshot(struct top *tp)
{
  struct ocgc_interval_figures f = OCGC_OPTS_INIT(struct ocgc_interval_figures);
  int err = ocgc_agg_snapshot_update(tp->agg, &tp->cur);
  if (err) return err;
  if (tp->iv == NULL) return ocgc_interval_new(tp->agg, &tp->iv);
  if ((err = ocgc_interval_next(tp->iv, &f)) != 0) return err;
  tp->rates = f.rates;
  tp->have_rates = 1;
  return 0;
}

static void top_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc top [-d INTERVAL] [-n COUNT] [--dir DIR] PID\n\n"
          "A live full-screen view of the GC of the running OCaml process PID,\n"
          "refreshed every INTERVAL (default 1s; 500ms, 2s...):\n"
          "  - the program, its OCaml, uptime and heap;\n"
          "  - rates over the last interval: minor collections, major slices and\n"
          "    major cycles per second, allocation and promotion in MiB/s, the\n"
          "    promotion ratio and the share of time spent in the GC; totals;\n"
          "  - the last minute, a sample a second: sparklines of the pause p99\n"
          "    and of the allocation rate;\n"
          "  - a pause histogram per collection kind, bars in 1-2-5 steps (three\n"
          "    a decade: <=10us <=20us <=50us <=100us ..., as the HTML report and\n"
          "    ocgc serve count them), with p50, p99 and max, of\n"
          "    the collections seen (from the oldest event the ring still held at\n"
          "    the attach);\n"
          "  - the causes: kind, cause, count, total and worst time, most total\n"
          "    time first;\n"
          "  - events lost (the ring overwrote them before they were read).\n\n"
          "Keys: q quits; c switches the CPU panel on or off.  When the process exits, its last figures stay on screen\n"
          "until a key is pressed.\n"
          "When stdout is not a terminal, prints `ocgc stat` rows instead.\n\n"
          "  -d, --interval D  refresh interval\n"
          "  -n, --count N     stop after N refreshes\n"
          "  --cpu             start with the CPU panel on (the key c switches it):\n"
          "                    the hottest functions by CPU samples over the last\n"
          "                    few seconds and the GC share of the samples by phase,\n"
          "                    sampled as 'ocgc profile --cpu' does at 100 Hz; off by\n"
          "                    default, since it costs the process some CPU; a\n"
          "                    refusal of perf_event_open is one line, exit 8\n"
          "  --ids 5.2|5.3|5.4\n"
          "                    the event numbering of a stock OCaml 5 ring (default:\n"
          "                    from the process's executable)\n"
          "  --dir DIR         look for DIR/PID.events instead of searching the\n"
          "                    process's memory map\n"
          "  -h, --help        this text\n\n"
          "Exit status: 0 (q, COUNT reached, or the process exited); 130/143 after\n"
          "SIGINT/SIGTERM (the terminal is restored); else as other commands.\n");
}

struct top_opts {
  struct tool_target t;
  uint64_t count;
  int cpu; /* --cpu */
};

/* The options and the PID into *o and tp: 0, or the exit code. */
static int parse_args(int argc, char **argv, struct top_opts *o, struct top *tp)
{
  static const struct option longopts[] = {
    {"interval", required_argument, NULL, 'd'},
    {"count", required_argument, NULL, 'n'},
    {"cpu", no_argument, NULL, 'C'},
    TOOL_LONGOPT_DIR,
    TOOL_LONGOPT_IDS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "d:n:h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &o->t, NULL)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 'd':
      if (tool_parse_duration(optarg, &tp->interval_ns) != 0 || tp->interval_ns < 10000000u)
        return tool_usage_error("-d takes an interval of at least 10ms, such as 1, 0.5s or "
                                "2s, not '%s'", optarg);
      break;
    case 'n':
      if (tool_parse_count(optarg, &o->count) != 0)
        return tool_usage_error("-n takes a positive number of refreshes, not '%s'", optarg);
      break;
    case 'C': o->cpu = 1; break;
    case 'h': top_usage(stdout); exit(0);
    default: top_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc - 1)
    return tool_usage_error("give one PID ('ocgc ls' lists the attachable processes); "
                            "'ocgc top --help' tells more");
  if (tool_target_pid(&o->t, argv[optind], NULL) != 0) return TOOL_EXIT_USAGE;
  tp->pid = o->t.pid;
  tp->target = &o->t;
  return 0;
}

/* Everything that can fail with a one-line message, before the screen is
 * taken: the aggregator, a first drain and snapshot, the header's strings. */
static int attach(struct top *tp)
{
  struct ocgc_agg_opts ao = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  int err;
  ao.start = OCGC_START_OLDEST;
  tp->info.sz = sizeof tp->info;
  if ((err = ocgc_source_info(tp->src, &tp->info)) != 0 ||
      (err = ocgc_agg_new(tp->src, &ao, &tp->agg)) != 0 ||
      (err = poll_agg(tp, cm_mono_ns() + tp->interval_ns)) != 0 ||
      (err = take_snapshot(tp)) != 0 ||
      (err = top_spark_start(&tp->spark, tp->agg, cm_mono_ns())) != 0)
    return err;
  top_alloc_start(&tp->alloc, tp->src, tp->pid);
  tool_esc(tp->info.program, tp->program, sizeof tp->program);
  tool_esc(tp->info.ocaml_version, tp->ocaml, sizeof tp->ocaml);
  return 0;
}

/* Take the terminal (newterm, not initscr: initscr exits the process on a
 * bad TERM).  Returns the screen, or NULL after saying why. */
static SCREEN *take_screen(int pid, int *utf8)
{
  SCREEN *scr;
  setlocale(LC_ALL, "");
  /* Block characters only where the terminal's locale can show them. */
  *utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  scr = newterm(NULL, stdout, stdin);
  if (scr == NULL) {
    const char *term = getenv("TERM");
    tool_say("cannot drive the terminal (TERM=%s): try 'ocgc stat %d'", term ? term : "unset",
             pid);
    return NULL;
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  timeout(0); /* wait_key waits; getch only takes what is there */
  return scr;
}

/* Wait up to POLL_MS for a key or a stop signal, then the key or ERR.
 * ncurses' own timed wait goes on after a signal (it waits out the rest of
 * its time), so the wait is ours: ppoll, with SIGINT and SIGTERM unblocked
 * only inside it, so that one arriving just before still ends it at once.
 * (SIGWINCH is not blocked: it ends the wait too, and getch then gives
 * KEY_RESIZE.) */
static int wait_key(int *none)
{
  struct pollfd pfd = {fileno(stdin), POLLIN, 0};
  struct timespec ts = {0, POLL_MS * 1000000L};
  sigset_t block, old;
  int n = 0, key;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigprocmask(SIG_BLOCK, &block, &old);
  if (!tool_stop) n = ppoll(&pfd, 1, &ts, &old);
  sigprocmask(SIG_SETMASK, &old, NULL);
  key = getch();
  /* Readable but no key: the input is at its end (or hung up).  No key
   * can come any more; and without this the caller's loop would spin. */
  if (none != NULL && key == ERR && n > 0 && pfd.revents != 0) *none = 1;
  return key;
}

/* The process is gone: its last figures stay on screen until a key, as
 * its last line says, or a stop signal. */
static void show_exit(struct top *tp)
{
  char message[160 + sizeof tp->program];
  int key, none = 0;
  tp->exited = 1;
  snprintf(message, sizeof message, " process %d (%s) exited: last figures above; "
           "press a key to leave", tp->pid, tp->info.has_ext ? tp->program : "?");
  draw(tp, message);
  for (;;) {
    key = wait_key(&none);
    if (tool_stop || none) break;
    if (key == KEY_RESIZE || key == 12 /* ^L */) {
      if (key == 12) clearok(curscr, TRUE);
      draw(tp, message);
    } else if (key != ERR) {
      break;
    }
  }
}

/* Keys, polls and refreshes until q, COUNT, the process's end or a signal. */
static int loop(struct top *tp, uint64_t count)
{
  uint64_t next_refresh = cm_mono_ns() + tp->interval_ns;
  int err = 0;
  draw(tp, NULL);
  for (;;) {
    int alive, redraw = 0, key = wait_key(NULL);
    if (tool_stop || key == 'q' || key == 'Q') break;
    if (key == 'c' || key == 'C') { /* the CPU panel: sampling on or off */
      if (tp->cpu.on) top_cpu_stop(&tp->cpu);
      else (void)top_cpu_start(&tp->cpu); /* a refusal is shown in the panel */
      redraw = 1;
    }
    if (key == KEY_RESIZE) redraw = 1; /* ncurses has updated LINES and COLS */
    else if (key == 12 /* ^L */) { clearok(curscr, TRUE); redraw = 1; }
    /* Alive before the poll: what it wrote before exiting is read. */
    alive = !ocgc_source_gone(tp->src);
    if ((err = poll_agg(tp, alive ? next_refresh : 0)) != 0) break;
    if ((err = top_spark_tick(&tp->spark, cm_mono_ns())) < 0) break;
    err = 0;
    if (top_cpu_tick(&tp->cpu, cm_mono_ns())) redraw = 1;
    if (!alive || cm_mono_ns() >= next_refresh) {
      if ((err = take_snapshot(tp)) != 0) break;
      top_alloc_tick(&tp->alloc, tp->src, cm_mono_ns());
      next_refresh += tp->interval_ns;
      /* After a long stall (suspended with ^Z), do not refresh in a burst. */
      if (next_refresh < cm_mono_ns()) next_refresh = cm_mono_ns() + tp->interval_ns;
      tp->refreshes++;
      redraw = 1;
    }
    if (!alive) { show_exit(tp); break; }
    if (redraw) draw(tp, NULL);
    if (count && tp->refreshes >= count) break;
  }
  return err;
}

/* The screen's life: signals ours before ncurses starts (it then leaves
 * SIGINT/SIGTERM to us, and keeps SIGWINCH for itself, which gives us
 * KEY_RESIZE), the loop, and the terminal restored on every way out. */
static int on_screen(struct top *tp, uint64_t count)
{
  struct tool_signals sig;
  SCREEN *scr;
  int err, rc = 0;
  tool_signals_catch(&sig);
  if ((scr = take_screen(tp->pid, &tp->utf8)) == NULL) {
    tool_signals_restore(&sig);
    return TOOL_EXIT_ERROR;
  }
  err = loop(tp, count);
  endwin();
  if (err) {
    rc = tool_target_error(tp->target, err);
  } else if (tp->exited) {
    printf("ocgc top: process %d (%s) exited\n", tp->pid, tp->info.has_ext ? tp->program : "?");
  } else if (tool_stop) {
    rc = 128 + tool_stop;
  }
  delscreen(scr);
  tool_signals_restore(&sig);
  return rc;
}

int cmd_top(int argc, char **argv)
{
  struct top_opts o;
  struct top tp;
  int err, rc;
  memset(&o, 0, sizeof o);
  memset(&tp, 0, sizeof tp);
  tp.interval_ns = UINT64_C(1000000000);
  if ((rc = parse_args(argc, argv, &o, &tp)) != 0) return rc;
  /* No screen to draw: `ocgc stat`'s rows, with top's name on its messages. */
  if (!isatty(STDOUT_FILENO)) return stat_rows(&o.t, tp.interval_ns, o.count);
  /* Attach before taking the screen, so that an error is one readable line. */
  if ((err = tool_target_open(&o.t, &tp.src)) != 0) return tool_exit_code(err);
  top_cpu_init(&tp.cpu, tp.pid, tp.src);
  if ((err = attach(&tp)) != 0) rc = tool_target_error(&o.t, err);
  /* --cpu: a refusal is libocgc's one line, readable before the screen */
  else if (o.cpu && (rc = top_cpu_start(&tp.cpu)) != 0) tool_say("%s", tp.cpu.why);
  else rc = on_screen(&tp, o.count);
  top_cpu_free(&tp.cpu);
  ocgc_snapshot_free(tp.cur);
  ocgc_interval_free(tp.iv);
  top_spark_free(&tp.spark);
  top_alloc_free(&tp.alloc);
  ocgc_agg_free(tp.agg);
  ocgc_source_close(tp.src);
  return rc;
}
