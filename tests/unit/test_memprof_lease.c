/* test_memprof_lease.c - a reader's rate leases (libconsumer/
 * memprof_lease.c) on a ring written here as a producer lays it out, in a
 * memfd sealed against shrinking as the producer's are:
 * - four leases take the four slots, each its own, its rate and our pid in
 *   its word; a fifth is refused (-EBUSY) with the holders;
 * - a renewal changes the word in place; a lease whose slot was freed (the
 *   producer found it dead) and claimed by another never writes over the
 *   claim, and takes a free slot when there is one;
 * - ending a lease frees its slot, and only its own;
 * - no lease of an unsealed file, of a producer without leases, or of a
 *   rate out of bounds;
 * - a copy says what the producer published of the leases. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringfix.h"
#include "testutil.h"

static struct ocgc_wire_mp *table_of(char *map, struct tf *t)
{
  return (struct ocgc_wire_mp *)(map + t->f.ext->totals_offset + sizeof(struct ocgc_wire_totals));
}

struct sealed {
  struct tf *t;
  char *map;                 /* the memfd, shared: what the producer sees */
  struct ocgc_wire_mp *m;
  struct ocgc_source *src;
};

/* A producer's file with leases (lease_ns set), copied into a sealed memfd. */
static void sealed_file(struct sealed *z, uint64_t lease_ns)
{
  struct ocgc_wire_mp *m;
  int fd;
  z->t = rf_file(1, 1, 1024);
  m = table_of(z->t->f.map, z->t);
  m->size = OCGC_WIRE_MP_SIZE;
  m->rows = OCGC_MP_ROWS;
  m->row_size = sizeof(struct ocgc_wire_mp_row);
  m->depth = OCGC_MP_DEPTH;
  m->state = OCGC_MP_ON;
  m->rate_bytes = 8192;
  m->reserved[OCGC_MP_LEASE_NS] = lease_ns;
  m->reserved[OCGC_MP_LEASE_BASE] = 1 << 20;
  m->reserved[OCGC_MP_LEASE_STATE] = 0x5 | OCGC_MP_LEASE_IN_FORCE;
  ((struct ocgc_wire_mp_row *)(m + 1))->meta = OCGC_MP_META_OVERFLOW;
  m->magic = OCGC_MP_MAGIC;
  fd = (int)syscall(SYS_memfd_create, "lease-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)z->t->f.size), 0);
  ck_assert_int_eq(pwrite(fd, z->t->f.map, z->t->f.size, 0), (ssize_t)z->t->f.size);
  ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  z->map = mmap(NULL, z->t->f.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert_ptr_ne(z->map, MAP_FAILED);
  z->m = table_of(z->map, z->t);
  {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    ck_assert_int_eq(ocgc_source_open_path(self, NULL, &z->src), 0);
    close(fd);
  }
}

static uint64_t slot(const struct sealed *z, int i)
{
  return __atomic_load_n(&z->m->reserved[i], __ATOMIC_SEQ_CST);
}

START_TEST(four_slots_then_busy)
{
  static const uint64_t rates[4] = {8192, 16384, 65536, 1 << 20};
  struct sealed z;
  struct ocgc_memprof_lease *l[4], *fifth = NULL;
  int holders[OCGC_MP_LEASE_SLOTS], i;
  sealed_file(&z, UINT64_C(10000000000));
  for (i = 0; i < 4; i++) {
    ck_assert_int_eq(ocgc_memprof_lease_take(z.src, rates[i], &l[i], NULL), 0);
    ck_assert_int_eq(ocgc_memprof_lease_slot(l[i]), i);
    ck_assert_uint_eq(OCGC_MP_LEASE_RATE(slot(&z, i)), rates[i]);
    ck_assert_int_eq((int)OCGC_MP_LEASE_PID(slot(&z, i)), (int)getpid() & 0x3fffff);
  }
  ck_assert_int_eq(ocgc_memprof_lease_take(z.src, 4096, &fifth, holders), -EBUSY);
  ck_assert_ptr_null(fifth);
  for (i = 0; i < 4; i++) ck_assert_int_eq(holders[i], (int)getpid() & 0x3fffff);

  /* a renewal: the same slot, a new word */
  {
    uint64_t before = slot(&z, 0);
    ck_assert_int_eq(ocgc_memprof_lease_renew(l[0]), 0);
    ck_assert_uint_ne(slot(&z, 0), before);
    ck_assert_uint_eq(OCGC_MP_LEASE_RATE(slot(&z, 0)), 8192);
  }
  /* slot 1 freed by the producer and claimed by someone else: never
   * written over; no free slot: lost */
  z.m->reserved[1] = OCGC_MP_LEASE_WORD(128, 4242, 9);
  ck_assert_int_eq(ocgc_memprof_lease_renew(l[1]), -EBUSY);
  ck_assert_uint_eq(slot(&z, 1), OCGC_MP_LEASE_WORD(128, 4242, 9));
  /* ending a lease frees its slot; the lost one then finds it */
  ocgc_memprof_lease_end(l[2]);
  ck_assert_uint_eq(slot(&z, 2), 0);
  ck_assert_int_eq(ocgc_memprof_lease_renew(l[1]), 1);
  ck_assert_int_eq(ocgc_memprof_lease_slot(l[1]), 2);
  ck_assert_uint_eq(OCGC_MP_LEASE_RATE(slot(&z, 2)), 16384);
  /* the other's claim of slot 1 is left alone by our end */
  ocgc_memprof_lease_end(l[0]);
  ocgc_memprof_lease_end(l[1]);
  ocgc_memprof_lease_end(l[3]);
  ck_assert_uint_eq(slot(&z, 0), 0);
  ck_assert_uint_eq(slot(&z, 1), OCGC_MP_LEASE_WORD(128, 4242, 9));
  ck_assert_uint_eq(slot(&z, 2), 0);
  ck_assert_uint_eq(slot(&z, 3), 0);
  ocgc_source_close(z.src);
}
END_TEST

START_TEST(no_lease)
{
  struct sealed z;
  struct ocgc_memprof_lease *l = NULL;
  struct tf *t;
  /* a producer without leases */
  sealed_file(&z, 0);
  ck_assert_int_eq(ocgc_memprof_lease_take(z.src, 8192, &l, NULL), -ENOTSUP);
  ocgc_source_close(z.src);
  sealed_file(&z, UINT64_C(10000000000));
  ck_assert_int_eq(ocgc_memprof_lease_take(z.src, OCGC_MP_RATE_MIN - 1, &l, NULL), -ERANGE);
  ck_assert_int_eq(ocgc_memprof_lease_take(z.src, OCGC_MP_RATE_MAX + 1, &l, NULL), -ERANGE);
  ck_assert_uint_eq(slot(&z, 0), 0);
  ocgc_source_close(z.src);
  /* a plain file (it could shrink under a mapping) */
  t = z.t;
  ck_assert_int_eq(ocgc_memprof_lease_take(rf_open(t, OCGC_IDS_AUTO), 8192, &l, NULL), -ENOTSUP);
  ck_assert_ptr_null(l);
}
END_TEST

START_TEST(copy_says_leases)
{
  struct sealed z;
  struct ocgc_memprof_lease *a, *b;
  struct ocgc_memprof *p;
  sealed_file(&z, UINT64_C(10000000000));
  ck_assert_int_eq(ocgc_memprof_lease_take(z.src, 8192, &a, NULL), 0);
  ck_assert_int_eq(ocgc_memprof_lease_take(z.src, 8192, &b, NULL), 0);
  ck_assert_int_eq(ocgc_memprof_read(z.src, &p), 0);
  ck_assert_uint_eq(p->base_rate, 1 << 20);
  ck_assert_int_eq(p->rate_leased, 1);
  ck_assert_uint_eq(p->leases_alive, 0x5);
  ck_assert_uint_eq(p->lease_ns, UINT64_C(10000000000));
  ck_assert_int_eq(p->lease_pid[0], (int)getpid() & 0x3fffff);
  ck_assert_int_eq(p->lease_pid[2], 0);
  ck_assert_int_eq(ocgc_memprof_lease_answer(p, a), 1); /* slot 0: alive */
  ck_assert_int_eq(ocgc_memprof_lease_answer(p, b), 0); /* slot 1: not yet */
  ocgc_memprof_free(p);
  ocgc_memprof_lease_end(a);
  ocgc_memprof_lease_end(b);
  ocgc_source_close(z.src);
}
END_TEST

static Suite *memprof_lease_suite(void)
{
  Suite *s = suite_create("memprof_lease");
  TCase *tc = rf_tcase(s, "lease", 0);
  tcase_add_test(tc, four_slots_then_busy);
  tcase_add_test(tc, no_lease);
  tcase_add_test(tc, copy_says_leases);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(memprof_lease_suite);
