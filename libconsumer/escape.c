/* escape.c - a target's bytes made printable ASCII, readably (escape.h):
 * "\xNN" for what is not, and for the backslash itself, so that the
 * escape can be undone and a name that spells "\x0a" cannot pass for one
 * that holds a newline.  Invariant: the output holds only bytes 0x20 to
 * 0x7e, and none of [also] but inside no escape (the escapes' bytes are
 * '\\', 'x' and hex digits: [also] must not hold those). */

#include <string.h>

#include "escape.h"

static int plain(unsigned char c, const char *also)
{
  return c >= 0x20 && c < 0x7f && c != '\\' && (also == NULL || strchr(also, c) == NULL);
}

int esc_needed(const char *s, const char *also)
{
  for (; *s != '\0'; s++)
    if (!plain((unsigned char)*s, also)) return 1;
  return 0;
}

size_t esc_bytes(const char *s, const char *also, char *out, size_t n)
{
  static const char hex[] = "0123456789abcdef";
  size_t len = 0;
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (plain(c, also)) {
      if (len + 1 >= n) break;
      out[len++] = (char)c;
    } else {
      if (len + 4 >= n) break;
      out[len++] = '\\';
      out[len++] = 'x';
      out[len++] = hex[c >> 4];
      out[len++] = hex[c & 15];
    }
  }
  out[len] = '\0';
  return len;
}
