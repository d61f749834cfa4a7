/* test_mp_lease.c - the producer's lease rule (runtime_patch/src/
 * ocgc_mp_lease.c), on a header of our own and a clock of our own:
 * - the base rate alone; two leases joined at the finest rate, back to the
 *   base when the last is released; a base finer than a lease stays;
 * - a slot renewed every second stays alive for a minute; one left alone
 *   lapses after CAML_OCGC_LEASE_NS (not before), and its slot is freed;
 * - words out of bounds are ignored and counted; a word written meanwhile
 *   is never freed over;
 * - what is published, and a forked child's return to the base. */

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ocgc_mp_lease.h"
#include "testutil.h"

#define S UINT64_C(1000000000)
#define W(rate, pid, beat) OCGC_MP_LEASE_WORD(rate, pid, beat)

static uint64_t hdr[11];

static void fresh(uint64_t base)
{
  memset(hdr, 0, sizeof hdr);
  caml_ocgc_lease_attach(hdr);
  caml_ocgc_lease_set_base(base);
}

static uint64_t state(void)
{
  caml_ocgc_lease_publish(hdr);
  return hdr[OCGC_MP_LEASE_STATE];
}

START_TEST(test_base_alone)
{
  fresh(1 << 20);
  ck_assert_int_eq(caml_ocgc_lease_due(), 0);
  ck_assert_int_eq(caml_ocgc_lease_poll(5 * S), 0);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 1 << 20);
  ck_assert_uint_eq(state(), 0);
  ck_assert_uint_eq(hdr[OCGC_MP_LEASE_BASE], 1 << 20);
  ck_assert_uint_eq(hdr[OCGC_MP_LEASE_NS], CAML_OCGC_LEASE_NS);
}
END_TEST

START_TEST(test_two_join)
{
  fresh(1 << 20);
  hdr[0] = W(8192, 100, 1);
  ck_assert_int_eq(caml_ocgc_lease_due(), 1);
  ck_assert_int_eq(caml_ocgc_lease_poll(1 * S), 1);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 8192);
  ck_assert_uint_eq(state(), 1 | OCGC_MP_LEASE_IN_FORCE);
  hdr[2] = W(65536, 101, 7);
  caml_ocgc_lease_poll(2 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 8192); /* the finer */
  ck_assert_uint_eq(state(), 5 | OCGC_MP_LEASE_IN_FORCE);
  hdr[0] = 0; /* the first window ends */
  ck_assert_int_eq(caml_ocgc_lease_poll(3 * S), 1);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 65536);
  ck_assert_uint_eq(state(), 4 | OCGC_MP_LEASE_IN_FORCE);
  hdr[2] = 0; /* the second */
  ck_assert_int_eq(caml_ocgc_lease_poll(4 * S), 1);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 1 << 20);
  ck_assert_uint_eq(state(), 0);
  /* and the check goes quiet again */
  ck_assert_int_eq(caml_ocgc_lease_due(), 0);
}
END_TEST

START_TEST(test_base_finer_stays)
{
  fresh(4096);
  hdr[1] = W(65536, 100, 1);
  caml_ocgc_lease_poll(1 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 4096);
  ck_assert_uint_eq(state(), 2); /* alive, not in force */
  /* off as the base: the lease's */
  fresh(0);
  hdr[1] = W(65536, 100, 1);
  caml_ocgc_lease_poll(1 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 65536);
  hdr[1] = 0;
  caml_ocgc_lease_poll(2 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 0);
}
END_TEST

START_TEST(test_renewed_stays_left_lapses)
{
  uint64_t t = 3 * S;
  unsigned beat;
  fresh(0);
  hdr[3] = W(8192, 100, 0);
  for (beat = 1; beat <= 60; beat++, t += S) {
    hdr[3] = W(8192, 100, beat);
    caml_ocgc_lease_poll(t);
    /* polls between the renewals too */
    caml_ocgc_lease_poll(t + S / 2);
    ck_assert_uint_eq(caml_ocgc_lease_rate(), 8192);
  }
  /* the holder dies: its last word stays, seen first at t - S */
  t -= S;
  caml_ocgc_lease_poll(t + CAML_OCGC_LEASE_NS);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 8192);
  ck_assert_uint_ne(hdr[3], 0);
  ck_assert_int_eq(caml_ocgc_lease_poll(t + CAML_OCGC_LEASE_NS + 1), 1);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 0);
  ck_assert_uint_eq(hdr[3], 0); /* freed for the next reader */
  ck_assert_uint_eq(state(), 0);
}
END_TEST

