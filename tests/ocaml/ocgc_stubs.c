/* ocgc_stubs.c - C stubs of the integration test programs (tests/ocaml),
 * for the GC causes that only C code can provoke.  Linked with the system
 * headers (ocamlfind ocamlopt compiles .c files); no new runtime primitive.
 *
 *   ocgc_test_minor_collection   caml_minor_collection() from C (c_call)
 *   ocgc_test_final_block        a small custom block with a finaliser,
 *                                which goes in the minor custom table
 *                                (custom_table)
 *   ocgc_test_weak_arm/_swaps    a major-slice hook that changes the size
 *                                of a weak key while Weak.get_copy copies
 *                                it, so that the copy loop gives up and
 *                                forces a minor collection (weak)
 *   ocgc_test_alloc_shr          an int array made by caml_alloc_shr
 *   ocgc_test_custom_mem         a custom block holding out-of-heap memory
 *                                (caml_alloc_custom_mem)
 *   ocgc_test_exit_from_thread   a C thread that calls exit(0) later
 *   ocgc_test_exit_with_stat     print Gc.quick_stat's counters as they
 *                                are now, then exit(0), with nothing
 *                                allocated in between */

#define CAML_NAME_SPACE /* no compatibility macros (young_ptr ...) */
#define CAML_INTERNALS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <caml/alloc.h>
#include <caml/custom.h>
#include <caml/domain_state.h>
#include <caml/major_gc.h>
#include <caml/memory.h>
#include <caml/minor_gc.h>
#include <caml/misc.h>
#include <caml/mlvalues.h>

value ocgc_test_minor_collection(value unit);
value ocgc_test_final_block(value unit);
value ocgc_test_weak_arm(value w, value a, value b);
value ocgc_test_weak_swaps(value unit);
value ocgc_test_alloc_shr(value n);
value ocgc_test_custom_mem(value bytes);
value ocgc_test_exit_from_thread(value delay_us);
value ocgc_test_exit_with_stat(value unit);

/* ---- c_call ---------------------------------------------------------------- */

value ocgc_test_minor_collection(value unit)
{
  (void)unit;
  caml_minor_collection();
  return Val_unit;
}

/* ---- custom_table --------------------------------------------------------- */

static long finalised;

static void final_block_finalize(value v)
{
  (void)v;
  finalised++;
}

static struct custom_operations final_block_ops = {
  "ocgc.test.final_block",
  final_block_finalize,
  custom_compare_default,
  custom_hash_default,
  custom_serialize_default,
  custom_deserialize_default,
  custom_compare_ext_default,
  custom_fixed_length_default
};

/* mem = 0: the block costs nothing, but its finaliser puts it in the minor
 * heap's custom table (custom.c, alloc_custom_gen). */
value ocgc_test_final_block(value unit)
{
  value v;
  (void)unit;
  v = caml_alloc_custom(&final_block_ops, sizeof(value), 0, 1);
  *(value *)Data_custom_val(v) = Val_long(finalised);
  return v;
}

/* ---- weak ----------------------------------------------------------------- */

/* caml_ephemeron_get_key_copy (weak.c) allocates a copy of the key and
 * retries while the key's size or tag changes under it; at the 9th try it
 * forces a minor collection (EV_C_FORCE_MINOR_WEAK).  Nothing in OCaml code
 * can change the key during that C loop, so this hook does: at the end of
 * each of the next 8 major slices (each big copy is a major allocation that
 * requests one) it swaps the key between two major blocks of different
 * sizes, and leaves a young block behind so that the forced minor
 * collection has something to collect (caml_minor_collection on an empty
 * minor heap is no collection at all). */

#define WEAK_KEY0 2 /* CAML_EPHE_FIRST_KEY */
#define WEAK_SWAPS 8

static value weak_arr = Val_unit, weak_a = Val_unit, weak_b = Val_unit;
static int weak_roots, weak_armed, weak_swaps;
static caml_timing_hook weak_prev_hook;

