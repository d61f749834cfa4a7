/* json.c - the streaming JSON writer of the `ocgc` subcommands (json.h).
 *
 * Invariants: whatever bytes a string holds, what is written is valid JSON
 * in valid UTF-8 with no raw control character (C0, DEL, C1) in it: the
 * string escaper copies a byte through only if it is printable ASCII or
 * part of a well-formed UTF-8 sequence (no overlong form, no surrogate,
 * nothing above U+10FFFF) that is not a C1 control, U+2028 or U+2029.
 * Commas and indentation come from the container stack alone: a caller
 * cannot forget a comma nor write one too many. */

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "json.h"
#include "common/utf8.h"

static void put(struct json *j, const char *s, size_t n)
{
  if (n > 0) j->put(j->ctx, s, n);
}

static void puts_(struct json *j, const char *s)
{
  put(j, s, strlen(s));
}

static void file_put(void *ctx, const char *s, size_t n)
{
  fwrite(s, 1, n, ctx);
}

void json_init(struct json *j, json_put_fn fn, void *ctx, unsigned flags)
{
  memset(j, 0, sizeof *j);
  j->put = fn;
  j->ctx = ctx;
  j->flags = flags;
}

void json_init_file(struct json *j, FILE *f, unsigned flags)
{
  json_init(j, file_put, f, flags);
}

static void newline_indent(struct json *j, unsigned depth)
{
  static const char spaces[] = "                                ";
  unsigned n = j->flags & JSON_COMPACT ? 0 : 2 * depth;
  put(j, "\n", 1);
  while (n > 0) {
    unsigned k = n < sizeof spaces - 1 ? n : (unsigned)sizeof spaces - 1;
    put(j, spaces, k);
    n -= k;
  }
}

/* What goes before a value (or a key): nothing after a key or at the top
 * level, else the comma and the layout's space or line. */
static void before(struct json *j)
{
  unsigned d = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH;
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth == 0) return;
  if (j->members[d]) put(j, ",", 1);
  if (j->lines[d]) newline_indent(j, j->depth);
  else if (j->members[d] && !(j->flags & JSON_COMPACT)) put(j, " ", 1);
  j->members[d] = 1;
}

static void open_(struct json *j, char c, enum json_layout layout)
{
  unsigned d;
  before(j);
  put(j, &c, 1);
  j->depth++;
  d = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH;
  j->lines[d] = layout == JSON_LINES;
  j->members[d] = 0;
}

static void close_(struct json *j, char c)
{
  unsigned d = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH;
  if (j->depth == 0) return;
  if (j->lines[d] && j->members[d]) newline_indent(j, j->depth - 1);
  j->depth--;
  put(j, &c, 1);
}

void json_obj(struct json *j, enum json_layout layout) { open_(j, '{', layout); }
void json_obj_end(struct json *j) { close_(j, '}'); }
void json_arr(struct json *j, enum json_layout layout) { open_(j, '[', layout); }
void json_arr_end(struct json *j) { close_(j, ']'); }

static void put_u(struct json *j, uint32_t cp)
{
  char b[8];
  snprintf(b, sizeof b, "\\u%04x", (unsigned)cp);
  put(j, b, 6);
}

/* One character or escape at [s]; returns the bytes it took. */
static size_t put_char(struct json *j, const unsigned char *s)
{
  uint32_t cp;
  size_t n;
  switch (*s) {
  case '"': puts_(j, "\\\""); return 1;
  case '\\': puts_(j, "\\\\"); return 1;
  case '\n': puts_(j, "\\n"); return 1;
  case '\r': puts_(j, "\\r"); return 1;
  case '\t': puts_(j, "\\t"); return 1;
  default: break;
  }
  if (*s < 0x20 || *s == 0x7f) { put_u(j, *s); return 1; }
  if (*s < 0x80) { put(j, (const char *)s, 1); return 1; }
  n = cm_utf8_len(s, &cp);
  if (n == 0) { put_u(j, *s); return 1; } /* not UTF-8: the byte, as U+00XX */
  if (cp <= 0x9f || cp == 0x2028 || cp == 0x2029) put_u(j, cp);
  else put(j, (const char *)s, n);
  return n;
}

static void string(struct json *j, const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  put(j, "\"", 1);
  while (*p != '\0') {
    /* plain runs in one piece: the sink sees few, long writes */
    size_t run = 0;
    while (p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\') run++;
    put(j, (const char *)p, run);
    p += run;
    if (*p != '\0') p += put_char(j, p);
  }
  put(j, "\"", 1);
}

void json_key(struct json *j, const char *key)
{
  before(j);
  string(j, key);
  puts_(j, j->flags & JSON_COMPACT ? ":" : ": ");
  j->after_key = 1;
}

void json_str(struct json *j, const char *s)
{
  if (s == NULL) { json_null(j); return; }
  before(j);
  string(j, s);
}

static void number(struct json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void number(struct json *j, const char *fmt, ...)
{
  char b[64];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  before(j);
  put(j, b, n < 0 ? 0 : (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

void json_u64(struct json *j, uint64_t v) { number(j, "%" PRIu64, v); }
void json_i64(struct json *j, int64_t v) { number(j, "%" PRId64, v); }
void json_milli(struct json *j, uint64_t v)
{
  number(j, "%" PRIu64 ".%03u", v / 1000, (unsigned)(v % 1000));
}

void json_double(struct json *j, int prec, double v)
{
  /* 1e300 with 6 decimals does not fit 64 bytes: such a figure is no
   * measurement; say null rather than cut it. */
  if (!isfinite(v) || fabs(v) >= 1e40) json_null(j);
  else number(j, "%.*f", prec < 0 ? 0 : prec > 9 ? 9 : prec, v);
}

void json_bool(struct json *j, int v)
{
  before(j);
  puts_(j, v ? "true" : "false");
}

void json_null(struct json *j)
{
  before(j);
  puts_(j, "null");
}

void json_kv_str(struct json *j, const char *key, const char *s)
{
  json_key(j, key);
  json_str(j, s);
}

void json_kv_u64(struct json *j, const char *key, uint64_t v)
{
  json_key(j, key);
  json_u64(j, v);
}

void json_kv_bool(struct json *j, const char *key, int v)
{
  json_key(j, key);
  json_bool(j, v);
}

void json_kv_u64_or_null(struct json *j, const char *key, int known, uint64_t v)
{
  json_key(j, key);
  if (known) json_u64(j, v);
  else json_null(j);
}

void json_raw(struct json *j, const char *s)
{
  puts_(j, s);
}
