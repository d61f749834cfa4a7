/* frame_names.c - what a process's frame addresses are, kept apart from
 * its symbolizer (ocgc/pprof_merge.h: struct ocgc_frame_names), so that
 * its profile can be merged with others' once the process and its /proc
 * entries are gone.
 *
 * Invariants: every string is a target's, stored escaped (escape.c, the
 * escape ocgc_pprof_write applies) and interned (each once); an address
 * is looked up once, named or not; at most OCGC_FRAME_NAMES_MAX addresses
 * and OCGC_FRAME_NAMES_BYTES of strings (past them, addresses are left
 * out: a merge places them nowhere); no process address is kept but as a
 * key (a frame's place is its file offset). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "frame_names.h"
#include "ocgc/pprof_merge.h"

int ocgc_frame_names_new(struct ocgc_frame_names **out)
{
  if (out == NULL) return -EINVAL;
  *out = calloc(1, sizeof **out);
  return *out != NULL ? 0 : -ENOMEM;
}

/* [s] (a target's, may be NULL) escaped and interned: NULL for NULL or
 * out of room (then *err). */
static const char *intern(struct ocgc_frame_names *fn, const char *s, int *err)
{
  size_t n, k;
  uint64_t h, i;
  char *c;
  if (s == NULL) return NULL;
  n = ESC_SIZE(strlen(s));
  if ((c = malloc(n)) == NULL) {
    *err = -ENOMEM;
    return NULL;
  }
  esc_bytes(s, NULL, c, n);
  h = fnv(c);
  if ((i = im_get(&fn->str_by_hash, h)) != 0) {
    if (strcmp(fn->strs[i - 1], c) == 0) {
      free(c);
      return fn->strs[i - 1];
    }
    for (k = 0; k < fn->nstrs; k++) /* a collision: rare */
      if (strcmp(fn->strs[k], c) == 0) {
        free(c);
        return fn->strs[k];
      }
  }
  n = strlen(c) + 1;
  if (fn->bytes + n > OCGC_FRAME_NAMES_BYTES) {
    free(c);
    return NULL;
  }
  if (fn->nstrs == fn->capstrs) {
    size_t cap = fn->capstrs ? fn->capstrs * 2 : 64;
    char **q = realloc(fn->strs, cap * sizeof *q);
    if (q == NULL) {
      free(c);
      *err = -ENOMEM;
      return NULL;
    }
    fn->strs = q;
    fn->capstrs = cap;
  }
  if (i == 0 && im_put(&fn->str_by_hash, h, fn->nstrs + 1) != 0) {
    free(c);
    *err = -ENOMEM;
    return NULL;
  }
  fn->strs[fn->nstrs++] = c;
  fn->bytes += n;
  return c;
}

/* The index of the process's mapping [m] in fn->maps, added if need be
 * (FN_NONE: out of room). */
static unsigned map_of(struct ocgc_frame_names *fn, const struct ocgc_symbols_mapping *m, int *err)
{
  const char *path = intern(fn, m->path != NULL ? m->path : "", err);
  const char *bid = intern(fn, m->build_id != NULL ? m->build_id : "", err);
  size_t i;
  if (path == NULL || bid == NULL) return FN_NONE;
  for (i = 0; i < fn->nmaps; i++) /* a process maps few files */
    if (fn->maps[i].path == path && fn->maps[i].build_id == bid && fn->maps[i].offset == m->offset)
      return (unsigned)i;
  if (fn->nmaps >= 4096) return FN_NONE;
  if (fn->nmaps == fn->capmaps) {
    size_t cap = fn->capmaps ? fn->capmaps * 2 : 8;
    struct fn_map *q = realloc(fn->maps, cap * sizeof *q);
    if (q == NULL) {
      *err = -ENOMEM;
      return FN_NONE;
    }
    fn->maps = q;
    fn->capmaps = cap;
  }
  fn->maps[fn->nmaps] = (struct fn_map){path, bid, m->offset, m->limit - m->start,
                                        m->has_functions != 0, m->has_lines != 0};
  return (unsigned)fn->nmaps++;
}

