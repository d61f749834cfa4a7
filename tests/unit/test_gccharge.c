/* test_gccharge.c - the collector's CPU charged to allocation sites
 * (libconsumer/gccharge.c, ocgc/gccharge.h), on profiles made here:
 * - minor-collection CPU by minor-heap bytes allocated, major CPU by bytes
 *   that entered the major heap (promoted, or allocated there: major,
 *   marshal, custom), worked out by hand;
 * - each kind's shares sum to its CPU exactly, the leftover of the
 *   rounding to the largest remainders (ties: the first stack);
 * - no overflow of the products at a thousand seconds and 2^40 words;
 * - a kind of CPU with no base in the profile is left uncharged, and said;
 * - bad arguments and a newer caller's nonzero options are refused;
 * - the CPU to charge read from a CPU profile's samples (ocgc_gc_cpu_of):
 *   minor of the minor phase, major of the major ones, the collector's
 *   dispatch in no phase apart, the mutator in none, each sample its
 *   period (1e9 / frequency). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfgen.h"

#include "ocgc/consumer.h"
#include "ocgc/wire.h"
#include "testutil.h"

/* A profile of n stacks (stack[0] the overflow row), zeroed. */
static struct ocgc_memprof *profile(size_t n)
{
  struct ocgc_memprof *p = calloc(1, sizeof *p);
  ck_assert_ptr_nonnull(p);
  p->nstacks = n;
  if (n == 0) return p;
  p->stack = calloc(n, sizeof *p->stack);
  ck_assert_ptr_nonnull(p->stack);
  p->stack[0].overflow = 1;
  return p;
}

static void profile_free(struct ocgc_memprof *p)
{
  free(p->stack);
  free(p);
}

static void set(struct ocgc_memprof *p, size_t i, unsigned kind, uint64_t alloc_w,
                uint64_t promoted_w)
{
  p->stack[i].kind = kind;
  p->stack[i].alloc.words = alloc_w;
  p->stack[i].promoted.words = promoted_w;
}

START_TEST(the_model_by_hand)
{
  struct ocgc_memprof *p = profile(5);
  struct ocgc_gc_cpu cpu = OCGC_OPTS_INIT(struct ocgc_gc_cpu);
  struct ocgc_gc_charge_sum sum = OCGC_OPTS_INIT(struct ocgc_gc_charge_sum);
  uint64_t out[5];
  set(p, 1, OCGC_MP_MINOR, 100, 10);  /* A: a quarter of the minor heap, 10 promoted */
  set(p, 2, OCGC_MP_MINOR, 300, 0);   /* B: three quarters, all die young */
  set(p, 3, OCGC_MP_MAJOR, 30, 0);    /* C: straight into the major heap */
  set(p, 4, OCGC_MP_MARSHAL, 0, 0);   /* D: nothing in this window */
  cpu.minor_ns = 1000;
  cpu.major_ns = 401;
  ck_assert_int_eq(ocgc_gc_charge(p, &cpu, out, &sum), 0);
  /* Minor: 1000 x 100/400 and x 300/400.  Major base 10 + 30: A 100.25,
   * C 300.75, the one ns left to C's larger remainder. */
  ck_assert_uint_eq(out[0], 0);
  ck_assert_uint_eq(out[1], 250 + 100);
  ck_assert_uint_eq(out[2], 750);
  ck_assert_uint_eq(out[3], 301);
  ck_assert_uint_eq(out[4], 0);
  ck_assert_uint_eq(sum.minor_words, 400);
  ck_assert_uint_eq(sum.major_words, 40);
  ck_assert_uint_eq(sum.charged_ns, 1401);
  ck_assert_uint_eq(sum.unattributed_ns, 0);
  profile_free(p);
}
END_TEST

START_TEST(custom_and_overflow_row)
{
  struct ocgc_memprof *p = profile(3);
  struct ocgc_gc_cpu cpu = OCGC_OPTS_INIT(struct ocgc_gc_cpu);
  uint64_t out[3];
  /* The overflow row is charged as any stack: its samples are real. */
  set(p, 0, OCGC_MP_MINOR, 50, 25);
  set(p, 1, OCGC_MP_CUSTOM, 75, 0);
  set(p, 2, OCGC_MP_MINOR, 150, 0);
  cpu.minor_ns = 200;
  cpu.major_ns = 100;
  ck_assert_int_eq(ocgc_gc_charge(p, &cpu, out, NULL), 0);
  ck_assert_uint_eq(out[0], 50 + 25);
  ck_assert_uint_eq(out[1], 75);
  ck_assert_uint_eq(out[2], 150);
  profile_free(p);
}
END_TEST

