/* test_decode.c - ocgc_decode(): one event from a word buffer.
 *
 * Every (user, type, length) combination is checked against the format's
 * table (wire.h): a valid event decodes to its fields, an invalid one is
 * OCGC_E_CORRUPT whatever is available, a valid one that does not fit yet
 * is 0.  Buffers are allocated to exactly the words said to be available,
 * so ASan catches a decoder that reads past them. */

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "ocgc/consumer.h"
#include "testutil.h"

/* The expected length rule for a (user, type): returns 1 if [len] is valid.
 * Lifecycle events are checked separately (their length depends on id). */
static int spec_valid(unsigned user, unsigned type, uint64_t len)
{
  if (len == 0) return 0;
  if (user) {
    switch (type) {
    case OCGC_USER_UNIT:
    case OCGC_USER_SPAN_BEGIN:
    case OCGC_USER_SPAN_END: return len == 2;
    case OCGC_USER_INT: return len == 3;
    case OCGC_USER_CUSTOM: return len >= 3; /* at least the pad-count word */
    default: return 0;
    }
  }
  switch (type) {
  case OCGC_RT_PADDING: return 1;
  case OCGC_RT_BEGIN:
  case OCGC_RT_END: return len == 2;
  case OCGC_RT_COUNTER: return len == 3;
  case OCGC_RT_ALLOC: return len == 22;
  default: return 0;
  }
}

/* A heap buffer of exactly n words (at least one, for the header), filled
 * with [h] then 1000 + i. */
static uint64_t *mkbuf(uint64_t n, uint64_t h)
{
  uint64_t i, *w = malloc((n ? n : 1) * 8);
  ck_assert_ptr_nonnull(w);
  w[0] = h;
  for (i = 1; i < n; i++) w[i] = 1000 + i;
  return w;
}

static int64_t decode_exact(uint64_t h, uint64_t avail, struct ocgc_event *ev, int *padding)
{
  uint64_t *w = mkbuf(avail ? avail : 1, h);
  int64_t r = ocgc_decode(w, avail, ev, padding);
  free(w);
  return r;
}

/* Every (user, type, length) with ids 0, except runtime lifecycle events. */
START_TEST(all_type_length_combinations)
{
  unsigned user, type;
  uint64_t len;
  for (user = 0; user < 2; user++)
    for (type = 0; type < 16; type++) {
      if (!user && type == OCGC_RT_LIFECYCLE) continue;
      for (len = 0; len < 1024; len++) {
        uint64_t h = OCGC_EV_HEADER(len, user, type, 0);
        struct ocgc_event ev;
        int padding = -1;
        int64_t r = decode_exact(h, len ? len : 1, &ev, &padding);
        if (!spec_valid(user, type, len)) {
          TU_CHECK(r == OCGC_E_CORRUPT, "user %u type %u len %u: %lld, want corrupt", user,
                   type, (unsigned)len, (long long)r);
          /* ... whatever the buffer holds: corruption is not "wait for more" */
          r = decode_exact(h, 1, &ev, &padding);
          TU_CHECK(r == OCGC_E_CORRUPT, "user %u type %u len %u, 1 word: %lld", user, type,
                   (unsigned)len, (long long)r);
          continue;
        }
        TU_CHECK(r == (int64_t)len, "user %u type %u len %u: %lld", user, type, (unsigned)len,
                 (long long)r);
        TU_CHECK(padding == (!user && type == OCGC_RT_PADDING), "user %u type %u: padding %d",
                 user, type, padding);
        if (len > 1) {
          /* one word short: not there yet */
          r = decode_exact(h, len - 1, &ev, &padding);
          TU_CHECK(r == 0, "user %u type %u len %u short: %lld", user, type, (unsigned)len,
                   (long long)r);
        }
      }
    }
}
END_TEST

