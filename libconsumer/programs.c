/* programs.c - a watch's processes summed by program (programs.h), for a
 * watch made with by_program.
 *
 * What a program's series are: its counters (collections by kind and
 * cause, cycles, GC time, bytes allocated and promoted, events, CPU time,
 * context switches, page faults) summed over its processes, living and
 * gone; its pause and collection histograms merged from their bucket
 * counts (every process counts at the same bounds, ocgc_expo_bounds_ns());
 * its gauges (heap, resident memory, threads, descriptors) summed over the
 * living ones, the top of the heap the highest of them.
 *
 * Invariants: a process that goes leaves its last figures in its
 * program's gone sums (programs_retire, called by watch.c before it frees
 * one), read once more first so that an exit is counted whole; if the
 * same process (pid and start time) is watched again, its figures are
 * taken back out (programs_revive), so nothing is counted twice; every
 * counter and bucket exposed is at least what was exposed before (shown:
 * an element-wise maximum, which keeps cumulative buckets cumulative), so
 * a scraper never sees a reset while the program has series; at most
 * PROGRAMS_MAX programs have series of their own: a new one takes the
 * place of the one whose processes all went the longest ago (a crowd of
 * names that come and go cannot push out a program that runs), else it
 * shares the one labelled PROGRAMS_OTHER; so a host's names cannot grow
 * the series or the memory without bound.  It reads a process only as
 * watch.c hands it down (struct ocgc_watched, through watched.c's view),
 * never the watch: it is below watch.c. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/counter_fields.h"
#include "programs.h"

/* Element-wise a += b (add) or a = max(a, b). */
static void counts_add(struct ocgc_bucket_counts *a, const struct ocgc_bucket_counts *b)
{
  unsigned i;
  a->count += b->count;
  a->sum_ns += b->sum_ns;
  if (a->nbounds < b->nbounds) a->nbounds = b->nbounds;
  for (i = 0; i < b->nbounds && i < OCGC_MAX_BOUNDS; i++) a->le[i] += b->le[i];
}

static void counts_sub(struct ocgc_bucket_counts *a, const struct ocgc_bucket_counts *b)
{
  unsigned i;
  a->count -= b->count <= a->count ? b->count : a->count;
  a->sum_ns -= b->sum_ns <= a->sum_ns ? b->sum_ns : a->sum_ns;
  for (i = 0; i < b->nbounds && i < OCGC_MAX_BOUNDS; i++)
    a->le[i] -= b->le[i] <= a->le[i] ? b->le[i] : a->le[i];
}

#define MAXU(a, b) ((a) < (b) ? (b) : (a))
static void counts_max(struct ocgc_bucket_counts *a, const struct ocgc_bucket_counts *b)
{
  unsigned i;
  a->count = MAXU(a->count, b->count);
  a->sum_ns = MAXU(a->sum_ns, b->sum_ns);
  if (a->nbounds < b->nbounds) a->nbounds = b->nbounds;
  for (i = 0; i < b->nbounds && i < OCGC_MAX_BOUNDS; i++) a->le[i] = MAXU(a->le[i], b->le[i]);
}

/* The counters of a sum, as one array: what add, sub and max go over. */
#define SUM_WORDS(s) ((uint64_t *)&(s)->w)
#define NWORDS (sizeof(((struct sums *)0)->w) / sizeof(uint64_t))

static void add_word(uint64_t *a, uint64_t b)
{
  *a += b;
}

static void sub_word(uint64_t *a, uint64_t b)
{
  *a -= b <= *a ? b : *a;
}

static void max_word(uint64_t *a, uint64_t b)
{
  *a = MAXU(*a, b);
}

static void set_word(uint64_t *a, uint64_t b)
{
  *a = b;
}

static void sums_add(struct sums *a, const struct sums *b)
{
  unsigned k;
  size_t i;
  counters_each(OCGC_COUNTER_MONOTONE, &a->c, &b->c, add_word);
  for (i = 0; i < NWORDS; i++) add_word(&SUM_WORDS(a)[i], ((const uint64_t *)&b->w)[i]);
  counts_add(&a->pauses, &b->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++) counts_add(&a->kinds[k], &b->kinds[k]);
  a->has_ext |= b->has_ext;
}