START_TEST(sums_exact_and_ties_first)
{
  struct ocgc_memprof *p = profile(4);
  struct ocgc_gc_cpu cpu = OCGC_OPTS_INIT(struct ocgc_gc_cpu);
  struct ocgc_gc_charge_sum sum = OCGC_OPTS_INIT(struct ocgc_gc_charge_sum);
  uint64_t out[4];
  set(p, 1, OCGC_MP_MINOR, 7, 0);
  set(p, 2, OCGC_MP_MINOR, 7, 0);
  set(p, 3, OCGC_MP_MINOR, 7, 0);
  cpu.minor_ns = 100;
  ck_assert_int_eq(ocgc_gc_charge(p, &cpu, out, &sum), 0);
  ck_assert_uint_eq(out[1], 34);
  ck_assert_uint_eq(out[2], 33);
  ck_assert_uint_eq(out[3], 33);
  ck_assert_uint_eq(sum.charged_ns, 100);
  /* Many stacks of odd sizes: still exact. */
  profile_free(p);
  p = profile(1000);
  for (size_t i = 1; i < 1000; i++) set(p, i, i % 3 ? OCGC_MP_MINOR : OCGC_MP_MAJOR, i * 7919 % 1013, i % 5);
  cpu.minor_ns = 999999937;
  cpu.major_ns = 123456791;
  {
    uint64_t *o = calloc(1000, sizeof *o), t = 0;
    ck_assert_int_eq(ocgc_gc_charge(p, &cpu, o, &sum), 0);
    for (size_t i = 0; i < 1000; i++) t += o[i];
    ck_assert_uint_eq(t, cpu.minor_ns + cpu.major_ns);
    ck_assert_uint_eq(sum.charged_ns, t);
    free(o);
  }
  profile_free(p);
}
END_TEST

START_TEST(no_overflow)
{
  struct ocgc_memprof *p = profile(3);
  struct ocgc_gc_cpu cpu = OCGC_OPTS_INIT(struct ocgc_gc_cpu);
  uint64_t out[3];
  set(p, 1, OCGC_MP_MINOR, UINT64_C(1) << 40, 0);
  set(p, 2, OCGC_MP_MINOR, UINT64_C(3) << 40, 0);
  cpu.minor_ns = UINT64_C(1000) * 1000000000u; /* 1000 s: x 2^42 is past 2^64 */
  ck_assert_int_eq(ocgc_gc_charge(p, &cpu, out, NULL), 0);
  ck_assert_uint_eq(out[1], UINT64_C(250) * 1000000000u);
  ck_assert_uint_eq(out[2], UINT64_C(750) * 1000000000u);
  profile_free(p);
}
END_TEST

START_TEST(no_base_left_uncharged)
{
  struct ocgc_memprof *p = profile(2);
  struct ocgc_gc_cpu cpu = OCGC_OPTS_INIT(struct ocgc_gc_cpu);
  struct ocgc_gc_charge_sum sum = OCGC_OPTS_INIT(struct ocgc_gc_charge_sum);
  uint64_t out[2];
  set(p, 1, OCGC_MP_MINOR, 64, 0); /* nothing promoted: no major base */
  cpu.minor_ns = 10;
  cpu.major_ns = 990;
  ck_assert_int_eq(ocgc_gc_charge(p, &cpu, out, &sum), 0);
  ck_assert_uint_eq(out[1], 10);
  ck_assert_uint_eq(sum.charged_ns, 10);
  ck_assert_uint_eq(sum.unattributed_ns, 990);
  ck_assert_uint_eq(sum.major_words, 0);
  profile_free(p);
  /* An empty profile: everything uncharged, out untouched. */
  p = profile(0);
  ck_assert_int_eq(ocgc_gc_charge(p, &cpu, NULL, &sum), 0);
  ck_assert_uint_eq(sum.unattributed_ns, 1000);
  profile_free(p);
}
END_TEST