START_TEST(test_first_seen_late)
{
  /* a word written long before the producer's first poll counts from
   * that poll: the bound is the lease past the first poll after the
   * holder's last renewal */
  fresh(0);
  hdr[0] = W(4096, 100, 3);
  caml_ocgc_lease_poll(100 * S);
  caml_ocgc_lease_poll(109 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 4096);
  caml_ocgc_lease_poll(111 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 0);
}
END_TEST

START_TEST(test_bounds)
{
  fresh(1 << 20);
  hdr[0] = W(OCGC_MP_RATE_MIN - 1, 100, 1);
  hdr[1] = W(OCGC_MP_LEASE_RATE_MASK, 101, 1); /* past OCGC_MP_RATE_MAX */
  hdr[2] = W(OCGC_MP_RATE_MAX, 102, 1);
  ck_assert_int_eq(caml_ocgc_lease_poll(1 * S), 1);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 1 << 20); /* the max is coarser than the base */
  ck_assert_uint_eq(state(), 4);
  ck_assert_uint_eq(hdr[OCGC_MP_LEASE_REFUSED], 2);
  /* the same words again: counted once */
  caml_ocgc_lease_poll(2 * S);
  caml_ocgc_lease_publish(hdr);
  ck_assert_uint_eq(hdr[OCGC_MP_LEASE_REFUSED], 2);
  /* a word changed at every poll is counted each time, and never used */
  hdr[0] = W(1, 100, 2);
  caml_ocgc_lease_poll(3 * S);
  caml_ocgc_lease_publish(hdr);
  ck_assert_uint_eq(hdr[OCGC_MP_LEASE_REFUSED], 3);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 1 << 20);
  /* refused words lapse and are freed like any other */
  caml_ocgc_lease_poll(30 * S);
  ck_assert_uint_eq(hdr[0], 0);
  ck_assert_uint_eq(hdr[1], 0);
}
END_TEST

START_TEST(test_new_word_not_freed)
{
  fresh(0);
  hdr[0] = W(8192, 100, 1);
  caml_ocgc_lease_poll(1 * S);
  /* past the lease, but a new holder wrote its word before this poll */
  hdr[0] = W(16384, 200, 5);
  caml_ocgc_lease_poll(20 * S);
  ck_assert_uint_eq(hdr[0], W(16384, 200, 5));
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 16384);
}
END_TEST

START_TEST(test_forked)
{
  fresh(1 << 20);
  hdr[0] = W(8192, 100, 1);
  caml_ocgc_lease_poll(1 * S);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 8192);
  ck_assert_int_eq(caml_ocgc_lease_forked(), 1);
  ck_assert_uint_eq(caml_ocgc_lease_rate(), 1 << 20);
  ck_assert_int_eq(caml_ocgc_lease_due(), 0); /* no file yet */
  ck_assert_int_eq(caml_ocgc_lease_forked(), 0);
}
END_TEST

static Suite *mp_lease_suite(void)
{
  Suite *s = suite_create("mp_lease");
  TCase *tc = tcase_create("rule");
  tcase_add_test(tc, test_base_alone);
  tcase_add_test(tc, test_two_join);
  tcase_add_test(tc, test_base_finer_stays);
  tcase_add_test(tc, test_renewed_stays_left_lapses);
  tcase_add_test(tc, test_first_seen_late);
  tcase_add_test(tc, test_bounds);
  tcase_add_test(tc, test_new_word_not_freed);
  tcase_add_test(tc, test_forked);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(mp_lease_suite);
