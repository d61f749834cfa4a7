/* pprof_merge.c - the profiles of several processes merged into one pprof
 * profile (ocgc/pprof_merge.h): what `ocgc serve` answers for a program.
 *
 * How: each process's frames are placed through its frame names
 * (frame_names.c): a mapping (per build id, else path, and segment
 * offset) and a place in that file; a location is one place of one
 * mapping, so the same code of two processes of one build is one
 * location; a sample is one stack of locations and one kind, its six
 * values summed.  The profile.proto written is the one pprof.c writes
 * (same fields, same sample types, same made-up frames, same escaping:
 * the names are escaped when kept), with mappings as if loaded at their
 * file offset: no address of any process is written.  CPU profiles
 * (ocgc_pprof_merge_add_cpu) are merged by the same tables, a sample's key
 * its labels rather than a kind, written as cpuprof_pprof.c writes one.
 *
 * Invariants: every table is hashed with chains through its items (a
 * hash collision is told by comparing, never merged); the merge owns all
 * it keeps (copies), so the profiles and names added may go; at most
 * OCGC_PPROF_MERGE_SAMPLES samples, and locations and functions at most
 * as many as the frames added; the output stops at max_bytes. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuprof_priv.h"
#include "frame_names.h"
#include "idmap.h"
#include "ocgc/event.h"
#include "ocgc/pprof_merge.h"
#include "opts.h"
#include "pbwrite.h"
#include "profile.h"

#define DEFAULT_MAX (UINT64_C(64) << 20)
#define NONE 0u /* ids are 1-based: 0 is none */

/* ---- hashed items: hash -> first item, then chained ------------------------------ */

struct chains {
  struct idmap first; /* hash -> index + 1 of the newest item with it */
  size_t *next;       /* index + 1 of the next item of the same hash, 0: none */
  size_t cap;
};

static int ch_add(struct chains *c, uint64_t h, size_t index)
{
  uint64_t old = im_get(&c->first, h);
  if (index >= c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 256;
    size_t *q;
    while (cap <= index) cap *= 2;
    if ((q = realloc(c->next, cap * sizeof *q)) == NULL) return -ENOMEM;
    c->next = q;
    c->cap = cap;
  }
  c->next[index] = old; /* the older ones after it */
  if (old != 0) { /* replace: the idmap keeps the first put, so rewrite it in place */
    size_t i;
    for (i = mix(h) & (c->first.cap - 1); c->first.key[i] != h || c->first.id[i] == 0;
         i = (i + 1) & (c->first.cap - 1)) {}
    c->first.id[i] = index + 1;
    return 0;
  }
  return im_put(&c->first, h, index + 1);
}

static void ch_free(struct chains *c)
{
  im_free(&c->first);
  free(c->next);
}

