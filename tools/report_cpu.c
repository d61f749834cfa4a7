/* report_cpu.c - the CPU profile of a report's window (report.h: struct
 * rep_cpu): the samples of each gc_phase, the top functions and the call
 * tree by phase, made from the window's folded stacks with the phase as
 * the outermost frame (report_cpu_take.c takes them and the window's
 * figures from a gathered window); and the JSON member "cpu", which the
 * HTML report's "Where the CPU goes" (html_cpu.c) agrees with.
 *
 * Invariants:
 * - the folded lines are libocgc's: every name escaped to printable ASCII
 *   with ';' and ' ' escaped too, so a line splits into frames at ';' and
 *   its count at the last ' ' whatever the target's names; the HTML and
 *   JSON writers escape them again for where they go;
 * - bounded whatever the target: at most REP_CPU_MAX_LINES stacks of at most REP_CPU_MAX_DEPTH frames, so at
 *   most 1 + lines x depth nodes;
 * - the tree is ocgc_profile_tree's shape (ocgc/profile.h): the stacks
 *   merged from the outermost frame, children sorted by name, depth-first
 *   order, value[0] the samples; the root's children are the phases
 *   ("[minor]"), so every frame lies under exactly one phase. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"

#define REP_CPU_MAX_LINES 200000u
#define REP_CPU_MAX_DEPTH 160u

/* ---- the tree ----------------------------------------------------------------------- */

struct stack {
  char **frames; /* outermost first: frames[0] the "[phase]" */
  unsigned depth;
  uint64_t count;
};

static int stack_cmp(const void *a, const void *b)
{
  const struct stack *x = a, *y = b;
  unsigned i;
  for (i = 0; i < x->depth && i < y->depth; i++) {
    int c = strcmp(x->frames[i], y->frames[i]);
    if (c != 0) return c;
  }
  return x->depth < y->depth ? -1 : x->depth > y->depth;
}

int rep_cpu_phase_of(const char *frame)
{
  int p;
  size_t n = strlen(frame);
  if (n < 3 || frame[0] != '[' || frame[n - 1] != ']') return -1;
  for (p = 0; p < OCGC_GC_PHASE_COUNT; p++) {
    const char *name = ocgc_gc_phase_name((enum ocgc_gc_phase)p);
    if (strlen(name) == n - 2 && strncmp(frame + 1, name, n - 2) == 0) return p;
  }
  return -1;
}

/* [text]'s folded lines ("[phase];outer;...;inner COUNT") into stacks,
 * cut in place: their number, or -ENOMEM. */
