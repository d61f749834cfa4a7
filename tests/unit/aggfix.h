/* aggfix.h - the fixture of the suites on one aggregator over a ring file
 * written here (test_agg.c, test_interval.c).  Needs <check.h>: the
 * helpers assert. */
#ifndef OCGC_TEST_AGGFIX_H
#define OCGC_TEST_AGGFIX_H

#include <stdint.h>

#include "ocgc/consumer.h"
#include "ringgen.h"

struct tf {
  char path[512];
  struct rg_file f;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
};

/* Slots of the user events these tests use. */
enum { U_SLICE_DUE, U_CYCLE_END, U_HEAP_GROW, U_EXPLICIT, U_STOP_JOIN };

/* The scratch folder of each test (tcase_add_checked_fixture). */
void af_setup(void);
void af_teardown(void);

/* A new ring file in the folder (one domain, [ring_words] words, an ocgc
 * file when has_ext), its user events named; open it with an aggregator;
 * close both and the file's mapping. */
void tf_create(struct tf *t, int has_ext, uint64_t ring_words);
void tf_open(struct tf *t);
void tf_close(struct tf *t);

#define SPAN(b, id) OCGC_EV_HEADER(2, 0, (b) ? OCGC_RT_BEGIN : OCGC_RT_END, id)
#define COUNTER(id) OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id)
#define UINT(slot) OCGC_EV_HEADER(3, 1, OCGC_USER_INT, slot)
#define UNIT(slot) OCGC_EV_HEADER(2, 1, OCGC_USER_UNIT, slot)

/* A span [b, e] of phase [id]. */
void span(struct tf *t, unsigned id, uint64_t b, uint64_t e);
/* A minor collection caused by a full minor heap: cause counter, MINOR
 * begin, allocated, a local-roots sub-phase, promoted, MINOR end. */
void minor(struct tf *t, uint64_t b, uint64_t e, uint64_t alloc, uint64_t promo);
/* A major slice that says it was due. */
void slice(struct tf *t, uint64_t b, uint64_t e);
/* Poll the aggregator and take a snapshot (free it). */
struct ocgc_snapshot *snap(struct tf *t);

#endif /* OCGC_TEST_AGGFIX_H */
