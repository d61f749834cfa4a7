/* html_series.c - the rates over time of the HTML report (html.h), from the
 * timeline's buckets.
 *
 * Invariants:
 * - a rate between two samples is the count carried by the later one over
 *   the time between them (the events' own times for the GC figures, our
 *   polls' for /proc's), so no rate is made up for time nobody sampled;
 * - gc_share is each bucket's pause time over its width (0 where there was
 *   no pause: that is a fact, not a gap);
 * - every series has at most OCGC_TIMELINE_BUCKETS points; /proc series are written
 *   only when the run was live (the timeline got /proc samples). */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

enum what { ALLOC, PROMO, COLL, SHARE, HEAP, TOP_HEAP, CPU, CTX, FAULTS };

struct series {
  const char *name, *unit;
  enum what what;
  unsigned kind;
};

struct point {
  uint64_t t; /* relative to the window's start */
  double v;
};

static uint64_t rel(const struct html_ctx *c, uint64_t t)
{
  return t > c->t0 ? t - c->t0 : 0;
}

/* The count of bucket [b] a rate series is made of. */
static double count_of(const struct series *s, const struct ocgc_timeline_bucket *b)
{
  switch (s->what) {
  case ALLOC: return (double)b->alloc / CM_MIB;
  case PROMO: return (double)b->promo / CM_MIB;
  case COLL: return (double)b->coll[s->kind];
  case CPU: return (double)b->cpu_ns / 1e9;
  case CTX: return (double)b->ctx;
  case FAULTS: return (double)b->faults;
  default: return 0;
  }
}

/* Points of a series into p[0..OCGC_TIMELINE_BUCKETS): how many. */
static unsigned points(const struct html_ctx *c, const struct series *s, struct point *p)
{
  struct ocgc_timeline_info tl = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  unsigned i, n = 0;
  int proc = s->what >= CPU;
  uint64_t prev = 0;
  ocgc_timeline_info(c->tl, &tl);
  for (i = 0; i < tl.nbuckets; i++) {
    const struct ocgc_timeline_bucket *b = ocgc_timeline_bucket(c->tl, i);
    uint64_t t = proc ? b->proc_t : b->sample_t;
    if (s->what == SHARE) {
      p[n].t = rel(c, tl.origin + tl.width * i + tl.width / 2);
      p[n++].v = (double)b->pause_ns / (double)tl.width;
      continue;
    }
    if (t == 0) continue;
    if (s->what == HEAP || s->what == TOP_HEAP) {
      p[n].t = rel(c, t);
      p[n++].v = (double)(s->what == HEAP ? b->heap : b->top_heap);
    } else if (prev != 0 && t > prev) {
      p[n].t = rel(c, t);
      p[n++].v = count_of(s, b) * 1e9 / (double)(t - prev);
    }
    prev = t;
  }
  return n;
}

static void polyline(const struct html_ctx *c, const struct point *p, unsigned n, double most)
{
  const double w = 960, h = 110, l = 64, r = 12, top = 8, bot = 18;
  double span = c->span > 0 ? (double)c->span : 1;
  unsigned i;
  fputs("<polyline class=\"line\" points=\"", c->f);
  for (i = 0; i < n; i++) {
    double x = (double)p[i].t / span;
    fprintf(c->f, "%s%.1f,%.1f", i ? " " : "", l + (x > 1 ? 1 : x) * (w - l - r),
            top + (1 - (most > 0 ? p[i].v / most : 0)) * (h - top - bot));
  }
  fputs("\"/>\n", c->f);
}

static void series_one(const struct html_ctx *c, const struct series *s, struct point *p)
{
  unsigned n = c->tl != NULL ? points(c, s, p) : 0, i;
  double most = 0;
  for (i = 0; i < n; i++) if (p[i].v > most) most = p[i].v;
  fprintf(c->f, "<h3>%s</h3>\n<svg class=\"ocgc-series\" viewBox=\"0 0 960 110\" width=\"960\" "
          "height=\"110\" data-series=\"%s\" data-points=\"%u\">\n", s->name, s->name, n);
  fputs("<line class=\"axis\" x1=\"64\" y1=\"92\" x2=\"948\" y2=\"92\"/>", c->f);
  fprintf(c->f, "<text x=\"60\" y=\"16\" text-anchor=\"end\">%.3g</text>"
          "<text x=\"60\" y=\"92\" text-anchor=\"end\">0</text>"
          "<text x=\"948\" y=\"106\" text-anchor=\"end\">%s</text>\n", most, s->unit);
  if (n > 0) polyline(c, p, n, most);
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
    {"gc_share", "share of time in GC pauses", SHARE, 0},
    {"heap_bytes", "major heap, bytes", HEAP, 0},
    {"top_heap_bytes", "top of the major heap, bytes", TOP_HEAP, 0},
    {"cpu_share", "CPU time / wall time (the whole process)", CPU, 0},
    {"ctx_switches_per_s", "context switches/s", CTX, 0},
    {"faults_per_s", "page faults/s", FAULTS, 0},
  };
  struct point *p = malloc(sizeof *p * OCGC_TIMELINE_BUCKETS);
  struct ocgc_timeline_info tl = OCGC_OPTS_INIT(struct ocgc_timeline_info);
  unsigned i;
  fputs("<h2>Rates over time</h2>\n<p class=\"note\">from the events' own times (the counts "
        "each pause carries); CPU, context switches and faults from /proc while live</p>\n", c->f);
  for (i = 0; p != NULL && i < sizeof gc / sizeof gc[0]; i++)
    if (gc[i].what < CPU || (ocgc_timeline_info(c->tl, &tl) == 0 && tl.live))
      series_one(c, &gc[i], p);
  free(p);
}
