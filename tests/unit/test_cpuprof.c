/* test_cpuprof.c - a CPU profile's GC labels and rows (ocgc/cpuprof.h,
 * libconsumer/cpuprof*.c) on crafted stacks and ring collections:
 * - a frame's role by the runtime's names (a GCC clone's suffix ignored;
 *   a program's own "mark" is no collector frame outside a major one);
 * - a stack's phase: minor, a major slice refined into mark, sweep or
 *   clean by the frame inside it, compaction, a Gc.* call, the dispatch;
 * - the join: a stack with a minor frame at a time inside a ring span is
 *   minor with the span's cause; outside every span, "unknown"; a stack
 *   without a collector frame inside a span is the mutator's (another
 *   thread ran the collection); nested spans give the innermost's cause;
 *   a dispatch frame takes the ring's kind;
 * - through the public API with a symbolizer (an ELF whose one function
 *   is caml_empty_minor_heap): samples wait for the ring until settled,
 *   identical (stack, labels) fold into one row, a new stack past
 *   max_rows counts in its labels' overflow row, folded lines. */

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuprof_label.h"
#include "elfgen.h"
#include "ocgc/cpuprof.h"
#include "ocgc/event.h"
#include "ocgc/wire.h"
#include "testutil.h"

static enum ocgc_gc_phase phase_of(const char *const *names, unsigned n, enum ocgc_gc_call *call)
{
  unsigned char roles[16];
  unsigned i;
  for (i = 0; i < n; i++) roles[i] = (unsigned char)cpuprof_frame_role(names[i]);
  return cpuprof_stack_phase(roles, n, call);
}

START_TEST(frame_roles)
{
  ck_assert_uint_eq(cpuprof_frame_role("caml_empty_minor_heap"), ROLE_PHASE(OCGC_GC_MINOR));
  ck_assert_uint_eq(cpuprof_frame_role("sweep_slice.part.0"), ROLE_REFINE(OCGC_GC_MAJOR_SWEEP));
  ck_assert_uint_eq(cpuprof_frame_role("mark_slice_darken.constprop.0"),
                    ROLE_REFINE(OCGC_GC_MAJOR_MARK));
  ck_assert_uint_eq(cpuprof_frame_role("caml_gc_full_major"),
                    ROLE_CALL(OCGC_GC_CALL_FULL_MAJOR));
  ck_assert_uint_eq(cpuprof_frame_role("caml_gc_major"), ROLE_CALL(OCGC_GC_CALL_MAJOR));
  ck_assert_uint_eq(cpuprof_frame_role("caml_empty_minor_heap_x"), ROLE_NONE);
  ck_assert_uint_eq(cpuprof_frame_role("camlMain__burn_12"), ROLE_NONE);
  ck_assert_uint_eq(cpuprof_frame_role(NULL), ROLE_NONE);
  ck_assert_uint_eq(cpuprof_frame_role(""), ROLE_NONE);
}
END_TEST