/* Lifecycle events: 3 words (data), RING_STOP 2 words; nothing else. */
START_TEST(lifecycle_lengths)
{
  unsigned id;
  uint64_t len;
  struct ocgc_event ev;
  int padding;
  for (id = 0; id < 8; id++) {
    uint64_t want = id == OCGC_LC_RING_STOP ? 2 : 3;
    int64_t r = decode_exact(OCGC_EV_HEADER(want, 0, OCGC_RT_LIFECYCLE, id), want, &ev, &padding);
    ck_assert_int_eq(r, (int64_t)want);
    ck_assert_int_eq(padding, 0);
    ck_assert_uint_eq(ev.type, OCGC_RT_LIFECYCLE);
    ck_assert_uint_eq(ev.id, id);
    ck_assert_uint_eq(ev.value, want == 3 ? 1002 : 0);
    for (len = 0; len < 1024; len++) {
      if (len == 2 || len == 3) continue;
      r = decode_exact(OCGC_EV_HEADER(len, 0, OCGC_RT_LIFECYCLE, id), len ? len : 1, &ev,
                       &padding);
      TU_CHECK(r == OCGC_E_CORRUPT, "lifecycle %u len %u: %lld", id, (unsigned)len,
               (long long)r);
    }
  }
}
END_TEST

/* wire.h: "OCGC_RT_LIFECYCLE: 3 words: data (RING_STOP: 2 words, no data)",
 * and decode.c's invariant: "an event is accepted only if its length is the
 * one its type has".  A 2-word RING_START (pid missing) or a 3-word
 * RING_STOP is not a valid event of format version 1. */
START_TEST(lifecycle_length_depends_on_id)
{
  struct ocgc_event ev;
  int padding;
  unsigned id;
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(3, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_STOP), 3,
                                &ev, &padding),
                   OCGC_E_CORRUPT);
  for (id = 0; id < 8; id++) {
    if (id == OCGC_LC_RING_STOP) continue;
    ck_assert_msg(decode_exact(OCGC_EV_HEADER(2, 0, OCGC_RT_LIFECYCLE, id), 2, &ev, &padding) ==
                      OCGC_E_CORRUPT,
                  "2-word lifecycle event %u (its data word missing) accepted", id);
  }
}
END_TEST

/* Fields of each runtime type. */
START_TEST(runtime_fields)
{
  uint64_t w[22];
  struct ocgc_event ev;
  int padding = -1;
  unsigned i;

  memset(&ev, 0xa5, sizeof ev);
  w[0] = OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, OCGC_PH_MINOR);
  w[1] = 123456789;
  ck_assert_int_eq(ocgc_decode(w, 2, &ev, &padding), 2);
  ck_assert_int_eq(padding, 0);
  ck_assert_uint_eq(ev.timestamp, 123456789);
  ck_assert_uint_eq(ev.user, 0);
  ck_assert_uint_eq(ev.type, OCGC_RT_BEGIN);
  ck_assert_uint_eq(ev.id, OCGC_PH_MINOR);
  ck_assert_uint_eq(ev.value, 0);
  ck_assert_uint_eq(ev.payload_words, 0);
  ck_assert_ptr_eq(ev.payload, w + 2);
  ck_assert_ptr_null(ev.name);

  w[0] = OCGC_EV_HEADER(2, 0, OCGC_RT_END, OCGC_PH_COMPACT);
  ck_assert_int_eq(ocgc_decode(w, 2, &ev, &padding), 2);
  ck_assert_uint_eq(ev.type, OCGC_RT_END);
  ck_assert_uint_eq(ev.id, OCGC_PH_COMPACT);

  w[0] = OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED);
  w[1] = 5;
  w[2] = UINT64_MAX;
  ck_assert_int_eq(ocgc_decode(w, 3, &ev, &padding), 3);
  ck_assert_uint_eq(ev.timestamp, 5);
  ck_assert_uint_eq(ev.type, OCGC_RT_COUNTER);
  ck_assert_uint_eq(ev.id, OCGC_CT_MINOR_ALLOCATED);
  ck_assert_uint_eq(ev.value, UINT64_MAX);
  ck_assert_uint_eq(ev.payload_words, 1);
  ck_assert_ptr_eq(ev.payload, w + 2);

  w[0] = OCGC_EV_HEADER(3, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_START);
  w[2] = 4242;
  ck_assert_int_eq(ocgc_decode(w, 3, &ev, &padding), 3);
  ck_assert_uint_eq(ev.type, OCGC_RT_LIFECYCLE);
  ck_assert_uint_eq(ev.value, 4242);

  w[0] = OCGC_EV_HEADER(2, 0, OCGC_RT_LIFECYCLE, OCGC_LC_RING_STOP);
  ck_assert_int_eq(ocgc_decode(w, 2, &ev, &padding), 2);
  ck_assert_uint_eq(ev.id, OCGC_LC_RING_STOP);
  ck_assert_uint_eq(ev.value, 0);
  ck_assert_uint_eq(ev.payload_words, 0);

  w[0] = OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0);
  for (i = 2; i < 22; i++) w[i] = i * 11;
  ck_assert_int_eq(ocgc_decode(w, 22, &ev, &padding), 22);
  ck_assert_uint_eq(ev.type, OCGC_RT_ALLOC);
  ck_assert_uint_eq(ev.payload_words, 20);
  ck_assert_ptr_eq(ev.payload, w + 2);
  ck_assert_uint_eq(ev.payload[19], 21 * 11);
  ck_assert_uint_eq(ev.value, 22);
}
END_TEST

