/* test_source.c - what a source reads besides events: its info (identity,
 * state, versions), the producer's totals (every field, a producer with
 * fewer cause columns, impossible cause tables), the events written per
 * ring, user-event names (copies, empty and unterminated slots, names
 * registered later, at no system call per event), and the options of an
 * older caller.  The files are written by ringgen (ringfix.h).
 *
 * This suite is linked with -Wl,--wrap=fstat,--wrap=pread (unit.am), which
 * routes the library's calls through the counters below. */

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "source.h"
#include "testutil.h"

/* ---- info and totals ----------------------------------------------------------------- */

START_TEST(source_info)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);

  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 1);
  ck_assert_uint_eq(info.max_domains, 1);
  ck_assert_uint_eq(info.ring_words, 1024);
  ck_assert_uint_eq(info.file_size, t->f.size);
  ck_assert_int_eq(info.ids, OCGC_IDS_52);
  ck_assert_uint_eq(info.pid, 4242);
  ck_assert_uint_eq(info.start_time, 123456);
  ck_assert_str_eq(info.boot_id, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  ck_assert_int_eq(info.realtime_offset_ns, INT64_C(1700000000000000000));
  ck_assert_uint_eq(info.created_ns, 1000);
  ck_assert_uint_eq(info.state, OCGC_STATE_RUNNING);
  ck_assert_uint_eq(info.exited_ns, 0);
  ck_assert_uint_eq(info.flags, OCGC_EXT_NATIVE);
  ck_assert_str_eq(info.ocaml_version, "4.13.1");
  ck_assert_str_eq(info.ocgc_version, "0.1.0");
  ck_assert_str_eq(info.program, "ringgen");
  /* state is read fresh */
  t->f.ext->exited_ns = 99;
  t->f.ext->state = OCGC_STATE_EXITED;
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(info.state, OCGC_STATE_EXITED);
  ck_assert_uint_eq(info.exited_ns, 99);
  /* unterminated strings are cut, never overrun */
  memset(t->f.ext->program, 'p', sizeof t->f.ext->program);
  memset(t->f.ext->boot_id, 'b', sizeof t->f.ext->boot_id);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(strlen(info.program), sizeof info.program - 1);
  ck_assert_uint_eq(strlen(info.boot_id), sizeof info.boot_id - 1);
  ck_assert_int_eq(ocgc_source_info(NULL, &info), -EINVAL);
  ck_assert_int_eq(ocgc_source_info(s, NULL), -EINVAL);

  s = rf_open(rf_file(0, 4, 64), OCGC_IDS_AUTO);
  memset(&info, 0x55, sizeof info);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 0);
  ck_assert_uint_eq(info.max_domains, 4);
  ck_assert_uint_eq(info.ring_words, 64);
  ck_assert_uint_eq(info.pid, 0);
  ck_assert_str_eq(info.program, "");
}
END_TEST

/* The totals block with field k holding k (and kind times, causes). */
static void fill_totals(struct ocgc_wire_totals *w)
{
  unsigned k, c;
  w->minor_collections = 1;
  w->major_collections = 2;
  w->compactions = 3;
  w->forced_major_collections = 4;
  w->major_slices = 5;
  w->minor_words = 6;
  w->promoted_words = 7;
  w->major_words = 8;
  w->direct_major_words = 9;
  w->heap_words = 10;
  w->top_heap_words = 11;
  w->heap_chunks = 12;
  w->gc_time_ns = 13;
  for (k = 0; k < OCGC_KIND_COUNT; k++) w->kind_time_ns[k] = 14 + k;
  w->updated_ns = 18;
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++) w->by_cause[k][c] = c == 2 ? k + 1 : 0;
  w->seq = 2;
}

