/* test_stock5.c - stock OCaml 5 processes read right: the id numbering
 * read from the executable (exever.c, ocgc_source_ids), and a collection
 * of every domain counted once, with its causes, major cycles, forced
 * majors and heap (stw.c, stream.c, agg.c), on two-ring stock files
 * written by ringgen as OCaml 5.2 and 5.3 write them. */

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exever.h"
#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

/* This very executable is what a forked child runs: it holds a bytecode
 * runtime's banner, as ocamlrun 5.3.0 does. */
static const char banner[] = "The OCaml runtime, version 5.3.0";
static const char *volatile keep_banner = banner;

static char *tmp;
static unsigned file_no;

static void setup(void) { tmp = tu_mkdtemp(); }
static void teardown(void) { tu_rmtree(tmp); free(tmp); tmp = NULL; }

/* ---- the version in an executable ------------------------------------------- */

/* An OCaml string block of [s] at buf[at] (8-aligned): header, bytes, pad. */
static size_t put_block(char *buf, size_t at, const char *s)
{
  size_t len = strlen(s), words = len / 8 + 1;
  uint64_t hd = ((uint64_t)words << 10) | 0x300 | 252;
  memcpy(buf + at, &hd, 8);
  memset(buf + at + 8, 0, words * 8);
  memcpy(buf + at + 8, s, len);
  buf[at + 8 + words * 8 - 1] = (char)(words * 8 - 1 - len);
  return at + 8 + words * 8;
}

START_TEST(version_in_executables)
{
  char buf[4096], v[16];
  size_t at;
  memset(buf, 'x', sizeof buf);
  ck_assert_int_eq(ocgc_exe_version_scan(buf, sizeof buf, v, sizeof v), -ENOENT);
  /* native: Sys.ocaml_version's block, one word and two */
  at = put_block(buf, 64, "5.2.1");
  ck_assert_int_eq(ocgc_exe_version_scan(buf, sizeof buf, v, sizeof v), 0);
  ck_assert_str_eq(v, "5.2.1");
  memset(buf, 'x', sizeof buf);
  put_block(buf, 128, "5.4.0+dev1");
  ck_assert_int_eq(ocgc_exe_version_scan(buf, sizeof buf, v, sizeof v), 0);
  ck_assert_str_eq(v, "5.4.0+dev1");
  /* two different versions: nothing is guessed */
  put_block(buf, 256, "5.3.0");
  ck_assert_int_eq(ocgc_exe_version_scan(buf, sizeof buf, v, sizeof v), -ENOENT);
  /* the bytecode runtime's banner wins */
  memcpy(buf + 1000, banner, sizeof banner);
  ck_assert_int_eq(ocgc_exe_version_scan(buf, sizeof buf, v, sizeof v), 0);
  ck_assert_str_eq(v, "5.3.0");
  /* not versions: 4.x, a bad pad, letters, unaligned */
  memset(buf, 'x', sizeof buf);
  at = put_block(buf, 64, "4.14.1");
  buf[at - 1] = 9;
  put_block(buf, 128, "5.x.1");
  put_block(buf, 200, "5.3.0");
  ck_assert_int_eq(ocgc_exe_version_scan(buf + 4, sizeof buf - 4, v, sizeof v), -ENOENT);
  put_block(buf, 320, "4.14.1");
  ck_assert_int_eq(ocgc_exe_version_scan(buf + 320, 64, v, sizeof v), -ENOENT);
  ck_assert_int_eq(ocgc_ids_of_version("5.2.1"), OCGC_IDS_52);
  ck_assert_int_eq(ocgc_ids_of_version("5.3.0"), OCGC_IDS_53);
  ck_assert_int_eq(ocgc_ids_of_version("5.4.1"), OCGC_IDS_54);
  ck_assert_int_eq(ocgc_ids_of_version("5.4.0+dev1"), OCGC_IDS_54);
  /* newer than every table: no numbering guessed */
  ck_assert_int_eq(ocgc_ids_of_version("5.5.0"), OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_ids_of_version("5.10.0"), OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_ids_of_version("6.0.0"), OCGC_IDS_AUTO);
  /* what a reader refusing such a ring says: the releases known */
  ck_assert_ptr_nonnull(strstr(ocgc_strerror(OCGC_E_IDS_UNKNOWN), "(OCaml 5.2, 5.3, 5.4)"));
}
END_TEST