/* Runtime ids: the whole 13-bit range is passed through (5.3 and later
 * numberings have more ids than 5.2). */
START_TEST(runtime_ids_full_range)
{
  uint64_t w[3] = {0, 7, 9};
  struct ocgc_event ev;
  int padding;
  unsigned id;
  for (id = 0; id < 8192; id++) {
    w[0] = OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id);
    TU_CHECK(ocgc_decode(w, 3, &ev, &padding) == 3 && ev.id == id && ev.user == 0 &&
                 ev.value == 9,
             "counter id %u", id);
  }
}
END_TEST

/* User events: unit, int, span begin/end, custom. */
START_TEST(user_fields)
{
  uint64_t w[8] = {0, 77, 0x1122334455667788u, 0xdead, 0, 0, 0, 0};
  struct ocgc_event ev;
  int padding = -1;

  w[0] = OCGC_EV_HEADER(2, 1, OCGC_USER_UNIT, 8191);
  ck_assert_int_eq(ocgc_decode(w, 2, &ev, &padding), 2);
  ck_assert_int_eq(padding, 0);
  ck_assert_uint_eq(ev.user, 1);
  ck_assert_uint_eq(ev.type, OCGC_USER_UNIT);
  ck_assert_uint_eq(ev.id, 8191);
  ck_assert_uint_eq(ev.timestamp, 77);
  ck_assert_uint_eq(ev.value, 0);
  ck_assert_ptr_null(ev.name);

  w[0] = OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 0);
  ck_assert_int_eq(ocgc_decode(w, 3, &ev, &padding), 3);
  ck_assert_uint_eq(ev.type, OCGC_USER_INT);
  ck_assert_uint_eq(ev.id, 0);
  ck_assert_uint_eq(ev.value, 0x1122334455667788u);
  ck_assert_uint_eq(ev.payload_words, 1);

  w[0] = OCGC_EV_HEADER(2, 1, OCGC_USER_SPAN_BEGIN, 12);
  ck_assert_int_eq(ocgc_decode(w, 2, &ev, &padding), 2);
  ck_assert_uint_eq(ev.type, OCGC_USER_SPAN_BEGIN);
  ck_assert_uint_eq(ev.id, 12);
  w[0] = OCGC_EV_HEADER(2, 1, OCGC_USER_SPAN_END, 12);
  ck_assert_int_eq(ocgc_decode(w, 2, &ev, &padding), 2);
  ck_assert_uint_eq(ev.type, OCGC_USER_SPAN_END);

  /* custom: "hello" (5 bytes) + 2 zero bytes + pad count 2 in the last byte */
  memcpy(&w[2], "hello\0\0\x02", 8);
  w[0] = OCGC_EV_HEADER(3, 1, OCGC_USER_CUSTOM, 3);
  ck_assert_int_eq(ocgc_decode(w, 3, &ev, &padding), 3);
  ck_assert_uint_eq(ev.type, OCGC_USER_CUSTOM);
  ck_assert_uint_eq(ev.payload_words, 1);
  ck_assert_int_eq(memcmp(ev.payload, "hello", 5), 0);
  w[0] = OCGC_EV_HEADER(8, 1, OCGC_USER_CUSTOM, 3);
  ck_assert_int_eq(ocgc_decode(w, 8, &ev, &padding), 8);
  ck_assert_uint_eq(ev.payload_words, 6);
}
END_TEST

