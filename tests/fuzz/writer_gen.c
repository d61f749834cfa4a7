/* writer_gen.c - random bytes through every writer of untrusted strings, for
 * tests/fuzz/writers.sh, which checks each output with the parser of its
 * format ("a writer fuzzer for the output paths").
 *
 *   writer_gen DIR SEED N
 *
 * makes N strings of 0 to 96 random bytes (never NUL; biased toward what
 * the writers must escape: controls, DEL, C1 bytes, bytes that are not
 * UTF-8, quotes, backslashes, line ends, braces, '<' and '&', and valid
 * multibyte characters), and writes into DIR:
 *   strings.bin  each string as it is, a line "LEN\n" then its bytes;
 *   m.prom, m.om one gauge family whose HELP is "h" and string 0, one sample per
 *                string, labels i="INDEX" and v=STRING (expo.c, text 0.0.4
 *                and OpenMetrics);
 *   s.json       a JSON array of the strings (json.c);
 *   t.html       a page with a <p> per string (html.c html_text);
 *   d.txt        a line "k INDEX WORD" per string, WORD its tool_esc_word
 *                (dump's key/value fields).
 * Exit 0, or 1 with a line on stderr. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "ocgc/expo.h"
#include "html.h"
#include "json.h"

#define MAX_LEN 96

static uint64_t rng;

static uint64_t rnd(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * UINT64_C(2685821657736338717);
}

/* One random string into [s] (MAX_LEN + 1 bytes): its length. */
static size_t make(char *s)
{
  static const char *const pieces[] = {
    "\"", "\\", "\n", "\r", "{", "}", "=", ",", "<", ">", "&", "'", " ", "#", "\t",
    "\x7f", "\x85", "\x9b", "\xc0\x80", "\xed\xa0\x80", "\xff", "\xe2\x80\xa8", "\xc3\xa9",
    "\xe2\x80\xa6", "\xf0\x9f\x90\xab", "\x1b[31m", "</p>", "<script>", "\\n", "\\\"",
    "\xc2\x85", "\xc2\x9b", "\xe2\x80\xa9", "\xef\xbf\xbe",
  };
  size_t n = 0, want = (size_t)(rnd() % (MAX_LEN + 1));
  while (n < want) {
    unsigned r = (unsigned)(rnd() % 4);
    if (r == 0) {
      const char *p = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
      size_t k = strlen(p);
      if (n + k > want) break;
      memcpy(s + n, p, k);
      n += k;
    } else if (r == 1) {
      s[n++] = (char)(1 + rnd() % 255); /* any byte but NUL */
    } else {
      s[n++] = (char)(0x20 + rnd() % 0x5f); /* printable ASCII */
    }
  }
  s[n] = '\0';
  return n;
}

static FILE *out(const char *dir, const char *name)
{
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if ((f = fopen(path, "w")) == NULL) {
    perror(path);
    exit(1);
  }
  return f;
}

static void put_file(void *ctx, const char *s, size_t n)
{
  fwrite(s, 1, n, ctx);
}

static void expo_file(const char *dir, const char *name, enum ocgc_expo_format fmt, char **strs,
                      unsigned n)
{
  FILE *f = out(dir, name);
  struct ocgc_expo e;
  unsigned i;
  ocgc_expo_init(&e, put_file, f, fmt);
  char help[MAX_LEN + 2];
  snprintf(help, sizeof help, "h%s", strs[0]); /* never empty: promtool lints an empty HELP */
  ocgc_expo_family(&e, "fuzz_value", "gauge", help);
  for (i = 0; i < n; i++) {
    char idx[16];
    struct ocgc_expo_label l[2] = {{"i", idx}, {"v", strs[i]}};
    snprintf(idx, sizeof idx, "%u", i);
    ocgc_expo_u64(&e, "fuzz_value", l, 2, i);
  }
  ocgc_expo_finish(&e);
  fclose(f);
}

int main(int argc, char **argv)
{
  char **strs;
  unsigned n, i;
  FILE *f;
  struct json j;
  if (argc != 4) {
    fprintf(stderr, "usage: writer_gen DIR SEED N\n");
    return 1;
  }
  rng = strtoull(argv[2], NULL, 10) * UINT64_C(0x9e3779b97f4a7c15) + 1;
  n = (unsigned)strtoul(argv[3], NULL, 10);
  if (n == 0 || n > 1000000 || (strs = calloc(n, sizeof *strs)) == NULL) {
    fprintf(stderr, "writer_gen: N is 1 to 1000000\n");
    return 1;
  }
  f = out(argv[1], "strings.bin");
  for (i = 0; i < n; i++) {
    size_t len;
    if ((strs[i] = malloc(MAX_LEN + 1)) == NULL) return 1;
    len = make(strs[i]);
    fprintf(f, "%zu\n", len);
    fwrite(strs[i], 1, len, f);
  }
  fclose(f);

  expo_file(argv[1], "m.prom", OCGC_EXPO_TEXT, strs, n);
  expo_file(argv[1], "m.om", OCGC_EXPO_OPENMETRICS, strs, n);

  f = out(argv[1], "s.json");
  json_init_file(&j, f, 0);
  json_arr(&j, JSON_LINES);
  for (i = 0; i < n; i++) json_str(&j, strs[i]);
  json_arr_end(&j);
  fputc('\n', f);
  fclose(f);

  f = out(argv[1], "t.html");
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>t</title></head><body>\n", f);
  for (i = 0; i < n; i++) {
    fputs("<p>", f);
    html_text(f, strs[i]);
    fputs("</p>\n", f);
  }
  fputs("</body></html>\n", f);
  fclose(f);

  f = out(argv[1], "d.txt");
  for (i = 0; i < n; i++) {
    char word[TOOL_ESC_SIZE(MAX_LEN + 1)];
    fprintf(f, "k %u %s\n", i, tool_esc_word(strs[i], word, sizeof word));
  }
  fclose(f);

  for (i = 0; i < n; i++) free(strs[i]);
  free(strs);
  return 0;
}