/* A child that maps a stock ring named <pid>.events, shared and writable,
 * and waits to be killed. */
static pid_t stock_child(char *path, size_t n)
{
  int fds[2];
  char ok = 0;
  pid_t pid;
  ck_assert_int_eq(pipe(fds), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct rg_file f;
    char p[600];
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60);
    snprintf(p, sizeof p, "%s/%d.events", tmp, (int)getpid());
    if (rg_create(&f, p, 0, 1, 1024) != 0) _exit(1);
    ok = keep_banner[0];
    if (write(fds[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  ck_assert_int_eq(read(fds[0], &ok, 1), 1);
  close(fds[0]);
  snprintf(path, n, "%s/%d.events", tmp, (int)pid);
  return pid;
}

static void ids_of(struct ocgc_source *s, struct ocgc_ids_info *i)
{
  memset(i, 0, sizeof *i);
  i->sz = sizeof *i;
  ck_assert_int_eq(ocgc_source_ids(s, i), 0);
}

START_TEST(ids_from_the_executable)
{
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_ids_info i;
  char path[600];
  size_t small = offsetof(struct ocgc_ids_info, ocaml_version);
  pid_t pid = stock_child(path, sizeof path);

  ck_assert_int_eq(ocgc_source_open_pid(pid, NULL, &s), 0);
  ids_of(s, &i);
  ck_assert_int_eq(i.origin, OCGC_IDS_FROM_EXE);
  ck_assert_str_eq(i.ocaml_version, "5.3.0");
  ck_assert_int_eq(i.ids, OCGC_IDS_53);
  ck_assert_int_eq(i.exe_err, 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_53);
  /* an older caller's struct: only what it has is written */
  memset(&i, 0x55, sizeof i);
  i.sz = small;
  ck_assert_int_eq(ocgc_source_ids(s, &i), 0);
  ck_assert_int_eq(i.origin, OCGC_IDS_FROM_EXE);
  ck_assert_int_eq((unsigned char)i.ocaml_version[0], 0x55);
  ocgc_source_close(s);
  /* the caller's word beats the executable's */
  ao.ids = OCGC_IDS_52;
  ck_assert_int_eq(ocgc_source_open_pid(pid, &ao, &s), 0);
  ids_of(s, &i);
  ck_assert_int_eq(i.origin, OCGC_IDS_FROM_CALLER);
  ck_assert_int_eq(i.ids, OCGC_IDS_52);
  ocgc_source_close(s);
  /* a bare file: 5.2, assumed */
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &s), 0);
  ids_of(s, &i);
  ck_assert_int_eq(i.origin, OCGC_IDS_ASSUMED);
  ck_assert_int_eq(i.ids, OCGC_IDS_52);
  ck_assert_str_eq(i.ocaml_version, "");
  ocgc_source_close(s);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}
END_TEST

/* ---- collections of every domain ------------------------------------------------ */

#define SPAN(b, id) OCGC_EV_HEADER(2, 0, (b) ? OCGC_RT_BEGIN : OCGC_RT_END, id)
#define COUNTER(id) OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, id)
#define LIFE(id) OCGC_EV_HEADER(3, 0, OCGC_RT_LIFECYCLE, id)
#define PH_LEAVE_BARRIER 29u /* 5.2's minor_leave_barrier */
#define PH_CYCLE 20u         /* 5.2's major_gc_cycle_domains */
#define CT_POOL 11u
#define CT_LARGE 13u

struct tf {
  char path[600];
  struct rg_file f;
  struct ocgc_source *src;
  struct ocgc_agg *agg;
  struct ocgc_snapshot *snap;
  struct ocgc_counters c;
};

static void tf_create(struct tf *t)
{
  char name[64];
  memset(t, 0, sizeof *t);
  snprintf(name, sizeof name, "%ld-%u.events", (long)getpid(), ++file_no);
  tu_path(t->path, sizeof t->path, tmp, name);
  ck_assert_int_eq(rg_create(&t->f, t->path, 0, 2, 4096), 0);
}

static void span(struct tf *t, unsigned d, unsigned id, uint64_t b, uint64_t e)
{
  rg_write1(&t->f, d, SPAN(1, id), b, 0);
  rg_write1(&t->f, d, SPAN(0, id), e, 0);
}

/* Ring d's part of a minor collection of two domains, as OCaml 5 writes
 * it: MINOR [b, e], then MINOR_LEAVE_BARRIER [e, l]. */
static void minor(struct tf *t, unsigned d, uint64_t b, uint64_t e, uint64_t l)
{
  rg_write1(&t->f, d, SPAN(1, OCGC_PH_MINOR), b, 0);
  rg_write1(&t->f, d, COUNTER(OCGC_CT_MINOR_ALLOCATED), e, 800);
  rg_write1(&t->f, d, SPAN(0, OCGC_PH_MINOR), e, 0);
  if (l) span(t, d, PH_LEAVE_BARRIER, e, l);
}

static void tf_read(struct tf *t)
{
  if (t->agg == NULL) {
    struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
    o.poll_max_ns = TU_NO_POLL_DEADLINE;
    ck_assert_int_eq(ocgc_source_open_path(t->path, NULL, &t->src), 0);
    ck_assert_int_eq(ocgc_agg_new(t->src, &o, &t->agg), 0);
  }
  ck_assert_int_ge(ocgc_agg_poll(t->agg), 0);
  ocgc_snapshot_free(t->snap);
  ck_assert_int_eq(ocgc_agg_snapshot(t->agg, &t->snap), 0);
  t->c.sz = sizeof t->c;
  ocgc_snapshot_counters(t->snap, &t->c);
}

static void tf_close(struct tf *t)
{
  ocgc_snapshot_free(t->snap);
  ocgc_agg_free(t->agg);
  ocgc_source_close(t->src);
  rg_close(&t->f);
}

static uint64_t cause_count(struct tf *t, unsigned kind, unsigned cause)
{
  struct ocgc_cause_row row = OCGC_OPTS_INIT(struct ocgc_cause_row);
  ck_assert_int_eq(ocgc_snapshot_cause(t->snap, kind, cause, &row), 0);
  return row.count;
}

/* Three minor collections of two domains: counted three times, not six;
 * each lasts as long as its longest domain's span, whichever ring is read
 * first; a domain that began after the other ended its MINOR span is in
 * the same collection (the leave barrier holds them together). */
START_TEST(minor_of_two_domains_counts_once)
{
  struct tf t;
  const struct ocgc_hist *h;
  tf_create(&t);
  minor(&t, 0, 1000, 1100, 1300);
  minor(&t, 1, 1010, 1250, 1300);  /* longest: 240 */
  minor(&t, 0, 2000, 2300, 2400);  /* longest: 300, read first */
  minor(&t, 1, 2005, 2100, 2400);
  minor(&t, 0, 3000, 3050, 3500);
  minor(&t, 1, 3200, 3400, 3500);  /* begins after ring 0's MINOR ended */
  tf_read(&t);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 3);
  ck_assert_uint_eq(t.c.event_collections[OCGC_KIND_MINOR], 3);
  h = ocgc_snapshot_kind(t.snap, OCGC_KIND_MINOR);
  ck_assert_uint_eq(ocgc_hist_count(h), 3);
  ck_assert_uint_eq(ocgc_hist_sum(h), 240 + 300 + 200);
  ck_assert_uint_eq(ocgc_hist_max(h), 300);
  ck_assert_uint_eq(ocgc_hist_count(ocgc_snapshot_pauses(t.snap)), 3);
  ck_assert_uint_eq(t.c.pauses, 3);
  ck_assert_uint_eq(t.c.gc_time_ns, 240 + 300 + 200);
  ck_assert_uint_eq(t.c.allocated_bytes, 6 * 800); /* each domain's minor heap */
  /* a later collection read on one ring, then the other */
  minor(&t, 1, 4000, 4100, 4200);
  tf_read(&t);
  minor(&t, 0, 4010, 4050, 4200);
  tf_read(&t);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 4);
  /* ring 0 read alone first, ring 1 (a domain late to begin) a poll later */
  minor(&t, 0, 5000, 5050, 5500);
  tf_read(&t);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 5);
  minor(&t, 1, 5200, 5400, 5500);
  tf_read(&t);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 5);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_kind(t.snap, OCGC_KIND_MINOR)), 300);
  tf_close(&t);
}
END_TEST