/* The longest event: a 1023-word custom event (the length field's max). */
START_TEST(max_length)
{
  uint64_t h = OCGC_EV_HEADER(1023, 1, OCGC_USER_CUSTOM, 8191);
  uint64_t *w = mkbuf(1023, h);
  struct ocgc_event ev;
  int padding;
  ck_assert_int_eq(ocgc_decode(w, 1023, &ev, &padding), 1023);
  ck_assert_uint_eq(ev.payload_words, 1021);
  ck_assert_uint_eq(ev.payload[1020], 1000 + 1022);
  ck_assert_int_eq(ocgc_decode(w, 1022, &ev, &padding), 0);
  ck_assert_int_eq(ocgc_decode(w, UINT64_MAX, &ev, &padding), 1023);
  free(w);
  /* the largest padding record */
  w = mkbuf(1023, OCGC_EV_HEADER(1023, 0, OCGC_RT_PADDING, 0));
  ck_assert_int_eq(ocgc_decode(w, 1023, &ev, &padding), 1023);
  ck_assert_int_eq(padding, 1);
  free(w);
}
END_TEST

/* Padding: any length >= 1, id 0, no timestamp; 0 while it does not fit. */
START_TEST(padding_records)
{
  struct ocgc_event ev;
  int padding;
  uint64_t len;
  for (len = 1; len < 1024; len++) {
    padding = -1;
    TU_CHECK(decode_exact(OCGC_EV_HEADER(len, 0, OCGC_RT_PADDING, 0), len, &ev, &padding) ==
                     (int64_t)len && padding == 1,
             "padding of %u words", (unsigned)len);
    if (len > 1)
      TU_CHECK(decode_exact(OCGC_EV_HEADER(len, 0, OCGC_RT_PADDING, 0), len - 1, &ev,
                            &padding) == 0,
               "padding of %u words, one short", (unsigned)len);
  }
  /* a one-word padding record needs no timestamp word */
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(1, 0, OCGC_RT_PADDING, 0), 1, &ev, &padding), 1);
  /* padding has id 0 */
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(4, 0, OCGC_RT_PADDING, 1), 4, &ev, &padding),
                   OCGC_E_CORRUPT);
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(4, 0, OCGC_RT_PADDING, 8191), 4, &ev, &padding),
                   OCGC_E_CORRUPT);
  /* a user event of type 0 is a unit event, not padding */
  padding = -1;
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(2, 1, 0, 0), 2, &ev, &padding), 2);
  ck_assert_int_eq(padding, 0);
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(4, 1, 0, 0), 4, &ev, &padding), OCGC_E_CORRUPT);
}
END_TEST

/* Each reserved bit (35..0) alone makes a valid event corrupt, for every
 * valid kind, padding included. */
START_TEST(reserved_bits)
{
  static const uint64_t valid[] = {
    OCGC_EV_HEADER(2, 0, OCGC_RT_BEGIN, 10),     OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, 5),
    OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0),     OCGC_EV_HEADER(3, 0, OCGC_RT_LIFECYCLE, 0),
    OCGC_EV_HEADER(5, 0, OCGC_RT_PADDING, 0),    OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 9),
    OCGC_EV_HEADER(2, 1, OCGC_USER_UNIT, 9),     OCGC_EV_HEADER(4, 1, OCGC_USER_CUSTOM, 9),
  };
  struct ocgc_event ev;
  int padding;
  unsigned k, bit;
  for (k = 0; k < sizeof valid / sizeof valid[0]; k++) {
    uint64_t len = OCGC_EV_LENGTH(valid[k]);
    ck_assert_int_eq(decode_exact(valid[k], len, &ev, &padding), (int64_t)len);
    for (bit = 0; bit < 36; bit++)
      TU_CHECK(decode_exact(valid[k] | (UINT64_C(1) << bit), len, &ev, &padding) ==
                   OCGC_E_CORRUPT,
               "event %u with reserved bit %u accepted", k, bit);
    ck_assert_int_eq(decode_exact(valid[k] | OCGC_EV_RESERVED_MASK, len, &ev, &padding),
                     OCGC_E_CORRUPT);
  }
}
END_TEST