static void weak_slice_end(void)
{
  if (weak_prev_hook != NULL) weak_prev_hook();
  if (!weak_armed || weak_swaps >= WEAK_SWAPS) return;
  weak_swaps++;
  /* All three blocks are in the major heap and kept alive by global roots:
   * a plain store is enough for a weak key. */
  Field(weak_arr, WEAK_KEY0) = Field(weak_arr, WEAK_KEY0) == weak_a ? weak_b : weak_a;
  /* A one-word young block, made as Alloc_small makes it but without its
   * slow path: a GC requested meanwhile (say, by the end of the cycle)
   * must not run from inside this hook. */
  if (Caml_state->young_ptr - Whsize_wosize(1) >= Caml_state->young_alloc_start) {
    Caml_state->young_ptr -= Whsize_wosize(1);
    Hd_hp(Caml_state->young_ptr) = Make_header(1, 0, 0);
    Field(Val_hp(Caml_state->young_ptr), 0) = Val_unit;
  }
  if (weak_swaps == WEAK_SWAPS) weak_armed = 0;
}

value ocgc_test_weak_arm(value w, value a, value b)
{
  if (!weak_roots) {
    caml_register_generational_global_root(&weak_arr);
    caml_register_generational_global_root(&weak_a);
    caml_register_generational_global_root(&weak_b);
    weak_roots = 1;
    weak_prev_hook = caml_major_slice_end_hook;
    caml_major_slice_end_hook = weak_slice_end;
  }
  caml_modify_generational_global_root(&weak_arr, w);
  caml_modify_generational_global_root(&weak_a, a);
  caml_modify_generational_global_root(&weak_b, b);
  weak_swaps = 0;
  weak_armed = 1;
  return Val_unit;
}

value ocgc_test_weak_swaps(value unit)
{
  (void)unit;
  weak_armed = 0;
  return Val_int(weak_swaps);
}

/* ---- direct major allocation and custom memory ------------------------------ */

value ocgc_test_alloc_shr(value n)
{
  mlsize_t i, len = (mlsize_t)Long_val(n);
  value v;
  if (len == 0) len = 1;
  v = caml_alloc_shr(len, 0);
  for (i = 0; i < len; i++) Field(v, i) = Val_long(i); /* no young pointer */
  return v;
}

static struct custom_operations mem_block_ops = {
  "ocgc.test.mem_block",
  custom_finalize_default,
  custom_compare_default,
  custom_hash_default,
  custom_serialize_default,
  custom_deserialize_default,
  custom_compare_ext_default,
  custom_fixed_length_default
};

value ocgc_test_custom_mem(value bytes)
{
  return caml_alloc_custom_mem(&mem_block_ops, sizeof(value), (mlsize_t)Long_val(bytes));
}

/* ---- exit from a thread the runtime does not know --------------------------- */

static void *exit_later(void *arg)
{
  long us = (long)(intptr_t)arg;
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
  exit(0);
  return NULL;
}

value ocgc_test_exit_from_thread(value delay_us)
{
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &a, exit_later, (void *)(intptr_t)Long_val(delay_us)) != 0) abort();
  pthread_attr_destroy(&a);
  return Val_unit;
}

/* ---- totals at exit ------------------------------------------------------------ */

/* The counters of Gc.quick_stat, computed as caml_gc_quick_stat computes
 * them (runtime/gc_ctrl.c, 4.13 and 4.14: the minor words include what the
 * minor heap holds now), written as "exit.KEY VALUE" lines with write(2),
 * then exit(0).  Gc.quick_stat itself would allocate its record after
 * reading them, and OCaml's exit would allocate too (flushing channels):
 * here nothing is allocated between these figures and the producer's exit
 * handler, which publishes the final totals. */
value ocgc_test_exit_with_stat(value unit)
{
  char buf[512];
  int n;
  (void)unit;
  n = snprintf(buf, sizeof buf,
               "exit.minor_collections %ld\nexit.major_collections %ld\n"
               "exit.minor_words %.0f\nexit.promoted_words %.0f\nexit.major_words %.0f\n",
               (long)Caml_state->stat_minor_collections, (long)Caml_state->stat_major_collections,
               Caml_state->stat_minor_words +
                   (double)(Caml_state->young_alloc_end - Caml_state->young_ptr),
               Caml_state->stat_promoted_words,
               Caml_state->stat_major_words + (double)caml_allocated_words);
  if (n > 0) (void)!write(STDOUT_FILENO, buf, (size_t)n);
  exit(0);
}
