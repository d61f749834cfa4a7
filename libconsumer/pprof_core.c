/* pprof_core.c - the parts of pprof's profile.proto that every profile of
 * one process shares (pprof_core.h): strings, functions, locations,
 * mappings, made-up frames, value types, labels, and the end (gzipped as
 * `go tool pprof`, Pyroscope and Parca take it).  pprof.c (allocations)
 * and cpuprof_pprof.c (CPU) write their samples with it.
 *
 * The message (github.com/google/pprof, proto/profile.proto), written with
 * pbwrite.c's encoder: sample 2 (location_id 1, value 2, label 3 {key 1,
 * str 2}), mapping 3, location 4 (id 1, mapping_id 2, address 3, line 4),
 * function 5 (id 1, name 2, system_name 3, filename 4), string_table 6.
 * Fields may come in any order, so the strings, collected while the rest
 * is written, go last.
 *
 * Invariants: ids are 1-based and each location, function and string is
 * written once (hash tables keyed by address, by (name, file), by bytes);
 * no address of the process is written unless asked (a mapping as if
 * loaded at its file offset, a location at its place in that file, one in
 * no mapping without an address): its load addresses would undo its ASLR
 * for whoever reads the profile; every string of the target's (function,
 * symbol and file names, mapping paths, build ids) is escaped (escape.c:
 * printable ASCII, "\xNN"), so no control byte reaches pprof's
 * presenters; the output stops at the writer's max bytes. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "ocgc/symbols.h"
#include "pprof_core.h"

uint64_t pprof_str(struct pprof_w *w, const char *s)
{
  struct pprof_strings *t = &w->str;
  uint64_t h = fnv(s), i = im_get(&t->by_hash, h);
  if (i != 0 && strcmp(t->s[i - 1], s) == 0) return i - 1;
  if (i != 0) { /* a hash collision: scan (rare; correct either way) */
    size_t k;
    for (k = 0; k < t->n; k++)
      if (strcmp(t->s[k], s) == 0) return k;
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    const char **q = realloc(t->s, cap * sizeof *q);
    if (q == NULL) { t->err = -ENOMEM; return 0; }
    t->s = q;
    t->cap = cap;
  }
  t->s[t->n] = s;
  if (i == 0 && im_put(&t->by_hash, h, t->n + 1) != 0) t->err = -ENOMEM;
  return t->n++;
}

int pprof_begin(struct pprof_w *w, struct ocgc_symbols *syms, size_t max, int absolute)
{
  memset(w, 0, sizeof *w);
  w->out.max = max;
  w->msg.max = w->sub.max = SIZE_MAX;
  w->syms = syms;
  w->absolute = absolute != 0;
  w->nmappings = syms ? ocgc_symbols_mappings(syms, &w->mappings) : 0;
  if (w->nmappings > 0 && (w->mapping_used = calloc(w->nmappings, 1)) == NULL) return -ENOMEM;
  pprof_str(w, "");
  return 0;
}

/* Where mapping [m] is said to be: its own addresses, or (the default) as
 * if loaded at its file offset, so that no address of the process is
 * written (pprof's base, start - offset + the ELF segment's own, then
 * names the same ELF addresses). */
static uint64_t map_start(const struct pprof_w *w, const struct ocgc_symbols_mapping *m)
{
  return w->absolute ? m->start : m->offset;
}

/* [s] (a target's) escaped: itself when nothing is, else a copy the
 * writer owns. */
static const char *esc(struct pprof_w *w, const char *s)
{
  size_t n;
  char *c;
  if (s == NULL || !esc_needed(s, NULL)) return s;
  if (w->nowned == w->capowned) {
    size_t cap = w->capowned ? w->capowned * 2 : 64;
    char **q = realloc(w->owned, cap * sizeof *q);
    if (q == NULL) { w->out.err = -ENOMEM; return ""; }
    w->owned = q;
    w->capowned = cap;
  }
  n = ESC_SIZE(strlen(s));
  if ((c = malloc(n)) == NULL) { w->out.err = -ENOMEM; return ""; }
  esc_bytes(s, NULL, c, n);
  w->owned[w->nowned++] = c;
  return c;
}

static uint64_t function_id(struct pprof_w *w, const char *name, const char *system,
                            const char *file)
{
  uint64_t n = pprof_str(w, name), sys = pprof_str(w, system);
  uint64_t fl = file ? pprof_str(w, file) : 0;
  /* The key is the three string indexes, 21 bits each: exact, so two
   * functions never share an id (past 2^21 strings, none is shared). */
  int exact = n < (1u << 21) && fl < (1u << 21) && sys < (1u << 21);
  uint64_t key = n | fl << 21 | sys << 42, id = exact ? im_get(&w->fn_by_key, key) : 0;
  if (id != 0) return id;
  id = ++w->nfn;
  if (exact && im_put(&w->fn_by_key, key, id) != 0) w->out.err = -ENOMEM;
  pb_uint(&w->msg, 1, id);
  pb_uint(&w->msg, 2, n);
  pb_uint(&w->msg, 3, sys);
  pb_uint(&w->msg, 4, fl);
  pb_msg(&w->out, 5, &w->msg);
  return id;
}

