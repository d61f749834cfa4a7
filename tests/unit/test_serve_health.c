/* test_serve_health.c - what /-/healthy says (tools/serve_health.c): ok
 * only while the rings are read and the last /metrics answer was whole.
 * (an answer over its bound was a 500 to every scrape while
 * /-/healthy said ok.) */
#include <check.h>
#include <string.h>

#include "serve.h"
#include "testutil.h"

START_TEST(ok_while_read_and_whole)
{
  char why[160];
  ck_assert_int_eq(serve_health(0, 0, why, sizeof why), 1);
  ck_assert_str_eq(why, "ok\n");
  ck_assert_int_eq(serve_health(SERVE_HEALTH_TURN_NS - 1, 0, why, sizeof why), 1);
}
END_TEST

START_TEST(stuck_poll_thread)
{
  char why[160];
  ck_assert_int_eq(serve_health(SERVE_HEALTH_TURN_NS, 0, why, sizeof why), 0);
  ck_assert_ptr_nonnull(strstr(why, "have not been read for 5.0 s"));
}
END_TEST

START_TEST(failed_answer)
{
  char why[160];
  ck_assert_int_eq(serve_health(1000, 1, why, sizeof why), 0);
  ck_assert_ptr_nonnull(strstr(why, "/metrics could not be made"));
  ck_assert_ptr_nonnull(strstr(why, "64 MiB"));
  /* Both: the stuck thread is said first (its answer is older still). */
  ck_assert_int_eq(serve_health(SERVE_HEALTH_TURN_NS * 2, 1, why, sizeof why), 0);
  ck_assert_ptr_nonnull(strstr(why, "have not been read"));
  /* A short buffer is cut, never overrun. */
  memset(why, 'x', sizeof why);
  ck_assert_int_eq(serve_health(1000, 1, why, 8), 0);
  ck_assert_uint_eq(strlen(why), 7);
  ck_assert_int_eq(why[8], 'x');
}
END_TEST

static Suite *serve_health_suite(void)
{
  Suite *s = suite_create("serve_health");
  TCase *tc = tcase_create("health");
  tcase_add_test(tc, ok_while_read_and_whole);
  tcase_add_test(tc, stuck_poll_thread);
  tcase_add_test(tc, failed_answer);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(serve_health_suite);
