/* expo.c - the exposition writer (ocgc/expo.h): Prometheus text 0.0.4 and
 * OpenMetrics 1.0.0, and the choice between them from an Accept header
 * (the families of a watch are metrics.c's).
 *
 * Invariants: whatever bytes a label value holds, the line written is one
 * line of valid UTF-8 the 0.0.4 parser accepts: '\\', '"' and newline are
 * escaped, every byte that is not part of well-formed UTF-8 is written as
 * the character U+00XX (as json.c does: the value is kept), and control
 * characters (C0, DEL, C1), which the format would carry raw but a
 * terminal showing a scrape would act on, become U+FFFD.  Integers are
 * written exactly (a counter of 2^63 stays exact, no double on the way);
 * seconds from nanoseconds are exact decimals.  The Accept parser reads a
 * client's bytes: it only ever moves forward, within the string. */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ocgc/expo.h"
#include "ocgc/hist.h"
#include "common/utf8.h"

/* libocgc's one bucket scheme (ocgc_hist_bounds, 1-2-5), from 1 us (its
 * bound 9) to 10 s (bound 30): a minor collection takes a few us to a few
 * ms, a compaction or forced major can take seconds. */
#define EXPO_FIRST_BOUND 9u

const uint64_t *ocgc_expo_bounds_ns(void)
{
  return ocgc_hist_bounds() + EXPO_FIRST_BOUND;
}

static void put(struct ocgc_expo *e, const char *s, size_t n)
{
  if (n > 0) e->put(e->ctx, s, n);
}

static void puts_(struct ocgc_expo *e, const char *s) { put(e, s, strlen(s)); }

void ocgc_expo_init(struct ocgc_expo *e, ocgc_put_fn put_fn, void *ctx, enum ocgc_expo_format f)
{
  e->put = put_fn;
  e->ctx = ctx;
  e->format = f;
}

