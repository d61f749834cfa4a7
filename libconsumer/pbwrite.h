/* pbwrite.h - the protobuf encoding pprof's profile.proto needs (varints,
 * length-delimited fields) into a growing buffer bounded by max, and the
 * gzip around the whole: shared by pprof.c (one process) and
 * pprof_merge.c (a program's processes).  Internal to libocgc. */
#ifndef OCGC_PBWRITE_H
#define OCGC_PBWRITE_H

#include <stddef.h>
#include <stdint.h>

/* A buffer that grows up to max bytes; the first error (-EFBIG past max,
 * -ENOMEM) sticks in err, and every later write is then a no-op. */
struct pb_buf {
  unsigned char *p;
  size_t len, cap, max;
  int err;
};

/* [n] bytes of [s] (none: nothing, and s may be NULL). */
void pb_put(struct pb_buf *b, const void *s, size_t n);
/* [v] as a base-128 varint. */
void pb_varint(struct pb_buf *b, uint64_t v);
/* Field [f] as a varint (wire type 0); 0 is the default and not written. */
void pb_uint(struct pb_buf *b, unsigned f, uint64_t v);
/* Field [f] as bytes (wire type 2): a string, or a message written whole. */
void pb_bytes(struct pb_buf *b, unsigned f, const void *s, size_t n);
/* Message [m] as field [f] of [b] (its error carried over), and [m]
 * emptied for the next. */
void pb_msg(struct pb_buf *b, unsigned f, struct pb_buf *m);
/* gzip [in] into a new buffer of at most [max] bytes: 0, -ENOMEM, -EFBIG. */
int pb_gzip(const unsigned char *in, size_t n, size_t max, unsigned char **out, size_t *len);

#endif /* OCGC_PBWRITE_H */
