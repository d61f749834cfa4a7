/* test_pprof.c - libocgc's profile forms (pprof.c, profile.c) on profiles
 * made here, the pprof one decoded field by field by a protobuf reader of
 * the test's own:
 * - the figures of a stack: bytes = words x 8, objects = blocks_x1024 /
 *   1024 rounded, in use = live where the producer keeps it (a window's:
 *   live - live_before), else allocated - freed (negative in a window);
 *   each profile's comment says which rule it followed;
 * - pprof: "" first in the string table, the six sample types in order,
 *   one sample per stack with a figure, its values those figures, its
 *   locations innermost first, one location per address (shared between
 *   stacks), the overflow row and a cut stack with their made-up frames,
 *   the "kind" label, period and period type, the default sample type;
 *   no address of the process unless absolute_addresses (this process's
 *   own frames: the mapping at its file offset, a location at its place
 *   in the file, an address in no file left out);
 *   gzip's bytes inflate to the plain ones; a bound that is too small
 *   fails with -EFBIG;
 * - folded: outermost frame first, only stacks above 0, the sum of the
 *   lines the sum of the figures;
 * - by function: flat (innermost frame) and cumulative (once per stack,
 *   even in a recursion), sorted; the call tree: merged by name from the
 *   outermost frame, children by name, depth-first, a parent at least the
 *   sum of its children;
 * - a function name of control bytes, ';', ' ' and '\\' (a target's
 *   ELF file names its functions) is escaped "\\xNN" in every form: no
 *   newline or ';' of a name forges a folded frame or line;
 * - a merge (ocgc/pprof_merge.h) of two profiles of one build: one
 *   location per place in the file, figures summed. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "elfgen.h"
#include "ocgc/consumer.h"
#include "testutil.h"

/* ---- a protobuf reader ---------------------------------------------------------- */

struct field {
  unsigned num, wire;
  uint64_t v;               /* wire 0 */
  const unsigned char *p;   /* wire 2 */
  size_t n;
};

static uint64_t varint(const unsigned char **p, const unsigned char *end)
{
  uint64_t v = 0;
  unsigned s = 0;
  for (;;) {
    ck_assert_msg(*p < end && s < 64, "varint runs off");
    v |= (uint64_t)(**p & 0x7f) << s;
    if (!(*(*p)++ & 0x80)) return v;
    s += 7;
  }
}

/* The next field of [*p, end): 1, or 0 at the end. */
static int next(const unsigned char **p, const unsigned char *end, struct field *f)
{
  uint64_t key;
  if (*p >= end) return 0;
  key = varint(p, end);
  f->num = (unsigned)(key >> 3);
  f->wire = (unsigned)(key & 7);
  ck_assert_msg(f->wire == 0 || f->wire == 2, "wire type %u", f->wire);
  if (f->wire == 0) {
    f->v = varint(p, end);
  } else {
    f->n = (size_t)varint(p, end);
    ck_assert_uint_le(f->n, (size_t)(end - *p));
    f->p = *p;
    *p += f->n;
  }
  return 1;
}

/* What the test reads back of a profile. */
#define MAXN 64
struct decoded {
  char strings[MAXN][256];
  unsigned nstrings;
  unsigned sample_types[8][2], ntypes;
  struct {
    uint64_t loc[40];
    unsigned nloc;
    int64_t val[8];
    unsigned nval;
    uint64_t label_key, label_str;
  } samples[MAXN];
  unsigned nsamples;
  struct { uint64_t id, address, fn, mapping; } locs[MAXN];
  unsigned nlocs;
  struct { uint64_t id, start, limit, offset; } maps[MAXN];
  unsigned nmaps;
  struct { uint64_t id, name; } fns[MAXN];
  unsigned nfns;
  uint64_t period, period_type[2], default_type;
  uint64_t comments[4];
  unsigned ncomments;
};

static void packed(const struct field *f, uint64_t *out, unsigned *n, unsigned max)
{
  const unsigned char *p = f->p, *end = f->p + f->n;
  while (p < end) {
    ck_assert_uint_lt(*n, max);
    out[(*n)++] = varint(&p, end);
  }
}

