/* test_cpu_unwind.c - the unwinder (libconsumer/cpu_unwind.c) on register
 * sets and stack copies made here, against this very process's files:
 * - a real stack: registers and a copy of the stack taken in snap(),
 *   called by level2() and level1() on a thread whose stack is ours;
 *   unwound from the copy alone, the frames are named snap, level2,
 *   level1, thread_main in that order, up to the outermost frame the C
 *   library's CFI marks, and a max_depth of 3 cuts it there (DEPTH);
 * - a frame whose CFI makes the caller's stack pointer its own (loop_fn,
 *   whose CFA is its stack pointer and whose return address is the word
 *   there, pointing back into it) ends the stack as LOOP, not at the depth;
 * - an address no file maps, a stack copy of nothing, a sample without
 *   registers: one frame (or none), marked LOST (NO_REGS);
 * - a copy of garbage, and a copy where every word points back into
 *   snap(): the walk ends within 128 frames, every read within the copy
 *   (memory_read, under ASan).  The live stack is never read: the copies
 *   are altered after they are taken, and what is unwound follows them. */

#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/cpu.h"
#include "ocgc/symbols.h"
#include "ocgc/unwind.h"
#include "testutil.h"

#define THREAD_STACK (256u * 1024u)

/* A function whose CFI says: the CFA is the stack pointer itself, and the
 * return address is saved at CFA + 0.  Unwound from a stack whose first
 * word points into it, every frame is the same: a loop. */
__asm__(".text\n"
        ".globl ocgc_test_loop_fn\n"
        ".type ocgc_test_loop_fn,@function\n"
        "ocgc_test_loop_fn:\n"
        ".cfi_startproc\n"
        ".cfi_def_cfa %rsp, 0\n"
        ".cfi_offset %rip, 0\n"
        "nop\n"
        "nop\n"
        "nop\n"
        "nop\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size ocgc_test_loop_fn, .-ocgc_test_loop_fn\n");
void ocgc_test_loop_fn(void);

struct snapshot {
  uint64_t regs[8]; /* rip rsp rbp rbx r12 r13 r14 r15 */
  unsigned char *stack;
  size_t size;
  unsigned char *stack_end; /* the thread's stack's top */
};

static struct snapshot snap_out;

/* Our own stack is read here, redzones and all: not through ASan. */
__attribute__((no_sanitize_address)) static void copy_stack(unsigned char *dst,
                                                            const volatile unsigned char *src,
                                                            size_t n)
{
  size_t i;
  for (i = 0; i < n; i++) dst[i] = src[i];
}

__attribute__((noinline)) static void snap(void)
{
  uint64_t *r = snap_out.regs;
  __asm__ volatile("lea 0(%%rip), %%rax\n\t"
                   "mov %%rax, 0(%0)\n\t"
                   "mov %%rsp, 8(%0)\n\t"
                   "mov %%rbp, 16(%0)\n\t"
                   "mov %%rbx, 24(%0)\n\t"
                   "mov %%r12, 32(%0)\n\t"
                   "mov %%r13, 40(%0)\n\t"
                   "mov %%r14, 48(%0)\n\t"
                   "mov %%r15, 56(%0)\n\t"
                   :
                   : "r"(r)
                   : "rax", "memory");
  snap_out.size = (size_t)(snap_out.stack_end - (unsigned char *)(uintptr_t)r[1]);
  if (snap_out.size > 16384) snap_out.size = 16384;
  snap_out.stack = malloc(snap_out.size);
  if (snap_out.stack != NULL)
    copy_stack(snap_out.stack, (const unsigned char *)(uintptr_t)r[1], snap_out.size);
}

__attribute__((noinline)) static int level2(int x)
{
  snap();
  return x + 1;
}

__attribute__((noinline)) static int level1(int x)
{
  return level2(x) * 2;
}

static volatile int thread_result;

static void *thread_main(void *arg)
{
  thread_result = level1((int)(uintptr_t)arg); /* not a tail call */
  return NULL;
}