START_TEST(stack_phases)
{
  enum ocgc_gc_call call;
  static const char *const minor[] = {"caml_oldify_one", "caml_oldify_mopup",
                                      "caml_empty_minor_heap", "caml_gc_dispatch",
                                      "caml_alloc_small_dispatch", "camlMain__f_1", "main"};
  static const char *const mark[] = {"mark_slice", "caml_major_collection_slice",
                                     "caml_gc_dispatch", "camlMain__f_1"};
  static const char *const sweep[] = {"sweep_slice.part.0", "caml_major_collection_slice",
                                      "caml_gc_dispatch"};
  static const char *const clean[] = {"caml_ephe_clean_partial", "clean_slice",
                                      "caml_major_collection_slice"};
  static const char *const major[] = {"caml_fl_merge_block", "caml_major_collection_slice"};
  static const char *const full[] = {"sweep_slice", "caml_finish_major_cycle",
                                     "caml_gc_full_major", "caml_c_call", "camlMain__f_1"};
  static const char *const compact[] = {"do_compaction", "caml_compact_heap",
                                        "caml_compact_heap_maybe", "caml_finish_major_cycle",
                                        "caml_gc_compaction"};
  static const char *const dispatch[] = {"caml_gc_dispatch", "caml_alloc_small_dispatch"};
  static const char *const user_mark[] = {"mark", "camlMain__f_1", "main"};
  static const char *const mutator[] = {"camlMain__spin_10", "camlMain__f_1", "main"};
  ck_assert_int_eq(phase_of(minor, 7, &call), OCGC_GC_MINOR);
  ck_assert_int_eq(call, OCGC_GC_CALL_NONE);
  ck_assert_int_eq(phase_of(mark, 4, &call), OCGC_GC_MAJOR_MARK);
  ck_assert_int_eq(phase_of(sweep, 3, &call), OCGC_GC_MAJOR_SWEEP);
  ck_assert_int_eq(phase_of(clean, 3, &call), OCGC_GC_MAJOR_CLEAN);
  ck_assert_int_eq(phase_of(major, 2, &call), OCGC_GC_MAJOR);
  ck_assert_int_eq(phase_of(full, 5, &call), OCGC_GC_MAJOR_SWEEP);
  ck_assert_int_eq(call, OCGC_GC_CALL_FULL_MAJOR);
  /* the innermost phase frame: the compaction inside a finished cycle */
  ck_assert_int_eq(phase_of(compact, 5, &call), OCGC_GC_COMPACTION);
  ck_assert_int_eq(call, OCGC_GC_CALL_COMPACT);
  ck_assert_int_eq(phase_of(dispatch, 2, &call), OCGC_GC_COLLECTOR);
  /* a program's own "mark": refines nothing, outside a major frame */
  ck_assert_int_eq(phase_of(user_mark, 3, &call), OCGC_GC_MUTATOR);
  ck_assert_int_eq(phase_of(mutator, 3, &call), OCGC_GC_MUTATOR);
  ck_assert_int_eq(call, OCGC_GC_CALL_NONE);
  /* a Gc.* entry with no phase frame (its own code): the collector's */
  ck_assert_int_eq(phase_of(full + 2, 3, &call), OCGC_GC_COLLECTOR);
  ck_assert_int_eq(call, OCGC_GC_CALL_FULL_MAJOR);
  ck_assert_int_eq(phase_of(mutator, 0, &call), OCGC_GC_MUTATOR);
}
END_TEST

START_TEST(join_with_ring)
{
  const uint64_t ms = 1000000;
  struct cpuprof_coll c[3] = {
      {100 * ms, 102 * ms, OCGC_KIND_MINOR, OCGC_CAUSE_MINOR_HEAP_FULL},
      {200 * ms, 260 * ms, OCGC_KIND_MAJOR_FINISH, OCGC_CAUSE_EXPLICIT},
      {230 * ms, 250 * ms, OCGC_KIND_COMPACTION, OCGC_CAUSE_HEAP_OVERHEAD},
  };
  enum ocgc_gc_phase ph;
  int cause;
  /* a minor stack inside the minor span */
  ck_assert_int_eq(cpuprof_label(OCGC_GC_MINOR, c, 3, 101 * ms, &ph, &cause), 1);
  ck_assert_int_eq(ph, OCGC_GC_MINOR);
  ck_assert_int_eq(cause, OCGC_CAUSE_MINOR_HEAP_FULL);
  /* the same stack outside every span: the ring does not say why */
  ck_assert_int_eq(cpuprof_label(OCGC_GC_MINOR, c, 3, 150 * ms, &ph, &cause), 0);
  ck_assert_int_eq(ph, OCGC_GC_MINOR);
  ck_assert_int_eq(cause, OCGC_CAUSE_UNKNOWN);
  /* just past the span's end, within the clocks' slack: in it */
  ck_assert_int_eq(cpuprof_label(OCGC_GC_MINOR, c, 3, 102 * ms + CPUPROF_SPAN_SLACK_NS / 2,
                                 &ph, &cause), 1);
  ck_assert_int_eq(cause, OCGC_CAUSE_MINOR_HEAP_FULL);
  ck_assert_int_eq(cpuprof_label(OCGC_GC_MINOR, c, 3, 102 * ms + 2 * CPUPROF_SPAN_SLACK_NS,
                                 &ph, &cause), 0);
  /* a mutator's stack during a collection: another thread's, no cause */
  ck_assert_int_eq(cpuprof_label(OCGC_GC_MUTATOR, c, 3, 101 * ms, &ph, &cause), 1);
  ck_assert_int_eq(ph, OCGC_GC_MUTATOR);
  ck_assert_int_eq(cause, OCGC_CAUSE_NONE);
  /* nested: the compaction inside the finished cycle is the innermost */
  ck_assert_int_eq(cpuprof_label(OCGC_GC_COMPACTION, c, 3, 240 * ms, &ph, &cause), 1);
  ck_assert_int_eq(cause, OCGC_CAUSE_HEAP_OVERHEAD);
  ck_assert_int_eq(cpuprof_label(OCGC_GC_MAJOR_MARK, c, 3, 210 * ms, &ph, &cause), 1);
  ck_assert_int_eq(ph, OCGC_GC_MAJOR_MARK);
  ck_assert_int_eq(cause, OCGC_CAUSE_EXPLICIT);
  /* the dispatch only: the ring's kind says the phase */
  ck_assert_int_eq(cpuprof_label(OCGC_GC_COLLECTOR, c, 3, 101 * ms, &ph, &cause), 1);
  ck_assert_int_eq(ph, OCGC_GC_MINOR);
  ck_assert_int_eq(cpuprof_label(OCGC_GC_COLLECTOR, c, 3, 240 * ms, &ph, &cause), 1);
  ck_assert_int_eq(ph, OCGC_GC_COMPACTION);
  ck_assert_int_eq(cpuprof_label(OCGC_GC_COLLECTOR, c, 0, 240 * ms, &ph, &cause), 0);
  ck_assert_int_eq(ph, OCGC_GC_COLLECTOR);
  ck_assert_str_eq(ocgc_gc_phase_name(OCGC_GC_MINOR), "minor");
  ck_assert_str_eq(ocgc_gc_phase_name(OCGC_GC_MUTATOR), "mutator");
  ck_assert_ptr_null(ocgc_gc_phase_name(OCGC_GC_PHASE_COUNT));
  ck_assert_str_eq(ocgc_gc_call_name(OCGC_GC_CALL_FULL_MAJOR), "Gc.full_major");
  ck_assert_ptr_null(ocgc_gc_call_name(OCGC_GC_CALL_NONE));
}
END_TEST