static void expect_totals(const struct ocgc_totals *tot)
{
  unsigned k, c;
  ck_assert_uint_eq(tot->minor_collections, 1);
  ck_assert_uint_eq(tot->major_collections, 2);
  ck_assert_uint_eq(tot->compactions, 3);
  ck_assert_uint_eq(tot->forced_major_collections, 4);
  ck_assert_uint_eq(tot->major_slices, 5);
  ck_assert_uint_eq(tot->minor_words, 6);
  ck_assert_uint_eq(tot->promoted_words, 7);
  ck_assert_uint_eq(tot->major_words, 8);
  ck_assert_uint_eq(tot->direct_major_words, 9);
  ck_assert_uint_eq(tot->heap_words, 10);
  ck_assert_uint_eq(tot->top_heap_words, 11);
  ck_assert_uint_eq(tot->heap_chunks, 12);
  ck_assert_uint_eq(tot->gc_time_ns, 13);
  for (k = 0; k < OCGC_KIND_COUNT; k++) ck_assert_uint_eq(tot->kind_time_ns[k], 14 + k);
  ck_assert_uint_eq(tot->updated_ns, 18);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++)
      ck_assert_uint_eq(tot->by_cause[k][c], c == 2 ? k + 1 : 0);
}

/* Every field read; a live producer in the middle of an update (seq odd
 * for longer than readers wait) is -EAGAIN; stock files have no totals. */
START_TEST(source_totals)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_wire_totals *w = t->f.totals;
  struct ocgc_source *s;
  struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);

  fill_totals(w);
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  expect_totals(&tot);
  rf_identify_as_self(t);
  w->seq = 3;
  ck_assert_int_eq(ocgc_source_totals(s, &tot), -EAGAIN);
  w->seq = 4;
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  ck_assert_int_eq(ocgc_source_totals(NULL, &tot), -EINVAL);
  ck_assert_int_eq(ocgc_source_totals(s, NULL), -EINVAL);

  s = rf_open(rf_file(0, 1, 64), OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), -ENODATA);
}
END_TEST

/* The GC settings: read from an ext_version 2 file, only into the fields
 * the caller's struct has; a version 1 file (whose words are zero) and a
 * stock file have none. */
START_TEST(source_gc_config)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_source *s;
  struct ocgc_gc_config c = OCGC_OPTS_INIT(struct ocgc_gc_config);
  struct ocgc_gc_config old;

  t->f.totals->minor_heap_words = 262144;
  t->f.totals->space_overhead = 120;
  t->f.totals->max_overhead = 500;
  t->f.totals->allocation_policy = 2;
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_gc_config(s, &c), 0);
  ck_assert_uint_eq(c.minor_heap_words, 262144);
  ck_assert_uint_eq(c.space_overhead, 120);
  ck_assert_uint_eq(c.max_overhead, 500);
  ck_assert_uint_eq(c.allocation_policy, 2);
  /* A caller built when the struct ended after space_overhead. */
  memset(&old, 0xee, sizeof old);
  old.sz = offsetof(struct ocgc_gc_config, max_overhead);
  ck_assert_int_eq(ocgc_source_gc_config(s, &old), 0);
  ck_assert_uint_eq(old.space_overhead, 120);
  ck_assert_uint_eq(old.max_overhead, UINT64_C(0xeeeeeeeeeeeeeeee));
  old.sz = 0;
  ck_assert_int_eq(ocgc_source_gc_config(s, &old), -EINVAL);
  ck_assert_int_eq(ocgc_source_gc_config(NULL, &c), -EINVAL);

  t = rf_file(1, 1, 1024);
  t->f.ext->ext_version = 1;
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_gc_config(s, &c), -ENODATA);
  s = rf_open(rf_file(0, 1, 64), OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_gc_config(s, &c), -ENODATA);
}
END_TEST

/* A producer with fewer cause columns (20): the table is read with its own
 * stride and the missing columns read 0.  Then a cause table no producer
 * writes: a row summing above its kind's counter (+1 for a collection
 * between the two), or wrapping around. */