uint64_t pprof_location(struct pprof_w *w, uint64_t addr)
{
  struct ocgc_symbol sym;
  uint64_t id = im_get(&w->loc_by_addr, addr);
  if (id != 0) return id;
  id = ++w->nloc;
  if (im_put(&w->loc_by_addr, addr, id) != 0) w->out.err = -ENOMEM;
  ocgc_symbols_lookup(w->syms, addr, 1, &sym);
  if (sym.function != NULL) {
    uint64_t fn = function_id(w, esc(w, sym.function), esc(w, sym.symbol), esc(w, sym.file));
    pb_uint(&w->sub, 1, fn);
    pb_uint(&w->sub, 2, sym.line);
  }
  pb_uint(&w->msg, 1, id);
  if (sym.mapping != OCGC_SYMBOLS_NONE && sym.mapping < w->nmappings) {
    /* w->mappings stays valid across lookups (only ocgc_symbols_mappings
     * renews it), and a mapping's place never changes. */
    const struct ocgc_symbols_mapping *m = &w->mappings[sym.mapping];
    pb_uint(&w->msg, 2, (uint64_t)sym.mapping + 1);
    w->mapping_used[sym.mapping] = 1;
    pb_uint(&w->msg, 3, addr - m->start + map_start(w, m));
  } else if (w->absolute) {
    pb_uint(&w->msg, 3, addr); /* else none: an address in no file is the process's own */
  }
  if (sym.function != NULL) pb_msg(&w->msg, 4, &w->sub);
  pb_msg(&w->out, 4, &w->msg);
  return id;
}

uint64_t pprof_synthetic(struct pprof_w *w, unsigned which, const char *name)
{
  uint64_t fn;
  if (which >= PPROF_SYNTHETIC_MAX) return 0;
  if (w->synthetic[which] != 0) return w->synthetic[which];
  fn = function_id(w, name, name, NULL);
  w->synthetic[which] = ++w->nloc;
  pb_uint(&w->sub, 1, fn);
  pb_uint(&w->msg, 1, w->synthetic[which]);
  pb_msg(&w->msg, 4, &w->sub);
  pb_msg(&w->out, 4, &w->msg);
  return w->synthetic[which];
}

void pprof_value_type(struct pprof_w *w, unsigned field, const char *type, const char *unit)
{
  pb_uint(&w->msg, 1, pprof_str(w, type));
  pb_uint(&w->msg, 2, pprof_str(w, unit));
  pb_msg(&w->out, field, &w->msg);
}

void pprof_label(struct pprof_w *w, struct pb_buf *sample, const char *key, const char *value)
{
  pb_uint(&w->sub, 1, pprof_str(w, key));
  pb_uint(&w->sub, 2, pprof_str(w, value));
  pb_msg(sample, 3, &w->sub);
}

static void mappings(struct pprof_w *w)
{
  size_t i;
  /* A fresh copy: the lookups have read the files since the first. */
  if (w->syms == NULL || ocgc_symbols_mappings(w->syms, &w->mappings) != w->nmappings) return;
  for (i = 0; i < w->nmappings; i++) {
    const struct ocgc_symbols_mapping *m = &w->mappings[i];
    if (!w->mapping_used[i]) continue;
    pb_uint(&w->msg, 1, i + 1);
    pb_uint(&w->msg, 2, map_start(w, m));
    pb_uint(&w->msg, 3, map_start(w, m) + (m->limit - m->start));
    pb_uint(&w->msg, 4, m->offset);
    pb_uint(&w->msg, 5, pprof_str(w, esc(w, m->path)));
    pb_uint(&w->msg, 6, pprof_str(w, esc(w, m->build_id)));
    pb_uint(&w->msg, 7, (uint64_t)(m->has_functions != 0));
    pb_uint(&w->msg, 8, (uint64_t)(m->has_lines != 0));
    pb_uint(&w->msg, 9, (uint64_t)(m->has_lines != 0));
    pb_msg(&w->out, 3, &w->msg);
  }
}

int pprof_end(struct pprof_w *w, int no_gzip, unsigned char **out, size_t *len)
{
  size_t i;
  int err;
  mappings(w);
  for (i = 0; i < w->str.n && !w->str.err; i++) pb_bytes(&w->out, 6, w->str.s[i], strlen(w->str.s[i]));
  err = w->out.err ? w->out.err : w->msg.err ? w->msg.err : w->sub.err ? w->sub.err : w->str.err;
  if (err == 0 && no_gzip) {
    *out = w->out.p;
    *len = w->out.len;
    w->out.p = NULL;
  } else if (err == 0) {
    err = pb_gzip(w->out.p, w->out.len, w->out.max, out, len);
  }
  free(w->out.p);
  free(w->msg.p);
  free(w->sub.p);
  free(w->str.s);
  im_free(&w->str.by_hash);
  im_free(&w->loc_by_addr);
  im_free(&w->fn_by_key);
  free(w->mapping_used);
  for (i = 0; i < w->nowned; i++) free(w->owned[i]);
  free(w->owned);
  memset(w, 0, sizeof *w);
  return err;
}