static void decode(const unsigned char *b, size_t n, struct decoded *d)
{
  const unsigned char *p = b, *end = b + n;
  struct field f, g, h;
  memset(d, 0, sizeof *d);
  while (next(&p, end, &f)) {
    const unsigned char *q = f.p, *qe = f.p + f.n;
    switch (f.num) {
    case 1: case 11: {
      unsigned *t = f.num == 1 ? d->sample_types[d->ntypes++] : (unsigned *)NULL;
      uint64_t tv[2] = {0, 0};
      while (next(&q, qe, &g)) tv[g.num - 1] = g.v;
      if (t) { t[0] = (unsigned)tv[0]; t[1] = (unsigned)tv[1]; }
      else { d->period_type[0] = tv[0]; d->period_type[1] = tv[1]; }
      break;
    }
    case 2: {
      unsigned s = d->nsamples++;
      uint64_t vals[8];
      unsigned nv = 0, i;
      ck_assert_uint_lt(s, MAXN);
      while (next(&q, qe, &g)) {
        if (g.num == 1) packed(&g, d->samples[s].loc, &d->samples[s].nloc, 40);
        if (g.num == 2) packed(&g, vals, &nv, 8);
        if (g.num == 3) {
          const unsigned char *r = g.p, *re = g.p + g.n;
          while (next(&r, re, &h)) {
            if (h.num == 1) d->samples[s].label_key = h.v;
            if (h.num == 2) d->samples[s].label_str = h.v;
          }
        }
      }
      for (i = 0; i < nv; i++) d->samples[s].val[i] = (int64_t)vals[i];
      d->samples[s].nval = nv;
      break;
    }
    case 4: {
      unsigned l = d->nlocs++;
      ck_assert_uint_lt(l, MAXN);
      while (next(&q, qe, &g)) {
        if (g.num == 1) d->locs[l].id = g.v;
        if (g.num == 2) d->locs[l].mapping = g.v;
        if (g.num == 3) d->locs[l].address = g.v;
        if (g.num == 4) {
          const unsigned char *r = g.p, *re = g.p + g.n;
          while (next(&r, re, &h))
            if (h.num == 1) d->locs[l].fn = h.v;
        }
      }
      break;
    }
    case 3: {
      unsigned m = d->nmaps++;
      ck_assert_uint_lt(m, MAXN);
      while (next(&q, qe, &g)) {
        if (g.num == 1) d->maps[m].id = g.v;
        if (g.num == 2) d->maps[m].start = g.v;
        if (g.num == 3) d->maps[m].limit = g.v;
        if (g.num == 4) d->maps[m].offset = g.v;
      }
      break;
    }
    case 5: {
      unsigned k = d->nfns++;
      ck_assert_uint_lt(k, MAXN);
      while (next(&q, qe, &g)) {
        if (g.num == 1) d->fns[k].id = g.v;
        if (g.num == 2) d->fns[k].name = g.v;
      }
      break;
    }
    case 6:
      ck_assert_uint_lt(d->nstrings, MAXN);
      ck_assert_uint_lt(f.n, sizeof d->strings[0]);
      memcpy(d->strings[d->nstrings], f.p, f.n);
      d->strings[d->nstrings++][f.n] = '\0';
      break;
    case 12: d->period = f.v; break;
    case 13:
      ck_assert_uint_lt(d->ncomments, 4);
      d->comments[d->ncomments++] = f.v;
      break;
    case 14: d->default_type = f.v; break;
    default: break;
    }
  }
}

static const char *str(const struct decoded *d, uint64_t i)
{
  ck_assert_uint_lt(i, d->nstrings);
  return d->strings[i];
}

/* The function name of location id [id]. */
static const char *loc_fn(const struct decoded *d, uint64_t id)
{
  unsigned i, k;
  for (i = 0; i < d->nlocs; i++)
    if (d->locs[i].id == id) {
      for (k = 0; k < d->nfns; k++)
        if (d->fns[k].id == d->locs[i].fn) return str(d, d->fns[k].name);
      return NULL;
    }
  ck_abort_msg("no location %" PRIu64, id);
  return NULL;
}

/* ---- the profile ------------------------------------------------------------------ */

static void counts(struct ocgc_memprof_counts *c, uint64_t s, uint64_t w, uint64_t b)
{
  c->samples = s;
  c->words = w;
  c->blocks_x1024 = b;
}

/* The overflow row, two stacks sharing a frame, a cut one, an empty one. */
static struct ocgc_memprof *made(void)
{
  struct ocgc_memprof *p = calloc(1, sizeof *p);
  p->state = OCGC_MP_ON;
  p->rate_bytes = 4096;
  p->nstacks = 5;
  p->stack = calloc(5, sizeof *p->stack);
  p->stack[0].overflow = 1;
  counts(&p->stack[0].alloc, 1, 512, 1024);
  p->stack[1].depth = 2;
  p->stack[1].frames[0] = 0x1000;
  p->stack[1].frames[1] = 0x2000;
  counts(&p->stack[1].alloc, 10, 5120, 10 * 1024 + 600);
  counts(&p->stack[1].freed, 4, 2048, 4 * 1024);
  counts(&p->stack[1].promoted, 2, 1024, 2 * 1024 + 100);
  p->stack[2].kind = OCGC_MP_MAJOR;
  p->stack[2].depth = 2;
  p->stack[2].frames[0] = 0x3000;
  p->stack[2].frames[1] = 0x2000;
  counts(&p->stack[2].alloc, 3, 1536, 3 * 1024);
  p->stack[3].cut = 1;
  p->stack[3].depth = 1;
  p->stack[3].frames[0] = 0x4000;
  counts(&p->stack[3].alloc, 1, 512, 1024);
  p->stack[4].depth = 1; /* nothing counted: no sample */
  p->stack[4].frames[0] = 0x5000;
  return p;
}

