/* gccharge.c - the collector's CPU charged to the allocation sites that
 * cause it (ocgc/gccharge.h: the model is written there, once).
 *
 * Invariants: a stack's bases are read from its counts by one rule
 * (bases()); each kind's CPU is split over the stacks in proportion to
 * their base with exact integer arithmetic (128-bit products), the
 * rounding's leftover nanoseconds going to the largest remainders, so the
 * shares of a kind sum to its CPU exactly and no share is negative; a kind
 * whose base is 0 in the whole profile charges nothing and is said
 * (unattributed_ns).  Time and memory: two passes over the stacks and one
 * array of nstacks remainders a kind.  The CPU of a CPU profile's samples
 * by kind (ocgc_gc_cpu_of) is read from its rows by one table of phases
 * (charge_of). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuprof_priv.h"
#include "ocgc/cpuprof.h"
#include "ocgc/gccharge.h"
#include "ocgc/wire.h"
#include "opts.h"

/* A stack's minor base (words allocated in the minor heap) and major base
 * (words that entered the major heap): the model's one rule. */
static void bases(const struct ocgc_memprof_stack *s, uint64_t *minor, uint64_t *major)
{
  if (s->kind == OCGC_MP_MINOR) {
    *minor = s->alloc.words;
    *major = s->promoted.words;
  } else { /* major, marshal, custom: straight into the major heap (or as much) */
    *minor = 0;
    *major = s->alloc.words;
  }
}

struct rem {
  uint64_t r;   /* the remainder of ns x base / total, the tie's order after */
  size_t i;
};

static int by_remainder(const void *a, const void *b)
{
  const struct rem *x = a, *y = b;
  if (x->r != y->r) return x->r < y->r ? 1 : -1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* Add ns x base(i) / total to out[i] for each stack, the leftover to the
 * largest remainders.  rem has p->nstacks places. */
static void split(const struct ocgc_memprof *p, int major, uint64_t ns, uint64_t total,
                  uint64_t *out, struct rem *rem)
{
  uint64_t given = 0;
  size_t i, n = 0;
  for (i = 0; i < p->nstacks; i++) {
    uint64_t mi, ma, b;
    unsigned __int128 prod;
    bases(&p->stack[i], &mi, &ma);
    b = major ? ma : mi;
    if (b == 0) continue;
    prod = (unsigned __int128)ns * b;
    out[i] += (uint64_t)(prod / total);
    given += (uint64_t)(prod / total);
    rem[n].r = (uint64_t)(prod % total);
    rem[n++].i = i;
  }
  /* given <= ns, and ns - given < n (each share lost less than 1). */
  qsort(rem, n, sizeof *rem, by_remainder);
  for (i = 0; given < ns && i < n; i++, given++) out[rem[i].i]++;
}

int ocgc_gc_charge(const struct ocgc_memprof *p, const struct ocgc_gc_cpu *cpu_in,
                   uint64_t *out, struct ocgc_gc_charge_sum *sum)
{
  struct ocgc_gc_cpu cpu;
  struct ocgc_gc_charge_sum s;
  struct rem *rem;
  uint64_t charged = 0;
  size_t i;
  int err;
  if (p == NULL || (p->nstacks > 0 && (p->stack == NULL || out == NULL)) || cpu_in == NULL)
    return -EINVAL;
  if ((err = opts_read(&cpu, sizeof cpu, cpu_in)) != 0) return err;
  memset(&s, 0, sizeof s);
  s.sz = sizeof s;
  for (i = 0; i < p->nstacks; i++) {
    uint64_t mi, ma;
    bases(&p->stack[i], &mi, &ma);
    /* Words are the producer's estimates: a sum past 2^64 would be 2^67
     * bytes allocated; saturate rather than wrap. */
    s.minor_words = s.minor_words + mi < s.minor_words ? UINT64_MAX : s.minor_words + mi;
    s.major_words = s.major_words + ma < s.major_words ? UINT64_MAX : s.major_words + ma;
  }
  if (p->nstacks > 0) memset(out, 0, p->nstacks * sizeof *out);
  rem = calloc(p->nstacks ? p->nstacks : 1, sizeof *rem);
  if (rem == NULL) return -ENOMEM;
  if (s.minor_words > 0) split(p, 0, cpu.minor_ns, s.minor_words, out, rem);
  else s.unattributed_ns += cpu.minor_ns;
  if (s.major_words > 0) split(p, 1, cpu.major_ns, s.major_words, out, rem);
  else s.unattributed_ns += cpu.major_ns;
  free(rem);
  for (i = 0; i < p->nstacks; i++) charged += out[i];
  s.charged_ns = charged;
  return sum != NULL ? opts_write(sum, &s, sizeof s) : 0;
}

/* Which figure of struct ocgc_gc_cpu a phase's CPU goes to: 1 minor, 2
 * major, 0 none (the mutator's, or the collector's in no phase). */
static int charge_of(enum ocgc_gc_phase ph)
{
  switch (ph) {
  case OCGC_GC_MINOR: return 1;
  case OCGC_GC_MAJOR_MARK:
  case OCGC_GC_MAJOR_SWEEP:
  case OCGC_GC_MAJOR_CLEAN:
  case OCGC_GC_MAJOR:
  case OCGC_GC_COMPACTION: return 2;
  case OCGC_GC_MUTATOR:
  case OCGC_GC_COLLECTOR:
  case OCGC_GC_PHASE_COUNT: break;
  }
  return 0;
}

int ocgc_gc_cpu_of(const struct ocgc_cpuprof *cp, struct ocgc_gc_cpu *out, uint64_t *other_ns)
{
  const struct ocgc_cpuprof_row *rows;
  struct ocgc_gc_cpu c;
  uint64_t period, other = 0;
  size_t i, n;
  if (cp == NULL || out == NULL) return -EINVAL;
  memset(&c, 0, sizeof c);
  c.sz = sizeof c;
  period = UINT64_C(1000000000) / cpuprof_frequency(cp);
  n = ocgc_cpuprof_rows(cp, &rows);
  for (i = 0; i < n; i++) {
    uint64_t ns = rows[i].samples * period;
    switch (charge_of(rows[i].phase)) {
    case 1: c.minor_ns += ns; break;
    case 2: c.major_ns += ns; break;
    default:
      if (rows[i].phase == OCGC_GC_COLLECTOR) other += ns;
    }
  }
  if (other_ns != NULL) *other_ns = other;
  return opts_write(out, &c, sizeof c);
}
