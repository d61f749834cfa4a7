/* serve_body.c - the rendered answers of `ocgc serve` (serve.h): each body
 * is written once, by the poll thread, straight into a gzip stream, kept
 * compressed, and shared by every request that answers with it.
 *
 * Why compressed: the exposition of 1,000 processes is tens of MiB of
 * text that repeats itself (a family's name and the labels on every
 * line), and most of it would otherwise be held once per connection that
 * has not read it yet.  Prometheus asks for gzip and is sent the stored
 * bytes as they are; a client that does not is sent the text inflated a
 * piece at a time as it reads (serve_body_read), so no whole plain copy
 * ever exists.
 *
 * Invariants: a body is immutable once serve_body_finish() returns it; it
 * lives while anyone holds a reference (the publisher's, and one per
 * response still being sent); its compressed size is at most SERVE_BUF_MAX
 * (past that it is marked failed, its bytes dropped); plain_n is the exact
 * size of the inflated text. */

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "serve.h"

/* gzip wrapper (16 + the largest window), and level 1: the bodies are
 * rewritten at every scrape, and level 1 already takes most of the
 * repetition out; a higher one costs several times the CPU for a few
 * percent. */
#define GZIP_WBITS (15 + 16)
#define LEVEL 1

struct serve_body_reader {
  z_stream zs;
  struct serve_body *body;    /* a reference */
  int done;
};

static int grow(struct serve_body *b, size_t want)
{
  size_t cap = b->cap ? b->cap : 16384;
  char *p;
  while (cap < want) cap *= 2;
  if (cap > SERVE_BUF_MAX) return -1;
  if (cap == b->cap) return 0;
  if ((p = realloc(b->z, cap)) == NULL) return -1;
  b->z = p;
  b->cap = cap;
  return 0;
}

static void fail(struct serve_body_writer *w)
{
  struct serve_body *b = w->body;
  b->failed = 1;
  free(b->z);
  b->z = NULL;
  b->zn = b->cap = 0;
}

/* Deflate what zs holds with [flush], growing the output as needed. */
static void pump(struct serve_body_writer *w, int flush)
{
  struct serve_body *b = w->body;
  z_stream *zs = w->zs;
  int rc;
  do {
    if (b->cap - b->zn < 4096 && grow(b, b->zn + 4096) != 0) { fail(w); return; }
    zs->next_out = (Bytef *)b->z + b->zn;
    zs->avail_out = (uInt)(b->cap - b->zn);
    rc = deflate(zs, flush);
    b->zn = b->cap - zs->avail_out;
    if (rc == Z_STREAM_ERROR) { fail(w); return; }
  } while (zs->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

int serve_body_writer_init(struct serve_body_writer *w)
{
  memset(w, 0, sizeof *w);
  if ((w->zs = calloc(1, sizeof *w->zs)) == NULL) return -1;
  if (deflateInit2(w->zs, LEVEL, Z_DEFLATED, GZIP_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    free(w->zs);
    w->zs = NULL;
    return -1;
  }
  return 0;
}

void serve_body_writer_free(struct serve_body_writer *w)
{
  if (w->zs != NULL) deflateEnd(w->zs);
  free(w->zs);
  serve_body_unref(w->body);
  memset(w, 0, sizeof *w);
}

int serve_body_begin(struct serve_body_writer *w)
{
  /* One deflate state for every body (about 260 KiB, which allocated and
   * freed at each render would churn the heap): reset, not remade. */
  if (w->zs == NULL || deflateReset(w->zs) != Z_OK) return -1;
  if ((w->body = calloc(1, sizeof *w->body)) == NULL) return -1;
  w->body->refs = 1;
  return 0;
}

void serve_body_put(void *ctx, const char *s, size_t n)
{
  struct serve_body_writer *w = ctx;
  if (w->body->failed || n == 0) return;
  w->body->plain_n += n;
  /* zlib's lengths are uInt: pieces of at most 1 GiB (ours are lines). */
  while (n > 0 && !w->body->failed) {
    size_t k = n > (1u << 30) ? (1u << 30) : n;
    w->zs->next_in = (Bytef *)(uintptr_t)s;
    w->zs->avail_in = (uInt)k;
    pump(w, Z_NO_FLUSH);
    s += k;
    n -= k;
  }
}

struct serve_body *serve_body_finish(struct serve_body_writer *w)
{
  struct serve_body *b = w->body;
  if (!b->failed) {
    w->zs->next_in = NULL;
    w->zs->avail_in = 0;
    pump(w, Z_FINISH);
  }
  if (b->failed) b->plain_n = 0;
  w->body = NULL;
  return b;
}

struct serve_body *serve_body_ref(struct serve_body *b)
{
  /* Relaxed: taken by a holder of a reference, as for any refcount. */
  __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
  return b;
}

void serve_body_unref(void *arg)
{
  struct serve_body *b = arg;
  if (b == NULL) return;
  /* Acq_rel: the last holder's free comes after every other holder's
   * reads, which their release decrements publish. */
  if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  free(b->z);
  free(b);
}

struct serve_body_reader *serve_body_reader_new(struct serve_body *b)
{
  struct serve_body_reader *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  if (inflateInit2(&r->zs, GZIP_WBITS) != Z_OK) { free(r); return NULL; }
  r->body = serve_body_ref(b);
  r->zs.next_in = (Bytef *)b->z;
  r->zs.avail_in = (uInt)b->zn; /* at most SERVE_BUF_MAX: fits */
  return r;
}

long serve_body_read(struct serve_body_reader *r, char *buf, size_t max)
{
  int rc;
  if (r->done) return 0;
  if (max > (1u << 30)) max = 1u << 30;
  r->zs.next_out = (Bytef *)buf;
  r->zs.avail_out = (uInt)max;
  rc = inflate(&r->zs, Z_NO_FLUSH);
  if (rc == Z_STREAM_END) r->done = 1;
  else if (rc != Z_OK || r->zs.avail_out == max) return -1; /* our own bytes: cannot happen */
  return (long)(max - r->zs.avail_out);
}

void serve_body_reader_free(void *arg)
{
  struct serve_body_reader *r = arg;
  if (r == NULL) return;
  inflateEnd(&r->zs);
  serve_body_unref(r->body);
  free(r);
}
