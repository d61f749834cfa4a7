/* report_profile.c - the allocation profile in the text and JSON GC
 * reports (report.h): the top allocating and the top promoting functions
 * of the report's profile (rep_meta.prof, named with rep_meta.syms), each
 * with its bytes and its share.
 *
 * Every figure is libocgc's (ocgc_profile_functions: the same rules as the
 * HTML report's tables, `ocgc profile` and pprof); a function's bytes are
 * its flat figure (the stacks whose innermost frame it is), its share
 * those bytes over the sum of every function's, so the shares of a table
 * add up to at most 1.
 *
 * Invariants: at most REP_TOP_FUNCTIONS rows a table, none of zero bytes;
 * names are the target's bytes already escaped to printable ASCII by
 * libocgc, and written through the text or JSON escaping all the same. */

#include <inttypes.h>
#include <stdlib.h>

#include "json.h"
#include "report.h"

#define REP_TOP_FUNCTIONS 10

static const char *const table_key[2] = {"top_allocating", "top_promoting"};
static const char *const table_title[2] = {"top allocating functions (bytes allocated)",
                                           "top promoting functions (bytes the minor heap promoted)"};
static const enum ocgc_profile_value table_value[2] = {OCGC_PV_ALLOC_SPACE, OCGC_PV_PROMOTED_SPACE};

/* The rows of one table: their count (<= REP_TOP_FUNCTIONS), the total
 * of every function's flat bytes in *total; *fs to free. */
static size_t top(const struct rep_meta *m, enum ocgc_profile_value v,
                  struct ocgc_profile_functions **fs, int64_t *total)
{
  size_t i, rows = 0;
  *total = 0;
  if (ocgc_profile_functions(m->prof, m->syms, v, fs) != 0) {
    *fs = NULL;
    return 0;
  }
  for (i = 0; i < (*fs)->n; i++)
    if ((*fs)->fn[i].flat[v] > 0) *total += (*fs)->fn[i].flat[v];
  while (rows < (*fs)->n && rows < REP_TOP_FUNCTIONS && (*fs)->fn[rows].flat[v] > 0) rows++;
  return rows;
}

static double share(int64_t part, int64_t whole)
{
  return whole > 0 && part > 0 ? (double)part / (double)whole : 0;
}

/* Whether any frame of [fs]'s first [rows] is an address: names missing. */
static int unnamed(const struct ocgc_profile_functions *fs, size_t rows)
{
  size_t i;
  for (i = 0; i < rows; i++)
    if (fs->fn[i].name[0] == '0' && fs->fn[i].name[1] == 'x') return 1;
  return 0;
}

void rep_profile_text(FILE *out, const struct rep_meta *m)
{
  const struct ocgc_memprof *p = m->prof;
  char b[32], esc[1100];
  int missing = 0;
  unsigned t;
  if (p == NULL) return;
  fprintf(out, "\nAllocation profile  (sampled every %s on average, %" PRIu64
          " samples: estimates)\n", cm_fmt_bytes(b, sizeof b, p->rate_bytes), p->samples);
  for (t = 0; t < 2; t++) {
    struct ocgc_profile_functions *fs;
    int64_t total;
    size_t i, rows = top(m, table_value[t], &fs, &total);
    fprintf(out, "  %s\n", table_title[t]);
    if (rows == 0) fputs("    (none in this window)\n", out);
    for (i = 0; i < rows; i++) {
      int64_t v = fs->fn[i].flat[table_value[t]];
      fprintf(out, "    %10s %5.1f%%  %s\n", cm_fmt_bytes(b, sizeof b, (uint64_t)v),
              100.0 * share(v, total), tool_esc(fs->fn[i].name, esc, sizeof esc));
    }
    if (fs != NULL && unnamed(fs, rows)) missing = 1;
    ocgc_profile_functions_free(fs);
  }
  if (missing)
    fputs("  (0x... : a function that could not be named: the program was gone, or its\n"
          "  executable or libraries could not be read)\n", out);
}

void rep_profile_json(struct json *j, const struct rep_meta *m)
{
  const struct ocgc_memprof *p = m->prof;
  unsigned t;
  json_key(j, "profile");
  if (p == NULL) {
    json_null(j);
    return;
  }
  json_obj(j, JSON_LINES);
  json_kv_u64(j, "rate_bytes", p->rate_bytes);
  json_kv_u64(j, "samples", p->samples);
  json_kv_u64(j, "overflow_samples", p->overflow_samples);
  json_kv_u64(j, "cut_samples", p->cut_samples);
  json_kv_bool(j, "named", m->syms != NULL);
  for (t = 0; t < 2; t++) {
    struct ocgc_profile_functions *fs;
    int64_t total;
    size_t i, rows = top(m, table_value[t], &fs, &total);
    json_key(j, table_key[t]);
    json_arr(j, JSON_LINES);
    for (i = 0; i < rows; i++) {
      const struct ocgc_profile_function *fn = &fs->fn[i];
      json_obj(j, JSON_INLINE);
      json_kv_str(j, "function", fn->name);
      json_kv_u64(j, "bytes", (uint64_t)fn->flat[table_value[t]]);
      json_key(j, "share");
      json_double(j, 4, share(fn->flat[table_value[t]], total));
      json_kv_u64(j, "cumulative_bytes",
                  fn->cum[table_value[t]] > 0 ? (uint64_t)fn->cum[table_value[t]] : 0);
      json_obj_end(j);
    }
    json_arr_end(j);
    ocgc_profile_functions_free(fs);
  }
  json_obj_end(j);
}
