/* test_memprof.c - libocgc's allocation profile reader and its control
 * word (memprof.c) on files written here as a producer writes them: a
 * copy holds the header's figures and the rows in use, exactly; a file of
 * an older version, or whose producer has not filled the table, has none;
 * a hostile geometry (rows, row size, depth out of bounds, rows past the
 * block) is refused before anything is allocated; hostile counts (stacks
 * beyond the rows, a row's depth beyond the table's) are clamped; a seq
 * held odd by a live producer is reported busy, by a dead one read as it
 * is; a request writes one control word with the next request number, and
 * a rate out of bounds is refused without a write; a window of two copies
 * holds their differences, and two copies of different tables are told;
 * a row recycled between two copies (a new generation) is a new stack; in
 * use is the rows' live where the producer keeps it, else alloc - freed. */

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

static struct ocgc_wire_mp *table(struct tf *t)
{
  uint64_t off = t->f.ext->totals_offset + sizeof(struct ocgc_wire_totals);
  return (struct ocgc_wire_mp *)(t->f.map + off);
}

static struct ocgc_wire_mp_row *row(struct tf *t, unsigned i)
{
  return (struct ocgc_wire_mp_row *)(table(t) + 1) + i;
}

/* A table as the producer fills it: two stacks, figures in the header. */
static struct tf *producer_file(void)
{
  struct tf *t = rf_file(1, 1, 1024);
  struct ocgc_wire_mp *m = table(t);
  m->size = OCGC_WIRE_MP_SIZE;
  m->rows = OCGC_MP_ROWS;
  m->row_size = sizeof(struct ocgc_wire_mp_row);
  m->depth = OCGC_MP_DEPTH;
  m->state = OCGC_MP_ON;
  m->rate_bytes = 4096;
  m->rate_since_ns = 77;
  m->rate_changes = 1;
  m->stacks = 2;
  m->samples = 30;
  m->words = 30 * 512;
  m->followed = 5;
  row(t, 0)->meta = OCGC_MP_META_OVERFLOW;
  row(t, 1)->meta = OCGC_MP_META(2, 0, OCGC_MP_MINOR, 1);
  row(t, 1)->frames[0] = 0x1111;
  row(t, 1)->frames[1] = 0x2222;
  row(t, 1)->alloc = (struct ocgc_wire_mp_counts){10, 5120, 5120 * 1024 / 11};
  row(t, 1)->promoted = (struct ocgc_wire_mp_counts){2, 1024, 1024 * 1024 / 11};
  row(t, 1)->freed = (struct ocgc_wire_mp_counts){8, 4096, 4096 * 1024 / 11};
  row(t, 2)->meta = OCGC_MP_META(OCGC_MP_DEPTH, 1, OCGC_MP_MAJOR, 0);
  row(t, 2)->frames[OCGC_MP_DEPTH - 1] = 0x3333;
  row(t, 2)->alloc = (struct ocgc_wire_mp_counts){20, 10240, 10};
  row(t, 3)->meta = OCGC_MP_META(1, 0, OCGC_MP_MINOR, 0); /* not in use yet */
  m->magic = OCGC_MP_MAGIC;
  return t;
}

START_TEST(copy_is_exact)
{
  struct tf *t = producer_file();
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_memprof *p;
  ck_assert_int_eq(ocgc_memprof_read(s, &p), 0);
  ck_assert_int_eq(p->state, OCGC_MP_ON);
  ck_assert_uint_eq(p->rate_bytes, 4096);
  ck_assert_uint_eq(p->rate_since_ns, 77);
  ck_assert_uint_eq(p->rate_changes, 1);
  ck_assert_uint_eq(p->samples, 30);
  ck_assert_uint_eq(p->words, 30 * 512);
  ck_assert_uint_eq(p->followed, 5);
  ck_assert_uint_eq(p->table_rows, OCGC_MP_ROWS);
  ck_assert_uint_eq(p->nstacks, 3); /* the overflow row and two stacks, not row 3 */
  ck_assert_int_eq(p->stack[0].overflow, 1);
  ck_assert_uint_eq(p->stack[0].depth, 0);
  ck_assert_uint_eq(p->stack[1].kind, OCGC_MP_MINOR);
  ck_assert_uint_eq(p->stack[1].alloc_index, 1);
  ck_assert_uint_eq(p->stack[1].depth, 2);
  ck_assert_uint_eq(p->stack[1].frames[0], 0x1111);
  ck_assert_uint_eq(p->stack[1].frames[1], 0x2222);
  ck_assert_uint_eq(p->stack[1].alloc.samples, 10);
  ck_assert_uint_eq(p->stack[1].promoted.words, 1024);
  ck_assert_uint_eq(p->stack[1].freed.samples, 8);
  ck_assert_uint_eq(p->stack[2].kind, OCGC_MP_MAJOR);
  ck_assert_int_eq(p->stack[2].cut, 1);
  ck_assert_uint_eq(p->stack[2].depth, OCGC_MP_DEPTH);
  ck_assert_uint_eq(p->stack[2].frames[OCGC_MP_DEPTH - 1], 0x3333);
  ocgc_memprof_free(p);
  ocgc_memprof_free(NULL);
}
END_TEST

