/* test_top_spark.c - the last minute of `ocgc top` (tools/top_spark.c), on
 * its own: the ring keeps the newest TOP_SPARK_SAMPLES values, the
 * sparkline draws the newest that fit, scaled to the largest shown, in
 * ASCII or in U+2581..U+2588, a NaN (a second without a pause) as a
 * space; the pauses of a second count once per stop. */

#include <check.h>
#include <math.h>
#include <string.h>

#include "top_spark.h"
#include "testutil.h"

START_TEST(test_ascii_levels)
{
  struct top_ring r;
  char line[128];
  int i;
  memset(&r, 0, sizeof r);
  ck_assert_uint_eq(top_spark_line(&r, 60, 0, line, sizeof line), 0);
  ck_assert_str_eq(line, "");
  ck_assert(isnan(top_ring_last(&r)));
  for (i = 1; i <= 8; i++) top_ring_push(&r, i);
  top_ring_push(&r, NAN);
  top_ring_push(&r, 0);
  ck_assert_uint_eq(top_spark_line(&r, 60, 0, line, sizeof line), 10);
  ck_assert_str_eq(line, "_.-:=+*# _");
  ck_assert(top_ring_last(&r) == 0);
  ck_assert(top_ring_max(&r, 60) == 8);
}
END_TEST

START_TEST(test_utf8_blocks)
{
  struct top_ring r;
  char line[128];
  int i;
  memset(&r, 0, sizeof r);
  for (i = 1; i <= 8; i++) top_ring_push(&r, 10 * i);
  ck_assert_uint_eq(top_spark_line(&r, 60, 1, line, sizeof line), 8);
  ck_assert_str_eq(line, "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
  /* cut at the buffer: whole characters only */
  ck_assert_uint_eq(top_spark_line(&r, 60, 1, line, 8), 2);
  ck_assert_str_eq(line, "\u2581\u2582");
}
END_TEST

/* 70 values: the newest 60 kept; a narrower line shows the newest, scaled
 * to the largest of those. */
START_TEST(test_ring_wraps_and_width)
{
  struct top_ring r;
  char line[256];
  int i;
  memset(&r, 0, sizeof r);
  for (i = 0; i < 70; i++) top_ring_push(&r, i < 66 ? 1000 : 1);
  ck_assert_uint_eq(r.n, TOP_SPARK_SAMPLES);
  ck_assert_uint_eq(top_spark_line(&r, 200, 0, line, sizeof line), TOP_SPARK_SAMPLES);
  ck_assert_uint_eq(strlen(line), TOP_SPARK_SAMPLES);
  ck_assert_uint_eq(top_spark_line(&r, 4, 0, line, sizeof line), 4);
  ck_assert_str_eq(line, "####");
  ck_assert(top_ring_max(&r, 4) == 1);
  ck_assert(top_ring_max(&r, 60) == 1000);
}
END_TEST

static Suite *top_spark_suite(void)
{
  Suite *s = suite_create("top_spark");
  TCase *tc = tcase_create("sparklines");
  tcase_add_test(tc, test_ascii_levels);
  tcase_add_test(tc, test_utf8_blocks);
  tcase_add_test(tc, test_ring_wraps_and_width);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(top_spark_suite);
