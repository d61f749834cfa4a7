/* cpuprof.c - a CPU profile (ocgc/cpuprof.h): samples folded into rows of
 * identical (stack, labels), each sample's labels from its stack's
 * collector frames (cpuprof_label.c) and the ring's collection at its time.
 *
 * Invariants:
 * - bounded: rows at most max_rows (past it, samples of new stacks count in
 *   the overflow row of their labels: at most one per label set, so some
 *   hundreds more), a row's frames at most OCGC_UNWIND_MAX_DEPTH, pending
 *   samples at most max_pending, collections at most MAX_COLLS, frame
 *   roles cached for at most ROLE_CACHE_MAX addresses;
 * - a sample outside the collector (by its stack) is folded at once; one
 *   inside waits until settle() says the ring has been read past its time
 *   by more than SETTLE_SLACK_NS, or finish(), or the pending bound;
 * - a collection is let go at a settle once it ended more than
 *   KEEP_NS before the time settled: every sample still to come is later
 *   (the sampler's rings are read after the ring, each read past the
 *   last), and waiting ones are within SETTLE_SLACK_NS of it;
 * - the rows' order is the order their first sample was folded. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuprof_priv.h"
#include "idmap.h"
#include "ocgc/event.h"
#include "ocgc/wire.h"
#include "opts.h"

#define DEFAULT_ROWS 4096u
#define DEFAULT_PENDING 4096u
#define MAX_BOUND 65536u
#define MAX_COLLS 4096u
#define ROLE_CACHE_MAX 65536u
#define SETTLE_SLACK_NS UINT64_C(20000000)
#define KEEP_NS UINT64_C(1000000000)

struct pending {
  uint64_t t;
  enum ocgc_gc_phase phase;
  enum ocgc_gc_call call;
  enum ocgc_unwind_end end;
  unsigned depth;
  uint64_t *frames;
};

struct ocgc_cpuprof {
  struct ocgc_symbols *names;
  unsigned frequency_hz, max_rows, max_pending;
  struct ocgc_cpuprof_row *rows;
  uint64_t *hashes;   /* by row */
  size_t nrows, caprows, nstack_rows;
  uint32_t *slots;    /* index + 1 of a row, open addressing */
  size_t nslots;
  struct pending *pend;
  size_t npend;
  struct cpuprof_coll colls[MAX_COLLS];
  size_t ncolls;
  struct idmap roles; /* address -> role + 1 */
  struct ocgc_cpuprof_stats st;
};

const char *ocgc_gc_phase_name(enum ocgc_gc_phase p)
{
  static const char *const names[OCGC_GC_PHASE_COUNT] = {
      "mutator", "minor", "major_mark", "major_sweep", "major_clean", "major", "compaction",
      "collector"};
  return (unsigned)p < OCGC_GC_PHASE_COUNT ? names[p] : NULL;
}

const char *ocgc_gc_call_name(enum ocgc_gc_call c)
{
  static const char *const names[OCGC_GC_CALL_COUNT] = {
      NULL, "Gc.minor", "Gc.major_slice", "Gc.major", "Gc.full_major", "Gc.compact"};
  return (unsigned)c < OCGC_GC_CALL_COUNT ? names[c] : NULL;
}

int ocgc_cpuprof_new(struct ocgc_symbols *names, const struct ocgc_cpuprof_opts *opts,
                     struct ocgc_cpuprof **out)
{
  struct ocgc_cpuprof_opts o;
  struct ocgc_cpuprof *p;
  size_t slots = 1;
  int err;
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if ((err = opts_read(&o, sizeof o, opts)) != 0) return err;
  if (o.max_rows > MAX_BOUND || o.max_pending > MAX_BOUND || o.frequency_hz > 100000)
    return -EINVAL;
  if ((p = calloc(1, sizeof *p)) == NULL) return -ENOMEM;
  p->names = names;
  p->frequency_hz = o.frequency_hz ? o.frequency_hz : 100;
  p->max_rows = o.max_rows ? o.max_rows : DEFAULT_ROWS;
  p->max_pending = o.max_pending ? o.max_pending : DEFAULT_PENDING;
  /* room for every row and every overflow row, at most half full */
  while (slots < 2 * ((size_t)p->max_rows + OCGC_GC_PHASE_COUNT * (OCGC_CAUSE_SLOTS + 1) *
                                                 OCGC_GC_CALL_COUNT))
    slots *= 2;
  p->nslots = slots;
  if ((p->slots = calloc(slots, sizeof *p->slots)) == NULL ||
      (p->pend = calloc(p->max_pending, sizeof *p->pend)) == NULL) {
    ocgc_cpuprof_free(p);
    return -ENOMEM;
  }
  *out = p;
  return 0;
}