START_TEST(source_totals_cause_columns)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_wire_totals *w = t->f.totals;
  struct ocgc_source *s;
  struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);
  unsigned k, c;
  uint64_t *bc;

  fill_totals(w);
  t->f.ext->cause_slots = OCGC_CAUSE_COUNT;
  bc = (uint64_t *)((char *)w + offsetof(struct ocgc_wire_totals, by_cause));
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) bc[k * OCGC_CAUSE_COUNT + c] = c == 1 + k ? k + 1 : 0;
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  for (k = 0; k < OCGC_KIND_COUNT; k++)
    for (c = 0; c < OCGC_CAUSE_SLOTS; c++)
      ck_assert_uint_eq(tot.by_cause[k][c], c < OCGC_CAUSE_COUNT && c == 1 + k ? k + 1 : 0);

  bc[0 * OCGC_CAUSE_COUNT + 3] = 2; /* minor: 1 + 2 > 1 + 1 */
  ck_assert_int_eq(ocgc_source_totals(s, &tot), OCGC_E_CORRUPT);
  bc[0 * OCGC_CAUSE_COUNT + 3] = 0;
  ck_assert_int_eq(ocgc_source_totals(s, &tot), 0);
  bc[1 * OCGC_CAUSE_COUNT + 0] = UINT64_MAX; /* slices: 2 + 2^64-1 wraps to 1 */
  ck_assert_int_eq(ocgc_source_totals(s, &tot), OCGC_E_CORRUPT);
}
END_TEST

START_TEST(source_written)
{
  struct tf *t = rf_file(1, 2, 64);
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  uint64_t w = 1;

  ck_assert_int_eq(ocgc_source_written(s, 0, &w), 0);
  ck_assert_uint_eq(w, 0);
  pat_write_range(&t->f, 1, 0, 300); /* laps the ring: written still counts all */
  ck_assert_int_eq(ocgc_source_written(s, 1, &w), 0);
  ck_assert_uint_eq(w, 300);
  ck_assert_int_eq(ocgc_source_written(s, 2, &w), -EINVAL);
  ck_assert_int_eq(ocgc_source_written(s, 0, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_source_written(NULL, 0, &w), -EINVAL);

  s = rf_open(rf_file(0, 1, 64), OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), -ENODATA);
}
END_TEST

/* ---- user-event names ------------------------------------------------------------------ */

/* Names are copied out of the mapping; empty and out-of-range slots give
 * NULL; events carry their slot's name. */
START_TEST(user_names)
{
  struct tf *t = rf_file(1, 1, 256);
  struct rec *r = rf_rec();
  struct ocgc_source *s;
  struct ocgc_cursor *c;
  const char *n;
  char longname[200];

  rg_set_name(&t->f, 0, "first");
  rg_set_name(&t->f, 5, "ocgc.heap.grow");
  memset(longname, 'x', sizeof longname);
  longname[127] = '\0';
  rg_set_name(&t->f, 8191, longname);
  s = rf_open(t, OCGC_IDS_AUTO);
  n = ocgc_source_user_name(s, 5);
  ck_assert_ptr_nonnull(n);
  ck_assert_str_eq(n, "ocgc.heap.grow");
  /* a copy, not a pointer into the mapping */
  ck_assert(n < t->f.map || n >= t->f.map + t->f.size);
  ck_assert(n < s->map || n >= s->map + s->size);
  ck_assert_str_eq(ocgc_source_user_name(s, 0), "first");
  ck_assert_uint_eq(strlen(ocgc_source_user_name(s, 8191)), 127);
  ck_assert_ptr_null(ocgc_source_user_name(s, 1));       /* empty */
  ck_assert_ptr_null(ocgc_source_user_name(s, 8192));    /* out of range */
  ck_assert_ptr_null(ocgc_source_user_name(s, ~0u));
  ck_assert_ptr_null(ocgc_source_user_name(NULL, 0));
  /* a slot registered later is found later */
  rg_set_name(&t->f, 1, "late");
  ck_assert_str_eq(ocgc_source_user_name(s, 1), "late");
  /* what the caller holds does not change when the mapping does */
  rg_set_name(&t->f, 5, "changed");
  ck_assert_str_eq(n, "ocgc.heap.grow");
  /* events carry names: slot 5 (user int) named, slot 6 (custom) not */
  c = rf_cursor(s, r, OCGC_START_OLDEST, 0);
  pat_write_range(&t->f, 0, 0, 6);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 6);
  ck_assert_ptr_null(r->name[0]);
  ck_assert_str_eq(r->name[3], "ocgc.heap.grow");
  ck_assert_ptr_null(r->name[5]);
}
END_TEST