START_TEST(values)
{
  struct ocgc_memprof *p = made();
  int64_t v[OCGC_PV_COUNT];
  enum ocgc_profile_value e;
  ocgc_profile_values(&p->stack[1], v);
  ck_assert_int_eq(v[OCGC_PV_ALLOC_SPACE], 5120 * 8);
  ck_assert_int_eq(v[OCGC_PV_ALLOC_OBJECTS], 11); /* 10 + 600/1024, rounded */
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], (5120 - 2048) * 8);
  ck_assert_int_eq(v[OCGC_PV_INUSE_OBJECTS], 7);
  ck_assert_int_eq(v[OCGC_PV_PROMOTED_SPACE], 1024 * 8);
  ck_assert_int_eq(v[OCGC_PV_PROMOTED_OBJECTS], 2);
  /* A window's freed may pass its allocated: in use goes down. */
  counts(&p->stack[2].freed, 5, 2560, 5 * 1024);
  ocgc_profile_values(&p->stack[2], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], -1024 * 8);
  ck_assert_int_eq(ocgc_profile_value_parse("inuse_space", &e), 0);
  ck_assert_int_eq(e, OCGC_PV_INUSE_SPACE);
  ck_assert_int_eq(ocgc_profile_value_parse("cpu", &e), -EINVAL);
  ck_assert_ptr_null(ocgc_profile_value_name(OCGC_PV_COUNT));
  /* A producer that keeps live: in use is live (here less than allocated
   * - freed: garbage not yet found), a window's its growth. */
  p->stack[1].live_known = 1;
  counts(&p->stack[1].live, 3, 1536, 3 * 1024);
  ocgc_profile_values(&p->stack[1], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], 1536 * 8);
  ck_assert_int_eq(v[OCGC_PV_INUSE_OBJECTS], 3);
  counts(&p->stack[1].live_before, 5, 2560, 5 * 1024);
  ocgc_profile_values(&p->stack[1], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], -1024 * 8);
  ck_assert_int_eq(v[OCGC_PV_INUSE_OBJECTS], -2);
  ocgc_memprof_free(p);
}
END_TEST

/* The comment of a profile whose producer keeps live states that rule. */
START_TEST(pprof_inuse_rule)
{
  struct ocgc_memprof *p = made();
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  unsigned char *plain;
  size_t nplain;
  struct decoded *d = calloc(1, sizeof *d);
  p->live_known = 1;
  o.no_gzip = 1;
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &plain, &nplain), 0);
  decode(plain, nplain, d);
  /* ocgc's, the rate's, the in-use rule's */
  ck_assert_uint_eq(d->ncomments, 3);
  ck_assert_str_eq(str(d, d->comments[2]),
                   "inuse: as of the last completed major marking; garbage not yet collected "
                   "is not counted");
  free(plain);
  free(d);
  ocgc_memprof_free(p);
}
END_TEST

/* With the collector's CPU charged to its stacks: a seventh sample type,
 * gc_cpu/nanoseconds, each sample's seventh value its stack's charge, a
 * stack with no other figure but a charge still a sample, and the model
 * said in a comment. */
START_TEST(pprof_gc_cpu)
{
  struct ocgc_memprof *p = made();
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  unsigned char *plain;
  size_t nplain, i;
  struct decoded *d = calloc(1, sizeof *d);
  uint64_t *gc = calloc(p->nstacks, sizeof *gc);
  int found = 0;
  for (i = 0; i < p->nstacks; i++) gc[i] = 1000 * (i + 1);
  o.no_gzip = 1;
  o.gc_cpu_ns = gc;
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &plain, &nplain), 0);
  decode(plain, nplain, d);
  ck_assert_uint_eq(d->ntypes, 7);
  ck_assert_str_eq(str(d, d->sample_types[6][0]), "gc_cpu");
  ck_assert_str_eq(str(d, d->sample_types[6][1]), "nanoseconds");
  /* every stack a sample now, the empty one too (its charge) */
  ck_assert_uint_eq(d->nsamples, p->nstacks);
  for (i = 0; i < p->nstacks; i++) {
    ck_assert_uint_eq(d->samples[i].nval, 7);
    ck_assert_int_eq(d->samples[i].val[6], (int64_t)gc[i]);
  }
  for (i = 0; i < d->ncomments; i++)
    found |= strncmp(str(d, d->comments[i]), "gc_cpu: the collector's CPU", 27) == 0;
  ck_assert_msg(found, "the model's comment");
  free(plain);
  free(gc);
  free(d);
  ocgc_memprof_free(p);
}
END_TEST