START_TEST(no_profile)
{
  struct tf *t = rf_file(1, 1, 1024), *st = rf_file(0, 1, 1024), *old = producer_file();
  struct ocgc_memprof *p = (struct ocgc_memprof *)1;
  /* not filled yet: no magic */
  ck_assert_int_eq(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p), -ENODATA);
  ck_assert_ptr_null(p);
  /* a stock file */
  ck_assert_int_eq(ocgc_memprof_read(rf_open(st, OCGC_IDS_AUTO), &p), -ENODATA);
  /* a file of ext_version 4, whatever follows its totals */
  old->f.ext->ext_version = 4;
  ck_assert_int_eq(ocgc_memprof_read(rf_open(old, OCGC_IDS_AUTO), &p), -ENODATA);
  ck_assert_int_eq(ocgc_memprof_read(NULL, &p), -EINVAL);
}
END_TEST

/* Each geometry word made hostile: refused as corrupt, nothing copied. */
START_TEST(hostile_geometry)
{
  static const struct { size_t off; uint64_t v; } bad[] = {
    {offsetof(struct ocgc_wire_mp, rows), 0},
    {offsetof(struct ocgc_wire_mp, rows), 16385},
    {offsetof(struct ocgc_wire_mp, rows), UINT64_MAX},
    {offsetof(struct ocgc_wire_mp, rows), OCGC_MP_ROWS + 1}, /* past the block */
    {offsetof(struct ocgc_wire_mp, row_size), 0},
    {offsetof(struct ocgc_wire_mp, row_size), 383},
    {offsetof(struct ocgc_wire_mp, row_size), 4104},
    {offsetof(struct ocgc_wire_mp, row_size), UINT64_MAX},
    {offsetof(struct ocgc_wire_mp, row_size), 128}, /* no room for the frames */
    {offsetof(struct ocgc_wire_mp, depth), OCGC_MP_DEPTH + 1}, /* more frames than the row holds */
    {offsetof(struct ocgc_wire_mp, depth), UINT64_MAX},
  };
  unsigned i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct tf *t = producer_file();
    struct ocgc_memprof *p;
    memcpy((char *)table(t) + bad[i].off, &bad[i].v, 8);
    ck_assert_msg(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p) == OCGC_E_CORRUPT,
                  "case %u read", i);
    ck_assert_msg(ocgc_memprof_request(rf_open(t, OCGC_IDS_AUTO), 4096, NULL) == OCGC_E_CORRUPT,
                  "case %u request", i);
  }
}
END_TEST

/* Counts a producer would never write are clamped, never followed. */
START_TEST(hostile_counts)
{
  struct tf *t = producer_file();
  struct ocgc_memprof *p;
  table(t)->stacks = UINT64_MAX;
  row(t, 1)->meta = OCGC_MP_META(255, 0, 15, 255);
  ck_assert_int_eq(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p), 0);
  ck_assert_uint_eq(p->nstacks, OCGC_MP_ROWS);
  ck_assert_uint_eq(p->stack[1].depth, OCGC_MP_DEPTH);
  ck_assert_uint_eq(p->stack[1].kind, 15);
  ocgc_memprof_free(p);
  /* a smaller table, as another producer might have: its own rows only */
  t = producer_file();
  table(t)->rows = 3;
  table(t)->stacks = 7;
  ck_assert_int_eq(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p), 0);
  ck_assert_uint_eq(p->nstacks, 3);
  ck_assert_uint_eq(p->table_rows, 3);
  ocgc_memprof_free(p);
}
END_TEST

START_TEST(seq_held_odd)
{
  struct tf *t = producer_file();
  struct ocgc_memprof *p;
  table(t)->seq = 3;
  /* a live producer (ourselves) that never finishes: busy */
  rf_identify_as_self(t);
  ck_assert_int_eq(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p), -EAGAIN);
  /* a dead one: what it left is read */
  t->f.ext->pid = rf_dead_pid();
  ck_assert_int_eq(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p), 0);
  ck_assert_uint_eq(p->nstacks, 3);
  ocgc_memprof_free(p);
}
END_TEST

