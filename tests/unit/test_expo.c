/* test_expo.c - the exposition writer of `ocgc serve` (tools/expo.c), on
 * its own: HELP and TYPE lines, label values of any bytes escaped into
 * valid UTF-8 on one line, exact numbers, a histogram's cumulative buckets,
 * sum and count (from bucket counts), line for line; what OpenMetrics writes differently; and
 * the choice of format from Accept headers, hostile ones included. */

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/expo.h"
#include "testutil.h"

static struct tu_buf out;
static struct ocgc_expo e;

static void start_as(enum ocgc_expo_format f)
{
  memset(&out, 0, sizeof out);
  ocgc_expo_init(&e, tu_buf_put, &out, f);
}

static void start(void) { start_as(OCGC_EXPO_TEXT); }

START_TEST(test_family_and_numbers)
{
  struct ocgc_expo_label l[2] = {{"pid", "42"}, {"program", NULL}};
  start();
  ocgc_expo_family(&e, "x_total", "counter", "a \\ b\nc \"q\"");
  ocgc_expo_u64(&e, "x_total", l, 2, UINT64_MAX);
  ocgc_expo_u64(&e, "x_total", NULL, 0, 0);
  ocgc_expo_double(&e, "x_total", l, 1, INFINITY);
  ocgc_expo_double(&e, "x_total", l, 1, -INFINITY);
  ocgc_expo_double(&e, "x_total", l, 1, NAN);
  ocgc_expo_double(&e, "x_total", l, 1, 0.25);
  ocgc_expo_ns(&e, "x_total", l, 1, 1500000000);
  ocgc_expo_ns(&e, "x_total", l, 1, 1);
  ocgc_expo_ns(&e, "x_total", l, 1, 3000000000);
  ck_assert_str_eq(out.s, "# HELP x_total a \\\\ b\\nc \"q\"\n"
                          "# TYPE x_total counter\n"
                          "x_total{pid=\"42\"} 18446744073709551615\n"
                          "x_total 0\n"
                          "x_total{pid=\"42\"} +Inf\n"
                          "x_total{pid=\"42\"} -Inf\n"
                          "x_total{pid=\"42\"} NaN\n"
                          "x_total{pid=\"42\"} 0.25\n"
                          "x_total{pid=\"42\"} 1.5\n"
                          "x_total{pid=\"42\"} 0.000000001\n"
                          "x_total{pid=\"42\"} 3\n");
}
END_TEST

/* Label values: the three escapes, UTF-8 kept, bytes that are no UTF-8 as
 * U+00XX, controls (C0, DEL, and C1 whether it came as UTF-8 or as a lone
 * byte 0x80-0x9f) as U+FFFD. */
START_TEST(test_label_escapes)
{
  struct ocgc_expo_label l[2] = {{"pid", "1"}, {"program", NULL}};
  start();
  l[1].value = "a\\b\"c\nd\xc3\xa9" "e\xff" "f\x01g\xc2\x85h\xed\xa0\x80";
  ocgc_expo_u64(&e, "m", l, 2, 7);
  ck_assert_str_eq(out.s, "m{pid=\"1\",program=\"a\\\\b\\\"c\\nd\xc3\xa9"
                          "e\xc3\xbf" "f\xef\xbf\xbdg\xef\xbf\xbdh\xc3\xad\xc2\xa0\xef\xbf\xbd\"} 7\n");
}
END_TEST

/* Every byte after an 'a' comes out on one line of valid UTF-8 between
 * the quotes. */
