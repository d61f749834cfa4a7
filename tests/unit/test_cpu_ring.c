/* test_cpu_ring.c - the records of a perf_event ring as the CPU sampler
 * reads them (libconsumer/cpu_ring.c), on rings made here:
 * - a sample's fields: pid, tid, time, ip, the registers put in DWARF's
 *   order, the stack copy and its dynamic size;
 * - a record that wraps around the ring's end is copied whole, its header
 *   wrapping too;
 * - a lost record's count; records read one after another to the head;
 * - refused, the tail left where it was: a size under 8 or not a multiple
 *   of 8, larger than the bytes published or than the ring, a head more
 *   than the ring ahead of the tail, a ring not a power of 2;
 * - a sample whose registers, stack or dynamic size do not fit the record.
 * Every read is under ASan: a check that let a byte outside the ring or
 * the record be read fails here. */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ring.h"
#include "testutil.h"

static void put64(unsigned char *p, uint64_t v)
{
  memcpy(p, &v, 8);
}

static void put_hdr(unsigned char *p, uint32_t type, uint16_t misc, uint16_t size)
{
  memcpy(p, &type, 4);
  memcpy(p + 4, &misc, 2);
  memcpy(p + 6, &size, 2);
}

/* A sample record of [stack] bytes of stack (dyn bytes used) in buf;
 * register i (perf's order) is 100 + i.  Returns its size. */
static size_t make_sample(unsigned char *buf, size_t stack, uint64_t dyn)
{
  size_t at = 8, i;
  put64(buf + at, 0x401000); /* ip */
  at += 8;
  {
    uint32_t pid = 42, tid = 43;
    memcpy(buf + at, &pid, 4);
    memcpy(buf + at + 4, &tid, 4);
  }
  at += 8;
  put64(buf + at, 123456789); /* time */
  at += 8;
  put64(buf + at, 2); /* abi: 64-bit */
  at += 8;
  for (i = 0; i < CPU_NREGS_SAMPLED; i++) put64(buf + at + 8 * i, 100 + i);
  at += 8 * CPU_NREGS_SAMPLED;
  put64(buf + at, stack);
  at += 8;
  for (i = 0; i < stack; i++) buf[at + i] = (unsigned char)i;
  at += stack;
  if (stack > 0) {
    put64(buf + at, dyn);
    at += 8;
  }
  put_hdr(buf, CPU_REC_SAMPLE, 2, (uint16_t)at);
  return at;
}

START_TEST(sample_fields)
{
  unsigned char rec[1024];
  struct ocgc_cpu_sample s;
  size_t n = make_sample(rec, 64, 40);
  ck_assert_int_eq(cpu_ring_sample(rec, n, &s), 0);
  ck_assert_int_eq(s.pid, 42);
  ck_assert_int_eq(s.tid, 43);
  ck_assert_uint_eq(s.time_ns, 123456789);
  ck_assert_uint_eq(s.ip, 0x401000);
  ck_assert_int_eq(s.regs_known, 1);
  /* perf: AX BX CX DX SI DI BP SP IP R8..R15; DWARF: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
  ck_assert_uint_eq(s.regs[0], 100); /* rax */
  ck_assert_uint_eq(s.regs[1], 103); /* rdx */
  ck_assert_uint_eq(s.regs[2], 102); /* rcx */
  ck_assert_uint_eq(s.regs[3], 101); /* rbx */
  ck_assert_uint_eq(s.regs[6], 106); /* rbp */
  ck_assert_uint_eq(s.regs[OCGC_CPU_REG_SP], 107);
  ck_assert_uint_eq(s.regs[OCGC_CPU_REG_IP], 108);
  ck_assert_uint_eq(s.regs[8], 109);  /* r8 */
  ck_assert_uint_eq(s.regs[15], 116); /* r15 */
  ck_assert_uint_eq(s.stack_size, 40);
  ck_assert_ptr_eq(s.stack, rec + 8 * 5 + 8 * CPU_NREGS_SAMPLED + 8);
  ck_assert_uint_eq(s.stack[39], 39);
}
END_TEST

START_TEST(sample_no_regs)
{
  unsigned char rec[64];
  struct ocgc_cpu_sample s;
  memset(rec, 0, sizeof rec);
  put64(rec + 8, 0xffffffff81000000u);
  put64(rec + 32, 0); /* abi none: no registers */
  put64(rec + 40, 0); /* no stack */
  put_hdr(rec, CPU_REC_SAMPLE, 1, 48);
  ck_assert_int_eq(cpu_ring_sample(rec, 48, &s), 0);
  ck_assert_int_eq(s.regs_known, 0);
  ck_assert_ptr_null(s.stack);
}
END_TEST

