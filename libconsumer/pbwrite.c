/* pbwrite.c - protobuf fields and gzip for the pprof writers (pbwrite.h).
 *
 * Invariants: a buffer never holds more than its max bytes; after its
 * first error it is left as it was (the writers check err once, at the
 * end); memcpy is never given the NULL bytes of an empty field (a stack
 * of no frames, which a target's table may hold). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pbwrite.h"

void pb_put(struct pb_buf *b, const void *s, size_t n)
{
  if (b->err || n == 0) return;
  if (n > b->max - b->len) { b->err = -EFBIG; return; }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    unsigned char *q;
    while (cap < b->len + n) cap *= 2;
    if ((q = realloc(b->p, cap)) == NULL) { b->err = -ENOMEM; return; }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
  unsigned char t[10];
  size_t n = 0;
  do {
    t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v != 0);
  pb_put(b, t, n);
}

void pb_uint(struct pb_buf *b, unsigned f, uint64_t v)
{
  if (v == 0) return;
  pb_varint(b, (uint64_t)f << 3);
  pb_varint(b, v);
}

void pb_bytes(struct pb_buf *b, unsigned f, const void *s, size_t n)
{
  pb_varint(b, (uint64_t)f << 3 | 2);
  pb_varint(b, n);
  pb_put(b, s, n);
}

void pb_msg(struct pb_buf *b, unsigned f, struct pb_buf *m)
{
  if (m->err) b->err = m->err;
  pb_bytes(b, f, m->p, m->len);
  m->len = 0;
}

/* zlib's gzip wrapper (windowBits 15 + 16) at the fastest level, as Go's
 * runtime/pprof writes its profiles: a scrape pays for it. */
int pb_gzip(const unsigned char *in, size_t n, size_t max, unsigned char **out, size_t *len)
{
  z_stream z;
  uLong bound;
  unsigned char *p;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return -ENOMEM;
  bound = deflateBound(&z, (uLong)n);
  if (bound > max) bound = max;
  if ((p = malloc(bound ? bound : 1)) == NULL) {
    deflateEnd(&z);
    return -ENOMEM;
  }
  z.next_in = (unsigned char *)in;
  z.avail_in = (uInt)n;
  z.next_out = p;
  z.avail_out = (uInt)bound;
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
    deflateEnd(&z);
    free(p);
    return -EFBIG;
  }
  *len = z.total_out;
  deflateEnd(&z);
  *out = p;
  return 0;
}