/* Take the snapshot on a thread whose stack is [stk, stk + THREAD_STACK). */
static void take_snapshot(void)
{
  pthread_attr_t a;
  pthread_t t;
  void *stk = NULL;
  memset(&snap_out, 0, sizeof snap_out);
  ck_assert_int_eq(posix_memalign(&stk, 4096, THREAD_STACK), 0);
  snap_out.stack_end = (unsigned char *)stk + THREAD_STACK;
  ck_assert_int_eq(pthread_attr_init(&a), 0);
  ck_assert_int_eq(pthread_attr_setstack(&a, stk, THREAD_STACK), 0);
  ck_assert_int_eq(pthread_create(&t, &a, thread_main, (void *)(uintptr_t)getpid()), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  pthread_attr_destroy(&a);
  free(stk);
  ck_assert_ptr_nonnull(snap_out.stack);
}

/* The sample of the snapshot (its copy, not the stack). */
static void sample_of(struct ocgc_cpu_sample *s)
{
  memset(s, 0, sizeof *s);
  s->pid = s->tid = (int)getpid();
  s->regs_known = 1;
  s->regs[OCGC_CPU_REG_IP] = s->ip = snap_out.regs[0];
  s->regs[OCGC_CPU_REG_SP] = snap_out.regs[1];
  s->regs[6] = snap_out.regs[2];
  s->regs[3] = snap_out.regs[3];
  s->regs[12] = snap_out.regs[4];
  s->regs[13] = snap_out.regs[5];
  s->regs[14] = snap_out.regs[6];
  s->regs[15] = snap_out.regs[7];
  s->stack = snap_out.stack;
  s->stack_size = snap_out.size;
}

static struct ocgc_symbols *names;
static struct ocgc_unwind *unw;

static void open_self(unsigned max_depth)
{
  struct ocgc_unwind_opts o = OCGC_OPTS_INIT(struct ocgc_unwind_opts);
  o.max_depth = max_depth;
  ck_assert_int_eq(ocgc_symbols_open_pid((int)getpid(), 0, NULL, &names), 0);
  ck_assert_int_eq(ocgc_unwind_open(names, -1, &o, &unw), 0);
}

static void close_self(void)
{
  ocgc_unwind_close(unw);
  ocgc_symbols_close(names);
  free(snap_out.stack);
  unw = NULL;
  names = NULL;
}

/* The index of the first frame at or after [from] named [want] (or a
 * copy the compiler made of it: "level2.isra.0"), or -1. */
static int frame_named(const struct ocgc_unwind_stack *st, unsigned from, const char *want)
{
  struct ocgc_symbol sym;
  unsigned i;
  for (i = from; i < st->depth; i++)
    if (ocgc_symbols_lookup(names, st->frames[i], i > 0, &sym) && sym.symbol != NULL &&
        strncmp(sym.symbol, want, strlen(want)) == 0 &&
        (sym.symbol[strlen(want)] == '\0' || sym.symbol[strlen(want)] == '.'))
      return (int)i;
  return -1;
}

START_TEST(real_stack)
{
  struct ocgc_cpu_sample s;
  struct ocgc_unwind_stack st;
  int a, b, c, d;
  take_snapshot();
  open_self(0);
  sample_of(&s);
  ck_assert_int_gt(ocgc_unwind_sample(unw, &s, &st), 3);
  a = frame_named(&st, 0, "snap");
  ck_assert_int_eq(a, 0);
  b = frame_named(&st, 1, "level2");
  c = frame_named(&st, 1, "level1");
  d = frame_named(&st, 1, "thread_main");
  ck_assert_int_eq(b, 1);
  ck_assert_int_eq(c, 2);
  ck_assert_int_eq(d, 3);
  /* through the C library's thread start to clone3, whose CFI ends it;
   * the C library's file is read through /proc/PID/map_files, root only:
   * without it the stack is cut there (its end depends on what the C
   * library's frames hold) */
  if (geteuid() == 0) ck_assert_int_eq(st.end, OCGC_UNWIND_OUTERMOST);
  /* the copy, not the live stack: a return address changed in the copy
   * is what the unwinder finds */
  {
    uint64_t ra = st.frames[1], word;
    size_t i;
    for (i = 0; i + 8 <= s.stack_size; i += 8) {
      memcpy(&word, s.stack + i, 8);
      if (word == ra) {
        word = (uint64_t)(uintptr_t)&ocgc_test_loop_fn + 2;
        memcpy(snap_out.stack + i, &word, 8);
        break;
      }
    }
    ck_assert_uint_lt(i, s.stack_size);
    ocgc_unwind_sample(unw, &s, &st);
    ck_assert_int_eq(frame_named(&st, 0, "level2"), -1);
  }
  close_self();
}
END_TEST

START_TEST(depth_bound)
{
  struct ocgc_cpu_sample s;
  struct ocgc_unwind_stack st;
  take_snapshot();
  open_self(3);
  sample_of(&s);
  ck_assert_int_eq(ocgc_unwind_sample(unw, &s, &st), 3);
  ck_assert_int_eq(st.end, OCGC_UNWIND_DEPTH);
  close_self();
}
END_TEST

START_TEST(loop_ends)
{
  struct ocgc_cpu_sample s;
  struct ocgc_unwind_stack st;
  uint64_t words[64], pc = (uint64_t)(uintptr_t)&ocgc_test_loop_fn + 2;
  unsigned i;
  for (i = 0; i < 64; i++) words[i] = pc;
  open_self(0);
  memset(&s, 0, sizeof s);
  s.pid = s.tid = (int)getpid();
  s.regs_known = 1;
  s.regs[OCGC_CPU_REG_IP] = s.ip = pc;
  s.regs[OCGC_CPU_REG_SP] = 0x7f0000000000u;
  s.stack = (const unsigned char *)words;
  s.stack_size = sizeof words;
  ocgc_unwind_sample(unw, &s, &st);
  ck_assert_int_eq(st.end, OCGC_UNWIND_LOOP);
  ck_assert_uint_le(st.depth, 2);
  ck_assert_uint_eq(st.frames[0], pc);
  close_self();
}
END_TEST

START_TEST(nothing_to_unwind)
{
  struct ocgc_cpu_sample s;
  struct ocgc_unwind_stack st;
  uint64_t word = 0;
  open_self(0);
  memset(&s, 0, sizeof s);
  s.pid = s.tid = (int)getpid();
  ck_assert_int_eq(ocgc_unwind_sample(unw, &s, &st), 0);
  ck_assert_int_eq(st.end, OCGC_UNWIND_NO_REGS);
  s.regs_known = 1;
  s.regs[OCGC_CPU_REG_IP] = s.ip = 0x1000; /* no file maps it */
  s.regs[OCGC_CPU_REG_SP] = 0x7f0000000000u;
  s.stack = (const unsigned char *)&word;
  s.stack_size = sizeof word;
  ck_assert_int_eq(ocgc_unwind_sample(unw, &s, &st), 1);
  ck_assert_int_eq(st.end, OCGC_UNWIND_LOST);
  ck_assert_uint_eq(st.frames[0], 0x1000);
  /* a function's address, and no stack at all */
  s.regs[OCGC_CPU_REG_IP] = s.ip = (uint64_t)(uintptr_t)&level1 + 1;
  s.stack = NULL;
  s.stack_size = 0;
  ck_assert_int_eq(ocgc_unwind_sample(unw, &s, &st), 1);
  ck_assert_int_eq(st.end, OCGC_UNWIND_LOST);
  close_self();
}
END_TEST

START_TEST(garbage_copies)
{
  struct ocgc_cpu_sample s;
  struct ocgc_unwind_stack st;
  unsigned round, i;
  uint64_t x = 0x9e3779b97f4a7c15u;
  take_snapshot();
  open_self(0);
  for (round = 0; round < 200; round++) {
    sample_of(&s);
    for (i = 0; i + 8 <= snap_out.size; i += 8) {
      uint64_t w;
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      /* half the rounds: words pointing back into snap or near the copy */
      w = round & 1 ? (x & 1 ? snap_out.regs[0] : snap_out.regs[1] + (x % 4096)) : x;
      memcpy(snap_out.stack + i, &w, 8);
    }
    if (round % 3 == 0) s.regs[6] = snap_out.regs[1] + (x % 512); /* rbp into the copy */
    ck_assert_int_ge(ocgc_unwind_sample(unw, &s, &st), 1);
    ck_assert_uint_le(st.depth, OCGC_UNWIND_MAX_DEPTH);
  }
  close_self();
}
END_TEST

static Suite *cpu_unwind_suite(void)
{
  Suite *s = suite_create("cpu_unwind");
  TCase *tc = tcase_create("unwind");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, real_stack);
  tcase_add_test(tc, depth_bound);
  tcase_add_test(tc, loop_ends);
  tcase_add_test(tc, nothing_to_unwind);
  tcase_add_test(tc, garbage_copies);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(cpu_unwind_suite);
