/* drain.c - `make bench`, second part: how fast libocgc decodes and
 * aggregates a large ring on one core.  Writes a ring of 2^24 words (128
 * MiB) with the event mix a busy OCaml 4.13 program produces (minor
 * collections with their sub-phases and counters, causes, major slices),
 * then times: a cursor that only counts, a cursor with a callback, and the
 * aggregator.  Prints figures; never fails. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "../tests/unit/ringgen.h"

#define RING_LOG2 24

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_cb(const struct ocgc_event *ev, void *ctx)
{
  *(uint64_t *)ctx += ev->id;
  return 0;
}

static void fill(struct rg_file *f)
{
  uint64_t ts = 1000, n = 0, budget = (UINT64_C(1) << RING_LOG2) - 64, words = 0;
#define EV(h, v) do { rg_write1(f, 0, (h), ts, (v)); words += OCGC_EV_LENGTH(h); n++; } while (0)
#define SPAN(b, id) OCGC_EV_HEADER(2, 0, (b) ? OCGC_RT_BEGIN : OCGC_RT_END, id)
  rg_set_name(f, 0, "ocgc.cause.major_slice_due");
  rg_set_name(f, 1, "ocgc.major_slice.work");
  while (words + 40 < budget) {
    EV(OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_FORCE_MINOR_ALLOC_SMALL), 1);
    EV(SPAN(1, OCGC_PH_MINOR), 0);
    EV(OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED), 2097152);
    ts += 300; EV(SPAN(1, OCGC_PH_MINOR_LOCAL_ROOTS), 0);
    ts += 900; EV(SPAN(0, OCGC_PH_MINOR_LOCAL_ROOTS), 0);
    EV(SPAN(1, OCGC_PH_MINOR_REMEMBERED_SET), 0);
    ts += 200; EV(SPAN(0, OCGC_PH_MINOR_REMEMBERED_SET), 0);
    EV(SPAN(1, OCGC_PH_MINOR_FINALIZED), 0);
    ts += 100; EV(SPAN(0, OCGC_PH_MINOR_FINALIZED), 0);
    EV(OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_PROMOTED), 20000);
    ts += 50; EV(SPAN(0, OCGC_PH_MINOR), 0);
    ts += 3000;
    EV(OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 0), 1);
    EV(SPAN(1, OCGC_PH_MAJOR_SLICE), 0);
    ts += 100; EV(SPAN(1, OCGC_PH_MAJOR_MARK), 0);
    ts += 2000; EV(SPAN(0, OCGC_PH_MAJOR_MARK), 0);
    EV(OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 1), 5000);
    ts += 20; EV(SPAN(0, OCGC_PH_MAJOR_SLICE), 0);
    ts += 400000;
  }
  printf("ring: 2^%d words, %llu events, %.2f words/event\n", RING_LOG2,
         (unsigned long long)n, (double)words / (double)n);
}

int main(void)
{
  char dir[] = "/tmp/ocgc-drain-XXXXXX", path[64];
  struct rg_file f;
  struct ocgc_source *src;
  double t, best;
  int round, err;

  if (mkdtemp(dir) == NULL) { perror("mkdtemp"); return 0; }
  snprintf(path, sizeof path, "%s/bench.events", dir);
  if ((err = rg_create(&f, path, 1, 1, UINT64_C(1) << RING_LOG2)) != 0) {
    printf("drain: cannot make the ring: %s\n", strerror(-err));
    return 0;
  }
  fill(&f);
  if ((err = ocgc_source_open_path(path, NULL, &src)) != 0) {
    printf("drain: %s\n", ocgc_strerror(err));
    return 0;
  }
  printf("\n| reading (one core, best of 5) | events/s | ns/event |\n|---|---|---|\n");
  for (int mode = 0; mode < 3; mode++) {
    static const char *const what[] = {"decode only (cursor, no callback)",
                                       "decode + callback (cursor)",
                                       "aggregate (pairing, pauses, histograms, causes)"};
    uint64_t n = 0;
    best = 1e9;
    for (round = 0; round < 5; round++) {
      struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
      struct ocgc_cursor *cur = NULL;
      struct ocgc_agg *agg = NULL;
      uint64_t sink = 0;
      int64_t got;
      if (mode == 1) { co.on_event = count_cb; co.ctx = &sink; }
      if (mode < 2 && ocgc_cursor_new(src, &co, &cur) != 0) return 0;
      if (mode == 2 && ocgc_agg_new(src, NULL, &agg) != 0) return 0;
      t = now_s();
      got = mode < 2 ? ocgc_cursor_poll(cur, 0) : ocgc_agg_poll(agg);
      t = now_s() - t;
      if (got > 0) n = (uint64_t)got;
      if (t < best) best = t;
      ocgc_cursor_free(cur);
      ocgc_agg_free(agg);
    }
    printf("| %s | %.1f M | %.2f |\n", what[mode], (double)n / best / 1e6, best * 1e9 / (double)n);
  }
  printf("\ntargets: decode above 100 M events/s, aggregate above 50 M events/s\n");
  ocgc_source_close(src);
  rg_close(&f);
  unlink(path);
  rmdir(dir);
  return 0;
}