/* FNV-1a over the row's key. */
static uint64_t hash_key(const uint64_t *frames, unsigned depth, unsigned labels)
{
  uint64_t h = UINT64_C(14695981039346656037) ^ labels;
  unsigned i;
  h *= UINT64_C(1099511628211);
  for (i = 0; i < depth; i++) {
    h ^= frames[i];
    h *= UINT64_C(1099511628211);
  }
  return mix(h ^ depth);
}

static int same_row(const struct ocgc_cpuprof_row *r, const uint64_t *frames, unsigned depth,
                    enum ocgc_gc_phase phase, int cause, enum ocgc_gc_call call, int overflow,
                    enum ocgc_unwind_end end)
{
  return r->phase == phase && r->cause == cause && r->call == call && r->overflow == overflow &&
         (overflow || (r->end == end && r->depth == depth &&
                       memcmp(r->frames, frames, depth * sizeof *frames) == 0));
}

/* Count one sample in its row, made if new (the overflow row of its labels
 * once max_rows stacks are held). */
static int fold(struct ocgc_cpuprof *p, const uint64_t *frames, unsigned depth,
                enum ocgc_unwind_end end, enum ocgc_gc_phase phase, int cause,
                enum ocgc_gc_call call)
{
  unsigned labels = (unsigned)phase | (unsigned)(cause + 1) << 4 | (unsigned)call << 12;
  int overflow = 0;
  for (;;) {
    uint64_t h = overflow ? hash_key(NULL, 0, labels | 1u << 20) : hash_key(frames, depth, labels | (unsigned)end << 16);
    size_t i = (size_t)h & (p->nslots - 1);
    struct ocgc_cpuprof_row *r;
    for (; p->slots[i] != 0; i = (i + 1) & (p->nslots - 1)) {
      r = &p->rows[p->slots[i] - 1];
      if (p->hashes[p->slots[i] - 1] == h &&
          same_row(r, frames, depth, phase, cause, call, overflow, end)) {
        r->samples++;
        if (overflow) p->st.overflow_samples++;
        return 0;
      }
    }
    if (!overflow && p->nstack_rows >= p->max_rows) {
      overflow = 1;
      continue;
    }
    if (p->nrows == p->caprows) {
      size_t cap = p->caprows ? p->caprows * 2 : 64;
      struct ocgc_cpuprof_row *q = realloc(p->rows, cap * sizeof *q);
      uint64_t *hq;
      if (q == NULL) return -ENOMEM;
      p->rows = q;
      if ((hq = realloc(p->hashes, cap * sizeof *hq)) == NULL) return -ENOMEM;
      p->hashes = hq;
      p->caprows = cap;
    }
    r = &p->rows[p->nrows];
    memset(r, 0, sizeof *r);
    if (!overflow && depth > 0) {
      uint64_t *f = malloc(depth * sizeof *f);
      if (f == NULL) return -ENOMEM;
      memcpy(f, frames, depth * sizeof *f);
      r->frames = f;
      r->depth = depth;
    }
    r->samples = 1;
    r->phase = phase;
    r->cause = cause;
    r->call = call;
    r->overflow = overflow;
    r->end = overflow ? OCGC_UNWIND_LOST : end;
    p->hashes[p->nrows] = h;
    p->slots[i] = (uint32_t)++p->nrows;
    if (overflow) p->st.overflow_samples++;
    else p->nstack_rows++;
    return 0;
  }
}

/* The role of frame [addr] (the first one: the sampled instruction, else a
 * return address), by its function's symbol. */
static unsigned char frame_role(struct ocgc_cpuprof *p, uint64_t addr, int ret)
{
  struct ocgc_symbol sym;
  uint64_t key = addr << 1 | (uint64_t)(ret != 0), c = im_get(&p->roles, key);
  unsigned role;
  if (c != 0) return (unsigned char)(c - 1);
  role = ocgc_symbols_lookup(p->names, addr, ret, &sym)
             ? cpuprof_frame_role(sym.symbol ? sym.symbol : sym.function)
             : ROLE_NONE;
  if (p->roles.n < ROLE_CACHE_MAX) (void)im_put(&p->roles, key, role + 1);
  return (unsigned char)role;
}

static int resolve(struct ocgc_cpuprof *p, const struct pending *s)
{
  enum ocgc_gc_phase phase;
  int cause;
  if (!cpuprof_label(s->phase, p->colls, p->ncolls, s->t, &phase, &cause)) p->st.gc_unmatched++;
  return fold(p, s->frames, s->depth, s->end, phase, cause, s->call);
}