/* Once the second domain terminated, a minor collection of the one left
 * has no leave barrier: it counts once the rings are read to their tails,
 * not at the ring's next event (which may not come: a program that waits). */
START_TEST(one_domain_left)
{
  struct tf t;
  tf_create(&t);
  minor(&t, 0, 1000, 1100, 1200);
  minor(&t, 1, 1000, 1150, 1200);
  rg_write1(&t.f, 1, LIFE(OCGC_LC_DOMAIN_TERMINATE), 1500, 42);
  minor(&t, 0, 2000, 2100, 0);
  tf_read(&t);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 2);
  tf_close(&t);
}
END_TEST

/* OCaml 5 writes a FORCE_MINOR_* or REQUEST_* counter on the domain that
 * asks, before the collection begins: the collection has that cause,
 * whichever domain is read first; Gc.* calls are explicit; the rest is
 * unknown. */
START_TEST(stock_causes)
{
  struct tf t;
  tf_create(&t);
  minor(&t, 0, 1000, 1100, 1300);
  rg_write1(&t.f, 1, COUNTER(OCGC_CT_FORCE_MINOR_ALLOC_SMALL), 990, 1);
  minor(&t, 1, 1010, 1250, 1300);
  rg_write1(&t.f, 0, COUNTER(OCGC_CT_REQUEST_MAJOR_ALLOC_SHR), 1900, 1);
  minor(&t, 0, 2000, 2100, 2200); /* not what it asked for */
  minor(&t, 1, 2000, 2100, 2200);
  span(&t, 0, OCGC_PH_MAJOR_SLICE, 2300, 2400);
  rg_write1(&t.f, 0, SPAN(1, OCGC_PH_EXPLICIT_GC_MINOR), 3000, 0);
  minor(&t, 0, 3010, 3100, 3200);
  rg_write1(&t.f, 0, SPAN(0, OCGC_PH_EXPLICIT_GC_MINOR), 3300, 0);
  minor(&t, 1, 3020, 3100, 3200);
  tf_read(&t);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 3);
  ck_assert_uint_eq(cause_count(&t, OCGC_KIND_MINOR, OCGC_CAUSE_MINOR_HEAP_FULL), 1);
  ck_assert_uint_eq(cause_count(&t, OCGC_KIND_MINOR, OCGC_CAUSE_UNKNOWN), 1);
  ck_assert_uint_eq(cause_count(&t, OCGC_KIND_MINOR, OCGC_CAUSE_EXPLICIT), 1);
  ck_assert_uint_eq(cause_count(&t, OCGC_KIND_MAJOR_SLICE, OCGC_CAUSE_ALLOC_SHR), 1);
  tf_close(&t);
}
END_TEST