START_TEST(request_writes_one_word)
{
  struct tf *t = producer_file();
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  uint64_t w = 0;
  ck_assert_int_eq(ocgc_memprof_request(s, 8192, &w), 0);
  ck_assert_uint_eq(w, (UINT64_C(1) << OCGC_MP_CONTROL_REQ_SHIFT) | 8192);
  ck_assert_uint_eq(table(t)->control, w);
  /* the same rate again is a new request */
  ck_assert_int_eq(ocgc_memprof_request(s, 8192, &w), 0);
  ck_assert_uint_eq(w, (UINT64_C(2) << OCGC_MP_CONTROL_REQ_SHIFT) | 8192);
  ck_assert_int_eq(ocgc_memprof_request(s, 0, &w), 0);
  ck_assert_uint_eq(table(t)->control & OCGC_MP_CONTROL_RATE_MASK, 0);
  /* out of bounds: refused here, nothing written */
  ck_assert_int_eq(ocgc_memprof_request(s, OCGC_MP_RATE_MIN - 1, &w), -ERANGE);
  ck_assert_int_eq(ocgc_memprof_request(s, OCGC_MP_RATE_MAX + 1, &w), -ERANGE);
  ck_assert_uint_eq(table(t)->control >> OCGC_MP_CONTROL_REQ_SHIFT, 3);
  /* the request number wraps within its bits, never to 0 */
  table(t)->control = ~UINT64_C(0);
  ck_assert_int_eq(ocgc_memprof_request(s, 4096, &w), 0);
  ck_assert_uint_eq(w, (UINT64_C(1) << OCGC_MP_CONTROL_REQ_SHIFT) | 4096);
  ck_assert_int_eq(ocgc_memprof_request(NULL, 4096, &w), -EINVAL);
}
END_TEST

/* A window of two copies: the differences, the stacks counted in it only. */
START_TEST(delta_is_the_window)
{
  struct tf *t = producer_file();
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_memprof *a, *b, *d, *all;
  ck_assert_int_eq(ocgc_memprof_read(s, &a), 0);
  /* the producer counts more in row 2 and makes row 3 */
  row(t, 2)->alloc.samples += 5;
  row(t, 2)->alloc.words += 5 * 512;
  row(t, 2)->freed.samples += 1;
  row(t, 3)->alloc = (struct ocgc_wire_mp_counts){1, 512, 10};
  table(t)->stacks = 3;
  table(t)->samples += 6;
  table(t)->words += 6 * 512;
  ck_assert_int_eq(ocgc_memprof_read(s, &b), 0);
  ck_assert_int_eq(ocgc_memprof_delta(a, b, &d), 0);
  ck_assert_uint_eq(d->samples, 6);
  ck_assert_uint_eq(d->words, 6 * 512);
  ck_assert_uint_eq(d->rate_bytes, 4096);
  ck_assert_uint_eq(d->nstacks, 3); /* the overflow row, rows 2 and 3; not row 1 */
  ck_assert_int_eq(d->stack[0].overflow, 1);
  ck_assert_uint_eq(d->stack[1].frames[OCGC_MP_DEPTH - 1], 0x3333);
  ck_assert_uint_eq(d->stack[1].alloc.samples, 5);
  ck_assert_uint_eq(d->stack[1].alloc.words, 5 * 512);
  ck_assert_uint_eq(d->stack[1].freed.samples, 1);
  ck_assert_uint_eq(d->stack[2].alloc.samples, 1);
  ocgc_memprof_free(d);
  /* from nothing: everything since sampling began */
  ck_assert_int_eq(ocgc_memprof_delta(NULL, b, &all), 0);
  ck_assert_uint_eq(all->nstacks, 4);
  ck_assert_uint_eq(all->samples, 36);
  ocgc_memprof_free(all);
  /* not one table: a count went back, a stack changed place, fewer rows */
  ck_assert_int_eq(ocgc_memprof_delta(b, a, &d), OCGC_E_STALE);
  ck_assert_ptr_null(d);
  b->stack[1].frames[0] ^= 1;
  ck_assert_int_eq(ocgc_memprof_delta(a, b, &d), OCGC_E_STALE);
  b->stack[1].frames[0] ^= 1;
  b->stack[1].alloc.samples = 0;
  ck_assert_int_eq(ocgc_memprof_delta(a, b, &d), OCGC_E_STALE);
  ck_assert_int_eq(ocgc_memprof_delta(a, NULL, &d), -EINVAL);
  ocgc_memprof_free(a);
  ocgc_memprof_free(b);
}
END_TEST

/* Rows that carry live and generations (OCGC_MP_FEATURE_LIVE): in use is
 * the live gauge, a window's in use its growth (negative when it shrank);
 * a row recycled between two copies (its generation grew, its stack
 * changed) is a new stack counted from 0, not two tables; a generation
 * that went back is. */