START_TEST(pprof_fields)
{
  struct ocgc_memprof *p = made();
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  unsigned char *plain, *gz, *back;
  size_t nplain, ngz, i;
  uLongf nback;
  struct decoded *d = calloc(1, sizeof *d);
  static const char *const types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                      "inuse_space", "promoted_objects", "promoted_space"};
  o.no_gzip = 1;
  o.default_value_set = 1;
  o.default_value = OCGC_PV_INUSE_SPACE;
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &plain, &nplain), 0);
  decode(plain, nplain, d);
  ck_assert_str_eq(d->strings[0], "");
  ck_assert_uint_eq(d->ntypes, 6);
  for (i = 0; i < 6; i++) {
    ck_assert_str_eq(str(d, d->sample_types[i][0]), types[i]);
    ck_assert_str_eq(str(d, d->sample_types[i][1]), i % 2 ? "bytes" : "count");
  }
  ck_assert_str_eq(str(d, d->default_type), "inuse_space");
  ck_assert_uint_eq(d->period, 4096);
  ck_assert_str_eq(str(d, d->period_type[0]), "space");
  ck_assert_str_eq(str(d, d->period_type[1]), "bytes");
  /* the in-use rule said: this copy's producer keeps no live */
  ck_assert_uint_eq(d->ncomments, 3);
  ck_assert_str_eq(str(d, d->comments[2]),
                   "inuse: allocated - freed (an older producer): garbage counts until a "
                   "marking finds it dead");
  ck_assert_uint_eq(d->nsamples, 4); /* the empty stack has none */
  for (i = 0; i < 4; i++) {
    int64_t v[OCGC_PV_COUNT];
    unsigned k;
    ocgc_profile_values(&p->stack[i], v);
    ck_assert_uint_eq(d->samples[i].nval, 6);
    for (k = 0; k < 6; k++) ck_assert_int_eq(d->samples[i].val[k], v[k]);
  }
  /* the overflow row: one made-up frame, no label */
  ck_assert_uint_eq(d->samples[0].nloc, 1);
  ck_assert_str_eq(loc_fn(d, d->samples[0].loc[0]), "(ocgc-table-full)");
  ck_assert_uint_eq(d->samples[0].label_key, 0);
  /* two stacks share the location of 0x2000; unnamed: no function */
  ck_assert_uint_eq(d->samples[1].nloc, 2);
  ck_assert_uint_eq(d->samples[1].loc[1], d->samples[2].loc[1]);
  ck_assert_uint_ne(d->samples[1].loc[0], d->samples[2].loc[0]);
  ck_assert_ptr_null(loc_fn(d, d->samples[1].loc[0]));
  /* in no mapping (no names): no address, unless absolute ones are asked */
  for (i = 0; i < d->nlocs; i++)
    if (d->locs[i].id == d->samples[1].loc[0]) ck_assert_uint_eq(d->locs[i].address, 0);
  free(plain);
  o.absolute_addresses = 1;
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &plain, &nplain), 0);
  decode(plain, nplain, d);
  for (i = 0; i < d->nlocs; i++)
    if (d->locs[i].id == d->samples[1].loc[0]) ck_assert_uint_eq(d->locs[i].address, 0x1000);
  ck_assert_str_eq(str(d, d->samples[1].label_key), "kind");
  ck_assert_str_eq(str(d, d->samples[1].label_str), "minor");
  ck_assert_str_eq(str(d, d->samples[2].label_str), "major");
  /* the cut stack ends with its made-up outermost frame */
  ck_assert_uint_eq(d->samples[3].nloc, 2);
  ck_assert_str_eq(loc_fn(d, d->samples[3].loc[1]), "(deeper-frames-not-kept)");
  ck_assert_uint_eq(d->nlocs, 6); /* 0x1000 0x2000 0x3000 0x4000 and the two made up */

  /* gzip: the same bytes inside */
  o.no_gzip = 0;
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &gz, &ngz), 0);
  ck_assert_uint_ge(ngz, 18);
  ck_assert_int_eq(gz[0], 0x1f);
  ck_assert_int_eq(gz[1], 0x8b);
  {
    z_stream z;
    memset(&z, 0, sizeof z);
    back = malloc(nplain + 16);
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = gz;
    z.avail_in = (uInt)ngz;
    z.next_out = back;
    z.avail_out = (uInt)(nplain + 16);
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    nback = z.total_out;
    inflateEnd(&z);
  }
  ck_assert_uint_eq(nback, nplain);
  ck_assert_int_eq(memcmp(back, plain, nplain), 0);
  o.max_bytes = 16;
  free(gz);
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &gz, &ngz), -EFBIG);
  ck_assert_ptr_null(gz);
  free(plain);
  free(back);
  free(d);
  ocgc_memprof_free(p);
}
END_TEST

/* Frames of this very process, named through its maps: by default no
 * address of it is written (the mapping as loaded at its file offset, a
 * location at its offset in the file), with absolute_addresses its own. */
START_TEST(pprof_addresses)
{
  struct ocgc_memprof *p = made();
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  struct ocgc_symbols *syms;
  const struct ocgc_symbols_mapping *ms;
  struct ocgc_symbol sym;
  struct decoded *d = calloc(1, sizeof *d);
  unsigned char *b;
  size_t nb, nms, i;
  uint64_t here = (uint64_t)(uintptr_t)&made, heap = (uint64_t)(uintptr_t)d;
  int absolute;
  ck_assert_int_eq(ocgc_symbols_open_pid(getpid(), 0, NULL, &syms), 0);
  ocgc_symbols_lookup(syms, here, 1, &sym);
  ck_assert_uint_ne(sym.mapping, OCGC_SYMBOLS_NONE);
  nms = ocgc_symbols_mappings(syms, &ms);
  ck_assert_uint_lt(sym.mapping, nms);
  p->stack[1].frames[0] = here; /* in this test's executable */
  p->stack[1].frames[1] = heap; /* in no file */
  o.no_gzip = 1;
  for (absolute = 0; absolute <= 1; absolute++) {
    const struct ocgc_symbols_mapping *m;
    uint64_t start;
    unsigned k, seen = 0;
    o.absolute_addresses = absolute;
    ck_assert_int_eq(ocgc_pprof_write(p, syms, &o, &b, &nb), 0);
    decode(b, nb, d);
    free(b);
    nms = ocgc_symbols_mappings(syms, &ms);
    m = &ms[sym.mapping];
    start = absolute ? m->start : m->offset;
    ck_assert_uint_ge(d->nmaps, 1);
    for (k = 0; k < d->nmaps; k++) {
      if (d->maps[k].id != (uint64_t)sym.mapping + 1) continue;
      ck_assert_uint_eq(d->maps[k].start, start);
      ck_assert_uint_eq(d->maps[k].limit, start + (m->limit - m->start));
      ck_assert_uint_eq(d->maps[k].offset, m->offset);
      seen = 1;
    }
    ck_assert_uint_eq(seen, 1);
    for (i = 0; i < d->nlocs; i++) {
      if (d->locs[i].mapping == (uint64_t)sym.mapping + 1) {
        ck_assert_uint_eq(d->locs[i].address, here - m->start + start);
        seen++;
      } else if (d->locs[i].mapping == 0 && d->locs[i].address != 0) {
        ck_assert_int_eq(absolute, 1); /* an address in no file: only when asked */
        seen += d->locs[i].address == heap;
      }
      /* by default nothing written is in one of the process's mappings */
      if (!absolute)
        for (k = 0; k < nms; k++)
          ck_assert_msg(d->locs[i].address < ms[k].start || d->locs[i].address >= ms[k].limit,
                        "location 0x%" PRIx64 " is an address of the process", d->locs[i].address);
    }
    ck_assert_uint_eq(seen, absolute ? 3 : 2);
  }
  ocgc_symbols_close(syms);
  free(d);
  ocgc_memprof_free(p);
}
END_TEST

