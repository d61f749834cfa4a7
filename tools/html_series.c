/* html_series.c - the rates over time of the HTML report (html.h), from the
 * timeline's buckets.
 *
 * Why bins: a rate drawn per pause (what a pause carried over the time
 * since the one before) is a picture of when the runtime counts, not of
 * the program: minor collections and slices alternate, so a steady
 * 140 MB/s swung between 0 and ten times that.  Rates are drawn over fixed
 * time bins instead: each bin's rate is what the timeline put in the bin
 * over the bin's width.  Where a count goes is the timeline's rule
 * (ocgc/timeline.h): allocation spread over the time since the previous
 * pause (it happened then; the runtime counts it at the next minor
 * collection), promotion, collections and pause time where they happened.
 *
 * Invariants:
 * - a bin is OCGC_TIMELINE_BUCKETS / HTML_BINS or fewer whole buckets
 *   (a power of two of them), [t, t + w) with w its width within the
 *   window (the first and last bins are cut at the window's edges), bins
 *   end to end; every GC series has
 *   the same bins, and each svg carries them as integers: data-t-ns (its
 *   start, from the window's start), data-w-ns and data-v (what was counted
 *   in it: bytes, collections, ns in pauses; a gauge's value), so a reader
 *   recomputes every point (rate = v * 1e9 / w / data-scale) and the sums
 *   (the sum of v is the window's count);
 * - gc_share is each bin's time in pauses over its width: the timeline
 *   keeps pause time clipped at bucket edges and overlaps once, so it is
 *   never above 1;
 * - a gauge (the heap) is drawn only where a figure is known: a bin with
 *   none has no point and data-v "-", never a made-up 0;
 * - the /proc series are per sample of ours (rate = what changed over the
 *   time since the sample before, as /proc can only tell), written only
 *   when the run was live;
 * - every series has at most HTML_BINS points (the /proc ones at most
 *   OCGC_TIMELINE_BUCKETS). */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

#define HTML_BINS 128u /* bins at most: about 7 pixels each */

enum what { ALLOC, PROMO, COLL, SHARE, HEAP, TOP_HEAP, CPU, CTX, FAULTS };

struct series {
  const char *name, *unit;
  enum what what;
  unsigned kind;
};

/* One bin or /proc span of a series. */
struct point {
  uint64_t t, w;  /* start (from the window's start) and width, ns */
  uint64_t v;     /* what was counted in it, or a gauge's value */
  int known;      /* 0: a gauge with no figure here (not drawn) */
};

static uint64_t rel(const struct html_ctx *c, uint64_t t)
{
  return t > c->t0 ? t - c->t0 : 0;
}

static int is_gauge(const struct series *s) { return s->what == HEAP || s->what == TOP_HEAP; }

/* What a drawn rate's value is divided by after v * 1e9 / w. */
static double scale_of(const struct series *s)
{
  switch (s->what) {
  case ALLOC: case PROMO: return (double)CM_MIB;
  case SHARE: case CPU: return 1e9;
  default: return 1;
  }
}

static double value_of(const struct series *s, const struct point *p)
{
  if (is_gauge(s)) return (double)p->v;
  return (double)p->v * 1e9 / (double)p->w / scale_of(s);
}

/* Bucket [b]'s part of a GC series' count. */
static uint64_t count_of(const struct series *s, const struct ocgc_timeline_bucket *b)
{
  switch (s->what) {
  case ALLOC: return b->alloc;
  case PROMO: return b->promo;
  case COLL: return b->coll[s->kind];
  case SHARE: return b->pause_ns;
  default: return 0;
  }
}