/* Length 0 is never valid, whatever the rest says (it would never advance). */
START_TEST(length_zero)
{
  struct ocgc_event ev;
  int padding;
  unsigned user, type;
  for (user = 0; user < 2; user++)
    for (type = 0; type < 16; type++)
      ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(0, user, type, 0), 1, &ev, &padding),
                       OCGC_E_CORRUPT);
  ck_assert_int_eq(decode_exact(0, 1, &ev, &padding), OCGC_E_CORRUPT);
}
END_TEST

/* Not available yet: 0, and nothing past [avail] is read (exact buffers). */
START_TEST(beyond_avail)
{
  struct ocgc_event ev;
  int padding;
  uint64_t a;
  for (a = 1; a < 22; a++)
    ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0), a, &ev, &padding), 0);
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 1), 1, &ev, &padding), 0);
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 1), 2, &ev, &padding), 0);
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(2, 0, OCGC_RT_END, 1), 1, &ev, &padding), 0);
  /* more than enough: the event's own length is returned */
  ck_assert_int_eq(decode_exact(OCGC_EV_HEADER(2, 0, OCGC_RT_END, 1), 100, &ev, &padding), 2);
}
END_TEST

/* Garbage words (fixed seed): decode either rejects them or returns a
 * length that is the header's, within 1..1023 and consistent with the type
 * table; it never returns more than was available. */
START_TEST(garbage_words)
{
  uint64_t x = UINT64_C(0x9e3779b97f4a7c15);
  unsigned i;
  for (i = 0; i < 200000; i++) {
    uint64_t w[4], h, avail;
    struct ocgc_event ev;
    int padding = -1;
    int64_t r;
    unsigned k;
    for (k = 0; k < 4; k++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w[k] = x;
    }
    /* clear the reserved bits half of the time so that some pass */
    if (i & 1) w[0] &= ~OCGC_EV_RESERVED_MASK;
    if (i & 2) w[0] = (w[0] & ~(UINT64_C(0x3ff) << 54)) | ((uint64_t)(i % 5) << 54);
    h = w[0];
    avail = 1 + (i % 4);
    r = ocgc_decode(w, avail, &ev, &padding);
    if (r == OCGC_E_CORRUPT) continue;
    TU_CHECK(r >= 0 && (uint64_t)r <= avail && (h & OCGC_EV_RESERVED_MASK) == 0,
             "word %#llx, %u available: %lld", (unsigned long long)h, (unsigned)avail,
             (long long)r);
    if (r > 0) {
      TU_CHECK((uint64_t)r == OCGC_EV_LENGTH(h), "word %#llx: %lld", (unsigned long long)h,
               (long long)r);
      if (!(!OCGC_EV_IS_USER(h) && OCGC_EV_TYPE(h) == OCGC_RT_LIFECYCLE))
        TU_CHECK(spec_valid(OCGC_EV_IS_USER(h), OCGC_EV_TYPE(h), (uint64_t)r),
                 "word %#llx accepted", (unsigned long long)h);
    }
  }
}
END_TEST

static Suite *decode_suite(void)
{
  Suite *s = suite_create("decode");
  TCase *tc = tcase_create("lengths");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, all_type_length_combinations);
  tcase_add_test(tc, lifecycle_lengths);
  tcase_add_test(tc, lifecycle_length_depends_on_id);
  tcase_add_test(tc, length_zero);
  tcase_add_test(tc, beyond_avail);
  tcase_add_test(tc, max_length);
  tcase_add_test(tc, padding_records);
  tcase_add_test(tc, reserved_bits);
  suite_add_tcase(s, tc);
  tc = tcase_create("fields");
  tcase_add_test(tc, runtime_fields);
  tcase_add_test(tc, runtime_ids_full_range);
  tcase_add_test(tc, user_fields);
  tcase_add_test(tc, garbage_words);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(decode_suite);