START_TEST(folded)
{
  struct ocgc_memprof *p = made();
  char *out, *line;
  size_t len;
  int64_t sum = 0;
  unsigned lines = 0;
  ck_assert_int_eq(ocgc_profile_folded(p, NULL, OCGC_PV_ALLOC_SPACE, &out, &len), 0);
  ck_assert_uint_eq(strlen(out), len);
  ck_assert_ptr_nonnull(strstr(out, "(ocgc-table-full) 4096\n"));
  ck_assert_ptr_nonnull(strstr(out, "0x2000;0x1000 40960\n"));
  ck_assert_ptr_nonnull(strstr(out, "(deeper-frames-not-kept);0x4000 4096\n"));
  for (line = out; *line != '\0'; line = strchr(line, '\n') + 1) {
    char *one = strndup(line, (size_t)(strchr(line, '\n') - line));
    sum += strtoll(strrchr(one, ' ') + 1, NULL, 10);
    free(one);
    lines++;
  }
  ck_assert_uint_eq(lines, 4);
  ck_assert_int_eq(sum, (512 + 5120 + 1536 + 512) * 8);
  free(out);
  /* in use of a window may be negative: such a stack is left out */
  counts(&p->stack[2].freed, 5, 2560, 5 * 1024);
  ck_assert_int_eq(ocgc_profile_folded(p, NULL, OCGC_PV_INUSE_SPACE, &out, &len), 0);
  ck_assert_ptr_null(strstr(out, "0x3000"));
  free(out);
  ck_assert_int_eq(ocgc_profile_folded(p, NULL, OCGC_PV_COUNT, &out, &len), -EINVAL);
  ocgc_memprof_free(p);
}
END_TEST

/* A stack of no frame (a table is the target's: nothing says a row has
 * one) is a sample with no location, in every form.  The pprof writer
 * gave memcpy the NULL bytes of its empty list of locations, and UBSan
 * stopped serve there (it had sampled such a stack on a loaded machine). */
START_TEST(no_frames)
{
  struct ocgc_memprof *p = calloc(1, sizeof *p);
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  struct decoded *d = calloc(1, sizeof *d);
  unsigned char *plain;
  size_t nplain, len;
  char *out;
  p->state = OCGC_MP_ON;
  p->rate_bytes = 4096;
  p->nstacks = 2;
  p->stack = calloc(2, sizeof *p->stack);
  counts(&p->stack[1].alloc, 3, 1536, 3 * 1024);
  o.no_gzip = 1;
  ck_assert_int_eq(ocgc_pprof_write(p, NULL, &o, &plain, &nplain), 0);
  decode(plain, nplain, d);
  ck_assert_uint_eq(d->nsamples, 1);
  ck_assert_uint_eq(d->samples[0].nloc, 0);
  ck_assert_int_eq(d->samples[0].val[1], 1536 * 8); /* alloc_space */
  free(plain);
  ck_assert_int_eq(ocgc_profile_folded(p, NULL, OCGC_PV_ALLOC_SPACE, &out, &len), 0);
  ck_assert_uint_eq(strlen(out), len);
  free(out);
  free(d);
  ocgc_memprof_free(p);
}
END_TEST

static const struct ocgc_profile_function *fn_named(const struct ocgc_profile_functions *f,
                                                    const char *name);

#define NASTY "evil\nx 1\n;fake\x01\x7f\\\xc3("
#define NASTY_ESC "evil\\x0ax\\x201\\x0a\\x3bfake\\x01\\x7f\\x5c\\xc3("
#define NASTY_ESC_PPROF "evil\\x0ax 1\\x0a;fake\\x01\\x7f\\x5c\\xc3("

