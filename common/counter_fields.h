/* counter_fields.h - the fields of struct ocgc_counters as data, made from
 * its table (OCGC_COUNTER_FIELDS), and the one loop over them, for the
 * rules that hold for every field of a kind: growth (rates.c), "never
 * less" (watch.c), sums (programs.c), and printers that show every field
 * of a kind alike (report_json.c's bytes) (private to libocgc and ocgc).
 * A field of a monotone count, a gauge or a time is one or more uint64_t
 * words (the table's static assertions hold that), so the loop walks words. */
#ifndef OCGC_COUNTER_FIELDS_H
#define OCGC_COUNTER_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/agg.h"

struct counter_field {
  enum ocgc_counter_kind kind;
  size_t off, words; /* words: 0 for a flag (an int, never walked as words) */
  const char *name, *unit;
};

#define COUNTER_FIELD_ROW_(kind, type, name, dim, unit)                                  \
  {OCGC_COUNTER_##kind, offsetof(struct ocgc_counters, name),                           \
   OCGC_COUNTER_##kind == OCGC_COUNTER_FLAG ? 0                                          \
                                             : sizeof(((struct ocgc_counters *)0)->name) / 8, \
   #name, unit},
static const struct counter_field counter_fields[] = {OCGC_COUNTER_FIELDS(COUNTER_FIELD_ROW_)};
#undef COUNTER_FIELD_ROW_
#define COUNTER_FIELDS_N (sizeof counter_fields / sizeof counter_fields[0])

/* Word [w] of field [f] of [c] (f->words > w). */
static inline uint64_t counter_word(const struct ocgc_counters *c, const struct counter_field *f,
                                    size_t w)
{
  return ((const uint64_t *)(const void *)((const char *)c + f->off))[w];
}

/* fn(word of [a], the same word of [b]) for each word of each field of
 * [kind] ([b] may be [a]). */
static inline void counters_each(enum ocgc_counter_kind kind, struct ocgc_counters *a,
                                 const struct ocgc_counters *b,
                                 void (*fn)(uint64_t *a_word, uint64_t b_word))
{
  size_t i, w;
  for (i = 0; i < COUNTER_FIELDS_N; i++) {
    const struct counter_field *f = &counter_fields[i];
    if (f->kind != kind) continue;
    for (w = 0; w < f->words; w++)
      fn((uint64_t *)(void *)((char *)a + f->off) + w,
         ((const uint64_t *)(const void *)((const char *)b + f->off))[w]);
  }
}

#endif /* OCGC_COUNTER_FIELDS_H */