/* The library's fstat() and pread() calls, counted (--wrap, see above). */
static unsigned long fstat_calls, pread_calls;
int __real_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);

int __wrap_fstat(int fd, struct stat *st)
{
  __atomic_add_fetch(&fstat_calls, 1, __ATOMIC_RELAXED);
  return __real_fstat(fd, st);
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
  __atomic_add_fetch(&pread_calls, 1, __ATOMIC_RELAXED);
  return __real_pread(fd, buf, n, off);
}

static unsigned long syscalls_counted(void)
{
  return __atomic_load_n(&fstat_calls, __ATOMIC_RELAXED) +
         __atomic_load_n(&pread_calls, __ATOMIC_RELAXED);
}

/* Events of an unnamed user slot cost no system call each: the empty slot
 * is read once per poll (it was an fstat per event). */
struct names_seen {
  unsigned events, named;
  const char *last;
};

static int note_name(const struct ocgc_event *ev, void *ctx)
{
  struct names_seen *n = ctx;
  n->events++;
  if (ev->name != NULL) {
    n->named++;
    n->last = ev->name;
  }
  return 0;
}

START_TEST(unnamed_slot_no_syscall_per_event)
{
  struct tf *t = rf_file(1, 1, 1u << 16);
  struct names_seen n = {0, 0, NULL};
  struct ocgc_source *s;
  struct ocgc_cursor_opts o = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor *c = NULL;
  unsigned long before, after;
  unsigned i;

  for (i = 0; i < 10000; i++)
    rg_write1(&t->f, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 77), i, i);
  s = rf_open(t, OCGC_IDS_AUTO);
  o.on_event = note_name;
  o.ctx = &n;
  o.poll_max_ns = TU_NO_POLL_DEADLINE;
  ck_assert_int_eq(ocgc_cursor_new(s, &o, &c), 0);
  before = syscalls_counted();
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10000);
  after = syscalls_counted();
  ck_assert_uint_eq(n.named, 0);
  /* An fstat per poll and one pread for the empty slot; per batch of 16 Ki
   * words (two, and a last look that finds nothing new), a plain file's
   * words by copy (words.c): the tail (two copies that agree), the head's
   * seqlock (three) before and after the events (one, two at the ring's
   * end) and the tail again if head passed it: at most 12.  Not one per
   * event. */
  ck_assert_uint_gt(after - before, 0); /* the counting works */
  ck_assert_uint_le(after - before, 2 + 3 * 12);
  /* named later: seen from the next poll on */
  rg_set_name(&t->f, 77, "late.name");
  rg_write1(&t->f, 0, OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 77), 10000, 1);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 1);
  ck_assert_uint_eq(n.named, 1);
  ck_assert_str_eq(n.last, "late.name");
  ocgc_cursor_free(c);
}
END_TEST

/* A stock file (OCaml 5: 128 rings, nearly all idle) read by copy: a poll
 * copies all ring headers at once and reads only the rings whose tail
 * moved, not the head and tail of each ring (512 system calls a poll). */
START_TEST(stock_idle_rings_cost_one_copy)
{
  struct tf *t = rf_file(0, 128, 1024);
  struct ocgc_source *s;
  struct ocgc_cursor *c = NULL;
  unsigned long before, after;

  pat_write_range(&t->f, 5, 0, 10);
  s = rf_open(t, OCGC_IDS_AUTO);
  ck_assert_int_eq(ocgc_cursor_new(s, NULL, &c), 0);
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 10);
  before = syscalls_counted();
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 0);
  after = syscalls_counted();
  /* an fstat and the copy of the headers */
  ck_assert_uint_gt(after - before, 0); /* the counting works */
  ck_assert_uint_le(after - before, 2);
  /* A ring that moves is read. */
  pat_write_range(&t->f, 77, 0, 3);
  before = syscalls_counted();
  ck_assert_int_eq(ocgc_cursor_poll(c, 0), 3);
  after = syscalls_counted();
  ck_assert_uint_le(after - before, 2 + 12);
  ocgc_cursor_free(c);
}
END_TEST