/* The GC series' bins into p[0..HTML_BINS): how many. */
static unsigned gc_points(const struct html_ctx *c, const struct series *s,
                          const struct ocgc_timeline_info *tl, struct point *p)
{
  uint64_t end = c->t0 + c->span, heap_t = 0;
  unsigned k = 1, n = 0, j, i;
  struct point q;
  while ((tl->nbuckets + k - 1) / k > HTML_BINS) k *= 2;
  memset(&q, 0, sizeof q);
  for (j = 0; j * k < tl->nbuckets; j++) {
    uint64_t from = tl->origin + (uint64_t)j * k * tl->width, to = from + k * tl->width;
    for (i = j * k; i < (j + 1) * k && i < tl->nbuckets; i++) {
      const struct ocgc_timeline_bucket *b = ocgc_timeline_bucket(c->tl, i);
      if (!is_gauge(s)) {
        q.v += count_of(s, b);
      } else if (b->heap_t != 0 && b->heap_t >= heap_t) {
        heap_t = b->heap_t;
        q.v = s->what == HEAP ? b->heap : b->top_heap;
        q.known = 1;
      }
    }
    /* the window's edges cut the first and last bins; time before its
     * start (the timeline may begin a little earlier) goes to the first
     * bin within it, so no count is left out, */
    if (to <= c->t0 && c->span > 0) continue;
    /* and what lies past its end (a /proc sample taken after the exit
     * fills a bucket there) to the last bin within it */
    if (c->span > 0 && from >= end && n > 0) {
      if (!is_gauge(s)) p[n - 1].v += q.v;
      else if (q.known) p[n - 1].v = q.v, p[n - 1].known = 1;
      memset(&q, 0, sizeof q);
      continue;
    }
    if (from < c->t0) from = c->t0;
    if (c->span > 0 && end > from && end < to) to = end;
    q.t = rel(c, from);
    q.w = to - from;
    if (!is_gauge(s)) q.known = 1;
    p[n++] = q;
    memset(&q, 0, sizeof q);
    heap_t = 0;
  }
  return n;
}

/* The /proc series' spans into p[0..OCGC_TIMELINE_BUCKETS): how many. */
static unsigned proc_points(const struct html_ctx *c, const struct series *s,
                            const struct ocgc_timeline_info *tl, struct point *p)
{
  uint64_t prev = 0;
  unsigned n = 0, i;
  for (i = 0; i < tl->nbuckets; i++) {
    const struct ocgc_timeline_bucket *b = ocgc_timeline_bucket(c->tl, i);
    if (b->proc_t == 0) continue;
    if (prev != 0 && b->proc_t > prev) {
      p[n].t = rel(c, prev);
      p[n].w = b->proc_t - prev;
      p[n].v = s->what == CPU ? b->cpu_ns : s->what == CTX ? b->ctx : b->faults;
      p[n++].known = 1;
    }
    prev = b->proc_t;
  }
  return n;
}

static void polyline(const struct html_ctx *c, const struct series *s, const struct point *p,
                     unsigned n, double most)
{
  const double w = 960, h = 110, l = 64, r = 12, top = 8, bot = 18;
  double span = c->span > 0 ? (double)c->span : 1;
  unsigned i, drawn = 0;
  fputs("<polyline class=\"line\" points=\"", c->f);
  for (i = 0; i < n; i++) {
    double x = ((double)p[i].t + (double)p[i].w / 2) / span;
    if (!p[i].known) continue;
    fprintf(c->f, "%s%.1f,%.1f", drawn++ ? " " : "", l + (x > 1 ? 1 : x) * (w - l - r),
            top + (1 - (most > 0 ? value_of(s, &p[i]) / most : 0)) * (h - top - bot));
  }
  fputs("\"/>\n", c->f);
}

/* data-NAME="a b c": one integer a point ("-" for a gauge's unknown). */
static void list_attr(FILE *f, const char *name, const struct point *p, unsigned n, int which)
{
  unsigned i;
  fprintf(f, " data-%s=\"", name);
  for (i = 0; i < n; i++) {
    if (i > 0) fputc(' ', f);
    if (which == 2 && !p[i].known) fputc('-', f);
    else fprintf(f, "%" PRIu64, which == 0 ? p[i].t : which == 1 ? p[i].w : p[i].v);
  }
  fputc('"', f);
}

