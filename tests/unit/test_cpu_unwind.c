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
 *   are altered after they are taken, and what is unwound follows them;
 * - CFI of a few bytes that costs libdw gigabytes (found by fuzz_unwind):
 *   an instruction naming register 2^27 - 1, which libdw sizes its table
 *   of rules by, and 100 000 DW_CFA_remember_state, a copy of the table
 *   each: the unwinder refuses that CFI (cfi_check.c), the stack ends
 *   LOST at once, and the peak resident size grows by less than 64 MiB
 *   (1.1 GB before); an FDE of 1 MiB (of nops, which libdw would run at
 *   each lookup) is refused too, one of 4 KiB is not. */

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocgc/cpu.h"
#include "ocgc/symbols.h"
#include "ocgc/unwind.h"
#include "cfigen.h"
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

static long peak_rss_kb(void)
{
  struct rusage ru;
  ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
  return ru.ru_maxrss;
}

/* An .eh_frame of one CIE (cfa = rsp + 8, rip at cfa - 8) and one FDE over
 * the text whose instructions are [ins]: the file cfigen writes, unwound
 * at CFIGEN_TEXT + 4 with a stack copy of return addresses. */
static void unwind_crafted(const unsigned char *ins, size_t n, struct ocgc_unwind_stack *st)
{
  static const unsigned char cie[] = {0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10,
                                      1, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0};
  unsigned char *eh = calloc(1, sizeof cie + 24 + n + 8);
  size_t fde = sizeof cie, len = 4 + 4 + 4 + 1 + n, i;
  struct ocgc_symbols *cnames;
  struct ocgc_unwind *u;
  struct ocgc_cpu_sample s;
  uint64_t stack[32];
  int32_t rel;
  int fd = memfd_create("cfi", MFD_CLOEXEC);
  ck_assert_ptr_nonnull(eh);
  ck_assert_int_ge(fd, 0);
  len = (len + 3) & ~(size_t)3;
  memcpy(eh, cie, sizeof cie);
  eh[fde] = (unsigned char)len, eh[fde + 1] = (unsigned char)(len >> 8);
  eh[fde + 2] = (unsigned char)(len >> 16);
  eh[fde + 4] = (unsigned char)(fde + 4); /* back to the CIE */
  rel = (int32_t)(CFIGEN_TEXT - (CFIGEN_EH_FRAME + fde + 8));
  memcpy(eh + fde + 8, &rel, 4);
  rel = 0x100;
  memcpy(eh + fde + 12, &rel, 4);
  eh[fde + 16] = 0; /* augmentation data: none */
  memcpy(eh + fde + 17, ins, n);
  ck_assert_int_eq(cfigen_write(fd, eh, fde + 4 + len + 4, NULL, 0), 0);
  free(eh);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "crafted", NULL, &cnames), 0);
  ck_assert_int_eq(ocgc_unwind_open(cnames, fd, NULL, &u), 0);
  for (i = 0; i < 32; i++) stack[i] = CFIGEN_TEXT + 0x80;
  memset(&s, 0, sizeof s);
  s.pid = s.tid = 4242;
  s.regs_known = 1;
  s.regs[OCGC_CPU_REG_IP] = s.ip = CFIGEN_TEXT + 4;
  s.regs[OCGC_CPU_REG_SP] = UINT64_C(0x7ffd0000);
  s.stack = (const unsigned char *)stack;
  s.stack_size = sizeof stack;
  ck_assert_int_ge(ocgc_unwind_sample(u, &s, st), 1);
  ocgc_unwind_close(u);
  ocgc_symbols_close(cnames);
  close(fd);
}

START_TEST(costly_cfi_refused)
{
  /* DW_CFA_expression, register 0x7ffffff, an empty expression */
  static const unsigned char big_reg[] = {0x10, 0xff, 0xff, 0xff, 0x3f, 0x00};
  /* DW_CFA_undefined r15 (17 rules), then 100 000 DW_CFA_remember_state */
  unsigned char *states = malloc(100002);
  struct ocgc_unwind_stack st;
  long before = peak_rss_kb(), grown;
  unwind_crafted(big_reg, sizeof big_reg, &st);
  grown = peak_rss_kb() - before;
  printf("a register of 2^27 - 1: %ld KiB more at the peak, %u frames, %s\n", grown, st.depth,
         ocgc_unwind_end_name(st.end));
  ck_assert_int_lt(grown, 64 * 1024);
  ck_assert_uint_eq(st.depth, 1);
  ck_assert_int_eq(st.end, OCGC_UNWIND_LOST);
  /* a real file's CFI is kept: the same FDE with a register of 15 unwinds */
  {
    static const unsigned char ok_reg[] = {0x10, 0x0f, 0x00};
    unwind_crafted(ok_reg, sizeof ok_reg, &st);
    ck_assert_uint_gt(st.depth, 1);
  }
  ck_assert_ptr_nonnull(states);
  states[0] = 0x07, states[1] = 0x0f;
  memset(states + 2, 0x0a, 100000);
  before = peak_rss_kb();
  unwind_crafted(states, 100002, &st);
  grown = peak_rss_kb() - before;
  printf("100 000 remembered states: %ld KiB more at the peak, %u frames, %s\n", grown,
         st.depth, ocgc_unwind_end_name(st.end));
  ck_assert_int_lt(grown, 64 * 1024);
  ck_assert_uint_eq(st.depth, 1);
  free(states);
}
END_TEST

/* An FDE of 1 MiB of DW_CFA_nop: libdw would run them all at each lookup
 * (a sample's time grows with the file's choice); refused, whole. */
START_TEST(long_fde_refused)
{
  size_t n = 1024 * 1024;
  unsigned char *nops = calloc(1, n);
  struct ocgc_unwind_stack st;
  ck_assert_ptr_nonnull(nops);
  unwind_crafted(nops, n, &st);
  ck_assert_uint_eq(st.depth, 1);
  ck_assert_int_eq(st.end, OCGC_UNWIND_LOST);
  /* 4 KiB of them is a plausible FDE: kept, and unwound through */
  unwind_crafted(nops, 4096, &st);
  ck_assert_uint_gt(st.depth, 1);
  free(nops);
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
  tcase_add_test(tc, costly_cfi_refused);
  tcase_add_test(tc, long_fde_refused);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(cpu_unwind_suite);
