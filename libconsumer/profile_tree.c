/* profile_tree.c - a profile by function (ocgc_profile_functions: flat and
 * cumulative, as pprof's -top) and by call path (ocgc_profile_tree: the
 * stacks merged from the outermost frame in, as a flame graph draws them).
 *
 * Frames are named as every form names them (profile_frame_name: escaped,
 * printable ASCII; the made-up frames of profile.h) and compared by name,
 * interned once each;
 * the results own copies of the names.
 *
 * Invariants: bounded by the profile (at most stacks x (depth + 1) frames
 * and nodes, each name at most 1023 bytes from the symbolizer or 19 of an
 * address); a stack counts once in a function's cumulative figures however
 * often the function recurs in it; a node's figures are the sums of the
 * stacks through it, so a parent's are at least the sum of its
 * children's. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "ocgc/profile.h"
#include "profile.h"

/* Names, each once: hash -> first index + 1, then a chain of the same hash. */
struct names {
  struct idmap by_hash;
  char **s;
  uint32_t *next_same; /* index + 1 of the next name of the same hash, 0: none */
  size_t n, cap;
};

static void names_free(struct names *t)
{
  size_t i;
  for (i = 0; i < t->n; i++) free(t->s[i]);
  free(t->s);
  free(t->next_same);
  im_free(&t->by_hash);
}

/* The index of [s], added if new: >= 0, or -ENOMEM. */
static long name_id(struct names *t, const char *s)
{
  uint64_t h = fnv(s), first = im_get(&t->by_hash, h);
  uint64_t i;
  for (i = first; i != 0; i = t->next_same[i - 1])
    if (strcmp(t->s[i - 1], s) == 0) return (long)(i - 1);
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    char **q = realloc(t->s, cap * sizeof *q);
    uint32_t *nx;
    if (q == NULL) return -ENOMEM;
    t->s = q;
    if ((nx = realloc(t->next_same, cap * sizeof *nx)) == NULL) return -ENOMEM;
    t->next_same = nx;
    t->cap = cap;
  }
  if ((t->s[t->n] = strdup(s)) == NULL) return -ENOMEM;
  if (first == 0) {
    if (im_put(&t->by_hash, h, t->n + 1) != 0) {
      free(t->s[t->n]);
      return -ENOMEM;
    }
    t->next_same[t->n] = 0;
  } else { /* after the first of its hash */
    t->next_same[t->n] = t->next_same[first - 1];
    t->next_same[first - 1] = (uint32_t)(t->n + 1);
  }
  return (long)t->n++;
}

/* The names of [s]'s frames, outermost first, into ids[] (room for
 * OCGC_MEMPROF_MAX_DEPTH + 1): how many, or -ENOMEM. */
static int stack_names(struct names *t, struct idmap *by_addr, struct ocgc_symbols *syms,
                       const struct ocgc_memprof_stack *s, long *ids)
{
  unsigned d, n = 0;
  if (s->overflow) {
    ids[0] = name_id(t, PROFILE_FRAME_FULL);
    return ids[0] < 0 ? -ENOMEM : 1;
  }
  if (s->cut && (ids[n++] = name_id(t, PROFILE_FRAME_CUT)) < 0) return -ENOMEM;
  for (d = s->depth; d > 0; d--) {
    uint64_t a = s->frames[d - 1], known = im_get(by_addr, a);
    char name[PROFILE_NAME_SIZE];
    if (known != 0) {
      ids[n++] = (long)known - 1;
      continue;
    }
    if ((ids[n] = name_id(t, profile_frame_name(syms, a, NULL, name, sizeof name))) < 0 ||
        im_put(by_addr, a, (uint64_t)ids[n] + 1) != 0)
      return -ENOMEM;
    n++;
  }
  return (int)n;
}

static void add(int64_t *to, const int64_t *v)
{
  unsigned i;
  for (i = 0; i < OCGC_PV_COUNT; i++) to[i] += v[i];
}

/* ---- by function ------------------------------------------------------------------- */

/* qsort_r's: no state outside the call (the library is used by several
 * threads at once). */
static int fn_cmp(const void *a, const void *b, void *arg)
{
  const struct ocgc_profile_function *x = a, *y = b;
  unsigned by = *(const unsigned *)arg;
  if (x->flat[by] != y->flat[by]) return x->flat[by] > y->flat[by] ? -1 : 1;
  return strcmp(x->name, y->name);
}

