/* pprof.c - a profile as pprof's profile.proto (ocgc_pprof_write), gzipped
 * as `go tool pprof`, Pyroscope and Parca take it.
 *
 * The message (github.com/google/pprof, proto/profile.proto), written with
 * a protobuf encoder of our own (varints and length-delimited fields, all
 * this needs): sample_type 1, sample 2 (location_id 1, value 2, label 3),
 * mapping 3, location 4 (id 1, mapping_id 2, address 3, line 4), function 5
 * (id 1, name 2, system_name 3, filename 4), string_table 6, time_nanos 9,
 * duration_nanos 10, period_type 11, period 12, comment 13,
 * default_sample_type 14.  Fields may come in any order, so the strings,
 * collected while the rest is written, go last.
 *
 * Invariants: ids are 1-based and each location, function and string is
 * written once (hash tables keyed by address, by (name, file), by bytes);
 * no address of the process is written unless opts->absolute_addresses
 * (a mapping as if loaded at its file offset, a location at its place in
 * that file, one in no mapping without an address): its load addresses
 * would undo its ASLR for whoever reads the profile;
 * every string of the target's (function, symbol and file names, mapping
 * paths, build ids) is escaped (escape.c: printable ASCII, "\xNN"), so
 * no control byte reaches pprof's presenters; the output stops at
 * max_bytes. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "ocgc/profile.h"
#include "opts.h"
#include "pbwrite.h"
#include "idmap.h"
#include "profile.h"

#define DEFAULT_MAX (UINT64_C(64) << 20)

/* ---- interning ------------------------------------------------------------------- */

/* The string table: each string once, "" first. */
struct strings {
  struct idmap by_hash; /* hash -> index + 1 of the first string with it */
  const char **s;       /* borrowed: the symbolizer's or ours, alive till the end */
  size_t n, cap;
  int err;
};