static long parse_folded(char *text, struct stack **out, char ***frames_out)
{
  size_t lines = 0, nframes = 0, i;
  struct stack *st;
  char **fr, *p, *line;
  long n = 0;
  for (p = text; *p != '\0'; p++) {
    if (*p == '\n') lines++;
    if (*p == ';') nframes++;
  }
  lines++;
  if (lines > REP_CPU_MAX_LINES) lines = REP_CPU_MAX_LINES;
  nframes += lines;
  *out = st = calloc(lines, sizeof *st);
  *frames_out = fr = calloc(nframes, sizeof *fr);
  if (st == NULL || fr == NULL) return -ENOMEM;
  for (line = text, i = 0; line != NULL && *line != '\0' && (size_t)n < lines;) {
    char *nl = strchr(line, '\n'), *sp, *f;
    if (nl) *nl = '\0';
    sp = strrchr(line, ' ');
    if (sp != NULL && sp != line) {
      *sp = '\0';
      st[n].count = strtoull(sp + 1, NULL, 10);
      st[n].frames = fr + i;
      for (f = line; f != NULL && st[n].depth < REP_CPU_MAX_DEPTH;) {
        char *semi = strchr(f, ';');
        if (semi) *semi = '\0';
        fr[i++] = f;
        st[n].depth++;
        f = semi ? semi + 1 : NULL;
      }
      if (st[n].count > 0 && rep_cpu_phase_of(st[n].frames[0]) >= 0) n++;
    }
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

/* The tree of [st] (sorted): its nodes in depth-first order. */
static int make_tree(struct rep_cpu *c, struct stack *st, long n)
{
  struct ocgc_profile_tree *t;
  uint32_t path[REP_CPU_MAX_DEPTH + 1], *last;
  size_t cap = 1;
  long s;
  for (s = 0; s < n; s++) cap += st[s].depth;
  if ((t = calloc(1, sizeof *t)) == NULL) return -ENOMEM;
  t->node = calloc(cap, sizeof *t->node);
  last = calloc(cap, sizeof *last); /* each node's last child */
  if (t->node == NULL || last == NULL) {
    free(t->node);
    free(t);
    free(last);
    return -ENOMEM;
  }
  t->n = 1;
  t->node[0].name = "";
  path[0] = 0;
  for (s = 0; s < n; s++) {
    unsigned d, keep = 0;
    /* the frames shared with the stack before stay its nodes */
    if (s > 0)
      while (keep < st[s].depth && keep < st[s - 1].depth &&
             strcmp(st[s].frames[keep], st[s - 1].frames[keep]) == 0)
        keep++;
    for (d = keep; d < st[s].depth; d++) {
      uint32_t parent = path[d], i = (uint32_t)t->n++;
      struct ocgc_profile_node *nd = &t->node[i];
      nd->name = st[s].frames[d];
      nd->parent = parent;
      nd->depth = d + 1;
      if (t->node[parent].first_child == 0) t->node[parent].first_child = i;
      else t->node[last[parent]].next_sibling = i;
      last[parent] = i;
      path[d + 1] = i;
    }
    t->node[0].value[0] += (int64_t)st[s].count;
    for (d = 0; d < st[s].depth; d++) t->node[path[d + 1]].value[0] += (int64_t)st[s].count;
  }
  free(last);
  c->tree = t;
  return 0;
}

/* The innermost frames' samples, as a function's flat figure: the top
 * REP_CPU_TOP (the phase frame is no function). */
static int fn_cmp(const void *a, const void *b)
{
  return strcmp(((const struct rep_cpu_fn *)a)->name, ((const struct rep_cpu_fn *)b)->name);
}

static int fn_rank(const void *a, const void *b)
{
  const struct rep_cpu_fn *x = a, *y = b;
  if (x->samples != y->samples) return x->samples < y->samples ? 1 : -1;
  return strcmp(x->name, y->name); /* the same page for the same profile */
}

static int top_functions(struct rep_cpu *c, const struct stack *st, long n)
{
  struct rep_cpu_fn *fn = calloc(n > 0 ? (size_t)n : 1, sizeof *fn);
  size_t k = 0, i, m = 0;
  long s;
  if (fn == NULL) return -ENOMEM;
  for (s = 0; s < n; s++)
    if (st[s].depth > 1) {
      fn[k].name = st[s].frames[st[s].depth - 1];
      fn[k++].samples = st[s].count;
    }
  qsort(fn, k, sizeof *fn, fn_cmp);
  for (i = 0; i < k; i++) { /* one entry a function */
    if (m > 0 && strcmp(fn[m - 1].name, fn[i].name) == 0) fn[m - 1].samples += fn[i].samples;
    else fn[m++] = fn[i];
  }
  qsort(fn, m, sizeof *fn, fn_rank);
  for (c->ntop = 0; c->ntop < m && c->ntop < REP_CPU_TOP; c->ntop++) c->top[c->ntop] = fn[c->ntop];
  free(fn);
  return 0;
}

int rep_cpu_from_folded(struct rep_cpu *c, char *folded)
{
  struct stack *st = NULL;
  char **fr = NULL;
  long n = parse_folded(folded, &st, &fr), s;
  int err = 0;
  if (n < 0) err = (int)n;
  if (err == 0) {
    qsort(st, (size_t)n, sizeof *st, stack_cmp);
    for (s = 0; s < n; s++) c->phase[rep_cpu_phase_of(st[s].frames[0])] += st[s].count;
    err = make_tree(c, st, n);
  }
  if (err == 0) err = top_functions(c, st, n);
  free(st);
  free(fr);
  return err;
}

void rep_cpu_free(struct rep_cpu *c)
{
  if (c->tree != NULL) free(c->tree->node);
  free(c->tree);
  free(c->text);
  memset(c, 0, sizeof c[0]);
}

/* ---- the JSON member ---------------------------------------------------------------- */

void rep_cpu_json(struct json *j, const struct rep_meta *m)
{
  const struct rep_cpu *c = m->cpu;
  unsigned p, i;
  json_key(j, "cpu");
  if (c == NULL || !c->have) {
    json_null(j);
    return;
  }
  json_obj(j, JSON_LINES);
  json_kv_u64(j, "frequency_hz", c->frequency_hz);
  json_kv_u64(j, "window_ns", c->window_ns);
  json_kv_u64(j, "samples", c->samples);
  json_kv_u64(j, "gc_samples", c->gc_samples);
  json_kv_u64(j, "gc_unmatched", c->gc_unmatched);
  json_kv_u64(j, "lost", c->lost);
  json_kv_u64(j, "threads_seen", c->threads_seen);
  json_key(j, "phases");
  json_obj(j, JSON_INLINE);
  for (p = 0; p < OCGC_GC_PHASE_COUNT; p++)
    json_kv_u64(j, ocgc_gc_phase_name((enum ocgc_gc_phase)p), c->phase[p]);
  json_obj_end(j);
  json_key(j, "gc_share_samples");
  json_double(j, 6, c->gc_share_samples);
  json_key(j, "gc_share_ring");
  if (c->ring_known) json_double(j, 6, c->gc_share_ring);
  else json_null(j);
  json_key(j, "top_functions");
  json_arr(j, JSON_LINES);
  for (i = 0; i < c->ntop; i++) {
    json_obj(j, JSON_INLINE);
    json_kv_str(j, "function", c->top[i].name);
    json_kv_u64(j, "samples", c->top[i].samples);
    json_obj_end(j);
  }
  json_arr_end(j);
  json_obj_end(j);
}