int ocgc_cpuprof_add(struct ocgc_cpuprof *p, uint64_t time_ns, const struct ocgc_unwind_stack *st)
{
  unsigned char roles[OCGC_UNWIND_MAX_DEPTH];
  struct pending s;
  unsigned i, depth;
  if (p == NULL || st == NULL) return -EINVAL;
  depth = st->depth < OCGC_UNWIND_MAX_DEPTH ? st->depth : OCGC_UNWIND_MAX_DEPTH;
  for (i = 0; i < depth; i++) roles[i] = p->names ? frame_role(p, st->frames[i], i > 0) : 0;
  memset(&s, 0, sizeof s);
  s.t = time_ns;
  s.phase = cpuprof_stack_phase(roles, depth, &s.call);
  s.end = st->end;
  s.depth = depth;
  p->st.samples++;
  if (s.phase == OCGC_GC_MUTATOR)
    return fold(p, st->frames, depth, st->end, OCGC_GC_MUTATOR, OCGC_CAUSE_NONE, OCGC_GC_CALL_NONE);
  p->st.gc_samples++;
  if (p->npend == p->max_pending) {
    /* The bound: the oldest is labelled with what is known now. */
    int err = resolve(p, &p->pend[0]);
    free(p->pend[0].frames);
    memmove(p->pend, p->pend + 1, (p->npend - 1) * sizeof *p->pend);
    p->npend--;
    if (err != 0) return err;
  }
  if (depth > 0 && (s.frames = malloc(depth * sizeof *s.frames)) == NULL) return -ENOMEM;
  if (depth > 0) memcpy(s.frames, st->frames, depth * sizeof *s.frames);
  p->pend[p->npend++] = s;
  return 0;
}

int ocgc_cpuprof_collection(struct ocgc_cpuprof *p, int kind, int cause, uint64_t begin_ns,
                            uint64_t end_ns)
{
  if (p == NULL || end_ns < begin_ns) return -EINVAL;
  /* a cause or kind past the tables is unknown: the labels stay ocgc's
   * own words, and the label sets (the overflow rows) bounded */
  if (cause < 0 || cause >= (int)OCGC_CAUSE_COUNT) cause = OCGC_CAUSE_UNKNOWN;
  if (kind < 0 || kind >= (int)OCGC_KIND_COUNT) kind = OCGC_KIND_NONE;
  if (p->ncolls == MAX_COLLS) {
    /* the oldest given goes (the bound; counted: a sample may have wanted it) */
    memmove(p->colls, p->colls + 1, (MAX_COLLS - 1) * sizeof *p->colls);
    p->ncolls--;
    p->st.collections_dropped++;
  }
  p->colls[p->ncolls].begin = begin_ns;
  p->colls[p->ncolls].end = end_ns;
  p->colls[p->ncolls].kind = kind;
  p->colls[p->ncolls].cause = cause;
  p->ncolls++;
  p->st.collections++;
  return 0;
}

static void settle(struct ocgc_cpuprof *p, uint64_t until, int all)
{
  size_t i, k = 0;
  for (i = 0; i < p->npend; i++) {
    if (all || p->pend[i].t + SETTLE_SLACK_NS < until) {
      (void)resolve(p, &p->pend[i]); /* -ENOMEM: the sample is not counted */
      free(p->pend[i].frames);
    } else {
      p->pend[k++] = p->pend[i];
    }
  }
  p->npend = k;
  if (all) return;
  for (i = 0, k = 0; i < p->ncolls; i++)
    if (p->colls[i].end + KEEP_NS >= until) p->colls[k++] = p->colls[i];
  p->ncolls = k;
}

void ocgc_cpuprof_settle(struct ocgc_cpuprof *p, uint64_t until_ns)
{
  if (p != NULL) settle(p, until_ns, 0);
}

void ocgc_cpuprof_finish(struct ocgc_cpuprof *p)
{
  if (p != NULL) settle(p, UINT64_MAX, 1);
}

size_t ocgc_cpuprof_rows(const struct ocgc_cpuprof *p, const struct ocgc_cpuprof_row **rows)
{
  if (p == NULL) return 0;
  if (rows != NULL) *rows = p->rows;
  return p->nrows;
}

int ocgc_cpuprof_stats(const struct ocgc_cpuprof *p, struct ocgc_cpuprof_stats *out)
{
  struct ocgc_cpuprof_stats s;
  if (p == NULL) return -EINVAL;
  s = p->st;
  s.pending = p->npend;
  s.rows = p->nrows;
  return opts_write(out, &s, sizeof s);
}

unsigned cpuprof_frequency(const struct ocgc_cpuprof *p) { return p->frequency_hz; }

void ocgc_cpuprof_free(struct ocgc_cpuprof *p)
{
  size_t i;
  if (p == NULL) return;
  for (i = 0; i < p->nrows; i++) free((void *)p->rows[i].frames);
  for (i = 0; i < p->npend; i++) free(p->pend[i].frames);
  free(p->rows);
  free(p->hashes);
  free(p->slots);
  free(p->pend);
  im_free(&p->roles);
  free(p);
}