START_TEST(refused)
{
  struct ocgc_memprof *p = profile(2);
  struct {
    struct ocgc_gc_cpu cpu;
    uint64_t newer;
  } big;
  uint64_t out[2];
  memset(&big, 0, sizeof big);
  big.cpu.sz = sizeof big;
  ck_assert_int_eq(ocgc_gc_charge(NULL, &big.cpu, out, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_gc_charge(p, NULL, out, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_gc_charge(p, &big.cpu, NULL, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_gc_charge(p, &big.cpu, out, NULL), 0); /* a zero tail is fine */
  big.newer = 1;
  ck_assert_int_eq(ocgc_gc_charge(p, &big.cpu, out, NULL), -EINVAL);
  profile_free(p);
}
END_TEST

/* A CPU profile at 250 Hz (a period of 4 ms) whose frames [fn] names (one
 * function at ELFGEN_FUNC): [in] samples in it, [out] of the mutator. */
static struct ocgc_cpuprof *cpu_profile(const char *fn, unsigned in, unsigned out,
                                        struct ocgc_symbols **names)
{
  char tmpl[] = "/tmp/test_gccharge.XXXXXX";
  struct ocgc_cpuprof_opts o = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_unwind_stack st;
  struct ocgc_cpuprof *p;
  int fd = mkstemp(tmpl);
  unsigned i;
  ck_assert_int_ge(fd, 0);
  unlink(tmpl);
  ck_assert_int_eq(elfgen_write_one(fd, fn), 0);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "gc.elf", NULL, names), 0);
  close(fd);
  o.frequency_hz = 250;
  ck_assert_int_eq(ocgc_cpuprof_new(*names, &o, &p), 0);
  memset(&st, 0, sizeof st);
  st.depth = 2;
  st.end = OCGC_UNWIND_OUTERMOST;
  st.frames[1] = 0x900000;
  for (i = 0; i < in + out; i++) {
    st.frames[0] = i < in ? ELFGEN_FUNC + 4 : 0x900010;
    ck_assert_int_eq(ocgc_cpuprof_add(p, 1000 + i, &st), 0);
  }
  ocgc_cpuprof_finish(p);
  return p;
}

START_TEST(cpu_of_a_cpu_profile)
{
  static const struct {
    const char *fn;
    uint64_t minor, major, other;
  } cases[] = {
      {"caml_empty_minor_heap", 3, 0, 0},
      {"caml_major_collection_slice", 0, 3, 0},
      {"caml_compact_heap", 0, 3, 0},
      {"caml_gc_dispatch", 0, 0, 3},
      {"camlMain__work_100", 0, 0, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    struct ocgc_symbols *names;
    struct ocgc_cpuprof *p = cpu_profile(cases[k].fn, 3, 5, &names);
    struct ocgc_gc_cpu c = OCGC_OPTS_INIT(struct ocgc_gc_cpu);
    uint64_t other = 99;
    const uint64_t ms4 = 4000000;
    ck_assert_int_eq(ocgc_gc_cpu_of(p, &c, &other), 0);
    ck_assert_msg(c.minor_ns == cases[k].minor * ms4 && c.major_ns == cases[k].major * ms4 &&
                      other == cases[k].other * ms4,
                  "%s: minor %llu major %llu other %llu", cases[k].fn,
                  (unsigned long long)c.minor_ns, (unsigned long long)c.major_ns,
                  (unsigned long long)other);
    ck_assert_int_eq(ocgc_gc_cpu_of(p, &c, NULL), 0);
    ck_assert_int_eq(ocgc_gc_cpu_of(NULL, &c, NULL), -EINVAL);
    ck_assert_int_eq(ocgc_gc_cpu_of(p, NULL, NULL), -EINVAL);
    ocgc_cpuprof_free(p);
    ocgc_symbols_close(names);
  }
}
END_TEST

static Suite *gccharge_suite(void)
{
  Suite *s = suite_create("gccharge");
  TCase *tc = tcase_create("charge");
  tcase_add_test(tc, the_model_by_hand);
  tcase_add_test(tc, custom_and_overflow_row);
  tcase_add_test(tc, sums_exact_and_ties_first);
  tcase_add_test(tc, no_overflow);
  tcase_add_test(tc, no_base_left_uncharged);
  tcase_add_test(tc, refused);
  tcase_add_test(tc, cpu_of_a_cpu_profile);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(gccharge_suite);