static void series_one(const struct html_ctx *c, const struct series *s,
                       const struct ocgc_timeline_info *tl, struct point *p)
{
  unsigned n = 0, i, known = 0;
  double most = 0;
  if (c->tl != NULL && tl->width > 0)
    n = s->what >= CPU ? proc_points(c, s, tl, p) : gc_points(c, s, tl, p);
  for (i = 0; i < n; i++) {
    if (!p[i].known) continue;
    known++;
    if (value_of(s, &p[i]) > most) most = value_of(s, &p[i]);
  }
  fprintf(c->f, "<h3>%s</h3>\n<svg class=\"ocgc-series\" viewBox=\"0 0 960 110\" width=\"960\" "
          "height=\"110\" data-series=\"%s\" data-points=\"%u\" data-type=\"%s\" data-scale=\"%.0f\"",
          s->name, s->name, known, is_gauge(s) ? "gauge" : "rate", scale_of(s));
  list_attr(c->f, "t-ns", p, n, 0);
  list_attr(c->f, "w-ns", p, n, 1);
  list_attr(c->f, "v", p, n, 2);
  fputs(">\n<line class=\"axis\" x1=\"64\" y1=\"92\" x2=\"948\" y2=\"92\"/>", c->f);
  fprintf(c->f, "<text x=\"60\" y=\"16\" text-anchor=\"end\">%.3g</text>"
          "<text x=\"60\" y=\"92\" text-anchor=\"end\">0</text>"
          "<text x=\"948\" y=\"106\" text-anchor=\"end\">%s</text>\n", most, s->unit);
  if (known > 0) polyline(c, s, p, n, most);
  else fputs("<text x=\"480\" y=\"55\" text-anchor=\"middle\">no data</text>\n", c->f);
  fputs("</svg>\n", c->f);
}

void html_series(const struct html_ctx *c)
{
  static const struct series gc[] = {
    {"alloc_mib_s", "MiB/s allocated (minor heap)", ALLOC, 0},
    {"promo_mib_s", "MiB/s promoted", PROMO, 0},
    {"collections_per_s.minor", "minor collections/s", COLL, OCGC_KIND_MINOR},
    {"collections_per_s.major_slice", "major slices/s", COLL, OCGC_KIND_MAJOR_SLICE},
    {"collections_per_s.major_finish", "major cycles finished/s", COLL, OCGC_KIND_MAJOR_FINISH},
    {"collections_per_s.compaction", "compactions/s", COLL, OCGC_KIND_COMPACTION},
    {"gc_share", "share of wall time in GC pauses", SHARE, 0},
    {"heap_bytes", "major heap, bytes", HEAP, 0},
    {"top_heap_bytes", "top of the major heap, bytes", TOP_HEAP, 0},
    {"cpu_share", "CPU time / wall time (the whole process)", CPU, 0},
    {"ctx_switches_per_s", "context switches/s", CTX, 0},
    {"faults_per_s", "page faults/s", FAULTS, 0},
  };
  struct point *p = malloc(sizeof *p * OCGC_TIMELINE_BUCKETS);
  struct ocgc_timeline_info tl = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  unsigned i;
  if (c->tl != NULL) ocgc_timeline_info(c->tl, &tl);
  fputs("<h2>Rates over time</h2>\n<p class=\"note\">over fixed time bins, from the events' "
        "own times: bytes allocated spread over the time since the pause before (the runtime "
        "counts them at the next minor collection), the rest where it happened; CPU, context "
        "switches and faults from /proc while live, between our samples</p>\n", c->f);
  for (i = 0; p != NULL && i < sizeof gc / sizeof gc[0]; i++)
    if (gc[i].what < CPU || tl.live) series_one(c, &gc[i], &tl, p);
  free(p);
}
