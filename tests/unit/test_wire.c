/* test_wire.c - the wire format: header encoding, cause tables, sizes. */

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/wire.h"

START_TEST(header_fields_round_trip)
{
  uint64_t h = OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 22);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 0);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), OCGC_RT_ALLOC);
  h = OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 8191);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 3);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 1);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), OCGC_USER_INT);
  ck_assert_uint_eq(OCGC_EV_ID(h), 8191);
  ck_assert_uint_eq(h & OCGC_EV_RESERVED_MASK, 0);
}
END_TEST

Suite *wire_suite(void);
Suite *wire_suite(void)
{
  Suite *s = suite_create("wire");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, header_fields_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(wire_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