START_TEST(escaped)
{
  struct ocgc_memprof *p = made();
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  struct ocgc_profile_functions *f = NULL;
  struct ocgc_symbols *s = NULL;
  char tmpl[] = "/tmp/ocgc-test-pprof-XXXXXX", *out;
  unsigned char *pb;
  size_t len, i;
  int fd = mkstemp(tmpl);
  ck_assert_int_ge(fd, 0);
  unlink(tmpl);
  ck_assert_int_eq(elfgen_write_one(fd, NASTY), 0);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "lib\n;x.so", NULL, &s), 0);
  close(fd);
  p->stack[1].frames[0] = ELFGEN_FUNC + 4;
  /* folded: one line per stack still, the name escaped */
  ck_assert_int_eq(ocgc_profile_folded(p, s, OCGC_PV_ALLOC_SPACE, &out, &len), 0);
  ck_assert_ptr_nonnull(strstr(out, "0x2000;" NASTY_ESC " 40960\n"));
  for (i = 0; i < len; i++) ck_assert(out[i] == '\n' || (out[i] >= 0x20 && out[i] < 0x7f));
  free(out);
  /* by function */
  ck_assert_int_eq(ocgc_profile_functions(p, s, OCGC_PV_ALLOC_SPACE, &f), 0);
  ck_assert_ptr_nonnull(fn_named(f, NASTY_ESC_PPROF));
  ocgc_profile_functions_free(f);
  /* pprof: the strings escaped, the mapping's path too */
  o.no_gzip = 1;
  ck_assert_int_eq(ocgc_pprof_write(p, s, &o, &pb, &len), 0);
  ck_assert_ptr_nonnull(memmem(pb, len, NASTY_ESC_PPROF, strlen(NASTY_ESC_PPROF)));
  ck_assert_ptr_null(memmem(pb, len, "evil\n", 5));
  ck_assert_ptr_nonnull(memmem(pb, len, "lib\\x0a;x.so", 12));
  free(pb);
  ocgc_symbols_close(s);
  ocgc_memprof_free(p);
}
END_TEST

/* The function named [name] of [f], or NULL. */
static const struct ocgc_profile_function *fn_named(const struct ocgc_profile_functions *f,
                                                    const char *name)
{
  size_t i;
  for (i = 0; i < f->n; i++)
    if (strcmp(f->fn[i].name, name) == 0) return &f->fn[i];
  return NULL;
}

START_TEST(functions)
{
  struct ocgc_memprof *p = made();
  struct ocgc_profile_functions *f;
  const struct ocgc_profile_function *x;
  size_t i;
  /* a recursive stack: 0x1000 called by 0x1000 called by 0x6000 */
  p->stack[4].depth = 3;
  p->stack[4].frames[0] = 0x1000;
  p->stack[4].frames[1] = 0x1000;
  p->stack[4].frames[2] = 0x6000;
  counts(&p->stack[4].alloc, 1, 100, 1024);
  ck_assert_int_eq(ocgc_profile_functions(p, NULL, OCGC_PV_ALLOC_SPACE, &f), 0);
  ck_assert_uint_eq(f->n, 7); /* 0x1000 0x2000 0x3000 0x4000 0x6000 and the two made up */
  for (i = 1; i < f->n; i++)
    ck_assert_int_ge(f->fn[i - 1].flat[OCGC_PV_ALLOC_SPACE], f->fn[i].flat[OCGC_PV_ALLOC_SPACE]);
  ck_assert_ptr_nonnull(x = fn_named(f, "0x1000"));
  ck_assert_int_eq(x->flat[OCGC_PV_ALLOC_SPACE], (5120 + 100) * 8);
  ck_assert_int_eq(x->cum[OCGC_PV_ALLOC_SPACE], (5120 + 100) * 8); /* once per stack */
  ck_assert_ptr_nonnull(x = fn_named(f, "0x2000"));
  ck_assert_int_eq(x->flat[OCGC_PV_ALLOC_SPACE], 0);
  ck_assert_int_eq(x->cum[OCGC_PV_ALLOC_SPACE], (5120 + 1536) * 8);
  ck_assert_ptr_nonnull(x = fn_named(f, "(deeper-frames-not-kept)"));
  ck_assert_int_eq(x->flat[OCGC_PV_ALLOC_SPACE], 0);
  ck_assert_int_eq(x->cum[OCGC_PV_ALLOC_SPACE], 512 * 8);
  ck_assert_ptr_nonnull(x = fn_named(f, "(ocgc-table-full)"));
  ck_assert_int_eq(x->flat[OCGC_PV_ALLOC_SPACE], 512 * 8);
  ck_assert_str_eq(f->fn[0].name, "0x1000"); /* the largest flat first */
  ocgc_profile_functions_free(f);
  ocgc_memprof_free(p);
}
END_TEST