START_TEST(test_every_byte)
{
  unsigned a, b;
  for (a = 1; a < 256; a++)
    for (b = 0; b < 256; b++) {
      char s[4] = {'a', (char)a, (char)b, '\0'};
      struct ocgc_expo_label l = {"l", s};
      const char *p, *q;
      start();
      ocgc_expo_u64(&e, "m", &l, 1, 1);
      p = strchr(out.s, '"');
      q = strrchr(out.s, '"');
      TU_CHECK(strchr(out.s, '\n') == out.s + out.n - 1, "%02x %02x: newline inside", a, b);
      for (p = p + 1; p < q; p++)
        if (*p == '\\') {
          TU_CHECK(p[1] == '\\' || p[1] == '"' || p[1] == 'n', "%02x %02x: bad escape", a, b);
          p++;
        } else {
          TU_CHECK(*p != '"', "%02x %02x: raw quote", a, b);
          /* no C1 control (U+0080..U+009F: C2 80..C2 9F) */
          TU_CHECK(!((unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 &&
                     (unsigned char)p[1] <= 0x9f), "%02x %02x: a C1 control", a, b);
        }
    }
}
END_TEST

/* Bucket counts at ocgc_expo_bounds_ns() of the values [v] (as an aggregator
 * given those bounds counts them). */
static struct ocgc_bucket_counts buckets_of(const uint64_t *v, size_t n)
{
  struct ocgc_bucket_counts b = OCGC_OPTS_INIT(struct ocgc_bucket_counts);
  size_t i, j;
  memset(&b, 0, sizeof b);
  b.nbounds = OCGC_EXPO_NBUCKETS;
  for (i = 0; i < n; i++) {
    b.count++;
    b.sum_ns += v[i];
    for (j = 0; j < OCGC_EXPO_NBUCKETS; j++) b.le[j] += v[i] <= ocgc_expo_bounds_ns()[j];
  }
  return b;
}

START_TEST(test_histogram)
{
  struct ocgc_expo_label l[2] = {{"pid", "7"}, {"kind", "minor"}};
  static const uint64_t v[] = {500, 1500, 3000, 7000000, 2000000000, 20000000000};
  struct ocgc_bucket_counts b = buckets_of(v, sizeof v / sizeof v[0]);
  start();
  ocgc_expo_buckets(&e, "d_seconds", l, 2, &b);
  ck_assert_str_eq(out.s,
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.000001\"} 1\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.000002\"} 2\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.000005\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.00001\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.00002\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.00005\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.0001\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.0002\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.0005\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.001\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.002\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.005\"} 3\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.01\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.02\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.05\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.1\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.2\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"0.5\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"1\"} 4\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"2\"} 5\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"5\"} 5\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"10\"} 5\n"
      "d_seconds_bucket{pid=\"7\",kind=\"minor\",le=\"+Inf\"} 6\n"
      "d_seconds_sum{pid=\"7\",kind=\"minor\"} 22.007005\n"
      "d_seconds_count{pid=\"7\",kind=\"minor\"} 6\n");
  start();
  b = buckets_of(NULL, 0);
  ocgc_expo_buckets(&e, "d_seconds", NULL, 0, &b);
  ck_assert_ptr_nonnull(strstr(out.s, "d_seconds_bucket{le=\"+Inf\"} 0\nd_seconds_sum 0\n"
                                      "d_seconds_count 0\n"));
}
END_TEST

/* OpenMetrics: a counter's and an info's family are named without their
 * suffix (samples keep it), '"' is escaped in HELP too, and "# EOF" ends
 * the exposition; text writes an info as a gauge and no EOF. */
START_TEST(test_openmetrics)
{
  struct ocgc_expo_label l[1] = {{"pid", "9"}};
  start_as(OCGC_EXPO_OPENMETRICS);
  ocgc_expo_family(&e, "c_total", "counter", "say \"hi\"");
  ocgc_expo_u64(&e, "c_total", l, 1, 3);
  ocgc_expo_family(&e, "r_info", "info", "i");
  ocgc_expo_u64(&e, "r_info", l, 1, 1);
  ocgc_expo_family(&e, "g_bytes", "gauge", "g");
  ocgc_expo_u64(&e, "g_bytes", l, 1, 2);
  ocgc_expo_family(&e, "total", "counter", "a name that is only the suffix stays whole");
  ocgc_expo_finish(&e);
  ck_assert_str_eq(out.s, "# HELP c say \\\"hi\\\"\n# TYPE c counter\nc_total{pid=\"9\"} 3\n"
                          "# HELP r i\n# TYPE r info\nr_info{pid=\"9\"} 1\n"
                          "# HELP g_bytes g\n# TYPE g_bytes gauge\ng_bytes{pid=\"9\"} 2\n"
                          "# HELP total a name that is only the suffix stays whole\n"
                          "# TYPE total counter\n# EOF\n");
  ck_assert_ptr_nonnull(strstr(ocgc_expo_content_type(OCGC_EXPO_OPENMETRICS),
                               "application/openmetrics-text; version=1.0.0"));
  start();
  ocgc_expo_family(&e, "r_info", "info", "i");
  ocgc_expo_finish(&e);
  ck_assert_str_eq(out.s, "# HELP r_info i\n# TYPE r_info gauge\n");
  ck_assert_ptr_nonnull(strstr(ocgc_expo_content_type(OCGC_EXPO_TEXT), "text/plain; version=0.0.4"));
}
END_TEST

/* The format for an Accept header: the supported range of highest q,
 * OpenMetrics on a tie; text otherwise.  Prometheus 2.42's header first. */
START_TEST(test_negotiate)
{
  static const struct { const char *accept; enum ocgc_expo_format f; } cases[] = {
    {"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
     "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", OCGC_EXPO_OPENMETRICS},
    {"text/plain;version=0.0.4;q=1,*/*;q=0.1", OCGC_EXPO_TEXT},
    {"application/openmetrics-text", OCGC_EXPO_OPENMETRICS},
    {"Application/OpenMetrics-Text ; Version=1.0.0 ; Q=0.9", OCGC_EXPO_OPENMETRICS},
    {"application/openmetrics-text;version=0.0.1", OCGC_EXPO_OPENMETRICS},
    {"application/openmetrics-text;version=2.0.0", OCGC_EXPO_TEXT},
    {"application/openmetrics-text;q=0", OCGC_EXPO_TEXT},
    {"application/openmetrics-text;q=0.4, text/plain;q=0.5", OCGC_EXPO_TEXT},
    {"text/plain, application/openmetrics-text", OCGC_EXPO_OPENMETRICS},
    {"application/openmetrics-text;q=abc", OCGC_EXPO_TEXT},
    {"application/openmetrics-text;q=2", OCGC_EXPO_TEXT},
    {"application/openmetrics-text;q=nan", OCGC_EXPO_TEXT},
    {"*/*", OCGC_EXPO_TEXT},
    {"", OCGC_EXPO_TEXT},
    {",,,;;;===", OCGC_EXPO_TEXT},
    {"application/openmetrics-text;", OCGC_EXPO_OPENMETRICS},
    {"application/openmetrics-text; ;=;x", OCGC_EXPO_OPENMETRICS},
    {"application/openmetrics-text;q", OCGC_EXPO_TEXT}, /* a q without value: refused */
    {"application/openmetrics-text junk ; q = 0.5", OCGC_EXPO_OPENMETRICS},
    {"application/json", OCGC_EXPO_TEXT},
  };
  size_t i;
  ck_assert_int_eq(ocgc_expo_negotiate(NULL), OCGC_EXPO_TEXT);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_msg(ocgc_expo_negotiate(cases[i].accept) == cases[i].f, "Accept: %s", cases[i].accept);
}
END_TEST

/* Any bytes, cut anywhere: the parser stays within the string (ASan would
 * see a read past it) and answers one of the two formats. */
START_TEST(test_negotiate_any_bytes)
{
  static const char alphabet[] = ";,= \tq0.1a/*\"x";
  char buf[24];
  unsigned seed = 12345, i, j;
  for (i = 0; i < 200000; i++) {
    size_t n = (seed = seed * 1103515245u + 12345u) % (sizeof buf);
    for (j = 0; j < n; j++) {
      seed = seed * 1103515245u + 12345u;
      buf[j] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
    }
    buf[n] = '\0';
    ck_assert(ocgc_expo_negotiate(buf) == OCGC_EXPO_TEXT || ocgc_expo_negotiate(buf) == OCGC_EXPO_OPENMETRICS);
  }
}
END_TEST

static Suite *expo_suite(void)
{
  Suite *s = suite_create("expo");
  TCase *tc = tcase_create("writer");
  tcase_add_test(tc, test_family_and_numbers);
  tcase_add_test(tc, test_label_escapes);
  tcase_add_test(tc, test_every_byte);
  tcase_add_test(tc, test_histogram);
  tcase_add_test(tc, test_openmetrics);
  tcase_add_test(tc, test_negotiate);
  tcase_add_test(tc, test_negotiate_any_bytes);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(expo_suite);
