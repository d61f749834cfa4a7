/* expo.c - the Prometheus text exposition writer (expo.h).
 *
 * Invariants: whatever bytes a label value holds, the line written is one
 * line of valid UTF-8 the 0.0.4 parser accepts: '\\', '"' and newline are
 * escaped, every byte that is not part of well-formed UTF-8 is written as
 * the character U+00XX (as json.c does: the value is kept), and control
 * characters (C0, DEL, C1), which the format would carry raw but a
 * terminal showing a scrape would act on, become U+FFFD.  Integers are
 * written exactly (a counter of 2^63 stays exact, no double on the way);
 * seconds from nanoseconds are exact decimals. */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expo.h"
#include "utf8.h"

/* 1, 2.5, 5 per decade, from 1 us to 10 s: a minor collection takes a few
 * us to a few ms, a compaction or forced major can take seconds. */
const uint64_t expo_buckets_ns[EXPO_NBUCKETS] = {
    1000,       2500,       5000,       10000,      25000,      50000,
    100000,     250000,     500000,     1000000,    2500000,    5000000,
    10000000,   25000000,   50000000,   100000000,  250000000,  500000000,
    1000000000, 2500000000, 5000000000, 10000000000};

static void put(struct expo *e, const char *s, size_t n)
{
  if (n > 0) e->put(e->ctx, s, n);
}

static void puts_(struct expo *e, const char *s) { put(e, s, strlen(s)); }

void expo_init(struct expo *e, expo_put_fn put_fn, void *ctx)
{
  e->put = put_fn;
  e->ctx = ctx;
}

/* The character U+cp (below U+0800) in UTF-8. */
static void put_cp2(struct expo *e, uint32_t cp)
{
  char b[2] = {(char)(0xc0 | cp >> 6), (char)(0x80 | (cp & 0x3f))};
  put(e, b, 2);
}

/* One character or escape of a label value at [s]; returns the bytes it
 * took.  [help]: a HELP text, where '"' is not escaped. */
static size_t put_char(struct expo *e, const unsigned char *s, int help)
{
  uint32_t cp;
  size_t n;
  if (*s == '\\') { puts_(e, "\\\\"); return 1; }
  if (*s == '\n') { puts_(e, "\\n"); return 1; }
  if (*s == '"' && !help) { puts_(e, "\\\""); return 1; }
  if (*s < 0x20 || *s == 0x7f) { puts_(e, "\xef\xbf\xbd"); return 1; }
  if (*s < 0x80) { put(e, (const char *)s, 1); return 1; }
  n = tool_utf8_len(s, &cp);
  if (n == 0) { put_cp2(e, *s); return 1; } /* not UTF-8: the byte, as U+00XX */
  if (cp <= 0x9f) puts_(e, "\xef\xbf\xbd");
  else put(e, (const char *)s, n);
  return n;
}

static void put_escaped(struct expo *e, const char *str, int help)
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

void expo_family(struct expo *e, const char *name, const char *type, const char *help)
{
  puts_(e, "# HELP ");
  puts_(e, name);
  puts_(e, " ");
  put_escaped(e, help, 1);
  puts_(e, "\n# TYPE ");
  puts_(e, name);
  puts_(e, " ");
  puts_(e, type);
  puts_(e, "\n");
}

/* "name{a="x",b="y"} " (no braces without labels). */
static void put_head(struct expo *e, const char *name, const char *suffix,
                     const struct expo_label *labels, size_t nlabels)
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

static void put_line(struct expo *e, const char *name, const char *suffix,
                     const struct expo_label *labels, size_t nlabels, const char *value)
{
  put_head(e, name, suffix, labels, nlabels);
  puts_(e, value);
  puts_(e, "\n");
}

void expo_u64(struct expo *e, const char *name, const struct expo_label *labels,
              size_t nlabels, uint64_t v)
{
  char b[24];
  snprintf(b, sizeof b, "%" PRIu64, v);
  put_line(e, name, "", labels, nlabels, b);
}

void expo_double(struct expo *e, const char *name, const struct expo_label *labels,
                 size_t nlabels, double v)
{
  char b[40];
  if (isnan(v)) strcpy(b, "NaN");
  else if (isinf(v)) strcpy(b, v > 0 ? "+Inf" : "-Inf");
  else snprintf(b, sizeof b, "%.17g", v);
  put_line(e, name, "", labels, nlabels, b);
}

const char *expo_seconds(uint64_t ns, char *buf, size_t n)
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

void expo_ns(struct expo *e, const char *name, const struct expo_label *labels,
             size_t nlabels, uint64_t ns)
{
  char b[32];
  put_line(e, name, "", labels, nlabels, expo_seconds(ns, b, sizeof b));
}

void expo_hist(struct expo *e, const char *name, const struct expo_label *labels,
               size_t nlabels, const struct ocgc_hist *h)
{
  struct expo_label l[EXPO_MAX_LABELS];
  char le[32], v[32];
  size_t i, n = nlabels < EXPO_MAX_LABELS - 1 ? nlabels : EXPO_MAX_LABELS - 1;
  uint64_t count = h != NULL ? ocgc_hist_count(h) : 0;
  if (n > 0) memcpy(l, labels, n * sizeof *l);
  l[n].name = "le";
  for (i = 0; i < EXPO_NBUCKETS; i++) {
    uint64_t c = h != NULL ? ocgc_hist_count_le(h, expo_buckets_ns[i]) : 0;
    l[n].value = expo_seconds(expo_buckets_ns[i], le, sizeof le);
    snprintf(v, sizeof v, "%" PRIu64, c);
    put_line(e, name, "_bucket", l, n + 1, v);
  }
  l[n].value = "+Inf";
  snprintf(v, sizeof v, "%" PRIu64, count);
  put_line(e, name, "_bucket", l, n + 1, v);
  put_line(e, name, "_sum", l, n, expo_seconds(h != NULL ? ocgc_hist_sum(h) : 0, v, sizeof v));
  snprintf(v, sizeof v, "%" PRIu64, count);
  put_line(e, name, "_count", l, n, v);
}