START_TEST(tree)
{
  struct ocgc_memprof *p = made();
  struct ocgc_profile_tree *t;
  size_t i;
  ck_assert_int_eq(ocgc_profile_tree(p, NULL, OCGC_PV_ALLOC_SPACE, &t), 0);
  /* root; (deeper...) > 0x4000; (ocgc-table-full); 0x2000 > 0x1000, 0x3000 */
  ck_assert_uint_eq(t->n, 7);
  ck_assert_str_eq(t->node[0].name, "");
  ck_assert_int_eq(t->node[0].value[OCGC_PV_ALLOC_SPACE], (512 + 5120 + 1536 + 512) * 8);
  ck_assert_uint_eq(t->node[0].first_child, 1);
  /* children of the root by name: "(deeper...", "(ocgc...", "0x2000" */
  ck_assert_str_eq(t->node[1].name, "(deeper-frames-not-kept)");
  ck_assert_str_eq(t->node[2].name, "0x4000");
  ck_assert_uint_eq(t->node[2].parent, 1);
  ck_assert_uint_eq(t->node[2].depth, 2);
  ck_assert_uint_eq(t->node[1].next_sibling, 3);
  ck_assert_str_eq(t->node[3].name, "(ocgc-table-full)");
  ck_assert_str_eq(t->node[4].name, "0x2000");
  ck_assert_int_eq(t->node[4].value[OCGC_PV_ALLOC_SPACE], (5120 + 1536) * 8);
  ck_assert_str_eq(t->node[5].name, "0x1000");
  ck_assert_str_eq(t->node[6].name, "0x3000");
  ck_assert_uint_eq(t->node[5].next_sibling, 6);
  ck_assert_uint_eq(t->node[6].next_sibling, 0);
  for (i = 0; i < t->n; i++) { /* a parent holds at least its children */
    int64_t sum = 0;
    uint32_t c;
    for (c = t->node[i].first_child; c != 0; c = t->node[c].next_sibling) {
      ck_assert_uint_eq(t->node[c].parent, i);
      ck_assert_uint_gt(c, i);
      sum += t->node[c].value[OCGC_PV_ALLOC_SPACE];
    }
    ck_assert_int_ge(t->node[i].value[OCGC_PV_ALLOC_SPACE], sum);
  }
  ocgc_profile_tree_free(t);
  ocgc_memprof_free(p);
}
END_TEST

/* Two profiles of one build merged (ocgc_pprof_merge), each named by a
 * symbolizer of its own (closed before the merge: the names outlive it):
 * the frame in both is one location of one mapping, each stack's figures
 * summed, a frame that could not be placed a location of its own with no
 * address, and no address of this process. */
START_TEST(merge_two)
{
  struct ocgc_memprof *p1 = made(), *p2 = made();
  struct ocgc_symbols *s1, *s2;
  const struct ocgc_symbols_mapping *ms;
  struct ocgc_symbol sym, sym2;
  struct ocgc_frame_names *n1, *n2;
  struct ocgc_pprof_merge *m;
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  struct decoded *d = calloc(1, sizeof *d);
  uint64_t here = (uint64_t)(uintptr_t)&made + 16, there; /* inside made() */
  unsigned char *b;
  size_t nb, i, nms;
  int found = 0;
  int64_t v1[OCGC_PV_COUNT], v2[OCGC_PV_COUNT];
  char fname[128];
  uint64_t lo, hi;
  ck_assert_int_eq(ocgc_symbols_open_pid(getpid(), 0, NULL, &s1), 0);
  ocgc_symbols_lookup(s1, here, 1, &sym);
  ck_assert_uint_ne(sym.mapping, OCGC_SYMBOLS_NONE);
  nms = ocgc_symbols_mappings(s1, &ms);
  ck_assert_uint_lt(sym.mapping, nms);
  if (ms[sym.mapping].build_id[0] == '\0') { /* a build without build ids: by path, not shown here */
    ocgc_symbols_close(s1);
    ocgc_memprof_free(p1);
    ocgc_memprof_free(p2);
    free(d);
    return;
  }
  /* a second process of the same build: another symbolizer of this one
   * (two processes at other load addresses: serve_pprof_byprog.sh) */
  ck_assert_int_eq(ocgc_symbols_open_pid(getpid(), 0, NULL, &s2), 0);
  there = here;
  ocgc_symbols_lookup(s2, there, 1, &sym2);
  ck_assert_ptr_nonnull(sym2.function);
  ck_assert_str_eq(sym2.function, sym.function);
  snprintf(fname, sizeof fname, "%s", sym.function); /* the symbolizers close below */
  lo = ms[sym.mapping].start;
  hi = ms[sym.mapping].limit;
  p1->stack[1].frames[0] = here;
  p2->stack[1].frames[0] = there;
  p1->stack[1].depth = p2->stack[1].depth = 1;
  p2->stack[2].frames[0] = 0x77; /* in no mapping of the file: not placed */
  counts(&p2->stack[1].alloc, 30, 15360, 30 * 1024);
  ck_assert_int_eq(ocgc_frame_names_new(&n1), 0);
  ck_assert_int_eq(ocgc_frame_names_new(&n2), 0);
  ck_assert_uint_eq(ocgc_frame_names_missing(n1, p1), 5);
  ck_assert_int_eq(ocgc_frame_names_add(n1, p1, s1), 0);
  ck_assert_int_eq(ocgc_frame_names_add(n2, p2, s2), 0);
  ck_assert_uint_eq(ocgc_frame_names_missing(n1, p1), 0);
  ocgc_symbols_close(s1); /* the names outlive their symbolizers */
  ocgc_symbols_close(s2);
  ck_assert_int_eq(ocgc_pprof_merge_new(&m), 0);
  ck_assert_int_eq(ocgc_pprof_merge_add(m, p1, n1), 0);
  ck_assert_int_eq(ocgc_pprof_merge_add(m, p2, n2), 0);
  ocgc_frame_names_free(n1);
  ocgc_frame_names_free(n2);
  o.no_gzip = 1;
  ck_assert_int_eq(ocgc_pprof_merge_write(m, &o, "two", &b, &nb), 0);
  ocgc_pprof_merge_free(m);
  decode(b, nb, d);
  free(b);
  ocgc_profile_values(&p1->stack[1], v1);
  ocgc_profile_values(&p2->stack[1], v2);
  for (i = 0; i < d->nsamples; i++) {
    const char *f = d->samples[i].nloc == 1 ? loc_fn(d, d->samples[i].loc[0]) : NULL;
    unsigned k;
    if (f == NULL || strcmp(f, fname) != 0) continue;
    found++;
    for (k = 0; k < OCGC_PV_COUNT; k++) ck_assert_int_eq(d->samples[i].val[k], v1[k] + v2[k]);
  }
  ck_assert_int_eq(found, 1); /* one sample: one location, in one mapping */
  for (i = 0; i < d->nlocs; i++) {
    ck_assert_msg(d->locs[i].address < lo || d->locs[i].address >= hi,
                  "location 0x%" PRIx64 " is an address of the process", d->locs[i].address);
    if (d->locs[i].mapping == 0 && d->locs[i].fn == 0) ck_assert_uint_eq(d->locs[i].address, 0);
  }
  ck_assert_uint_eq(d->period, 4096);
  free(d);
  ocgc_memprof_free(p1);
  ocgc_memprof_free(p2);
}
END_TEST