/* The end of a major cycle and a compaction run on every domain: one
 * each; Gc.full_major and Gc.compact are forced majors (OCaml 5 counts one
 * per call); the heap is the domains' pool and large words summed. */
START_TEST(cycles_compactions_forced_heap)
{
  struct tf t;
  unsigned d;
  tf_create(&t);
  rg_write1(&t.f, 0, SPAN(1, OCGC_PH_EXPLICIT_GC_COMPACT), 900, 0);
  for (d = 0; d < 2; d++) {
    rg_write1(&t.f, d, SPAN(1, PH_CYCLE), 1000 + d, 0);
    minor(&t, d, 1005 + d, 1100, 1200);
    rg_write1(&t.f, d, SPAN(1, OCGC_PH_COMPACT), 1300 + d * 50, 0);
    rg_write1(&t.f, d, SPAN(0, OCGC_PH_COMPACT), 1500 - d * 20, 0);
    rg_write1(&t.f, d, COUNTER(CT_POOL), 1600, 1000 * (d + 1));
    rg_write1(&t.f, d, COUNTER(CT_LARGE), 1600, 100);
    rg_write1(&t.f, d, SPAN(0, PH_CYCLE), 1700 - d, 0);
  }
  rg_write1(&t.f, 0, SPAN(0, OCGC_PH_EXPLICIT_GC_COMPACT), 1800, 0);
  span(&t, 1, OCGC_PH_EXPLICIT_GC_FULL_MAJOR, 2000, 2100);
  tf_read(&t);
  ck_assert_uint_eq(t.c.major_cycles, 1);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_COMPACTION], 1);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 1);
  ck_assert_uint_eq(t.c.forced_majors, 2);
  ck_assert_uint_eq(t.c.heap_bytes, (1000 + 100 + 2000 + 100) * 8);
  ck_assert_uint_eq(ocgc_hist_max(ocgc_snapshot_kind(t.snap, OCGC_KIND_COMPACTION)), 200);
  ck_assert_uint_eq(cause_count(&t, OCGC_KIND_COMPACTION, OCGC_CAUSE_EXPLICIT), 1);
  tf_close(&t);
}
END_TEST