static uint64_t str_id(struct strings *t, const char *s)
{
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

/* ---- the profile ------------------------------------------------------------------- */

struct writer {
  struct pb_buf out, msg, sub;
  struct strings str;
  struct idmap loc_by_addr, fn_by_key;
  struct ocgc_symbols *syms;
  unsigned char *mapping_used; /* by mapping index */
  size_t nmappings;
  const struct ocgc_symbols_mapping *mappings;
  uint64_t nloc, nfn;
  uint64_t synthetic[2]; /* the location ids of the two made-up frames */
  int absolute;          /* opts->absolute_addresses */
  char **owned;          /* escaped copies, freed at the end */
  size_t nowned, capowned;
  char rate_line[320];   /* the rate's comment (the string table borrows it) */
};

/* Where mapping [m] is said to be: its own addresses, or (the default) as
 * if loaded at its file offset, so that no address of the process is
 * written (pprof's base, start - offset + the ELF segment's own, then
 * names the same ELF addresses). */
static uint64_t map_start(const struct writer *w, const struct ocgc_symbols_mapping *m)
{
  return w->absolute ? m->start : m->offset;
}

/* [s] (a target's) escaped: itself when nothing is, else a copy the
 * writer owns. */
static const char *esc(struct writer *w, const char *s)
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

static uint64_t function_id(struct writer *w, const char *name, const char *system,
                            const char *file)
{
  uint64_t n = str_id(&w->str, name), sys = str_id(&w->str, system);
  uint64_t fl = file ? str_id(&w->str, file) : 0;
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

/* A location for [addr], with its line where named. */
static uint64_t location_id(struct writer *w, uint64_t addr)
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

/* A location of a frame that stands for what was not kept. */
static uint64_t synthetic_id(struct writer *w, unsigned which, const char *name)
{
  uint64_t fn;
  if (w->synthetic[which] != 0) return w->synthetic[which];
  fn = function_id(w, name, name, NULL);
  w->synthetic[which] = ++w->nloc;
  pb_uint(&w->sub, 1, fn);
  pb_uint(&w->msg, 1, w->synthetic[which]);
  pb_msg(&w->msg, 4, &w->sub);
  pb_msg(&w->out, 4, &w->msg);
  return w->synthetic[which];
}

static void value_type(struct writer *w, unsigned field, const char *type, const char *unit)
{
  pb_uint(&w->msg, 1, str_id(&w->str, type));
  pb_uint(&w->msg, 2, str_id(&w->str, unit));
  pb_msg(&w->out, field, &w->msg);
}

static void sample(struct writer *w, const struct ocgc_memprof_stack *s,
                   const int64_t v[OCGC_PV_COUNT])
{
  struct pb_buf ids = {NULL, 0, 0, SIZE_MAX, 0};
  unsigned d, i;
  if (s->overflow) {
    pb_varint(&ids, synthetic_id(w, 0, PROFILE_FRAME_FULL));
  } else {
    for (d = 0; d < s->depth; d++) pb_varint(&ids, location_id(w, s->frames[d]));
    if (s->cut) pb_varint(&ids, synthetic_id(w, 1, PROFILE_FRAME_CUT));
  }
  pb_msg(&w->msg, 1, &ids); /* packed location ids */
  for (i = 0; i < OCGC_PV_COUNT; i++) pb_varint(&ids, (uint64_t)v[i]);
  pb_msg(&w->msg, 2, &ids); /* packed values (int64 as two's complement varints) */
  if (!s->overflow) {
    pb_uint(&w->sub, 1, str_id(&w->str, "kind"));
    pb_uint(&w->sub, 2, str_id(&w->str, ocgc_memprof_kind_name(s->kind)));
    pb_msg(&w->msg, 3, &w->sub);
  }
  if (ids.err) w->out.err = ids.err;
  free(ids.p);
  pb_msg(&w->out, 2, &w->msg);
}

static void mappings(struct writer *w)
{
  size_t i;
  /* A fresh copy: the lookups have read the files since the first. */
  if (ocgc_symbols_mappings(w->syms, &w->mappings) != w->nmappings) return;
  for (i = 0; i < w->nmappings; i++) {
    const struct ocgc_symbols_mapping *m = &w->mappings[i];
    if (!w->mapping_used[i]) continue;
    pb_uint(&w->msg, 1, i + 1);
    pb_uint(&w->msg, 2, map_start(w, m));
    pb_uint(&w->msg, 3, map_start(w, m) + (m->limit - m->start));
    pb_uint(&w->msg, 4, m->offset);
    pb_uint(&w->msg, 5, str_id(&w->str, esc(w, m->path)));
    pb_uint(&w->msg, 6, str_id(&w->str, esc(w, m->build_id)));
    pb_uint(&w->msg, 7, (uint64_t)(m->has_functions != 0));
    pb_uint(&w->msg, 8, (uint64_t)(m->has_lines != 0));
    pb_uint(&w->msg, 9, (uint64_t)(m->has_lines != 0));
    pb_msg(&w->out, 3, &w->msg);
  }
}


/* The rate the samples were drawn at, said in a comment: the period says
 * the rate in force at the copy's end, not whether it was a window's lease
 * nor whether it changed during the window. */
static void rate_comment(struct writer *w, const struct ocgc_memprof *p, int window)
{
  char *line = w->rate_line;
  size_t cap = sizeof w->rate_line;
  int n = snprintf(line, cap, "ocgc: samples drawn at a rate of %" PRIu64 " bytes (%s)",
                   p->rate_bytes,
                   p->rate_leased ? "a lease: ocgc profile --rate" : "the program's base rate");
  if (window && p->rate_changes > 0 && n > 0 && (size_t)n < cap)
    snprintf(line + n, cap - (size_t)n,
             "; the rate changed %" PRIu64 " times during the window: its samples were drawn "
             "at more than one rate, each weighed by its own", p->rate_changes);
  pb_uint(&w->out, 13, str_id(&w->str, line));
}

int ocgc_pprof_write(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                     const struct ocgc_pprof_opts *opts, unsigned char **out, size_t *len)
{
  struct ocgc_pprof_opts o;
  struct writer w;
  size_t i, max;
  int err;
  unsigned v;
  if (p == NULL || out == NULL || len == NULL) return -EINVAL;
  *out = NULL;
  *len = 0;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
  if (o.default_value_set && (unsigned)o.default_value >= OCGC_PV_COUNT) return -EINVAL;
  max = o.max_bytes ? o.max_bytes : DEFAULT_MAX;
  memset(&w, 0, sizeof w);
  w.out.max = max;
  w.msg.max = w.sub.max = SIZE_MAX;
  w.syms = syms;
  w.absolute = o.absolute_addresses != 0;
  w.nmappings = ocgc_symbols_mappings(syms, &w.mappings);
  if (w.nmappings > 0 && (w.mapping_used = calloc(w.nmappings, 1)) == NULL) return -ENOMEM;
  str_id(&w.str, "");

  for (v = 0; v < OCGC_PV_COUNT; v++) {
    const char *name = ocgc_profile_value_name((enum ocgc_profile_value)v);
    value_type(&w, 1, name, strstr(name, "space") ? "bytes" : "count");
  }
  for (i = 0; i < p->nstacks && !w.out.err; i++) {
    int64_t vals[OCGC_PV_COUNT];
    int any = 0;
    ocgc_profile_values(&p->stack[i], vals);
    for (v = 0; v < OCGC_PV_COUNT; v++) any |= vals[v] != 0;
    if (any) sample(&w, &p->stack[i], vals);
  }
  mappings(&w);
  pb_uint(&w.out, 9, (uint64_t)o.time_ns);
  pb_uint(&w.out, 10, (uint64_t)o.duration_ns);
  value_type(&w, 11, "space", "bytes");
  pb_uint(&w.out, 12, p->rate_bytes);
  pb_uint(&w.out, 13, str_id(&w.str, "ocgc: sampled by the OCaml runtime's ocgc patch; "
                                    "figures are estimates (sd sqrt(bytes x period))"));
  rate_comment(&w, p, o.duration_ns != 0);
  /* The in-use rule (ocgc/memprof.h), said in every profile. */
  pb_uint(&w.out, 13,
          str_id(&w.str, p->live_known ? PROFILE_INUSE_LIVE : PROFILE_INUSE_OLD));
  pb_uint(&w.out, 14, str_id(&w.str, ocgc_profile_value_name(
                                        o.default_value_set ? o.default_value : OCGC_PV_ALLOC_SPACE)));
  for (i = 0; i < w.str.n && !w.str.err; i++) pb_bytes(&w.out, 6, w.str.s[i], strlen(w.str.s[i]));

  err = w.out.err ? w.out.err : w.msg.err ? w.msg.err : w.str.err;
  if (err == 0 && o.no_gzip) {
    *out = w.out.p;
    *len = w.out.len;
    w.out.p = NULL;
  } else if (err == 0) {
    err = pb_gzip(w.out.p, w.out.len, max, out, len);
  }
  free(w.out.p);
  free(w.msg.p);
  free(w.sub.p);
  free(w.str.s);
  im_free(&w.str.by_hash);
  im_free(&w.loc_by_addr);
  im_free(&w.fn_by_key);
  free(w.mapping_used);
  for (i = 0; i < w.nowned; i++) free(w.owned[i]);
  free(w.owned);
  return err;
}