/* A slot of 128 bytes without a NUL is "not a valid string" (consumer.h:
 * "or NULL if the slot is empty or not a valid string"). */
START_TEST(user_name_unterminated)
{
  struct tf *t = rf_file(1, 1, 256);
  char *slot = t->f.map + t->f.hdr->custom_events_offset + 2 * OCGC_WIRE_USER_NAME_LEN;

  memset(slot, 'A', OCGC_WIRE_USER_NAME_LEN);
  ck_assert_ptr_null(ocgc_source_user_name(rf_open(t, OCGC_IDS_AUTO), 2));
}
END_TEST

/* ---- options ------------------------------------------------------------------------- */

/* An older caller's smaller ocgc_open_opts: ids past its sz is not read. */
START_TEST(open_opts_sz)
{
  struct tf *t = rf_file(0, 1, 64);
  struct ocgc_open_opts o = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);

  o.ids = OCGC_IDS_53;
  o.sz = offsetof(struct ocgc_open_opts, ids);
  ck_assert_int_eq(ocgc_source_open_path(t->path, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_52);
  ocgc_source_close(s);
  o.sz = sizeof o;
  ck_assert_int_eq(ocgc_source_open_path(t->path, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.ids, OCGC_IDS_53);
  ocgc_source_close(s);
  ck_assert_int_eq(ocgc_source_open_path(t->path, NULL, NULL), -EINVAL);
}
END_TEST

/* An ocgc file says which phase numbering it holds (OCGC_IDS=5.3 in the
 * producer): the reader follows it whatever the caller asks; 0 (files
 * before the field) and unknown values are 5.2. */
START_TEST(ext_ids)
{
  static const struct { uint64_t ext; enum ocgc_ids asked, want; } cases[] = {
    {OCGC_EXT_IDS_53, OCGC_IDS_AUTO, OCGC_IDS_53}, {OCGC_EXT_IDS_53, OCGC_IDS_52, OCGC_IDS_53},
    {OCGC_EXT_IDS_52, OCGC_IDS_53, OCGC_IDS_52},   {0, OCGC_IDS_AUTO, OCGC_IDS_52},
    {77, OCGC_IDS_AUTO, OCGC_IDS_52},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct tf *t = rf_file(1, 1, 1024);
    struct ocgc_open_opts o = OCGC_OPTS_INIT(struct ocgc_open_opts);
    struct ocgc_source *s = NULL;
    struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
    t->f.ext->ids = cases[i].ext;
    o.ids = cases[i].asked;
    ck_assert_int_eq(ocgc_source_open_path(t->path, &o, &s), 0);
    ck_assert_int_eq(ocgc_source_info(s, &info), 0);
    ck_assert_msg(info.ids == cases[i].want, "case %zu: ids %d", i, (int)info.ids);
    ocgc_source_close(s);
  }
}
END_TEST

static Suite *source_suite(void)
{
  Suite *s = suite_create("source");
  TCase *tc = rf_tcase(s, "source", 60);
  tcase_add_test(tc, source_info);
  tcase_add_test(tc, source_totals);
  tcase_add_test(tc, source_gc_config);
  tcase_add_test(tc, ext_ids);
  tcase_add_test(tc, source_totals_cause_columns);
  tcase_add_test(tc, source_written);
  tcase_add_test(tc, open_opts_sz);

  tc = rf_tcase(s, "names", 60);
  tcase_add_test(tc, user_names);
  tcase_add_test(tc, unnamed_slot_no_syscall_per_event);
  tcase_add_test(tc, stock_idle_rings_cost_one_copy);
  tcase_add_test(tc, user_name_unterminated);
  return s;
}

TU_SUITE(source_suite);