/* The real stock OCaml 5.2 run (tests/fixtures/ocaml5.2, gcdemo.ml 17000,
 * one domain): its minor collections as Gc.quick_stat counted them, a
 * forced major per Gc.full_major (34), a major cycle per end of cycle the
 * runtime wrote (its heap counters, 294 times), the heap of the last one;
 * collections inside Gc.full_major explicit, the others unknown (5.2 wrote
 * no FORCE_MINOR counter in the whole run). */
START_TEST(fixture_52_whole_run)
{
  struct tf t;
  char src[4096], fx[600];
  const char *top = tu_srcdir();
  struct ocgc_agg_opts o = OCGC_OPTS_INIT(struct ocgc_agg_opts);
  ck_assert_ptr_nonnull(top);
  memset(&t, 0, sizeof t);
  snprintf(src, sizeof src, "%s/tests/fixtures/ocaml5.2/full-3695.events.xz", top);
  tu_path(fx, sizeof fx, tmp, "3695.events");
  ck_assert_int_eq(tu_unxz(src, fx), 0);
  ck_assert_int_eq(ocgc_source_open_path(fx, NULL, &t.src), 0);
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_agg_new(t.src, &o, &t.agg), 0);
  while (ocgc_agg_poll(t.agg) > 0) continue;
  ck_assert_int_eq(ocgc_agg_snapshot(t.agg, &t.snap), 0);
  t.c.sz = sizeof t.c;
  ocgc_snapshot_counters(t.snap, &t.c);
  ck_assert_uint_eq(t.c.collections[OCGC_KIND_MINOR], 2963);
  ck_assert_uint_eq(t.c.forced_majors, 34);
  ck_assert_uint_eq(t.c.major_cycles, 294);
  ck_assert_uint_gt(t.c.heap_bytes, 0);
  ck_assert_uint_ge(t.c.top_heap_bytes, t.c.heap_bytes);
  ck_assert_uint_eq(cause_count(&t, OCGC_KIND_MINOR, OCGC_CAUSE_EXPLICIT) +
                        cause_count(&t, OCGC_KIND_MINOR, OCGC_CAUSE_UNKNOWN),
                    2963);
  ck_assert_uint_gt(cause_count(&t, OCGC_KIND_MINOR, OCGC_CAUSE_EXPLICIT), 0);
  ocgc_snapshot_free(t.snap);
  ocgc_agg_free(t.agg);
  ocgc_source_close(t.src);
}
END_TEST

static Suite *stock5_suite(void)
{
  Suite *s = suite_create("stock5");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, version_in_executables);
  tcase_add_test(tc, ids_from_the_executable);
  tcase_add_test(tc, minor_of_two_domains_counts_once);
  tcase_add_test(tc, one_domain_left);
  tcase_add_test(tc, stock_causes);
  tcase_add_test(tc, cycles_compactions_forced_heap);
  tcase_add_test(tc, fixture_52_whole_run);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(stock5_suite);
