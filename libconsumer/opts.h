/* opts.h - the one rule by which libocgc reads a caller's options struct
 * and fills a caller's output struct (private to libconsumer/).
 *
 * Both start with `size_t sz`, the size of the struct the caller was
 * compiled with (OCGC_OPTS_INIT).  Options: a field past the caller's sz
 * reads as 0 (its default), and a caller's struct larger than ours must be
 * zero past our end (a newer caller asking for something this library
 * does not know gets -EINVAL, not silence), as libbpf's OPTS_VALID.
 * Outputs: the caller's sz says how much to fill; at least sz itself. */
#ifndef OCGC_OPTS_H
#define OCGC_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Read the caller's [src] (NULL: all defaults) into our [dst] of [dsz]
 * bytes: 0, or -EINVAL for a bad sz or an unknown nonzero tail. */
static inline int opts_read(void *dst, size_t dsz, const void *src)
{
  const unsigned char *s = src;
  size_t sz, i;
  memset(dst, 0, dsz);
  if (src == NULL) return 0;
  memcpy(&sz, src, sizeof sz);
  if (sz < sizeof sz) return -EINVAL;
  for (i = dsz; i < sz; i++)
    if (s[i] != 0) return -EINVAL;
  memcpy(dst, src, sz < dsz ? sz : dsz);
  return 0;
}

/* Copy our [src] of [ssz] bytes out to the caller's [dst], as much as its
 * sz asks for (its sz kept): 0, or -EINVAL when dst is NULL or too small
 * to hold sz. */
static inline int opts_write(void *dst, const void *src, size_t ssz)
{
  size_t sz;
  if (dst == NULL) return -EINVAL;
  memcpy(&sz, dst, sizeof sz);
  if (sz < sizeof sz) return -EINVAL;
  memcpy((char *)dst + sizeof sz, (const char *)src + sizeof sz,
         (sz < ssz ? sz : ssz) - sizeof sz);
  return 0;
}

/* Whether the caller's struct of sz [sz] has [field] of struct [type]. */
#define OPTS_HAS(type, sz, field) ((sz) >= offsetof(type, field) + sizeof(((type *)0)->field))

#endif /* OCGC_OPTS_H */
