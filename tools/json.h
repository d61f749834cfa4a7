/* json.h - the one JSON writer of the `ocgc` subcommands (private to
 * tools/; code in json.c): streaming, with the commas and the nesting
 * done for the caller, numbers in fixed formats, and strings that may hold
 * any bytes (a target's program name, a file name) yet always come out as
 * valid JSON in valid UTF-8.
 *
 * A writer sends its text to a sink (json_put_fn), in pieces, as it goes:
 * nothing is held back, so it mixes with what the caller writes itself to
 * the same sink between top-level values (json_raw).  Values at the top
 * level are not separated (JSON lines: the caller puts the "\n").
 *
 * Layout: a container's members go on one line (JSON_INLINE: "{"a": 1,
 * "b": 2}") or one a line, indented by its depth (JSON_LINES).  JSON_COMPACT
 * writes "," and ":" without spaces and does not indent. */
#ifndef OCGC_TOOLS_JSON_H
#define OCGC_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*json_put_fn)(void *ctx, const char *s, size_t n);

enum json_layout { JSON_INLINE = 0, JSON_LINES = 1 };

#define JSON_COMPACT 1u /* flag of json_init: no spaces, no indentation */
#define JSON_MAX_DEPTH 16

struct json {
  json_put_fn put;
  void *ctx;
  unsigned flags;
  unsigned depth;                           /* containers open */
  unsigned char lines[JSON_MAX_DEPTH + 1];  /* [d]: layout of the container at depth d */
  unsigned char members[JSON_MAX_DEPTH + 1];/* [d]: it has a member already */
  int after_key;                            /* a key was written: its value comes next */
};

void json_init(struct json *j, json_put_fn put, void *ctx, unsigned flags);
/* A writer into [f] (stdio: errors show in ferror(f)). */
void json_init_file(struct json *j, FILE *f, unsigned flags);

/* Open and close an object or an array (as a value: after a key in an
 * object, as an element in an array, or at the top level). */
void json_obj(struct json *j, enum json_layout layout);
void json_obj_end(struct json *j);
void json_arr(struct json *j, enum json_layout layout);
void json_arr_end(struct json *j);

/* The key of the next member of the object open (escaped as a string). */
void json_key(struct json *j, const char *key);

/* Values.  json_str(NULL) writes null.  Strings: '"', '\\' and control
 * characters are escaped; valid UTF-8 passes as is except the C1 controls,
 * DEL, U+2028 and U+2029 (written \uXXXX, so that no byte a terminal or a
 * JavaScript parser acts on is raw); every byte that is not part of valid
 * UTF-8 is written \u00XX (as if it were Latin-1: the value is kept, but
 * such a byte and the character U+00XX look alike). */
void json_str(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* [v] with [prec] digits after the point; null if it is not finite. */
void json_double(struct json *j, int prec, double v);
/* [v] thousandths as a decimal with exactly three digits after the point
 * (nanoseconds as microseconds, without rounding). */
void json_milli(struct json *j, uint64_t v);

/* A member: key and value. */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, int v);
/* [v] if [known], else null. */
void json_kv_u64_or_null(struct json *j, const char *key, int known, uint64_t v);

/* Bytes written as they are: only between top-level values ("\n"). */
void json_raw(struct json *j, const char *s);

#endif /* OCGC_TOOLS_JSON_H */
