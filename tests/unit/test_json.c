/* test_json.c - the JSON writer of the ocgc command (tools/json.c): commas
 * and nesting from the container stack, the two layouts and the compact
 * form, numbers, and strings of any bytes: whatever a string holds, the
 * output is valid UTF-8 with no raw control character, valid UTF-8 passes
 * as it is, and every byte that is no UTF-8 comes out as \u00XX. */

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "testutil.h"

static const char *str_of(const char *s)
{
  static struct tu_buf b;
  struct json j;
  memset(&b, 0, sizeof b);
  json_init(&j, tu_buf_put, &b, 0);
  json_str(&j, s);
  return b.s;
}

/* Whether [s] is well-formed UTF-8 without a C0 (but \n), DEL or C1
 * control: what a terminal or a JSON parser may see raw. */
static int clean_utf8(const unsigned char *s)
{
  while (*s) {
    unsigned c = *s, n, i, cp;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n') || c == 0x7f) return 0;
      s++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
    else return 0;
    for (i = 1; i < n; i++) {
      if ((s[i] & 0xc0) != 0x80) return 0;
      cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp <= 0x9f || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
        (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000))
      return 0;
    s += n;
  }
  return 1;
}

START_TEST(test_layouts)
{
  struct tu_buf b;
  struct json j;
  memset(&b, 0, sizeof b);
  json_init(&j, tu_buf_put, &b, 0);
  json_obj(&j, JSON_LINES);
  json_kv_u64(&j, "a", 1);
  json_key(&j, "b");
  json_obj(&j, JSON_INLINE);
  json_kv_str(&j, "x", "y");
  json_kv_bool(&j, "t", 1);
  json_key(&j, "n");
  json_null(&j);
  json_obj_end(&j);
  json_key(&j, "c");
  json_arr(&j, JSON_LINES);
  json_i64(&j, -3);
  json_arr(&j, JSON_INLINE);
  json_arr_end(&j);
  json_arr_end(&j);
  json_key(&j, "e");
  json_obj(&j, JSON_LINES);
  json_obj_end(&j);
  json_obj_end(&j);
  json_raw(&j, "\n");
  ck_assert_str_eq(b.s, "{\n  \"a\": 1,\n  \"b\": {\"x\": \"y\", \"t\": true, \"n\": null},\n"
                        "  \"c\": [\n    -3,\n    []\n  ],\n  \"e\": {}\n}\n");
}
END_TEST

/* Top-level values are not separated; compact has no spaces nor indents. */
START_TEST(test_compact_and_top_level)
{
  struct tu_buf b;
  struct json j;
  memset(&b, 0, sizeof b);
  json_init(&j, tu_buf_put, &b, JSON_COMPACT);
  json_obj(&j, JSON_INLINE);
  json_key(&j, "e");
  json_arr(&j, JSON_LINES);
  json_obj(&j, JSON_INLINE);
  json_kv_u64(&j, "a", 1);
  json_kv_u64(&j, "b", 2);
  json_obj_end(&j);
  json_u64(&j, 3);
  json_arr_end(&j);
  json_obj_end(&j);
  json_raw(&j, "\n");
  json_u64(&j, 4);
  ck_assert_str_eq(b.s, "{\"e\":[\n{\"a\":1,\"b\":2},\n3\n]}\n4");
}
END_TEST

START_TEST(test_numbers)
{
  struct tu_buf b;
  struct json j;
  memset(&b, 0, sizeof b);
  json_init(&j, tu_buf_put, &b, JSON_COMPACT);
  json_arr(&j, JSON_INLINE);
  json_milli(&j, 1234567);
  json_milli(&j, 5);
  json_double(&j, 3, 2.5);
  json_double(&j, 6, NAN);
  json_double(&j, 2, INFINITY);
  json_u64(&j, UINT64_MAX);
  json_i64(&j, INT64_MIN);
  json_arr_end(&j);
  ck_assert_str_eq(b.s, "[1234.567,0.005,2.500,null,null,18446744073709551615,"
                        "-9223372036854775808]");
}
END_TEST

START_TEST(test_escapes)
{
  ck_assert_str_eq(str_of("a\"b\\c\n\r\t"), "\"a\\\"b\\\\c\\n\\r\\t\"");
  ck_assert_str_eq(str_of("\x01\x1b\x7f"), "\"\\u0001\\u001b\\u007f\"");
  ck_assert_str_eq(str_of("\xc3\xa9"), "\"\xc3\xa9\"");            /* e-acute: as is */
  ck_assert_str_eq(str_of("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\""); /* 4 bytes */
  ck_assert_str_eq(str_of("\xff"), "\"\\u00ff\"");                 /* no UTF-8 */
  ck_assert_str_eq(str_of("\x9b" "2J"), "\"\\u009b2J\"");          /* lone C1 byte */
  ck_assert_str_eq(str_of("\xc2\x9b"), "\"\\u009b\"");             /* C1 in UTF-8 */
  ck_assert_str_eq(str_of("\xc0\xaf"), "\"\\u00c0\\u00af\"");      /* overlong */
  ck_assert_str_eq(str_of("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\""); /* surrogate */
  ck_assert_str_eq(str_of("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\"");
  ck_assert_str_eq(str_of("x\xe2\x82"), "\"x\\u00e2\\u0082\"");    /* cut at the end */
  ck_assert_str_eq(str_of("\xe2\x80\xa8"), "\"\\u2028\"");
  ck_assert_str_eq(str_of(""), "\"\"");
}
END_TEST

/* Every string of one to three bytes comes out clean. */
START_TEST(test_every_short_string)
{
  unsigned a, b, c;
  char s[4];
  for (a = 1; a < 256; a++)
    for (b = 0; b < 256; b++)
      for (c = 0; c < 256; c += b ? 15 : 256) {
        const char *out;
        s[0] = (char)a;
        s[1] = (char)b;
        s[2] = (char)c;
        s[3] = '\0';
        out = str_of(s);
        TU_CHECK(clean_utf8((const unsigned char *)out), "%02x %02x %02x -> %s", a, b, c, out);
      }
}
END_TEST

static Suite *json_suite(void)
{
  Suite *s = suite_create("json");
  TCase *tc = tcase_create("writer");
  tcase_add_test(tc, test_layouts);
  tcase_add_test(tc, test_compact_and_top_level);
  tcase_add_test(tc, test_numbers);
  tcase_add_test(tc, test_escapes);
  tcase_add_test(tc, test_every_short_string);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(json_suite);