static void sums_sub(struct sums *a, const struct sums *b)
{
  unsigned k;
  size_t i;
  counters_each(OCGC_COUNTER_MONOTONE, &a->c, &b->c, sub_word);
  for (i = 0; i < NWORDS; i++) sub_word(&SUM_WORDS(a)[i], ((const uint64_t *)&b->w)[i]);
  counts_sub(&a->pauses, &b->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++) counts_sub(&a->kinds[k], &b->kinds[k]);
}

static void sums_max(struct sums *a, const struct sums *b)
{
  unsigned k;
  size_t i;
  counters_each(OCGC_COUNTER_MONOTONE, &a->c, &b->c, max_word);
  for (i = 0; i < NWORDS; i++) max_word(&SUM_WORDS(a)[i], ((const uint64_t *)&b->w)[i]);
  counts_max(&a->pauses, &b->pauses);
  for (k = 0; k < OCGC_KIND_COUNT; k++) counts_max(&a->kinds[k], &b->kinds[k]);
  a->has_ext |= b->has_ext;
}

/* [p]'s counters, as the per-process series show them. */
static void sums_of(const struct ocgc_watched *p, struct sums *s)
{
  const struct ocgc_counters *c = &p->counters;
  unsigned k, cause;
  memset(s, 0, sizeof *s);
  s->has_ext = p->info.has_ext;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (cause = 0; cause < OCGC_CAUSE_COUNT; cause++)
      s->w.by_cause[k][cause] = ocgc_watched_collections(p, k, cause);
  s->c.sz = sizeof s->c;
  counters_each(OCGC_COUNTER_MONOTONE, &s->c, c, set_word);
  s->w.events = ocgc_watched_events(p);
  s->w.utime_ns = p->proc.utime_ns;
  s->w.stime_ns = p->proc.stime_ns;
  s->w.voluntary_ctxt = p->proc.voluntary_ctxt;
  s->w.involuntary_ctxt = p->proc.involuntary_ctxt;
  s->w.minflt = p->proc.minflt;
  s->w.majflt = p->proc.majflt;
  if (p->snap != NULL) {
    s->pauses.sz = sizeof s->pauses;
    ocgc_snapshot_pause_buckets(p->snap, &s->pauses);
    for (k = 0; k < OCGC_KIND_COUNT; k++) {
      s->kinds[k].sz = sizeof s->kinds[k];
      ocgc_snapshot_kind_buckets(p->snap, k, &s->kinds[k]);
    }
  }
}

/* Of the programs, the one whose processes all went the longest ago (not
 * the shared one), or NULL if every one had a living process at the last
 * update (the counts of the update under way are not whole yet). */
static struct program *longest_gone(const struct programs *s)
{
  struct program *g, *best = NULL;
  for (g = s->list; g != NULL; g = g->next)
    if (!g->other && g->last_processes == 0 && (best == NULL || g->live_ns < best->live_ns))
      best = g;
  return best;
}

/* [label]'s program, made if need be: past the bound, in the place of the
 * program whose processes all went the longest ago (its series leave, as
 * a process's do by pid), else the shared one; NULL out of memory. */
static struct program *prog_of(struct programs *s, const char *label)
{
  struct program *g;
  for (g = s->list; g != NULL; g = g->next)
    if (strcmp(g->label, label) == 0) return g;
  if (s->n >= PROGRAMS_MAX) {
    struct program *next;
    if ((g = longest_gone(s)) != NULL) {
      next = g->next;
      memset(g, 0, sizeof *g);
      g->next = next;
      snprintf(g->label, sizeof g->label, "%s", label);
      g->live_ns = cm_mono_ns();
      g->last_processes = 1; /* until an update counts them */
      return g;
    }
    for (g = s->list; g != NULL; g = g->next)
      if (g->other) return g;
    label = PROGRAMS_OTHER;
  }
  if ((g = calloc(1, sizeof *g)) == NULL) return NULL;
  snprintf(g->label, sizeof g->label, "%s", label);
  g->live_ns = cm_mono_ns();
  g->last_processes = 1; /* until an update counts them */
  g->other = s->n >= PROGRAMS_MAX;
  g->next = s->list;
  s->list = g;
  s->n++;
  return g;
}