/* A symbolizer of one file whose one function, at ELFGEN_FUNC, is
 * caml_empty_minor_heap. */
static struct ocgc_symbols *minor_file(void)
{
  char tmpl[] = "/tmp/test_cpuprof.XXXXXX";
  struct ocgc_symbols *s = NULL;
  int fd = mkstemp(tmpl);
  ck_assert_int_ge(fd, 0);
  unlink(tmpl);
  ck_assert_int_eq(elfgen_write_one(fd, "caml_empty_minor_heap"), 0);
  ck_assert_int_eq(ocgc_symbols_open_elf(fd, "minor.elf", NULL, &s), 0);
  close(fd);
  return s;
}

static void stack_of(struct ocgc_unwind_stack *st, uint64_t a, uint64_t b)
{
  memset(st, 0, sizeof *st);
  st->depth = 2;
  st->end = OCGC_UNWIND_OUTERMOST;
  st->frames[0] = a;
  st->frames[1] = b;
}

static const struct ocgc_cpuprof_row *row_of(const struct ocgc_cpuprof *p, enum ocgc_gc_phase ph,
                                             int cause, uint64_t frame0)
{
  const struct ocgc_cpuprof_row *r;
  size_t i, n = ocgc_cpuprof_rows(p, &r);
  for (i = 0; i < n; i++)
    if (r[i].phase == ph && r[i].cause == cause && !r[i].overflow &&
        (frame0 == 0 || (r[i].depth > 0 && r[i].frames[0] == frame0)))
      return &r[i];
  return NULL;
}