#define CH_EACH(c, h, i) \
  for (size_t i##_1 = im_get(&(c)->first, (h)); i##_1 != 0 && ((i) = i##_1 - 1, 1); \
       i##_1 = (c)->next[i##_1 - 1])

/* ---- the merge ------------------------------------------------------------------------ */

struct m_map {
  uint64_t path, build_id;     /* string ids */
  uint64_t offset, size;
  int has_functions, has_lines;
};
struct m_loc {
  uint64_t map;                /* mapping id, NONE: not placed */
  uint64_t file_addr;
  uint64_t fn;                 /* function id, NONE: not named */
  unsigned line;
};
struct m_fn {
  uint64_t name, system, file; /* string ids */
};
/* What tells two samples of the same locations apart. */
struct m_key {
  unsigned kind;               /* allocation profiles */
  int overflow, cut;
  int phase, cause, call;      /* CPU profiles' labels */
};
struct m_sample {
  unsigned kind;
  int overflow, cut;
  int phase, cause, call;
  size_t nloc;
  uint64_t *loc;               /* location ids, innermost first */
  int64_t v[OCGC_PV_COUNT];
};

#define VEC(T) struct { T *p; size_t n, cap; }
struct ocgc_pprof_merge {
  VEC(char *) str;
  struct chains str_h;
  VEC(struct m_map) map;
  struct chains map_h;
  VEC(struct m_loc) loc;
  struct chains loc_h;
  VEC(struct m_fn) fn;
  struct chains fn_h;
  VEC(struct m_sample) smp;
  struct chains smp_h;
  uint64_t rate_bytes;
  int older; /* a process's rows carry no live: its in use is allocated - freed */
  int mem, cpu;       /* what it holds: one kind of profile */
  uint64_t period_ns; /* CPU: the largest period added */
};

#define VEC_ROOM(v) vec_room((void **)&(v).p, &(v).cap, (v).n, sizeof *(v).p)
static int vec_room(void **p, size_t *cap, size_t n, size_t size)
{
  void *q;
  size_t c;
  if (n < *cap) return 0;
  c = *cap ? *cap * 2 : 64;
  if ((q = realloc(*p, c * size)) == NULL) return -ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

int ocgc_pprof_merge_new(struct ocgc_pprof_merge **out)
{
  struct ocgc_pprof_merge *m;
  if (out == NULL) return -EINVAL;
  if ((m = calloc(1, sizeof *m)) == NULL) return -ENOMEM;
  if (VEC_ROOM(m->str) != 0 || (m->str.p[0] = strdup("")) == NULL ||
      ch_add(&m->str_h, fnv(""), 0) != 0) {
    m->str.n = m->str.p != NULL && m->str.p[0] != NULL;
    ocgc_pprof_merge_free(m);
    return -ENOMEM;
  }
  m->str.n = 1;
  *out = m;
  return 0;
}

/* The id of string [s] (copied if new), or -1 out of memory. */
static int64_t str_id(struct ocgc_pprof_merge *m, const char *s)
{
  uint64_t h = fnv(s);
  size_t i;
  char *c;
  CH_EACH(&m->str_h, h, i)
    if (strcmp(m->str.p[i], s) == 0) return (int64_t)i;
  if (VEC_ROOM(m->str) != 0 || (c = strdup(s)) == NULL) return -1;
  if (ch_add(&m->str_h, h, m->str.n) != 0) {
    free(c);
    return -1;
  }
  m->str.p[m->str.n] = c;
  return (int64_t)m->str.n++;
}

static uint64_t h3(uint64_t a, uint64_t b, uint64_t c)
{
  return mix(mix(mix(a) ^ b) ^ c);
}

/* The mapping id of [fm] (a build's file segment), made if new: 0 on error. */
static uint64_t map_id(struct ocgc_pprof_merge *m, const struct fn_map *fm)
{
  int64_t path = str_id(m, fm->path), bid = str_id(m, fm->build_id);
  int by_id = fm->build_id[0] != '\0';
  uint64_t h;
  size_t i;
  if (path < 0 || bid < 0) return 0;
  /* One build's file is known by its build id wherever it lies; a file
   * without one by its path. */
  h = h3(by_id ? (uint64_t)bid : (uint64_t)path, by_id, fm->offset);
  CH_EACH(&m->map_h, h, i) {
    const struct m_map *x = &m->map.p[i];
    if (x->offset == fm->offset &&
        (by_id ? x->build_id == (uint64_t)bid : x->build_id == 0 && x->path == (uint64_t)path))
      return i + 1;
  }
  if (VEC_ROOM(m->map) != 0 || ch_add(&m->map_h, h, m->map.n) != 0) return 0;
  m->map.p[m->map.n] = (struct m_map){(uint64_t)path, (uint64_t)bid, fm->offset, fm->size,
                                      fm->has_functions, fm->has_lines};
  return ++m->map.n;
}

static uint64_t fn_id(struct ocgc_pprof_merge *m, const char *name, const char *system,
                      const char *file)
{
  int64_t n = str_id(m, name), s = str_id(m, system), f = file != NULL ? str_id(m, file) : 0;
  uint64_t h;
  size_t i;
  if (n < 0 || s < 0 || f < 0) return 0;
  h = h3((uint64_t)n, (uint64_t)s, (uint64_t)f);
  CH_EACH(&m->fn_h, h, i) {
    const struct m_fn *x = &m->fn.p[i];
    if (x->name == (uint64_t)n && x->system == (uint64_t)s && x->file == (uint64_t)f) return i + 1;
  }
  if (VEC_ROOM(m->fn) != 0 || ch_add(&m->fn_h, h, m->fn.n) != 0) return 0;
  m->fn.p[m->fn.n] = (struct m_fn){(uint64_t)n, (uint64_t)s, (uint64_t)f};
  return ++m->fn.n;
}

/* A new location (not hashed: a frame not placed, of one process only). */
static uint64_t loc_new(struct ocgc_pprof_merge *m, struct m_loc l)
{
  if (VEC_ROOM(m->loc) != 0) return 0;
  m->loc.p[m->loc.n] = l;
  return ++m->loc.n;
}

/* The location of frame [f] of mapping [map]: one per place in the file,
 * named by the first process that named it. */
static uint64_t loc_placed(struct ocgc_pprof_merge *m, uint64_t map, const struct fn_frame *f)
{
  uint64_t h = h3(map, f->file_addr, 0x10c), fn = 0;
  size_t i;
  CH_EACH(&m->loc_h, h, i) {
    struct m_loc *x = &m->loc.p[i];
    if (x->map != map || x->file_addr != f->file_addr) continue;
    if (x->fn == NONE && f->function != NULL) {
      x->fn = fn_id(m, f->function, f->symbol, f->file);
      x->line = f->line;
    }
    return i + 1;
  }
  if (f->function != NULL && (fn = fn_id(m, f->function, f->symbol, f->file)) == 0) return 0;
  if (VEC_ROOM(m->loc) != 0 || ch_add(&m->loc_h, h, m->loc.n) != 0) return 0;
  m->loc.p[m->loc.n] = (struct m_loc){map, f->file_addr, fn, fn != 0 ? f->line : 0};
  return ++m->loc.n;
}

/* The location of a made-up frame [name] (one each). */
static uint64_t loc_synthetic(struct ocgc_pprof_merge *m, const char *name)
{
  uint64_t fn = fn_id(m, name, name, NULL), h = h3(0, fn, 0x5e);
  size_t i;
  if (fn == 0) return 0;
  CH_EACH(&m->loc_h, h, i)
    if (m->loc.p[i].map == NONE && m->loc.p[i].fn == fn) return i + 1;
  if (VEC_ROOM(m->loc) != 0 || ch_add(&m->loc_h, h, m->loc.n) != 0) return 0;
  m->loc.p[m->loc.n] = (struct m_loc){NONE, 0, fn, 0};
  return ++m->loc.n;
}

/* Add [v] to the sample of these locations and key, made if new. */
static int sample_add(struct ocgc_pprof_merge *m, const struct m_key *s, const uint64_t *loc,
                      size_t nloc, const int64_t v[OCGC_PV_COUNT])
{
  uint64_t h = h3(s->kind, (uint64_t)(s->overflow != 0) << 1 | (s->cut != 0), nloc);
  struct m_sample *x;
  size_t i, k;
  h = h3(h, (uint64_t)(s->phase + 1) << 8 | (uint64_t)(s->call + 1), (uint64_t)(s->cause + 2));
  for (k = 0; k < nloc; k++) h = mix(h ^ loc[k]);
  CH_EACH(&m->smp_h, h, i) {
    x = &m->smp.p[i];
    if (x->kind != s->kind || x->overflow != (s->overflow != 0) || x->cut != (s->cut != 0) ||
        x->phase != s->phase || x->cause != s->cause || x->call != s->call ||
        x->nloc != nloc || (nloc > 0 && memcmp(x->loc, loc, nloc * sizeof *loc) != 0))
      continue;
    for (k = 0; k < OCGC_PV_COUNT; k++) x->v[k] += v[k];
    return 0;
  }
  if (m->smp.n >= OCGC_PPROF_MERGE_SAMPLES) return -EFBIG;
  if (VEC_ROOM(m->smp) != 0) return -ENOMEM;
  x = &m->smp.p[m->smp.n];
  memset(x, 0, sizeof *x);
  if (nloc > 0 && (x->loc = malloc(nloc * sizeof *loc)) == NULL) return -ENOMEM;
  if (nloc > 0) memcpy(x->loc, loc, nloc * sizeof *loc);
  x->kind = s->kind;
  x->overflow = s->overflow != 0;
  x->cut = s->cut != 0;
  x->phase = s->phase;
  x->cause = s->cause;
  x->call = s->call;
  x->nloc = nloc;
  memcpy(x->v, v, sizeof x->v);
  if (ch_add(&m->smp_h, h, m->smp.n) != 0) {
    free(x->loc);
    return -ENOMEM;
  }
  m->smp.n++;
  return 0;
}

/* The location of address [a] of a process with frame names [names]:
 * placed in its file, or one of its own (*unplaced: this process's
 * address -> location); 0 out of memory. */
static uint64_t loc_of(struct ocgc_pprof_merge *m, const struct ocgc_frame_names *names,
                       uint64_t *mapids, struct idmap *unplaced, uint64_t a)
{
  const struct fn_frame *f = fn_get(names, a);
  uint64_t id;
  if (f != NULL && f->map != FN_NONE) {
    if (mapids[f->map] == 0) mapids[f->map] = map_id(m, &names->maps[f->map]);
    return mapids[f->map] != 0 ? loc_placed(m, mapids[f->map], f) : 0;
  }
  if ((id = im_get(unplaced, a)) == 0) {
    id = loc_new(m, (struct m_loc){NONE, 0, NONE, 0});
    if (id != 0 && im_put(unplaced, a, id) != 0) id = 0;
  }
  return id;
}

int ocgc_pprof_merge_add(struct ocgc_pprof_merge *m, const struct ocgc_memprof *p,
                         const struct ocgc_frame_names *names)
{
  uint64_t loc[OCGC_MEMPROF_MAX_DEPTH + 1];
  uint64_t *mapids = NULL;
  struct idmap unplaced = {NULL, NULL, 0, 0}; /* this process's address -> location */
  size_t i;
  int err = 0;
  if (m == NULL || p == NULL || m->cpu) return -EINVAL;
  m->mem = 1;
  if (p->rate_bytes > m->rate_bytes) m->rate_bytes = p->rate_bytes;
  if (!p->live_known) m->older = 1;
  if (names != NULL && names->nmaps > 0 && (mapids = calloc(names->nmaps, sizeof *mapids)) == NULL)
    return -ENOMEM;
  for (i = 0; i < p->nstacks && err == 0; i++) {
    const struct ocgc_memprof_stack *s = &p->stack[i];
    struct m_key key = {s->kind, s->overflow != 0, s->cut != 0, 0, 0, 0};
    int64_t v[OCGC_PV_COUNT];
    size_t n = 0, k;
    int any = 0;
    ocgc_profile_values(s, v);
    for (k = 0; k < OCGC_PV_COUNT; k++) any |= v[k] != 0;
    if (!any) continue;
    if (s->overflow) {
      loc[n++] = loc_synthetic(m, PROFILE_FRAME_FULL);
    } else {
      unsigned d;
      for (d = 0; d < s->depth && d < OCGC_MEMPROF_MAX_DEPTH; d++)
        loc[n++] = loc_of(m, names, mapids, &unplaced, s->frames[d]);
      if (s->cut) loc[n++] = loc_synthetic(m, PROFILE_FRAME_CUT);
    }
    for (k = 0; k < n; k++)
      if (loc[k] == 0) err = -ENOMEM;
    if (err == 0) err = sample_add(m, &key, loc, n, v);
  }
  im_free(&unplaced);
  free(mapids);
  return err;
}

int ocgc_pprof_merge_add_cpu(struct ocgc_pprof_merge *m, const struct ocgc_cpuprof *p,
                             const struct ocgc_frame_names *names)
{
  uint64_t loc[OCGC_UNWIND_MAX_DEPTH + 1];
  uint64_t *mapids = NULL, period;
  struct idmap unplaced = {NULL, NULL, 0, 0};
  const struct ocgc_cpuprof_row *rows;
  size_t i, nrows;
  int err = 0;
  if (m == NULL || p == NULL || m->mem) return -EINVAL;
  m->cpu = 1;
  period = UINT64_C(1000000000) / (cpuprof_frequency(p) ? cpuprof_frequency(p) : 100);
  if (period > m->period_ns) m->period_ns = period;
  if (names != NULL && names->nmaps > 0 && (mapids = calloc(names->nmaps, sizeof *mapids)) == NULL)
    return -ENOMEM;
  nrows = ocgc_cpuprof_rows(p, &rows);
  for (i = 0; i < nrows && err == 0; i++) {
    const struct ocgc_cpuprof_row *r = &rows[i];
    struct m_key key = {0, r->overflow != 0, 0, (int)r->phase,
                        r->phase == OCGC_GC_MUTATOR ? OCGC_CAUSE_NONE : r->cause, (int)r->call};
    int64_t v[OCGC_PV_COUNT] = {0};
    size_t n = 0, k;
    if (r->samples == 0) continue;
    v[0] = (int64_t)r->samples;
    v[1] = (int64_t)(r->samples * period);
    if (r->overflow) {
      loc[n++] = loc_synthetic(m, PROFILE_FRAME_FULL);
    } else if (r->depth == 0) {
      loc[n++] = loc_synthetic(m, CPUPROF_FRAME_NO_STACK);
    } else {
      unsigned d;
      for (d = 0; d < r->depth && d < OCGC_UNWIND_MAX_DEPTH; d++)
        loc[n++] = loc_of(m, names, mapids, &unplaced, r->frames[d]);
      if (r->end != OCGC_UNWIND_OUTERMOST) loc[n++] = loc_synthetic(m, CPUPROF_FRAME_STOPPED);
    }
    for (k = 0; k < n; k++)
      if (loc[k] == 0) err = -ENOMEM;
    if (err == 0) err = sample_add(m, &key, loc, n, v);
  }
  im_free(&unplaced);
  free(mapids);
  return err;
}

void ocgc_pprof_merge_free(struct ocgc_pprof_merge *m)
{
  size_t i;
  if (m == NULL) return;
  for (i = 0; i < m->str.n; i++) free(m->str.p[i]);
  for (i = 0; i < m->smp.n; i++) free(m->smp.p[i].loc);
  free(m->str.p);
  free(m->map.p);
  free(m->loc.p);
  free(m->fn.p);
  free(m->smp.p);
  ch_free(&m->str_h);
  ch_free(&m->map_h);
  ch_free(&m->loc_h);
  ch_free(&m->fn_h);
  ch_free(&m->smp_h);
  free(m);
}

/* ---- the protobuf (profile.proto, as pprof.c writes it: pbwrite.c) ------------- */

/* Extra strings the writer needs, after the merge's (ids from m->str.n). */
struct extra {
  const char *s[OCGC_PV_COUNT + 96]; /* a CPU merge's label values too */
  size_t n;
  size_t base;
};

static uint64_t x_id(struct extra *x, const struct ocgc_pprof_merge *m, const char *s)
{
  size_t i;
  for (i = 0; i < m->str.n && i < 64; i++) /* the merge's first strings: "" and a few */
    if (strcmp(m->str.p[i], s) == 0) return i;
  for (i = 0; i < x->n; i++)
    if (strcmp(x->s[i], s) == 0) return x->base + i;
  if (x->n == sizeof x->s / sizeof x->s[0]) return 0; /* not reached: the writer's own few */
  x->s[x->n] = s;
  return x->base + x->n++;
}


int ocgc_pprof_merge_write(const struct ocgc_pprof_merge *m, const struct ocgc_pprof_opts *opts,
                           const char *comment, unsigned char **out, size_t *len)
{
  struct ocgc_pprof_opts o;
  struct pb_buf b = {NULL, 0, 0, 0, 0}, msg = {NULL, 0, 0, SIZE_MAX, 0}, sub = msg;
  struct extra x;
  size_t i, k;
  unsigned v;
  int err;
  if (m == NULL || out == NULL || len == NULL) return -EINVAL;
  *out = NULL;
  *len = 0;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
  if (o.default_value_set && (unsigned)o.default_value >= OCGC_PV_COUNT) return -EINVAL;
  b.max = o.max_bytes ? o.max_bytes : DEFAULT_MAX;
  memset(&x, 0, sizeof x);
  x.base = m->str.n;

  if (m->cpu) {
    pb_uint(&msg, 1, x_id(&x, m, "samples"));
    pb_uint(&msg, 2, x_id(&x, m, "count"));
    pb_msg(&b, 1, &msg);
    pb_uint(&msg, 1, x_id(&x, m, "cpu"));
    pb_uint(&msg, 2, x_id(&x, m, "nanoseconds"));
    pb_msg(&b, 1, &msg);
  }
  for (v = 0; v < OCGC_PV_COUNT && !m->cpu; v++) {
    const char *name = ocgc_profile_value_name((enum ocgc_profile_value)v);
    pb_uint(&msg, 1, x_id(&x, m, name));
    pb_uint(&msg, 2, x_id(&x, m, strstr(name, "space") ? "bytes" : "count"));
    pb_msg(&b, 1, &msg);
  }
  for (i = 0; i < m->smp.n && !b.err; i++) {
    const struct m_sample *s = &m->smp.p[i];
    for (k = 0; k < s->nloc; k++) pb_varint(&sub, s->loc[k]);
    pb_msg(&msg, 1, &sub);
    for (k = 0; k < (m->cpu ? 2u : OCGC_PV_COUNT); k++) pb_varint(&sub, (uint64_t)s->v[k]);
    pb_msg(&msg, 2, &sub);
    if (m->cpu) {
      const char *cause = s->cause >= 0 ? ocgc_cause_name((unsigned)s->cause) : NULL;
      pb_uint(&sub, 1, x_id(&x, m, "gc_phase"));
      pb_uint(&sub, 2, x_id(&x, m, ocgc_gc_phase_name((enum ocgc_gc_phase)s->phase)));
      pb_msg(&msg, 3, &sub);
      if (s->phase != OCGC_GC_MUTATOR) {
        pb_uint(&sub, 1, x_id(&x, m, "gc_cause"));
        pb_uint(&sub, 2, x_id(&x, m, cause != NULL ? cause : "unknown"));
        pb_msg(&msg, 3, &sub);
      }
      if (ocgc_gc_call_name((enum ocgc_gc_call)s->call) != NULL) {
        pb_uint(&sub, 1, x_id(&x, m, "gc_call"));
        pb_uint(&sub, 2, x_id(&x, m, ocgc_gc_call_name((enum ocgc_gc_call)s->call)));
        pb_msg(&msg, 3, &sub);
      }
    } else if (!s->overflow) {
      pb_uint(&sub, 1, x_id(&x, m, "kind"));
      pb_uint(&sub, 2, x_id(&x, m, ocgc_memprof_kind_name(s->kind)));
      pb_msg(&msg, 3, &sub);
    }
    pb_msg(&b, 2, &msg);
  }
  for (i = 0; i < m->map.n && !b.err; i++) {
    const struct m_map *mp = &m->map.p[i];
    pb_uint(&msg, 1, i + 1);
    pb_uint(&msg, 2, mp->offset); /* as if loaded at its file offset */
    pb_uint(&msg, 3, mp->offset + mp->size);
    pb_uint(&msg, 4, mp->offset);
    pb_uint(&msg, 5, mp->path);
    pb_uint(&msg, 6, mp->build_id);
    pb_uint(&msg, 7, (uint64_t)(mp->has_functions != 0));
    pb_uint(&msg, 8, (uint64_t)(mp->has_lines != 0));
    pb_uint(&msg, 9, (uint64_t)(mp->has_lines != 0));
    pb_msg(&b, 3, &msg);
  }
  for (i = 0; i < m->loc.n && !b.err; i++) {
    const struct m_loc *l = &m->loc.p[i];
    pb_uint(&msg, 1, i + 1);
    pb_uint(&msg, 2, l->map);
    if (l->map != NONE) pb_uint(&msg, 3, l->file_addr);
    if (l->fn != NONE) {
      pb_uint(&sub, 1, l->fn);
      pb_uint(&sub, 2, l->line);
      pb_msg(&msg, 4, &sub);
    }
    pb_msg(&b, 4, &msg);
  }
  for (i = 0; i < m->fn.n && !b.err; i++) {
    const struct m_fn *f = &m->fn.p[i];
    pb_uint(&msg, 1, i + 1);
    pb_uint(&msg, 2, f->name);
    pb_uint(&msg, 3, f->system);
    pb_uint(&msg, 4, f->file);
    pb_msg(&b, 5, &msg);
  }
  pb_uint(&b, 9, (uint64_t)o.time_ns);
  pb_uint(&b, 10, (uint64_t)o.duration_ns);
  if (m->cpu) {
    pb_uint(&msg, 1, x_id(&x, m, "cpu"));
    pb_uint(&msg, 2, x_id(&x, m, "nanoseconds"));
    pb_msg(&b, 11, &msg);
    pb_uint(&b, 12, m->period_ns);
    pb_uint(&b, 13, x_id(&x, m, "ocgc: cpu-clock samples of user space taken from outside "
                               "(perf_event_open); gc_phase from each stack's collector frames, "
                               "gc_cause from the ring's collection at its time; merged from "
                               "several processes"));
    if (comment != NULL) pb_uint(&b, 13, x_id(&x, m, comment));
    pb_uint(&b, 14, x_id(&x, m, "cpu"));
  } else {
    pb_uint(&msg, 1, x_id(&x, m, "space"));
    pb_uint(&msg, 2, x_id(&x, m, "bytes"));
    pb_msg(&b, 11, &msg);
    pb_uint(&b, 12, m->rate_bytes);
    pb_uint(&b, 13, x_id(&x, m, "ocgc: sampled by the OCaml runtime's ocgc patch; figures are "
                               "estimates (sd sqrt(bytes x period)); merged from several "
                               "processes"));
    pb_uint(&b, 13, x_id(&x, m, m->older ? PROFILE_INUSE_OLD : PROFILE_INUSE_LIVE));
    if (comment != NULL) pb_uint(&b, 13, x_id(&x, m, comment));
    pb_uint(&b, 14, x_id(&x, m, ocgc_profile_value_name(o.default_value_set ? o.default_value
                                                                           : OCGC_PV_ALLOC_SPACE)));
  }
  for (i = 0; i < m->str.n; i++) pb_bytes(&b, 6, m->str.p[i], strlen(m->str.p[i]));
  for (i = 0; i < x.n; i++) pb_bytes(&b, 6, x.s[i], strlen(x.s[i]));

  err = b.err ? b.err : msg.err ? msg.err : sub.err;
  if (err == 0 && o.no_gzip) {
    *out = b.p;
    *len = b.len;
    b.p = NULL;
  } else if (err == 0) {
    err = pb_gzip(b.p, b.len, b.max, out, len);
  }
  free(b.p);
  free(msg.p);
  free(sub.p);
  return err;
}
