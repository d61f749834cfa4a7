/* html_out.c - what every part of the HTML report writes its text with
 * (html.h): a string as HTML text or attribute value (html_text), a
 * character as its entity (html_entity), and the JSON data block's bytes
 * (html_json_data).
 *
 * Invariants:
 * - html_text's output holds no control character, nothing outside
 *   printable ASCII (tool_esc first, in pieces it never cuts inside an
 *   escape) and none of & < > " ' but as entities, so a string cannot end
 *   an attribute or an element, whatever its bytes;
 * - html_json_data's output holds no '<' (\u003c instead: the same JSON
 *   value), so nothing in it can close its <script>;
 * - no other file of the report is used: every file that draws the page
 *   is above this one. */

#include <string.h>

#include "common.h"
#include "html.h"

int html_entity(FILE *f, char c)
{
  switch (c) {
  case '&': fputs("&amp;", f); return 1;
  case '<': fputs("&lt;", f); return 1;
  case '>': fputs("&gt;", f); return 1;
  case '"': fputs("&quot;", f); return 1;
  case '\'': fputs("&#39;", f); return 1;
  default: return 0;
  }
}

void html_text(FILE *f, const char *s)
{
  char buf[TOOL_ESC_SIZE(256)];
  const char *p;
  if (s == NULL) return;
  while (*s != '\0') {
    /* in pieces, each escaped whole (tool_esc never cuts an escape) */
    char piece[257];
    size_t n = strnlen(s, 256);
    memcpy(piece, s, n);
    piece[n] = '\0';
    s += n;
    for (p = tool_esc(piece, buf, sizeof buf); *p != '\0'; p++)
      if (!html_entity(f, *p)) fputc(*p, f);
  }
}

void html_json_data(FILE *f, const char *json, size_t n)
{
  size_t i, from = 0;
  for (i = 0; i < n; i++) {
    if (json[i] != '<') continue;
    fwrite(json + from, 1, i - from, f);
    fputs("\\u003c", f);
    from = i + 1;
  }
  fwrite(json + from, 1, n - from, f);
}