/* Look [addr] up and keep what it is. */
static int add_one(struct ocgc_frame_names *fn, uint64_t addr, int is_return,
                   struct ocgc_symbols *syms)
{
  struct ocgc_symbol sym;
  struct fn_frame f = {FN_NONE, 0, NULL, NULL, NULL, 0};
  const struct ocgc_symbols_mapping *maps = NULL;
  size_t nmaps;
  int err = 0;
  if (fn->nframes >= OCGC_FRAME_NAMES_MAX) return 0;
  ocgc_symbols_lookup(syms, addr, is_return, &sym);
  /* after the lookup: it may have read the file (its build id) and
   * renewed the array */
  nmaps = ocgc_symbols_mappings(syms, &maps);
  if (sym.mapping != OCGC_SYMBOLS_NONE && sym.mapping < nmaps) {
    const struct ocgc_symbols_mapping *m = &maps[sym.mapping];
    f.map = map_of(fn, m, &err);
    f.file_addr = addr - m->start + m->offset;
  }
  if (sym.function != NULL && f.map != FN_NONE) {
    f.function = intern(fn, sym.function, &err);
    f.symbol = intern(fn, sym.symbol != NULL ? sym.symbol : sym.function, &err);
    f.file = intern(fn, sym.file, &err);
    f.line = sym.line;
    if (f.function == NULL || f.symbol == NULL) f.function = f.symbol = f.file = NULL;
  }
  if (err != 0) return err;
  if (fn->nframes == fn->capframes) {
    size_t cap = fn->capframes ? fn->capframes * 2 : 256;
    struct fn_frame *q = realloc(fn->frames, cap * sizeof *q);
    if (q == NULL) return -ENOMEM;
    fn->frames = q;
    fn->capframes = cap;
  }
  if (im_put(&fn->by_addr, addr, fn->nframes + 1) != 0) return -ENOMEM;
  fn->frames[fn->nframes++] = f;
  return 0;
}

size_t ocgc_frame_names_missing(const struct ocgc_frame_names *fn, const struct ocgc_memprof *p)
{
  size_t i, n = 0;
  unsigned d;
  if (p == NULL) return 0;
  for (i = 0; i < p->nstacks; i++)
    for (d = 0; d < p->stack[i].depth && d < OCGC_MEMPROF_MAX_DEPTH; d++)
      n += fn_get(fn, p->stack[i].frames[d]) == NULL;
  return n;
}

int ocgc_frame_names_add(struct ocgc_frame_names *fn, const struct ocgc_memprof *p,
                         struct ocgc_symbols *syms)
{
  size_t i;
  unsigned d;
  int err;
  if (fn == NULL || p == NULL || syms == NULL) return -EINVAL;
  for (i = 0; i < p->nstacks; i++)
    for (d = 0; d < p->stack[i].depth && d < OCGC_MEMPROF_MAX_DEPTH; d++) {
      uint64_t a = p->stack[i].frames[d];
      if (fn_get(fn, a) != NULL) continue;
      if ((err = add_one(fn, a, 1, syms)) != 0) return err;
    }
  return 0;
}

int ocgc_frame_names_add_cpu(struct ocgc_frame_names *fn, const struct ocgc_cpuprof *p,
                             struct ocgc_symbols *syms)
{
  const struct ocgc_cpuprof_row *rows;
  size_t i, n;
  unsigned d;
  int err;
  if (fn == NULL || p == NULL || syms == NULL) return -EINVAL;
  n = ocgc_cpuprof_rows(p, &rows);
  for (i = 0; i < n; i++)
    for (d = 0; d < rows[i].depth && d < OCGC_UNWIND_MAX_DEPTH; d++) {
      uint64_t a = rows[i].frames[d];
      if (fn_get(fn, a) != NULL) continue;
      /* frames[0] is the sampled instruction, the others return addresses */
      if ((err = add_one(fn, a, d > 0, syms)) != 0) return err;
    }
  return 0;
}

uint64_t ocgc_frame_names_memory(const struct ocgc_frame_names *fn)
{
  if (fn == NULL) return 0;
  return sizeof *fn + fn->bytes + fn->capframes * sizeof *fn->frames +
         fn->capmaps * sizeof *fn->maps + fn->capstrs * sizeof *fn->strs +
         (fn->by_addr.cap + fn->str_by_hash.cap) * 2 * sizeof(uint64_t);
}

void ocgc_frame_names_free(struct ocgc_frame_names *fn)
{
  size_t i;
  if (fn == NULL) return;
  for (i = 0; i < fn->nstrs; i++) free(fn->strs[i]);
  free(fn->strs);
  free(fn->frames);
  free(fn->maps);
  im_free(&fn->by_addr);
  im_free(&fn->str_by_hash);
  free(fn);
}
