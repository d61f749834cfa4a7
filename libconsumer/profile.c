/* profile.c - the figures of a profile's stacks (ocgc/profile.h) and the
 * folded form; pprof's is pprof.c.
 *
 * Invariants: the one rule that turns the producer's counts into bytes and
 * objects is ocgc_profile_values(), which every form uses; a frame's name
 * is escaped by the one rule (profile_frame_name, escape.c); folded output
 * holds printable ASCII only, ';' and ' ' in nothing but their places (a
 * name's own are escaped, "\x3b" and "\x20": no name forges a frame), one
 * line per stack, and stops at FOLDED_MAX bytes. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "ocgc/profile.h"
#include "profile.h"

#define FOLDED_MAX (UINT64_C(64) << 20)

static const char *const value_names[OCGC_PV_COUNT] = {
    "alloc_objects", "alloc_space",     "inuse_objects",
    "inuse_space",   "promoted_objects", "promoted_space"};

const char *ocgc_profile_value_name(enum ocgc_profile_value v)
{
  return (unsigned)v < OCGC_PV_COUNT ? value_names[v] : NULL;
}

int ocgc_profile_value_parse(const char *name, enum ocgc_profile_value *out)
{
  unsigned i;
  if (name == NULL || out == NULL) return -EINVAL;
  for (i = 0; i < OCGC_PV_COUNT; i++)
    if (strcmp(name, value_names[i]) == 0) {
      *out = (enum ocgc_profile_value)i;
      return 0;
    }
  return -EINVAL;
}

static int64_t clamp(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }
static int64_t bytes(uint64_t words) { return words > (uint64_t)INT64_MAX / 8 ? INT64_MAX : (int64_t)(words * 8); }
static int64_t objects(uint64_t x1024) { return clamp(x1024 / 1024 + (x1024 % 1024 >= 512)); }

void ocgc_profile_values(const struct ocgc_memprof_stack *s, int64_t out[OCGC_PV_COUNT])
{
  out[OCGC_PV_ALLOC_OBJECTS] = objects(s->alloc.blocks_x1024);
  out[OCGC_PV_ALLOC_SPACE] = bytes(s->alloc.words);
  if (s->live_known) {
    /* In use as of the last completed marking (ocgc/memprof.h): a gauge;
     * a window's growth may be negative. */
    out[OCGC_PV_INUSE_OBJECTS] = objects(s->live.blocks_x1024) - objects(s->live_before.blocks_x1024);
    out[OCGC_PV_INUSE_SPACE] = bytes(s->live.words) - bytes(s->live_before.words);
  } else {
    /* An older producer's: allocated - freed, garbage included until a
     * marking finds it.  Freed never exceeds allocated in one copy; in a
     * window it may (blocks allocated before it, freed in it). */
    out[OCGC_PV_INUSE_OBJECTS] = objects(s->alloc.blocks_x1024) - objects(s->freed.blocks_x1024);
    out[OCGC_PV_INUSE_SPACE] = bytes(s->alloc.words) - bytes(s->freed.words);
  }
  out[OCGC_PV_PROMOTED_OBJECTS] = objects(s->promoted.blocks_x1024);
  out[OCGC_PV_PROMOTED_SPACE] = bytes(s->promoted.words);
}

/* A growing text buffer that refuses to pass FOLDED_MAX. */
struct text {
  char *p;
  size_t len, cap;
  int err;
};

static void put(struct text *t, const char *s, size_t n)
{
  if (t->err) return;
  if (t->len + n + 1 > FOLDED_MAX) { t->err = -EFBIG; return; }
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    char *q;
    while (cap < t->len + n + 1) cap *= 2;
    if ((q = realloc(t->p, cap)) == NULL) { t->err = -ENOMEM; return; }
    t->p = q;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

const char *profile_frame_name(struct ocgc_symbols *syms, uint64_t addr, const char *also,
                               char *buf, size_t n)
{
  struct ocgc_symbol sym;
  if (ocgc_symbols_lookup(syms, addr, 1, &sym) && sym.function != NULL) {
    if (!esc_needed(sym.function, also)) return sym.function;
    esc_bytes(sym.function, also, buf, n);
    return buf;
  }
  snprintf(buf, n, "0x%" PRIx64, addr);
  return buf;
}

static void put_frame(struct text *t, struct ocgc_symbols *syms, uint64_t addr)
{
  char name[PROFILE_NAME_SIZE];
  const char *s = profile_frame_name(syms, addr, " ;", name, sizeof name);
  put(t, s, strlen(s));
}

int ocgc_profile_folded(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                        enum ocgc_profile_value v, char **out, size_t *len)
{
  struct text t = {NULL, 0, 0, 0};
  size_t i;
  if (p == NULL || out == NULL || (unsigned)v >= OCGC_PV_COUNT) return -EINVAL;
  *out = NULL;
  put(&t, "", 0);
  for (i = 0; i < p->nstacks && !t.err; i++) {
    const struct ocgc_memprof_stack *s = &p->stack[i];
    int64_t vals[OCGC_PV_COUNT];
    char num[32];
    unsigned d;
    ocgc_profile_values(s, vals);
    if (vals[v] <= 0) continue;
    if (s->overflow) {
      put(&t, PROFILE_FRAME_FULL, strlen(PROFILE_FRAME_FULL));
    } else {
      if (s->cut) put(&t, PROFILE_FRAME_CUT ";", strlen(PROFILE_FRAME_CUT ";"));
      for (d = s->depth; d > 0; d--) {
        put_frame(&t, syms, s->frames[d - 1]);
        if (d > 1) put(&t, ";", 1);
      }
    }
    snprintf(num, sizeof num, " %" PRId64 "\n", vals[v]);
    put(&t, num, strlen(num));
  }
  if (t.err) {
    free(t.p);
    return t.err;
  }
  *out = t.p;
  if (len != NULL) *len = t.len;
  return 0;
}