const char *ocgc_expo_content_type(enum ocgc_expo_format f)
{
  return f == OCGC_EXPO_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                               : "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- content negotiation ---- */

static const char *skip_ows(const char *p)
{
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* Whether [p, end) is [word], ignoring case. */
static int is_word(const char *p, const char *end, const char *word)
{
  size_t n = strlen(word);
  return (size_t)(end - p) == n && strncasecmp(p, word, n) == 0;
}

/* The end of a token at [p]: a media type, a parameter name or value. */
static const char *token_end(const char *p)
{
  while (*p != '\0' && *p != ',' && *p != ';' && *p != '=' && *p != ' ' && *p != '\t') p++;
  return p;
}

/* One media range at [p] (up to ',' or the end): which format it accepts
 * (-1: none of ours) and its q.  Returns where the range ends. */
static const char *media_range(const char *p, int *format, double *q)
{
  const char *t = skip_ows(p), *te = token_end(t);
  int om = is_word(t, te, "application/openmetrics-text");
  int text = is_word(t, te, "text/plain") || is_word(t, te, "text/*") || is_word(t, te, "*/*");
  *q = 1.0;
  p = te;
  while (*p != '\0' && *p != ',') {
    const char *n, *ne, *v, *ve;
    p = skip_ows(p);
    if (*p == '\0' || *p == ',') break;
    if (*p != ';') { p++; continue; } /* junk: skipped, as far as the next ';' */
    n = skip_ows(p + 1);
    ne = token_end(n);
    v = ve = ne;
    if (*skip_ows(ne) == '=') { v = skip_ows(skip_ows(ne) + 1); ve = token_end(v); }
    if (is_word(n, ne, "q")) {
      char buf[16];
      size_t len = (size_t)(ve - v) < sizeof buf - 1 ? (size_t)(ve - v) : sizeof buf - 1;
      char *end;
      memcpy(buf, v, len);
      buf[len] = '\0';
      *q = strtod(buf, &end);
      if (end == buf || *end != '\0' || !(*q >= 0) || *q > 1) *q = 0; /* malformed: refused */
    } else if (is_word(n, ne, "version")) {
      if (om && !is_word(v, ve, "1.0.0") && !is_word(v, ve, "0.0.1")) om = 0;
      if (text && !is_word(v, ve, "0.0.4")) text = 0;
    }
    p = ve; /* past the ';' at least: ve >= n > p */
  }
  *format = om ? OCGC_EXPO_OPENMETRICS : text ? OCGC_EXPO_TEXT : -1;
  return p;
}

enum ocgc_expo_format ocgc_expo_negotiate(const char *accept)
{
  double best[2] = {0, 0};
  const char *p = accept;
  if (p == NULL) return OCGC_EXPO_TEXT;
  while (*p != '\0') {
    int f;
    double q;
    p = media_range(p, &f, &q);
    if (f >= 0 && q > best[f]) best[f] = q;
    if (*p == ',') p++;
  }
  return best[OCGC_EXPO_OPENMETRICS] > 0 && best[OCGC_EXPO_OPENMETRICS] >= best[OCGC_EXPO_TEXT]
             ? OCGC_EXPO_OPENMETRICS : OCGC_EXPO_TEXT;
}

/* The character U+cp (below U+0800) in UTF-8. */
static void put_cp2(struct ocgc_expo *e, uint32_t cp)
{
  char b[2] = {(char)(0xc0 | cp >> 6), (char)(0x80 | (cp & 0x3f))};
  put(e, b, 2);
}

/* One character or escape of a label value at [s]; returns the bytes it
 * took.  [help]: a HELP text, where '"' is not escaped. */
static size_t put_char(struct ocgc_expo *e, const unsigned char *s, int help)
{
  uint32_t cp;
  size_t n;
  if (*s == '\\') { puts_(e, "\\\\"); return 1; }
  if (*s == '\n') { puts_(e, "\\n"); return 1; }
  if (*s == '"' && (!help || e->format == OCGC_EXPO_OPENMETRICS)) { puts_(e, "\\\""); return 1; }
  if (*s < 0x20 || *s == 0x7f) { puts_(e, "\xef\xbf\xbd"); return 1; }
  if (*s < 0x80) { put(e, (const char *)s, 1); return 1; }
  n = cm_utf8_len(s, &cp);
  if (n == 0) {
    /* Not UTF-8: the byte as U+00XX, but 0x80-0x9f, which would be a C1
     * control, as U+FFFD like the others. */
    if (*s <= 0x9f) puts_(e, "\xef\xbf\xbd");
    else put_cp2(e, *s);
    return 1;
  }
  if (cp <= 0x9f) puts_(e, "\xef\xbf\xbd");
  else put(e, (const char *)s, n);
  return n;
}

static void put_escaped(struct ocgc_expo *e, const char *str, int help)
{
  const unsigned char *p = (const unsigned char *)str;
  while (*p != '\0') {
    size_t run = 0;
    while (p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\') run++;
    put(e, (const char *)p, run);
    p += run;
    if (*p != '\0') p += put_char(e, p, help);
  }
}

/* [name] without [suffix] when it ends so. */
static size_t family_len(const char *name, const char *suffix)
{
  size_t n = strlen(name), k = strlen(suffix);
  return n > k && strcmp(name + n - k, suffix) == 0 ? n - k : n;
}

void ocgc_expo_family(struct ocgc_expo *e, const char *name, const char *type, const char *help)
{
  int om = e->format == OCGC_EXPO_OPENMETRICS, info = strcmp(type, "info") == 0;
  size_t n = !om ? strlen(name)
             : info ? family_len(name, "_info")
             : strcmp(type, "counter") == 0 ? family_len(name, "_total") : strlen(name);
  if (info && !om) type = "gauge";
  puts_(e, "# HELP ");
  put(e, name, n);
  puts_(e, " ");
  put_escaped(e, help, 1);
  puts_(e, "\n# TYPE ");
  put(e, name, n);
  puts_(e, " ");
  puts_(e, type);
  puts_(e, "\n");
}

void ocgc_expo_finish(struct ocgc_expo *e)
{
  if (e->format == OCGC_EXPO_OPENMETRICS) puts_(e, "# EOF\n");
}

/* "name{a="x",b="y"} " (no braces without labels). */
static void put_head(struct ocgc_expo *e, const char *name, const char *suffix,
                     const struct ocgc_expo_label *labels, size_t nlabels)
{
  size_t i, shown = 0;
  puts_(e, name);
  puts_(e, suffix);
  for (i = 0; i < nlabels; i++) {
    if (labels[i].value == NULL) continue;
    puts_(e, shown++ == 0 ? "{" : ",");
    puts_(e, labels[i].name);
    puts_(e, "=\"");
    put_escaped(e, labels[i].value, 0);
    puts_(e, "\"");
  }
  puts_(e, shown > 0 ? "} " : " ");
}

static void put_line(struct ocgc_expo *e, const char *name, const char *suffix,
                     const struct ocgc_expo_label *labels, size_t nlabels, const char *value)
{
  put_head(e, name, suffix, labels, nlabels);
  puts_(e, value);
  puts_(e, "\n");
}

void ocgc_expo_u64(struct ocgc_expo *e, const char *name, const struct ocgc_expo_label *labels,
              size_t nlabels, uint64_t v)
{
  char b[24];
  snprintf(b, sizeof b, "%" PRIu64, v);
  put_line(e, name, "", labels, nlabels, b);
}

void ocgc_expo_double(struct ocgc_expo *e, const char *name, const struct ocgc_expo_label *labels,
                 size_t nlabels, double v)
{
  char b[40];
  if (isnan(v)) strcpy(b, "NaN");
  else if (isinf(v)) strcpy(b, v > 0 ? "+Inf" : "-Inf");
  else snprintf(b, sizeof b, "%.17g", v);
  put_line(e, name, "", labels, nlabels, b);
}

const char *ocgc_expo_seconds(uint64_t ns, char *buf, size_t n)
{
  uint64_t frac = ns % 1000000000u;
  int digits = 9;
  if (frac == 0) {
    snprintf(buf, n, "%" PRIu64, ns / 1000000000u);
    return buf;
  }
  while (frac % 10 == 0) { frac /= 10; digits--; }
  snprintf(buf, n, "%" PRIu64 ".%0*" PRIu64, ns / 1000000000u, digits, frac);
  return buf;
}

void ocgc_expo_ns(struct ocgc_expo *e, const char *name, const struct ocgc_expo_label *labels,
             size_t nlabels, uint64_t ns)
{
  char b[32];
  put_line(e, name, "", labels, nlabels, ocgc_expo_seconds(ns, b, sizeof b));
}

/* The lines of a histogram: cumulative [counts] at ocgc_expo_bounds_ns(), then
 * +Inf ([count]), _sum ([sum_ns] as seconds) and _count. */
static void put_hist(struct ocgc_expo *e, const char *name, const struct ocgc_expo_label *labels,
                     size_t nlabels, const uint64_t counts[OCGC_EXPO_NBUCKETS], uint64_t count,
                     uint64_t sum_ns)
{
  struct ocgc_expo_label l[OCGC_EXPO_MAX_LABELS];
  char le[32], v[32];
  size_t i, n = nlabels < OCGC_EXPO_MAX_LABELS - 1 ? nlabels : OCGC_EXPO_MAX_LABELS - 1;
  if (n > 0) memcpy(l, labels, n * sizeof *l);
  l[n].name = "le";
  for (i = 0; i < OCGC_EXPO_NBUCKETS; i++) {
    l[n].value = ocgc_expo_seconds(ocgc_expo_bounds_ns()[i], le, sizeof le);
    snprintf(v, sizeof v, "%" PRIu64, counts[i]);
    put_line(e, name, "_bucket", l, n + 1, v);
  }
  l[n].value = "+Inf";
  snprintf(v, sizeof v, "%" PRIu64, count);
  put_line(e, name, "_bucket", l, n + 1, v);
  put_line(e, name, "_sum", l, n, ocgc_expo_seconds(sum_ns, v, sizeof v));
  snprintf(v, sizeof v, "%" PRIu64, count);
  put_line(e, name, "_count", l, n, v);
}

void ocgc_expo_buckets(struct ocgc_expo *e, const char *name, const struct ocgc_expo_label *labels,
                  size_t nlabels, const struct ocgc_bucket_counts *b)
{
  uint64_t counts[OCGC_EXPO_NBUCKETS];
  size_t i;
  if (b == NULL || b->nbounds != OCGC_EXPO_NBUCKETS) return; /* not counted at our bounds */
  /* Counted at ocgc_expo_bounds_ns() (the caller's aggregator had them as its
   * bounds): le[] is already cumulative. */
  for (i = 0; i < OCGC_EXPO_NBUCKETS; i++) counts[i] = b->le[i];
  put_hist(e, name, labels, nlabels, counts, b->count, b->sum_ns);
}
