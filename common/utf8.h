/* utf8.h - the one UTF-8 validator of ocgc (the common layer: libocgc and
 * the tools), shared by the writers that must turn a target's untrusted
 * bytes into valid UTF-8: tools/json.c (JSON strings) and libocgc's
 * expo.c (Prometheus label values); and the cut of a name to a bounded
 * label (the program label of every series).  Header-only so that each
 * writer stays a unit of its own. */
#ifndef OCGC_COMMON_UTF8_H
#define OCGC_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at [s] (2 to 4), its code
 * point in *cp, or 0 (ASCII, or not UTF-8): no overlong form, no
 * surrogate, nothing above U+10FFFF.  Stops at a NUL (never reads past). */
static inline size_t cm_utf8_len(const unsigned char *s, uint32_t *cp)
{
  size_t n, i;
  uint32_t c = s[0], min;
  if (c >= 0xc2 && c <= 0xdf) { n = 2; c &= 0x1f; min = 0x80; }
  else if (c >= 0xe0 && c <= 0xef) { n = 3; c &= 0x0f; min = 0x800; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; c &= 0x07; min = 0x10000; }
  else return 0;
  for (i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the NUL */
    c = c << 6 | (s[i] & 0x3f);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return n;
}

/* [s] into [out] (at least max + 4 bytes): whole if it has at most [max]
 * bytes, else its first characters of at most max bytes together (a
 * well-formed sequence is never split; any other byte counts as one) and
 * U+2026 to say it was cut.  Bytes are copied as they are: escaping them
 * is the writer's. */
static inline void cm_utf8_cut(const char *s, size_t max, char *out)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, n;
  uint32_t cp;
  while (u[i] != '\0') {
    n = cm_utf8_len(u + i, &cp);
    if (n == 0) n = 1;
    if (i + n > max) break;
    i += n;
  }
  memcpy(out, s, i);
  if (u[i] != '\0') memcpy(out + i, "\xe2\x80\xa6", 3), i += 3;
  out[i] = '\0';
}

#endif /* OCGC_COMMON_UTF8_H */