int ocgc_profile_functions(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                           enum ocgc_profile_value by, struct ocgc_profile_functions **out)
{
  struct names t;
  struct idmap by_addr;
  struct ocgc_profile_functions *r = NULL;
  size_t *seen = NULL, i;
  int err = -ENOMEM;
  if (p == NULL || out == NULL || (unsigned)by >= OCGC_PV_COUNT) return -EINVAL;
  *out = NULL;
  memset(&t, 0, sizeof t);
  memset(&by_addr, 0, sizeof by_addr);
  if ((r = calloc(1, sizeof *r)) == NULL) goto done;
  for (i = 0; i < p->nstacks; i++) {
    long ids[OCGC_MEMPROF_MAX_DEPTH + 1];
    int64_t v[OCGC_PV_COUNT];
    int n = stack_names(&t, &by_addr, syms, &p->stack[i], ids), k;
    if (n < 0) goto done;
    if (t.n > r->n) { /* new names: their rows, zeroed */
      struct ocgc_profile_function *f = realloc(r->fn, t.cap * sizeof *f);
      size_t *sn = realloc(seen, t.cap * sizeof *sn);
      if (f != NULL) r->fn = f;
      if (sn != NULL) seen = sn;
      if (f == NULL || sn == NULL) goto done;
      memset(r->fn + r->n, 0, (t.n - r->n) * sizeof *f);
      memset(seen + r->n, 0, (t.n - r->n) * sizeof *sn);
      r->n = t.n;
    }
    ocgc_profile_values(&p->stack[i], v);
    if (n > 0) add(r->fn[ids[n - 1]].flat, v);
    for (k = 0; k < n; k++)
      if (seen[ids[k]] != i + 1) { /* once per stack, however often it recurs */
        seen[ids[k]] = i + 1;
        add(r->fn[ids[k]].cum, v);
      }
  }
  for (i = 0; i < r->n; i++) {
    r->fn[i].name = t.s[i];
    t.s[i] = NULL;
  }
  {
    unsigned key = (unsigned)by;
    qsort_r(r->fn, r->n, sizeof *r->fn, fn_cmp, &key);
  }
  *out = r;
  r = NULL;
  err = 0;
done:
  if (r != NULL) {
    r->n = 0; /* the names are still t's */
    ocgc_profile_functions_free(r);
  }
  names_free(&t); /* the names taken are NULL there */
  im_free(&by_addr);
  free(seen);
  return err;
}

void ocgc_profile_functions_free(struct ocgc_profile_functions *f)
{
  size_t i;
  if (f == NULL) return;
  for (i = 0; i < f->n; i++) free((char *)f->fn[i].name);
  free(f->fn);
  free(f);
}

/* ---- by call path -------------------------------------------------------------------- */

struct building {
  struct ocgc_profile_node *node;
  long *name;            /* the node's name id (-1: the root) */
  size_t n, cap;
  struct idmap child;    /* parent << 32 | name id -> index + 1 */
};

/* The child of [parent] named [id], made if new: its index, or -1. */
static long child_of(struct building *b, size_t parent, long id)
{
  uint64_t key = (uint64_t)parent << 32 | (uint64_t)id, known = im_get(&b->child, key);
  if (known != 0) return (long)known - 1;
  if (b->n == b->cap) {
    size_t cap = b->cap * 2;
    struct ocgc_profile_node *q = realloc(b->node, cap * sizeof *q);
    long *nm;
    if (q == NULL) return -1;
    b->node = q;
    if ((nm = realloc(b->name, cap * sizeof *nm)) == NULL) return -1;
    b->name = nm;
    b->cap = cap;
  }
  memset(&b->node[b->n], 0, sizeof b->node[b->n]);
  b->node[b->n].parent = (uint32_t)parent;
  b->node[b->n].depth = b->node[parent].depth + 1;
  b->name[b->n] = id;
  if (im_put(&b->child, key, b->n + 1) != 0) return -1;
  return (long)b->n++;
}

struct kid_order {
  const struct names *t;
  const long *ids;
};
static int kid_cmp(const void *a, const void *b, void *arg)
{
  const struct kid_order *o = arg;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return strcmp(o->t->s[o->ids[x]], o->t->s[o->ids[y]]);
}

