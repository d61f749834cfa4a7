/* totals.c - the producer's totals (ocgc_source_totals): copied under its
 * seqlock (words.c's src_seqlock_read), and judged possible before anyone
 * sees them.
 *
 * Invariants: a copy is bounded by the widest cause table layout.c
 * accepts; totals no honest producer could publish are OCGC_E_CORRUPT; a
 * seqlock that stayed busy is read again, as final, only once attach.c
 * says its producer is dead (ocgc_source_seq_stuck): liveness is asked
 * here, by the reader of the totals, never inside the read itself. */

#include <errno.h>
#include <string.h>

#include "opts.h"
#include "attach.h"
#include "source.h"

static int read_totals(const struct ocgc_source *s, struct ocgc_totals *out);

/* Whether an honest producer could have published these totals: each
 * collection is counted once in its kind's row of the cause table, in the
 * same update as the runtime's counter (one more while a collection of that
 * kind is between the two), so a row never sums above its counter + 1 (a
 * finished major cycle is a completed one). */
static int totals_possible(const struct ocgc_totals *t)
{
  const uint64_t count[OCGC_KIND_COUNT] = {
    [OCGC_KIND_MINOR] = t->minor_collections,
    [OCGC_KIND_MAJOR_SLICE] = t->major_slices,
    [OCGC_KIND_MAJOR_FINISH] = t->major_collections,
    [OCGC_KIND_COMPACTION] = t->compactions,
  };
  unsigned k, c;
  for (k = 0; k < OCGC_KIND_COUNT; k++) {
    uint64_t sum = 0, most = count[k] == UINT64_MAX ? count[k] : count[k] + 1;
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++) {
      if (t->by_cause[k][c] > most - sum) return 0; /* sum <= most: no wrap */
      sum += t->by_cause[k][c];
    }
  }
  return 1;
}

int ocgc_source_totals(const struct ocgc_source *s, struct ocgc_totals *out)
{
  struct ocgc_totals t = OCGC_OPTS_INIT(struct ocgc_totals);
  int err;
  if (s == NULL || out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  if (!s->l.has_ext) return -ENODATA;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  err = read_totals(s, &t);
  if (err == -EAGAIN && ocgc_source_seq_stuck((struct ocgc_source *)s)) /* gone: not state */
    err = read_totals(s, &t);
  if (err == 0 && !totals_possible(&t)) err = OCGC_E_CORRUPT;
  if (err != 0) return err;
  t.sz = sizeof t;
  return opts_write(out, &t, sizeof t);
}

/* The most a copy of the totals takes: the fixed part and our kinds' rows
 * of the widest table layout.c accepts (256 columns). */
#define TOTALS_COPY_WORDS (offsetof(struct ocgc_wire_totals, by_cause) / 8 + OCGC_KIND_COUNT * 256)

/* One copy of the totals (not consistent by itself: see read_totals), in
 * one read, so that a copied file's costs one system call. */
static int copy_totals(const struct ocgc_source *s, struct ocgc_totals *out)
{
  /* by_cause in the file's own shape: it may have more cause columns than
   * ours (layout.c checked that they fit, and that there are at most 256). */
  const uint64_t fixed = offsetof(struct ocgc_wire_totals, by_cause) / 8;
  const uint64_t cols = s->l.cause_slots < OCGC_CAUSE_SLOTS ? s->l.cause_slots : OCGC_CAUSE_SLOTS;
  const uint64_t words = fixed + (OCGC_KIND_COUNT - 1) * s->l.cause_slots + cols;
  uint64_t w[TOTALS_COPY_WORDS];
  struct ocgc_wire_totals t;
  unsigned k;
  int err;
  if (s->l.cause_slots > 256) return OCGC_E_CORRUPT;
  if ((err = src_copy(s, s->l.totals_offset, w, words * 8)) != 0) return err;
  memcpy(&t, w, fixed * 8);
#define COPY_WORD(field) out->field = t.field;
  OCGC_TOTALS_WORDS(COPY_WORD)
#undef COPY_WORD
  for (k = 0; k < OCGC_KIND_COUNT; k++) out->kind_time_ns[k] = t.kind_time_ns[k];
  out->live_words = t.live_words;
  out->program_memprof = s->l.ext_version < 4 ? OCGC_MEMPROF_UNKNOWN
                         : t.program_memprof != 0 ? OCGC_MEMPROF_RUNNING : OCGC_MEMPROF_OFF;
  memset(out->by_cause, 0, sizeof out->by_cause);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    memcpy(out->by_cause[k], w + fixed + k * s->l.cause_slots, cols * 8);
  return 0;
}

static int copy_totals_ctx(const struct ocgc_source *s, void *out)
{
  return copy_totals(s, out);
}

static int read_totals(const struct ocgc_source *s, struct ocgc_totals *out)
{
  return src_seqlock_read(s, s->l.totals_offset + offsetof(struct ocgc_wire_totals, seq),
                          copy_totals_ctx, out);
}