START_TEST(profile_rows)
{
  const uint64_t ms = 1000000, in_minor = ELFGEN_FUNC + 4, user = 0x900000;
  struct ocgc_symbols *s = minor_file();
  struct ocgc_cpuprof_opts o = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_cpuprof_stats st = OCGC_OPTS_INIT(struct ocgc_cpuprof_stats);
  struct ocgc_cpuprof *p;
  struct ocgc_unwind_stack gc, mut;
  const struct ocgc_cpuprof_row *r;
  char *folded;
  size_t len;
  o.max_rows = 3;
  ck_assert_int_eq(ocgc_cpuprof_new(s, &o, &p), 0);
  stack_of(&gc, in_minor, user);
  stack_of(&mut, user + 8, user);
  /* two samples in the minor collection of 100..102 ms, one after it, two
   * of the mutator during it */
  ck_assert_int_eq(ocgc_cpuprof_add(p, 101 * ms, &gc), 0);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 101 * ms + 10, &gc), 0);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 500 * ms, &gc), 0);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 101 * ms, &mut), 0);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 101 * ms + 5, &mut), 0);
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &st), 0);
  ck_assert_uint_eq(st.samples, 5);
  ck_assert_uint_eq(st.gc_samples, 3);
  ck_assert_uint_eq(st.pending, 3); /* the ring not read yet */
  r = row_of(p, OCGC_GC_MUTATOR, OCGC_CAUSE_NONE, user + 8);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->samples, 2);
  ck_assert_int_eq(ocgc_cpuprof_collection(p, OCGC_KIND_MINOR, OCGC_CAUSE_MAKE_VECT, 100 * ms,
                                           102 * ms), 0);
  ck_assert_int_eq(ocgc_cpuprof_collection(p, OCGC_KIND_MINOR, 0, 9, 8), -EINVAL);
  /* a cause past the table: unknown, never a label of its own */
  ck_assert_int_eq(ocgc_cpuprof_collection(p, 77, 1000, 900 * ms, 901 * ms), 0);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 900 * ms + 500, &gc), 0);
  /* read past the first two only */
  ocgc_cpuprof_settle(p, 300 * ms);
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &st), 0);
  ck_assert_uint_eq(st.pending, 2); /* those at 500 and 900 ms */
  r = row_of(p, OCGC_GC_MINOR, OCGC_CAUSE_MAKE_VECT, in_minor);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->samples, 2);
  ck_assert_uint_eq(r->depth, 2);
  ocgc_cpuprof_finish(p);
  r = row_of(p, OCGC_GC_MINOR, OCGC_CAUSE_UNKNOWN, in_minor);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->samples, 2); /* at no collection, and at the lying one */
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &st), 0);
  ck_assert_uint_eq(st.gc_unmatched, 1);
  ck_assert_uint_eq(st.pending, 0);
  ck_assert_uint_eq(st.rows, 3);
  /* a fourth stack, past max_rows: the mutator's overflow row */
  stack_of(&mut, user + 16, user);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 600 * ms, &mut), 0);
  ck_assert_int_eq(ocgc_cpuprof_add(p, 601 * ms, &mut), 0);
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &st), 0);
  ck_assert_uint_eq(st.overflow_samples, 2);
  ck_assert_uint_eq(st.rows, 4);
  ck_assert_uint_eq(ocgc_cpuprof_rows(p, &r), 4);
  ck_assert_int_eq(r[3].overflow, 1);
  ck_assert_uint_eq(r[3].samples, 2);
  ck_assert_int_eq(r[3].phase, OCGC_GC_MUTATOR);
  /* folded, split by phase: the collector's frame named */
  ck_assert_int_eq(ocgc_cpuprof_folded(p, s, 1, &folded, &len), 0);
  ck_assert_uint_eq(strlen(folded), len);
  /* one stack, two causes: two lines */
  ck_assert_ptr_nonnull(strstr(folded, "[minor];0x900000;caml_empty_minor_heap 2\n[minor];0x900000;caml_empty_minor_heap 2\n"));
  ck_assert_ptr_nonnull(strstr(folded, "[mutator];0x900000;0x900008 2\n"));
  ck_assert_ptr_nonnull(strstr(folded, "[mutator];(ocgc-table-full) 2\n"));
  free(folded);
  ocgc_cpuprof_free(p);
  ocgc_symbols_close(s);
}
END_TEST

START_TEST(pending_bound)
{
  struct ocgc_symbols *s = minor_file();
  struct ocgc_cpuprof_opts o = OCGC_OPTS_INIT(struct ocgc_cpuprof_opts);
  struct ocgc_cpuprof_stats st = OCGC_OPTS_INIT(struct ocgc_cpuprof_stats);
  struct ocgc_cpuprof *p;
  struct ocgc_unwind_stack gc;
  unsigned i;
  o.max_pending = 4;
  ck_assert_int_eq(ocgc_cpuprof_new(s, &o, &p), 0);
  stack_of(&gc, ELFGEN_FUNC + 4, 0x900000);
  for (i = 0; i < 10; i++) ck_assert_int_eq(ocgc_cpuprof_add(p, 1000 + i, &gc), 0);
  ck_assert_int_eq(ocgc_cpuprof_stats(p, &st), 0);
  ck_assert_uint_eq(st.pending, 4);
  ck_assert_uint_eq(st.gc_unmatched, 6);
  ocgc_cpuprof_free(p); /* with samples still waiting: freed (ASan) */
  o.max_rows = 70000;
  ck_assert_int_eq(ocgc_cpuprof_new(s, &o, &p), -EINVAL);
  ck_assert_int_eq(ocgc_cpuprof_add(NULL, 0, &gc), -EINVAL);
  ocgc_cpuprof_free(NULL);
  ocgc_symbols_close(s);
}
END_TEST

static Suite *cpuprof_suite(void)
{
  Suite *s = suite_create("cpuprof");
  TCase *tc = tcase_create("labels");
  tcase_add_test(tc, frame_roles);
  tcase_add_test(tc, stack_phases);
  tcase_add_test(tc, join_with_ring);
  tcase_add_test(tc, profile_rows);
  tcase_add_test(tc, pending_bound);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(cpuprof_suite);