/* CPU profiles merged (ocgc_pprof_merge_add_cpu): Go's CPU sample types
 * and period (the largest of the processes'), each process's values its
 * samples and samples x its own period, the gc_phase label; a merge holds
 * one kind of profile. */
START_TEST(merge_cpu)
{
  struct ocgc_cpuprof_opts co = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
  struct ocgc_cpuprof *p1 = NULL, *p2 = NULL;
  struct ocgc_pprof_merge *m = NULL;
  struct ocgc_unwind_stack st;
  struct ocgc_memprof mp;
  struct decoded *d = malloc(sizeof *d);
  unsigned char *b;
  size_t nb;
  unsigned i, seen = 0;
  ck_assert_ptr_nonnull(d);
  memset(&st, 0, sizeof st);
  st.depth = 2;
  st.end = OCGC_UNWIND_OUTERMOST;
  st.frames[0] = 0x1000;
  st.frames[1] = 0x2000;
  co.frequency_hz = 100;
  ck_assert_int_eq(ocgc_cpuprof_new(NULL, &co, &p1), 0);
  co.frequency_hz = 200;
  ck_assert_int_eq(ocgc_cpuprof_new(NULL, &co, &p2), 0);
  for (i = 0; i < 3; i++) ck_assert_int_eq(ocgc_cpuprof_add(p1, 1000 + i, &st), 0);
  for (i = 0; i < 2; i++) ck_assert_int_eq(ocgc_cpuprof_add(p2, 1000 + i, &st), 0);
  ocgc_cpuprof_finish(p1);
  ocgc_cpuprof_finish(p2);
  ck_assert_int_eq(ocgc_pprof_merge_new(&m), 0);
  ck_assert_int_eq(ocgc_pprof_merge_add_cpu(m, p1, NULL), 0);
  ck_assert_int_eq(ocgc_pprof_merge_add_cpu(m, p2, NULL), 0);
  memset(&mp, 0, sizeof mp);
  ck_assert_int_eq(ocgc_pprof_merge_add(m, &mp, NULL), -EINVAL); /* one kind a merge */
  o.no_gzip = 1;
  ck_assert_int_eq(ocgc_pprof_merge_write(m, &o, NULL, &b, &nb), 0);
  ocgc_pprof_merge_free(m);
  decode(b, nb, d);
  free(b);
  ck_assert_uint_eq(d->ntypes, 2);
  ck_assert_str_eq(d->strings[d->sample_types[0][0]], "samples");
  ck_assert_str_eq(d->strings[d->sample_types[1][0]], "cpu");
  ck_assert_str_eq(d->strings[d->sample_types[1][1]], "nanoseconds");
  ck_assert_uint_eq(d->period, 10000000);
  /* no names: each process's frames are its own locations, two samples */
  ck_assert_uint_eq(d->nsamples, 2);
  for (i = 0; i < d->nsamples; i++) {
    ck_assert_uint_eq(d->samples[i].nval, 2);
    ck_assert_int_eq(d->samples[i].val[1], d->samples[i].val[0] * (seen == 0 ? 10000000 : 5000000));
    ck_assert_str_eq(d->strings[d->samples[i].label_key], "gc_phase");
    ck_assert_str_eq(d->strings[d->samples[i].label_str], "mutator");
    seen++;
  }
  ck_assert_int_eq(d->samples[0].val[0] + d->samples[1].val[0], 5);
  free(d);
  ocgc_cpuprof_free(p1);
  ocgc_cpuprof_free(p2);
}
END_TEST

static Suite *pprof_suite(void)
{
  Suite *s = suite_create("pprof");
  TCase *tc = tcase_create("pprof");
  tcase_add_test(tc, values);
  tcase_add_test(tc, pprof_fields);
  tcase_add_test(tc, pprof_gc_cpu);
  tcase_add_test(tc, pprof_inuse_rule);
  tcase_add_test(tc, pprof_addresses);
  tcase_add_test(tc, folded);
  tcase_add_test(tc, no_frames);
  tcase_add_test(tc, escaped);
  tcase_add_test(tc, functions);
  tcase_add_test(tc, tree);
  tcase_add_test(tc, merge_two);
  tcase_add_test(tc, merge_cpu);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(pprof_suite);
