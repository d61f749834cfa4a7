/* aggfix.c - the aggregator suites' fixture (aggfix.h): ring files
 * written by ringgen in a scratch folder per test, each opened with an
 * aggregator that has no poll deadline (TU_NO_POLL_DEADLINE), and the
 * collections the suites write into them. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggfix.h"
#include "testutil.h"

static char *tmp;
static unsigned file_no;

void af_setup(void) { tmp = tu_mkdtemp(); }
void af_teardown(void) { tu_rmtree(tmp); free(tmp); tmp = NULL; }

void tf_create(struct tf *t, int has_ext, uint64_t ring_words)
{
  char name[64];
  int r;
  memset(t, 0, sizeof *t);
  snprintf(name, sizeof name, "%ld-%u.events", (long)getpid(), ++file_no);
  tu_path(t->path, sizeof t->path, tmp, name);
  r = rg_create(&t->f, t->path, has_ext, 1, ring_words);
  ck_assert_msg(r == 0, "rg_create: %s", strerror(-r));
  rg_set_name(&t->f, U_SLICE_DUE, "ocgc.cause.major_slice_due");
  rg_set_name(&t->f, U_CYCLE_END, "ocgc.major_cycle.end");
  rg_set_name(&t->f, U_HEAP_GROW, "ocgc.heap.grow");
  rg_set_name(&t->f, U_EXPLICIT, "ocgc.cause.explicit");
}

void tf_open(struct tf *t)
{
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_source_open_path(t->path, NULL, &t->src), 0);
  ck_assert_int_eq(ocgc_agg_new(t->src, &o, &t->agg), 0);
}

void tf_close(struct tf *t)
{
  ocgc_agg_free(t->agg);
  ocgc_source_close(t->src);
  rg_close(&t->f);
}

void span(struct tf *t, unsigned id, uint64_t b, uint64_t e)
{
  rg_write1(&t->f, 0, SPAN(1, id), b, 0);
  rg_write1(&t->f, 0, SPAN(0, id), e, 0);
}

/* A minor collection caused by a full minor heap: cause counter, MINOR
 * begin, allocated, a local-roots sub-phase, promoted, MINOR end. */
void minor(struct tf *t, uint64_t b, uint64_t e, uint64_t alloc, uint64_t promo)
{
  rg_write1(&t->f, 0, COUNTER(OCGC_CT_FORCE_MINOR_ALLOC_SMALL), b, 1);
  rg_write1(&t->f, 0, SPAN(1, OCGC_PH_MINOR), b, 0);
  rg_write1(&t->f, 0, COUNTER(OCGC_CT_MINOR_ALLOCATED), b, alloc);
  span(t, OCGC_PH_MINOR_LOCAL_ROOTS, b + 1, b + 11);
  rg_write1(&t->f, 0, COUNTER(OCGC_CT_MINOR_PROMOTED), e, promo);
  rg_write1(&t->f, 0, SPAN(0, OCGC_PH_MINOR), e, 0);
}

void slice(struct tf *t, uint64_t b, uint64_t e)
{
  rg_write1(&t->f, 0, UINT(U_SLICE_DUE), b, 1);
  span(t, OCGC_PH_MAJOR_SLICE, b, e);
}

struct ocgc_snapshot *snap(struct tf *t)
{
  struct ocgc_snapshot *s;
  ck_assert_int_ge(ocgc_agg_poll(t->agg), 0);
  ck_assert_int_eq(ocgc_agg_snapshot(t->agg, &s), 0);
  return s;
}