void programs_retire(struct programs *s, const struct ocgc_watched *p)
{
  struct program *g;
  struct retired *r;
  char label[OCGC_EXPO_LABEL_MAX + 4];
  watched_label(p, label);
  if (p->snap == NULL || (g = prog_of(s, label)) == NULL) return;
  r = &g->retired[g->next_retired];
  g->next_retired = (g->next_retired + 1) % PROGRAMS_RETIRED_KEPT;
  /* The oldest one remembered is forgotten: its figures stay counted. */
  r->pid = p->pid;
  r->start_ticks = p->start_ticks;
  sums_of(p, &r->s);
  r->used = 1;
  sums_add(&g->gone, &r->s);
}

void programs_revive(struct programs *s, const struct ocgc_watched *p)
{
  struct program *g;
  unsigned i;
  for (g = s->list; g != NULL; g = g->next)
    for (i = 0; i < PROGRAMS_RETIRED_KEPT; i++) {
      struct retired *r = &g->retired[i];
      if (!r->used || r->pid != p->pid || r->start_ticks != p->start_ticks) continue;
      sums_sub(&g->gone, &r->s);
      r->used = 0;
      return;
    }
}

/* The GC settings of a program: its living processes', when they all say
 * the same (one binary, one OCAMLRUNPARAM), else none. */
static void live_config(struct program *g, const struct ocgc_watched *p)
{
  const struct ocgc_gc_config *a = &g->live.config, *b = &p->config;
  if (g->live.config_state == 0 && p->have_config) {
    g->live.config = *b;
    g->live.config_state = 1;
  } else if (!p->have_config || a->minor_heap_words != b->minor_heap_words ||
             a->space_overhead != b->space_overhead || a->max_overhead != b->max_overhead ||
             a->allocation_policy != b->allocation_policy) {
    g->live.config_state = 2;
  }
}

/* The runtimes of a program's living processes, each distinct one once
 * (ocaml_runtime_info, as metrics.c labels it). */
static void live_info(struct program *g, const struct ocgc_watched *p)
{
  struct runtime_label in;
  unsigned i;
  memset(&in, 0, sizeof in);
  watched_runtime(p, &in);
  for (i = 0; i < g->live.ninfos; i++)
    if (memcmp(&g->live.infos[i], &in, sizeof in) == 0) return;
  if (g->live.ninfos < sizeof g->live.infos / sizeof g->live.infos[0])
    g->live.infos[g->live.ninfos++] = in;
}

void programs_begin(struct programs *s)
{
  struct program *g;
  for (g = s->list; g != NULL; g = g->next) {
    g->now = g->gone;
    memset(&g->live, 0, sizeof g->live);
  }
}

void programs_count(struct programs *s, const struct ocgc_watched *p)
{
  struct program *g;
  struct sums one;
  char label[OCGC_EXPO_LABEL_MAX + 4];
  watched_label(p, label);
  if (p->snap == NULL || (g = prog_of(s, label)) == NULL) return;
  sums_of(p, &one);
  sums_add(&g->now, &one);
  g->live.processes++;
  g->live.has_ext |= p->info.has_ext;
  g->live.heap_bytes += p->counters.heap_bytes;
  g->live.top_heap_bytes = MAXU(g->live.top_heap_bytes, p->counters.top_heap_bytes);
  if (p->have_totals) g->live.heap_chunks += p->totals.heap_chunks;
  if (p->have_totals && p->totals.live_words != 0) {
    g->live.live_bytes += p->totals.live_words * 8;
    g->live.have_live = 1;
  }
  g->live.rss_bytes += p->proc.rss_bytes;
  g->live.vsize_bytes += p->proc.vsize_bytes;
  g->live.threads += p->proc.threads;
  if (p->proc.have_fds) {
    g->live.open_fds += p->proc.open_fds;
    g->live.have_fds = 1;
  }
  live_config(g, p);
  live_info(g, p);
}

void programs_end(struct programs *s)
{
  struct program *g;
  for (g = s->list; g != NULL; g = g->next) {
    sums_max(&g->shown, &g->now);
    g->shown_ever = 1;
    if (g->live.processes > 0) g->live_ns = cm_mono_ns();
    g->last_processes = g->live.processes;
  }
}

void programs_free(struct programs *s)
{
  while (s->list != NULL) {
    struct program *g = s->list;
    s->list = g->next;
    free(g);
  }
  s->n = 0;
}