START_TEST(delta_generations)
{
  struct tf *t = producer_file();
  struct ocgc_source *s = rf_open(t, OCGC_IDS_AUTO);
  struct ocgc_memprof *a, *b, *d;
  int64_t v[OCGC_PV_COUNT];
  table(t)->features = OCGC_MP_FEATURE_LIVE;
  table(t)->live_cycle = 7;
  table(t)->live_cycle_ns = 1234;
  row(t, 1)->live = (struct ocgc_wire_mp_counts){1, 512, 512 * 1024 / 11};
  row(t, 2)->live = (struct ocgc_wire_mp_counts){12, 6144, 6};
  row(t, 2)->generation = 3;
  ck_assert_int_eq(ocgc_memprof_read(s, &a), 0);
  ck_assert_int_eq(a->live_known, 1);
  ck_assert_uint_eq(a->live_cycle, 7);
  ck_assert_uint_eq(a->live_cycle_ns, 1234);
  ck_assert_int_eq(a->stack[2].live_known, 1);
  ck_assert_uint_eq(a->stack[2].generation, 3);
  /* in use is live, not alloc - freed (20 samples allocated, none freed) */
  ocgc_profile_values(&a->stack[2], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], 6144 * 8);
  ck_assert_int_eq(v[OCGC_PV_ALLOC_SPACE], 10240 * 8);
  /* row 1 recycled for another stack; row 2 shrank */
  row(t, 1)->meta = OCGC_MP_META(1, 0, OCGC_MP_MAJOR, 0);
  row(t, 1)->frames[0] = 0x4444;
  row(t, 1)->frames[1] = 0;
  row(t, 1)->generation = 1;
  row(t, 1)->alloc = (struct ocgc_wire_mp_counts){2, 1024, 20};
  row(t, 1)->promoted = (struct ocgc_wire_mp_counts){0, 0, 0};
  row(t, 1)->freed = (struct ocgc_wire_mp_counts){0, 0, 0};
  row(t, 1)->live = (struct ocgc_wire_mp_counts){1, 512, 10};
  row(t, 2)->live = (struct ocgc_wire_mp_counts){4, 2048, 2};
  row(t, 2)->freed = (struct ocgc_wire_mp_counts){8, 4096, 4};
  ck_assert_int_eq(ocgc_memprof_read(s, &b), 0);
  ck_assert_int_eq(ocgc_memprof_delta(a, b, &d), 0);
  ck_assert_uint_eq(d->nstacks, 3);
  ck_assert_uint_eq(d->stack[1].frames[0], 0x4444);
  ck_assert_uint_eq(d->stack[1].generation, 1);
  ck_assert_uint_eq(d->stack[1].alloc.samples, 2); /* from 0, not 2 - 10 */
  ck_assert_uint_eq(d->stack[1].live_before.samples, 0);
  ocgc_profile_values(&d->stack[1], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], 512 * 8);
  ck_assert_uint_eq(d->stack[2].freed.samples, 8);
  ocgc_profile_values(&d->stack[2], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], (2048 - 6144) * 8); /* the window's growth */
  ck_assert_int_eq(v[OCGC_PV_ALLOC_SPACE], 0);
  ocgc_memprof_free(d);
  /* a generation that went back: not one table */
  b->stack[2].generation = 2;
  ck_assert_int_eq(ocgc_memprof_delta(a, b, &d), OCGC_E_STALE);
  ck_assert_ptr_null(d);
  ocgc_memprof_free(a);
  ocgc_memprof_free(b);
}
END_TEST

/* A producer whose rows carry no live: in use falls back to alloc - freed. */
START_TEST(inuse_without_live)
{
  struct tf *t = producer_file();
  struct ocgc_memprof *p;
  int64_t v[OCGC_PV_COUNT];
  row(t, 1)->live = (struct ocgc_wire_mp_counts){9, 9999, 9}; /* reserved words: not read */
  ck_assert_int_eq(ocgc_memprof_read(rf_open(t, OCGC_IDS_AUTO), &p), 0);
  ck_assert_int_eq(p->live_known, 0);
  ck_assert_int_eq(p->stack[1].live_known, 0);
  ocgc_profile_values(&p->stack[1], v);
  ck_assert_int_eq(v[OCGC_PV_INUSE_SPACE], (5120 - 4096) * 8);
  ocgc_memprof_free(p);
}
END_TEST

static Suite *memprof_suite(void)
{
  Suite *s = suite_create("memprof");
  TCase *tc = rf_tcase(s, "memprof", 0);
  tcase_add_test(tc, copy_is_exact);
  tcase_add_test(tc, no_profile);
  tcase_add_test(tc, hostile_geometry);
  tcase_add_test(tc, hostile_counts);
  tcase_add_test(tc, seq_held_odd);
  tcase_add_test(tc, request_writes_one_word);
  tcase_add_test(tc, delta_is_the_window);
  tcase_add_test(tc, delta_generations);
  tcase_add_test(tc, inuse_without_live);
  return s;
}

TU_SUITE(memprof_suite);