START_TEST(sample_does_not_fit)
{
  unsigned char rec[1024];
  struct ocgc_cpu_sample s;
  size_t n = make_sample(rec, 64, 40);
  size_t cut;
  /* every length short of the whole is refused (the registers, the stack
   * or its dynamic size would be read past the record) */
  for (cut = 0; cut < n; cut += 8) ck_assert_int_eq(cpu_ring_sample(rec, cut, &s), -1);
  /* a stack size past the record */
  put64(rec + 8 * 5 + 8 * CPU_NREGS_SAMPLED, 1u << 20);
  ck_assert_int_eq(cpu_ring_sample(rec, n, &s), -1);
  /* a dynamic size over the copy */
  n = make_sample(rec, 64, 72);
  ck_assert_int_eq(cpu_ring_sample(rec, n, &s), -1);
}
END_TEST

/* A ring of [size] bytes holding, from byte [start], the records of src. */
static void ring_put(unsigned char *ring, uint64_t size, uint64_t start, const unsigned char *src,
                     size_t n)
{
  size_t i;
  for (i = 0; i < n; i++) ring[(start + i) & (size - 1)] = src[i];
}

START_TEST(wrapped_record)
{
  unsigned char ring[512], rec[512], *buf = malloc(CPU_REC_MAX);
  struct cpu_ring r = {ring, sizeof ring, 0};
  struct ocgc_cpu_sample s;
  size_t n = make_sample(rec, 128, 128);
  uint64_t starts[] = {512 - 16, 512 - 8, 512 - 4 /* header split: a tail we never write, checked anyway */};
  unsigned k;
  ck_assert_ptr_nonnull(buf);
  for (k = 0; k < 3; k++) {
    uint64_t tail = 4096 + starts[k];
    memset(ring, 0xee, sizeof ring);
    ring_put(ring, sizeof ring, tail, rec, n);
    r.head = tail + n;
    ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), (int)n);
    ck_assert_uint_eq(tail, r.head);
    ck_assert_mem_eq(buf, rec, n);
    ck_assert_int_eq(cpu_ring_sample(buf, n, &s), 0);
    ck_assert_uint_eq(s.stack_size, 128);
    ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), 0);
  }
  free(buf);
}
END_TEST

START_TEST(records_in_turn)
{
  unsigned char ring[4096], rec[1024], *buf = malloc(CPU_REC_MAX);
  struct cpu_ring r = {ring, sizeof ring, 0};
  uint64_t tail = 0, at = 0;
  size_t n;
  ck_assert_ptr_nonnull(buf);
  n = make_sample(rec, 16, 16);
  ring_put(ring, sizeof ring, at, rec, n);
  at += n;
  memset(rec, 0, 24);
  put_hdr(rec, CPU_REC_LOST, 0, 24);
  put64(rec + 16, 7);
  ring_put(ring, sizeof ring, at, rec, 24);
  at += 24;
  n = make_sample(rec, 0, 0);
  ring_put(ring, sizeof ring, at, rec, n);
  at += n;
  r.head = at;
  ck_assert_int_gt(cpu_ring_next(&r, &tail, buf), 0);
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), 24);
  ck_assert_uint_eq(cpu_ring_lost(buf, 24), 7);
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), (int)n);
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), 0);
  ck_assert_uint_eq(tail, at);
  ck_assert_uint_eq(cpu_ring_lost(buf, 16), 0); /* too short: nothing */
  free(buf);
}
END_TEST

START_TEST(corrupt_refused)
{
  unsigned char ring[256], *buf = malloc(CPU_REC_MAX);
  struct cpu_ring r = {ring, sizeof ring, 0};
  uint64_t tail;
  uint16_t sizes[] = {0, 4, 12, 264, 65528};
  unsigned k;
  ck_assert_ptr_nonnull(buf);
  memset(ring, 0, sizeof ring);
  for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    put_hdr(ring, CPU_REC_SAMPLE, 0, sizes[k]);
    tail = 0;
    r.head = 256;
    ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), -1);
    ck_assert_uint_eq(tail, 0);
  }
  /* a size within the ring but past what the kernel published */
  put_hdr(ring, CPU_REC_SAMPLE, 0, 64);
  tail = 0;
  r.head = 32;
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), -1);
  /* fewer bytes published than a header */
  r.head = 4;
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), -1);
  /* a head further ahead than the ring holds */
  r.head = 257;
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), -1);
  /* a head behind the tail (reads as a huge distance) */
  tail = 64;
  r.head = 32;
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), -1);
  ck_assert_uint_eq(tail, 64);
  /* a ring whose size is not a power of 2 */
  r.size = 200;
  r.head = 8;
  tail = 0;
  ck_assert_int_eq(cpu_ring_next(&r, &tail, buf), -1);
  free(buf);
}
END_TEST

static Suite *cpu_ring_suite(void)
{
  Suite *s = suite_create("cpu_ring");
  TCase *tc = tcase_create("records");
  tcase_add_test(tc, sample_fields);
  tcase_add_test(tc, sample_no_regs);
  tcase_add_test(tc, sample_does_not_fit);
  tcase_add_test(tc, wrapped_record);
  tcase_add_test(tc, records_in_turn);
  tcase_add_test(tc, corrupt_refused);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(cpu_ring_suite);
