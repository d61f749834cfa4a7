/* idmap.h - an open-addressing table of 64-bit keys to nonzero ids, and
 * FNV-1a for string keys (private): what pprof.c and profile_tree.c
 * intern with.  Collisions of string hashes are the caller's to tell
 * (compare the strings). */
#ifndef OCGC_IDMAP_H
#define OCGC_IDMAP_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* An open-addressing table of 64-bit keys to ids, doubling at half full. */
struct idmap {
  uint64_t *key;
  uint64_t *id;
  size_t cap, n;
};

static inline uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  return x;
}

/* The id of [k], or 0. */
static inline uint64_t im_get(const struct idmap *m, uint64_t k)
{
  size_t i;
  if (m->cap == 0) return 0;
  for (i = mix(k) & (m->cap - 1); m->id[i] != 0; i = (i + 1) & (m->cap - 1))
    if (m->key[i] == k) return m->id[i];
  return 0;
}

static inline int im_put(struct idmap *m, uint64_t k, uint64_t id)
{
  size_t i;
  if (2 * (m->n + 1) > m->cap) {
    struct idmap g = {NULL, NULL, m->cap ? m->cap * 2 : 256, 0};
    if ((g.key = calloc(g.cap, sizeof *g.key)) == NULL ||
        (g.id = calloc(g.cap, sizeof *g.id)) == NULL) {
      free(g.key);
      return -ENOMEM;
    }
    for (i = 0; i < m->cap; i++)
      if (m->id[i] != 0) im_put(&g, m->key[i], m->id[i]);
    free(m->key);
    free(m->id);
    *m = g;
  }
  for (i = mix(k) & (m->cap - 1); m->id[i] != 0; i = (i + 1) & (m->cap - 1)) {}
  m->key[i] = k;
  m->id[i] = id;
  m->n++;
  return 0;
}

static inline void im_free(struct idmap *m)
{
  free(m->key);
  free(m->id);
}

static inline uint64_t fnv(const char *s)
{
  uint64_t h = UINT64_C(14695981039346656037);
  for (; *s != '\0'; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return h;
}

#endif /* OCGC_IDMAP_H */