/* [b]'s nodes in depth-first order, children by name, into [r]. */
static int order(struct building *b, const struct names *t, struct ocgc_profile_tree *r)
{
  uint32_t *count = calloc(b->n + 1, sizeof *count), *kids = malloc(b->n * sizeof *kids);
  uint32_t *at = malloc(b->n * sizeof *at), *stack = malloc(b->n * sizeof *stack);
  uint32_t *newi = malloc(b->n * sizeof *newi);
  size_t i, top = 0, o = 0;
  int err = -ENOMEM;
  if (count == NULL || kids == NULL || at == NULL || stack == NULL || newi == NULL) goto done;
  /* each node's children together in kids[count[p] .. count[p + 1]) */
  for (i = 1; i < b->n; i++) count[b->node[i].parent + 1]++;
  for (i = 0; i < b->n; i++) count[i + 1] += count[i];
  memcpy(at, count, b->n * sizeof *at);
  for (i = 1; i < b->n; i++) kids[at[b->node[i].parent]++] = (uint32_t)i;
  {
    struct kid_order ko = {t, b->name};
    for (i = 0; i < b->n; i++)
      if (count[i + 1] - count[i] > 1)
        qsort_r(kids + count[i], count[i + 1] - count[i], sizeof *kids, kid_cmp, &ko);
  }
  /* depth-first: push the children in reverse so the first comes first */
  stack[top++] = 0;
  while (top > 0) {
    uint32_t x = stack[--top], k;
    newi[x] = (uint32_t)o++;
    for (k = count[x + 1]; k > count[x]; k--) stack[top++] = kids[k - 1];
  }
  if ((r->node = calloc(b->n, sizeof *r->node)) == NULL) goto done;
  r->n = b->n;
  for (i = 0; i < b->n; i++) {
    struct ocgc_profile_node *d = &r->node[newi[i]];
    *d = b->node[i];
    d->parent = newi[b->node[i].parent];
    d->first_child = count[i + 1] > count[i] ? newi[kids[count[i]]] : 0;
    d->next_sibling = 0;
    d->name = NULL;
  }
  for (i = 0; i < b->n; i++) { /* once every node is in place */
    uint32_t k;
    for (k = count[i]; k + 1 < count[i + 1]; k++)
      r->node[newi[kids[k]]].next_sibling = newi[kids[k + 1]];
  }
  for (i = 0; i < b->n; i++)
    if ((r->node[newi[i]].name = strdup(i == 0 ? "" : t->s[b->name[i]])) == NULL) goto done;
  err = 0;
done:
  free(count);
  free(kids);
  free(at);
  free(stack);
  free(newi);
  return err;
}

int ocgc_profile_tree(const struct ocgc_memprof *p, struct ocgc_symbols *syms,
                      enum ocgc_profile_value v, struct ocgc_profile_tree **out)
{
  struct names t;
  struct idmap by_addr;
  struct building b;
  struct ocgc_profile_tree *r = NULL;
  size_t i;
  int err = -ENOMEM;
  if (p == NULL || out == NULL || (unsigned)v >= OCGC_PV_COUNT) return -EINVAL;
  *out = NULL;
  memset(&t, 0, sizeof t);
  memset(&by_addr, 0, sizeof by_addr);
  memset(&b, 0, sizeof b);
  b.cap = 256;
  if ((b.node = calloc(b.cap, sizeof *b.node)) == NULL ||
      (b.name = calloc(b.cap, sizeof *b.name)) == NULL || (r = calloc(1, sizeof *r)) == NULL)
    goto done;
  b.n = 1; /* the root */
  b.name[0] = -1;
  for (i = 0; i < p->nstacks; i++) {
    long ids[OCGC_MEMPROF_MAX_DEPTH + 1];
    int64_t vals[OCGC_PV_COUNT];
    size_t at = 0;
    int n, k;
    ocgc_profile_values(&p->stack[i], vals);
    if (vals[v] <= 0) continue;
    if ((n = stack_names(&t, &by_addr, syms, &p->stack[i], ids)) < 0) goto done;
    add(b.node[0].value, vals);
    for (k = 0; k < n; k++) {
      long c = child_of(&b, at, ids[k]);
      if (c < 0) goto done;
      at = (size_t)c;
      add(b.node[at].value, vals);
    }
  }
  if (order(&b, &t, r) != 0) goto done;
  *out = r;
  r = NULL;
  err = 0;
done:
  ocgc_profile_tree_free(r);
  names_free(&t);
  im_free(&by_addr);
  im_free(&b.child);
  free(b.node);
  free(b.name);
  return err;
}

void ocgc_profile_tree_free(struct ocgc_profile_tree *t)
{
  size_t i;
  if (t == NULL) return;
  for (i = 0; i < t->n; i++) free((char *)t->node[i].name);
  free(t->node);
  free(t);
}
