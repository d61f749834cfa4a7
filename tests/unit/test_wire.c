/* test_wire.c - the wire format: header encoding, cause tables, sizes.
 *
 * The _Static_asserts in wire.h pin offsets at compile time; this suite
 * checks what only runs: the header macros at every field's extremes, the
 * cause tables (every cause named, counter ids unique, both directions
 * agree, what the X-macro tables generate agrees with their rows),
 * ocgc_wire_ext_size(), and that the id constants of wire.h are the OCaml
 * 5.2 ids (via libocgc's name tables, which are the 5.2 lists).  The kind
 * and cause numbers, which are ABI, are pinned at compile time. */

#include <check.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ocgc/consumer.h"
#include "ocgc/wire.h"
#include "testutil.h"

/* ---- event header word ------------------------------------------------------ */

START_TEST(header_fields_round_trip)
{
  uint64_t h = OCGC_EV_HEADER(22, 0, OCGC_RT_ALLOC, 0);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 22);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 0);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), OCGC_RT_ALLOC);
  h = OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 8191);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 3);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 1);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), OCGC_USER_INT);
  ck_assert_uint_eq(OCGC_EV_ID(h), 8191);
  ck_assert_uint_eq(h & OCGC_EV_RESERVED_MASK, 0);
}
END_TEST

/* Every field at its maximum, alone: it lands in its own bits and reads
 * back, and every other field reads 0. */
START_TEST(header_each_field_at_max)
{
  uint64_t h;
  h = OCGC_EV_HEADER(1023, 0, 0, 0);
  ck_assert_uint_eq(h, UINT64_C(0x3ff) << 54);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 1023);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 0);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), 0);
  ck_assert_uint_eq(OCGC_EV_ID(h), 0);

  h = OCGC_EV_HEADER(0, 1, 0, 0);
  ck_assert_uint_eq(h, UINT64_C(1) << 53);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 0);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 1);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), 0);
  ck_assert_uint_eq(OCGC_EV_ID(h), 0);

  h = OCGC_EV_HEADER(0, 0, 15, 0);
  ck_assert_uint_eq(h, UINT64_C(0xf) << 49);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 0);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 0);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), 15);
  ck_assert_uint_eq(OCGC_EV_ID(h), 0);

  h = OCGC_EV_HEADER(0, 0, 0, 8191);
  ck_assert_uint_eq(h, UINT64_C(0x1fff) << 36);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 0);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 0);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), 0);
  ck_assert_uint_eq(OCGC_EV_ID(h), 8191);
  ck_assert_uint_eq(h & OCGC_EV_RESERVED_MASK, 0);

  h = OCGC_EV_HEADER(1023, 1, 15, 8191);
  ck_assert_uint_eq(h, ~OCGC_EV_RESERVED_MASK);
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 1023);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 1);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), 15);
  ck_assert_uint_eq(OCGC_EV_ID(h), 8191);
}
END_TEST

/* The decoders ignore the reserved bits; the mask is exactly bits 35..0. */
START_TEST(header_reserved_bits)
{
  uint64_t h = OCGC_EV_HEADER(3, 1, OCGC_USER_INT, 77) | OCGC_EV_RESERVED_MASK;
  ck_assert_uint_eq(OCGC_EV_RESERVED_MASK, UINT64_C(0xfffffffff));
  ck_assert_uint_eq(OCGC_EV_LENGTH(h), 3);
  ck_assert_uint_eq(OCGC_EV_IS_USER(h), 1);
  ck_assert_uint_eq(OCGC_EV_TYPE(h), OCGC_USER_INT);
  ck_assert_uint_eq(OCGC_EV_ID(h), 77);
  ck_assert_uint_eq(OCGC_EV_LENGTH(UINT64_MAX), 1023);
  ck_assert_uint_eq(OCGC_EV_IS_USER(UINT64_MAX), 1);
  ck_assert_uint_eq(OCGC_EV_TYPE(UINT64_MAX), 15);
  ck_assert_uint_eq(OCGC_EV_ID(UINT64_MAX), 8191);
}
END_TEST

/* Any nonzero "user" argument means a user event (the macro normalises). */
START_TEST(header_user_flag_normalised)
{
  ck_assert_uint_eq(OCGC_EV_HEADER(2, 5, 0, 0), OCGC_EV_HEADER(2, 1, 0, 0));
  ck_assert_uint_eq(OCGC_EV_HEADER(2, -1, 0, 0), OCGC_EV_HEADER(2, 1, 0, 0));
  ck_assert_uint_eq(OCGC_EV_IS_USER(OCGC_EV_HEADER(2, 2, 0, 0)), 1);
}
END_TEST

/* Every (length, user, type) and a spread of ids round-trip. */
START_TEST(header_round_trip_exhaustive)
{
  static const unsigned ids[] = {0, 1, 2, 63, 64, 255, 256, 4095, 4096, 8190, 8191};
  unsigned len, user, type, k;
  for (len = 0; len < 1024; len++)
    for (user = 0; user < 2; user++)
      for (type = 0; type < 16; type++)
        for (k = 0; k < sizeof ids / sizeof ids[0]; k++) {
          uint64_t h = OCGC_EV_HEADER(len, user, type, ids[k]);
          TU_CHECK(OCGC_EV_LENGTH(h) == len && OCGC_EV_IS_USER(h) == user &&
                       OCGC_EV_TYPE(h) == type && OCGC_EV_ID(h) == ids[k] &&
                       (h & OCGC_EV_RESERVED_MASK) == 0,
                   "len %u user %u type %u id %u: header %#llx", len, user, type, ids[k],
                   (unsigned long long)h);
        }
}
END_TEST

/* The longest event the 10-bit length can say is the documented maximum
 * minus nothing: OCGC_WIRE_MAX_EVENT_WORDS bounds every length. */
START_TEST(header_max_event_words)
{
  ck_assert_uint_le(OCGC_EV_LENGTH(UINT64_MAX), OCGC_WIRE_MAX_EVENT_WORDS);
  ck_assert_uint_eq(OCGC_WIRE_MAX_EVENT_WORDS, 1024);
}
END_TEST

/* ---- causes ------------------------------------------------------------------- */

START_TEST(cause_every_cause_has_a_name)
{
  unsigned c, k;
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    const char *n = ocgc_cause_name(c);
    size_t i;
    ck_assert_msg(n != NULL, "cause %u has no name", c);
    ck_assert_uint_gt(strlen(n), 0);
    /* The user event "ocgc.cause.<name>" must fit a name slot. */
    ck_assert_uint_lt(strlen(OCGC_UEV_CAUSE_PREFIX) + strlen(n), OCGC_WIRE_USER_NAME_LEN);
    for (i = 0; n[i]; i++)
      ck_assert_msg(islower((unsigned char)n[i]) || n[i] == '_',
                    "cause %u name \"%s\" is not [a-z_]+", c, n);
    for (k = 0; k < c; k++)
      ck_assert_msg(strcmp(n, ocgc_cause_name(k)) != 0, "causes %u and %u share \"%s\"", k, c, n);
  }
  ck_assert_str_eq(ocgc_cause_name(OCGC_CAUSE_UNKNOWN), "unknown");
  ck_assert_str_eq(ocgc_cause_name(OCGC_CAUSE_MINOR_HEAP_FULL), "minor_heap_full");
  ck_assert_str_eq(ocgc_cause_name(OCGC_CAUSE_C_CALL), "c_call");
}
END_TEST

START_TEST(cause_names_end_at_count)
{
  ck_assert_ptr_null(ocgc_cause_name(OCGC_CAUSE_COUNT));
  ck_assert_ptr_null(ocgc_cause_name(OCGC_CAUSE_SLOTS));
  ck_assert_ptr_null(ocgc_cause_name(~0u));
  ck_assert_int_eq(ocgc_cause_counter(OCGC_CAUSE_COUNT), -1);
  ck_assert_int_eq(ocgc_cause_counter(~0u), -1);
  ck_assert_uint_le(OCGC_CAUSE_COUNT, OCGC_CAUSE_SLOTS);
}
END_TEST

/* Counter ids carried by causes are unique, are 5.2 cause counters (never
 * the MINOR_PROMOTED/MINOR_ALLOCATED measurements), and every 5.2 cause
 * counter (FORCE_MINOR_*, REQUEST_*) is claimed by exactly one cause. */
START_TEST(cause_counter_ids_unique_and_complete)
{
  int owner[32];
  unsigned c, id;
  for (id = 0; id < 32; id++) owner[id] = -1;
  for (c = 0; c < OCGC_CAUSE_COUNT; c++) {
    int k = ocgc_cause_counter(c);
    if (k < 0) {
      ck_assert_int_eq(k, -1);
      continue;
    }
    ck_assert_int_le(k, OCGC_CT_REQUEST_MINOR_REALLOC_CUSTOM_TABLE);
    ck_assert_int_ne(k, OCGC_CT_MINOR_PROMOTED);
    ck_assert_int_ne(k, OCGC_CT_MINOR_ALLOCATED);
    ck_assert_msg(owner[k] == -1, "counter %d carries causes %d and %u", k, owner[k], c);
    owner[k] = (int)c;
  }
  for (id = 0; id <= OCGC_CT_REQUEST_MINOR_REALLOC_CUSTOM_TABLE; id++) {
    const char *n = ocgc_counter_name(OCGC_IDS_52, id);
    int is_cause = strncmp(n, "force_minor_", 12) == 0 || strncmp(n, "request_", 8) == 0;
    ck_assert_msg(is_cause == (owner[id] >= 0), "counter %u (%s): cause %d", id, n, owner[id]);
  }
}
END_TEST

/* Both directions agree: the cause found for a counter id is the one whose
 * counter it is, and the known pairs are the documented ones. */
START_TEST(cause_counter_round_trip)
{
  static const struct { unsigned cause; int counter; } known[] = {
    {OCGC_CAUSE_MINOR_HEAP_FULL, OCGC_CT_FORCE_MINOR_ALLOC_SMALL},
    {OCGC_CAUSE_MAKE_VECT, OCGC_CT_FORCE_MINOR_MAKE_VECT},
    {OCGC_CAUSE_MINOR_HEAP_RESIZE, OCGC_CT_FORCE_MINOR_SET_MINOR_HEAP_SIZE},
    {OCGC_CAUSE_MEMPROF, OCGC_CT_FORCE_MINOR_MEMPROF},
    {OCGC_CAUSE_ALLOC_SHR, OCGC_CT_REQUEST_MAJOR_ALLOC_SHR},
    {OCGC_CAUSE_CUSTOM_MAJOR, OCGC_CT_REQUEST_MAJOR_ADJUST_GC_SPEED},
    {OCGC_CAUSE_REF_TABLE, OCGC_CT_REQUEST_MINOR_REALLOC_REF_TABLE},
    {OCGC_CAUSE_EPHE_REF_TABLE, OCGC_CT_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE},
    {OCGC_CAUSE_CUSTOM_TABLE, OCGC_CT_REQUEST_MINOR_REALLOC_CUSTOM_TABLE},
  };
  unsigned i, c, n = 0;
  for (i = 0; i < sizeof known / sizeof known[0]; i++)
    ck_assert_int_eq(ocgc_cause_counter(known[i].cause), known[i].counter);
  for (c = 0; c < OCGC_CAUSE_COUNT; c++)
    if (ocgc_cause_counter(c) >= 0) n++;
  ck_assert_uint_eq(n, sizeof known / sizeof known[0]);
  /* Causes without a 5.2 counter travel as user events. */
  ck_assert_int_eq(ocgc_cause_counter(OCGC_CAUSE_UNKNOWN), -1);
  ck_assert_int_eq(ocgc_cause_counter(OCGC_CAUSE_WEAK), -1);
  ck_assert_int_eq(ocgc_cause_counter(OCGC_CAUSE_EXPLICIT), -1);
  ck_assert_int_eq(ocgc_cause_counter(OCGC_CAUSE_MAJOR_SLICE_DUE), -1);
}
END_TEST

/* The numbers are ABI: the totals' by_cause rows and columns, which files
 * already written index.  Pinned here, apart from wire.h's tables, so that
 * renumbering a row fails to build. */
#define PIN(c, n) _Static_assert(c == n, #c " is ABI: it stays " #n);
PIN(OCGC_KIND_MINOR, 0) PIN(OCGC_KIND_MAJOR_SLICE, 1) PIN(OCGC_KIND_MAJOR_FINISH, 2)
PIN(OCGC_KIND_COMPACTION, 3) PIN(OCGC_KIND_COUNT, 4)
PIN(OCGC_CAUSE_UNKNOWN, 0) PIN(OCGC_CAUSE_MINOR_HEAP_FULL, 1)
PIN(OCGC_CAUSE_MINOR_HEAP_FULL_C, 2) PIN(OCGC_CAUSE_MAJOR_SLICE_DUE, 3)
PIN(OCGC_CAUSE_MAJOR_CYCLE_START, 4) PIN(OCGC_CAUSE_ALLOC_SHR, 5)
PIN(OCGC_CAUSE_CUSTOM_MAJOR, 6) PIN(OCGC_CAUSE_CUSTOM_MINOR, 7) PIN(OCGC_CAUSE_REF_TABLE, 8)
PIN(OCGC_CAUSE_EPHE_REF_TABLE, 9) PIN(OCGC_CAUSE_CUSTOM_TABLE, 10)
PIN(OCGC_CAUSE_MAKE_VECT, 11) PIN(OCGC_CAUSE_WEAK, 12) PIN(OCGC_CAUSE_MEMPROF, 13)
PIN(OCGC_CAUSE_MINOR_HEAP_RESIZE, 14) PIN(OCGC_CAUSE_POLICY_CHANGE, 15)
PIN(OCGC_CAUSE_EXPLICIT, 16) PIN(OCGC_CAUSE_SHUTDOWN, 17) PIN(OCGC_CAUSE_HEAP_OVERHEAD, 18)
PIN(OCGC_CAUSE_C_CALL, 19)
#undef PIN

/* What the tables generate agrees with the rows: each enum constant has the
 * row's number, name and counter, the rows are dense, and the name
 * functions answer for exactly the rows. */
START_TEST(table_rows_generate_everything)
{
#define CAUSE_ROW(suffix, num, name, counter) {OCGC_CAUSE_##suffix, num, name, counter},
#define KIND_ROW(suffix, num, name, phase) {OCGC_KIND_##suffix, num, name, phase},
  static const struct { int value, num; const char *name; int extra; }
      causes[] = {OCGC_CAUSE_TABLE(CAUSE_ROW)}, kinds[] = {OCGC_KIND_TABLE(KIND_ROW)};
#undef CAUSE_ROW
#undef KIND_ROW
  unsigned i, seen = 0;
  ck_assert_uint_eq(sizeof causes / sizeof causes[0], OCGC_CAUSE_COUNT);
  ck_assert_uint_eq(sizeof kinds / sizeof kinds[0], OCGC_KIND_COUNT);
  for (i = 0; i < OCGC_CAUSE_COUNT; i++) {
    ck_assert_int_eq(causes[i].value, causes[i].num);
    ck_assert_str_eq(ocgc_cause_name((unsigned)causes[i].num), causes[i].name);
    ck_assert_int_eq(ocgc_cause_counter((unsigned)causes[i].num), causes[i].extra);
    seen |= 1u << causes[i].num;
  }
  ck_assert_uint_eq(seen, (1u << OCGC_CAUSE_COUNT) - 1);
  for (i = 0, seen = 0; i < OCGC_KIND_COUNT; i++) {
    ck_assert_int_eq(kinds[i].value, kinds[i].num);
    ck_assert_str_eq(ocgc_kind_name((unsigned)kinds[i].num), kinds[i].name);
    seen |= 1u << kinds[i].num;
  }
  ck_assert_uint_eq(seen, (1u << OCGC_KIND_COUNT) - 1);
  ck_assert_ptr_null(ocgc_kind_name(OCGC_KIND_COUNT));
  ck_assert_ptr_null(ocgc_kind_name(~0u));
}
END_TEST

/* Each kind's span is the 5.2 phase of that name. */
START_TEST(kind_phases_are_the_52_spans)
{
  static const struct { unsigned kind; const char *phase; } want[] = {
    {OCGC_KIND_MINOR, "minor"},
    {OCGC_KIND_MAJOR_SLICE, "major_slice"},
    {OCGC_KIND_MAJOR_FINISH, "major_finish_cycle"},
    {OCGC_KIND_COMPACTION, "compact"},
  };
#define KIND_PHASE(suffix, num, name, phase) [OCGC_KIND_##suffix] = phase,
  static const unsigned phase[OCGC_KIND_COUNT] = {OCGC_KIND_TABLE(KIND_PHASE)};
#undef KIND_PHASE
  unsigned i;
  for (i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_str_eq(ocgc_phase_name(OCGC_IDS_52, phase[want[i].kind]), want[i].phase);
}
END_TEST

/* OCGC_TOTALS_WORDS names each one-word field of the totals once: their
 * offsets are distinct and cover minor_collections..gc_time_ns and
 * updated_ns. */
START_TEST(totals_words_cover_the_fields)
{
#define OFFSET(field) offsetof(struct ocgc_wire_totals, field),
  static const size_t off[] = {OCGC_TOTALS_WORDS(OFFSET)};
#undef OFFSET
  unsigned covered = 0, i;
  for (i = 0; i < sizeof off / sizeof off[0]; i++) {
    unsigned word = (unsigned)(off[i] / 8);
    ck_assert_uint_eq(off[i] % 8, 0);
    ck_assert_msg(!(covered & 1u << word), "word %u listed twice", word);
    covered |= 1u << word;
  }
  /* words 1..13 and 18 (updated_ns); 0 is seq, 14..17 kind_time_ns */
  ck_assert_uint_eq(covered, ((1u << 14) - 2) | 1u << 18);
}
END_TEST

/* ---- id constants are the 5.2 ids -------------------------------------------- */

START_TEST(ids_match_ocaml52)
{
  static const struct { unsigned id; const char *name; } ph[] = {
    {OCGC_PH_EXPLICIT_GC_SET, "explicit_gc_set"},
    {OCGC_PH_EXPLICIT_GC_STAT, "explicit_gc_stat"},
    {OCGC_PH_EXPLICIT_GC_MINOR, "explicit_gc_minor"},
    {OCGC_PH_EXPLICIT_GC_MAJOR, "explicit_gc_major"},
    {OCGC_PH_EXPLICIT_GC_FULL_MAJOR, "explicit_gc_full_major"},
    {OCGC_PH_EXPLICIT_GC_COMPACT, "explicit_gc_compact"},
    {OCGC_PH_MAJOR, "major"},
    {OCGC_PH_MAJOR_SWEEP, "major_sweep"},
    {OCGC_PH_MAJOR_MARK_ROOTS, "major_mark_roots"},
    {OCGC_PH_MAJOR_MARK, "major_mark"},
    {OCGC_PH_MINOR, "minor"},
    {OCGC_PH_MINOR_LOCAL_ROOTS, "minor_local_roots"},
    {OCGC_PH_MINOR_FINALIZED, "minor_finalized"},
    {OCGC_PH_EXPLICIT_GC_MAJOR_SLICE, "explicit_gc_major_slice"},
    {OCGC_PH_MAJOR_SLICE, "major_slice"},
    {OCGC_PH_MAJOR_FINISH_CYCLE, "major_finish_cycle"},
    {OCGC_PH_MINOR_REMEMBERED_SET, "minor_remembered_set"},
    {OCGC_PH_COMPACT, "compact"},
  };
  static const struct { unsigned id; const char *name; } ct[] = {
    {OCGC_CT_FORCE_MINOR_ALLOC_SMALL, "force_minor_alloc_small"},
    {OCGC_CT_FORCE_MINOR_MAKE_VECT, "force_minor_make_vect"},
    {OCGC_CT_FORCE_MINOR_SET_MINOR_HEAP_SIZE, "force_minor_set_minor_heap_size"},
    {OCGC_CT_FORCE_MINOR_MEMPROF, "force_minor_memprof"},
    {OCGC_CT_MINOR_PROMOTED, "minor_promoted"},
    {OCGC_CT_MINOR_ALLOCATED, "minor_allocated"},
    {OCGC_CT_REQUEST_MAJOR_ALLOC_SHR, "request_major_alloc_shr"},
    {OCGC_CT_REQUEST_MAJOR_ADJUST_GC_SPEED, "request_major_adjust_gc_speed"},
    {OCGC_CT_REQUEST_MINOR_REALLOC_REF_TABLE, "request_minor_realloc_ref_table"},
    {OCGC_CT_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE, "request_minor_realloc_ephe_ref_table"},
    {OCGC_CT_REQUEST_MINOR_REALLOC_CUSTOM_TABLE, "request_minor_realloc_custom_table"},
  };
  static const struct { unsigned id; const char *name; } lc[] = {
    {OCGC_LC_RING_START, "ring_start"},   {OCGC_LC_RING_STOP, "ring_stop"},
    {OCGC_LC_RING_PAUSE, "ring_pause"},   {OCGC_LC_RING_RESUME, "ring_resume"},
    {OCGC_LC_FORK_PARENT, "fork_parent"}, {OCGC_LC_FORK_CHILD, "fork_child"},
    {OCGC_LC_DOMAIN_SPAWN, "domain_spawn"}, {OCGC_LC_DOMAIN_TERMINATE, "domain_terminate"},
  };
  unsigned i;
  for (i = 0; i < sizeof ph / sizeof ph[0]; i++) {
    const char *n = ocgc_phase_name(OCGC_IDS_52, ph[i].id);
    ck_assert_msg(n != NULL && strcmp(n, ph[i].name) == 0, "phase %u: %s, want %s", ph[i].id,
                  n ? n : "(null)", ph[i].name);
  }
  for (i = 0; i < sizeof ct / sizeof ct[0]; i++) {
    const char *n = ocgc_counter_name(OCGC_IDS_52, ct[i].id);
    ck_assert_msg(n != NULL && strcmp(n, ct[i].name) == 0, "counter %u: %s, want %s",
                  ct[i].id, n ? n : "(null)", ct[i].name);
  }
  for (i = 0; i < sizeof lc / sizeof lc[0]; i++) {
    const char *n = ocgc_lifecycle_name(lc[i].id);
    ck_assert_msg(n != NULL && strcmp(n, lc[i].name) == 0, "lifecycle %u", lc[i].id);
  }
  /* 5.2 has 44 phases, 17 counters, 8 lifecycle events. */
  ck_assert_ptr_nonnull(ocgc_phase_name(OCGC_IDS_52, 43));
  ck_assert_ptr_null(ocgc_phase_name(OCGC_IDS_52, 44));
  ck_assert_ptr_nonnull(ocgc_counter_name(OCGC_IDS_52, 16));
  ck_assert_ptr_null(ocgc_counter_name(OCGC_IDS_52, 17));
  ck_assert_ptr_null(ocgc_lifecycle_name(8));
  /* 5.3: 48 phases and 26 counters; 5.4: 5.3's and two phases appended
   * (the ids themselves: ocaml5_ids.sh, against each release's header). */
  ck_assert_ptr_nonnull(ocgc_phase_name(OCGC_IDS_53, 47));
  ck_assert_ptr_null(ocgc_phase_name(OCGC_IDS_53, 48));
  ck_assert_ptr_nonnull(ocgc_counter_name(OCGC_IDS_53, 25));
  ck_assert_ptr_null(ocgc_counter_name(OCGC_IDS_53, 26));
  for (i = 0; i < 48; i++)
    ck_assert_str_eq(ocgc_phase_name(OCGC_IDS_54, i), ocgc_phase_name(OCGC_IDS_53, i));
  ck_assert_str_eq(ocgc_phase_name(OCGC_IDS_54, 48), "empty_minor");
  ck_assert_str_eq(ocgc_phase_name(OCGC_IDS_54, 49), "minor_ephe_clean");
  ck_assert_ptr_null(ocgc_phase_name(OCGC_IDS_54, 50));
  ck_assert_str_eq(ocgc_counter_name(OCGC_IDS_54, 25), ocgc_counter_name(OCGC_IDS_53, 25));
  ck_assert_ptr_null(ocgc_counter_name(OCGC_IDS_54, 26));
}
END_TEST

/* The producer's 5.2-to-5.3 phase translation (wire.h) maps every 5.2
 * phase to the 5.3 phase of the same name, and onto distinct ids: the
 * producer's OCGC_IDS=5.3 and the reader's names agree. */
START_TEST(phase_ids_53_match_names)
{
  unsigned id, seen[64] = {0};
  for (id = 0; ocgc_phase_name(OCGC_IDS_52, id) != NULL; id++) {
    const char *n52 = ocgc_phase_name(OCGC_IDS_52, id);
    const char *n53 = ocgc_phase_name(OCGC_IDS_53, ocgc_phase_id_53(id));
    ck_assert_msg(n53 != NULL && strcmp(n52, n53) == 0, "5.2 phase %u (%s) -> 5.3 %u (%s)", id,
                  n52, ocgc_phase_id_53(id), n53 ? n53 : "(null)");
    ck_assert_uint_lt(ocgc_phase_id_53(id), 64);
    ck_assert_uint_eq(seen[ocgc_phase_id_53(id)]++, 0);
  }
  ck_assert_uint_eq(id, 44);
  ck_assert_uint_eq(ocgc_phase_id_53(OCGC_PH_MINOR), 11);
  ck_assert_uint_eq(ocgc_phase_id_53(OCGC_PH_MAJOR_MARK), 10);
}
END_TEST

/* ---- sizes and the extension block -------------------------------------------- */

START_TEST(ext_size_values)
{
  uint64_t d;
  ck_assert_uint_eq(sizeof(struct ocgc_wire_totals), 1280);
  /* the allocation profile: a 256-byte header and 8,192 rows of 1,152 */
  ck_assert_uint_eq(OCGC_WIRE_MP_SIZE, 256 + 8192 * 1152);
  ck_assert_uint_eq(ocgc_wire_ext_size(0), 256 + 1280 + OCGC_WIRE_MP_SIZE);
  ck_assert_uint_eq(ocgc_wire_ext_size(1), 1600 + OCGC_WIRE_MP_SIZE); /* the producer's: 1 ring */
  ck_assert_uint_eq(ocgc_wire_ext_size(128), 256 + 128 * 64 + 1280 + OCGC_WIRE_MP_SIZE);
  for (d = 0; d <= 4096; d++) {
    uint64_t s = ocgc_wire_ext_size(d);
    TU_CHECK(s % 64 == 0 && s == sizeof(struct ocgc_wire_ext) +
                                     d * sizeof(struct ocgc_wire_ext_ring) +
                                     sizeof(struct ocgc_wire_totals) + OCGC_WIRE_MP_SIZE,
             "ext size for %u rings: %llu", (unsigned)d, (unsigned long long)s);
  }
}
END_TEST

/* The producer's file (ocgc_file.c fill_file): the ext block and its ring
 * and totals records fit between the header and headers_offset, aligned. */
START_TEST(ext_layout_of_producer_file)
{
  uint64_t ext_size = ocgc_wire_ext_size(1);
  uint64_t headers_offset = OCGC_WIRE_HEADER_SIZE + ext_size;
  uint64_t rings_offset = OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext);
  uint64_t totals_offset = rings_offset + sizeof(struct ocgc_wire_ext_ring);
  ck_assert_uint_eq(headers_offset, 1664 + OCGC_WIRE_MP_SIZE);
  ck_assert_uint_eq(rings_offset, 320);
  ck_assert_uint_eq(totals_offset, 384);
  /* the profile right after the totals, ending the block */
  ck_assert_uint_eq(totals_offset + sizeof(struct ocgc_wire_totals) + OCGC_WIRE_MP_SIZE,
                    headers_offset);
  ck_assert_uint_eq(headers_offset % 64, 0);
  ck_assert_uint_ge(OCGC_CAUSE_SLOTS, OCGC_CAUSE_COUNT);
}
END_TEST

/* The magic is "OCGCEXT\0" as stored little-endian. */
START_TEST(ext_magic_bytes)
{
  uint64_t m = OCGC_EXT_MAGIC;
  unsigned char b[8];
  unsigned i;
  for (i = 0; i < 8; i++) b[i] = (unsigned char)(m >> (8 * i));
  ck_assert_int_eq(memcmp(b, "OCGCEXT", 8), 0);
  ck_assert_uint_eq(OCGC_EXT_VERSION, 5);
  ck_assert_uint_eq(OCGC_WIRE_VERSION, 1);
}
END_TEST

/* A name slot holds the longest user event name the producer registers. */
START_TEST(user_event_names_fit)
{
  static const char *const names[] = {
    OCGC_UEV_SLICE_WORK, OCGC_UEV_CYCLE_START, OCGC_UEV_CYCLE_END, OCGC_UEV_FORCED_MAJOR,
    OCGC_UEV_HEAP_GROW,  OCGC_UEV_HEAP_SHRINK, OCGC_UEV_DIRECT_ALLOC, OCGC_UEV_STOP_JOIN,
  };
  unsigned i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    ck_assert_uint_lt(strlen(names[i]), OCGC_WIRE_USER_NAME_LEN);
    ck_assert_int_eq(strncmp(names[i], "ocgc.", 5), 0);
    /* none of them may be mistaken for a cause announcement */
    ck_assert_int_ne(strncmp(names[i], OCGC_UEV_CAUSE_PREFIX, strlen(OCGC_UEV_CAUSE_PREFIX)), 0);
  }
  ck_assert_uint_eq(OCGC_WIRE_USER_EVENTS, 8192);
  ck_assert_uint_eq(OCGC_WIRE_USER_NAME_LEN, 128);
  /* every user slot is addressable by the 13-bit id */
  ck_assert_uint_eq(OCGC_EV_ID(OCGC_EV_HEADER(0, 1, 0, OCGC_WIRE_USER_EVENTS - 1)),
                    OCGC_WIRE_USER_EVENTS - 1);
}
END_TEST

Suite *wire_suite(void);
Suite *wire_suite(void)
{
  Suite *s = suite_create("wire");
  TCase *tc = tcase_create("header");
  tcase_add_test(tc, header_fields_round_trip);
  tcase_add_test(tc, header_each_field_at_max);
  tcase_add_test(tc, header_reserved_bits);
  tcase_add_test(tc, header_user_flag_normalised);
  tcase_add_test(tc, header_round_trip_exhaustive);
  tcase_add_test(tc, header_max_event_words);
  suite_add_tcase(s, tc);
  tc = tcase_create("causes");
  tcase_add_test(tc, cause_every_cause_has_a_name);
  tcase_add_test(tc, cause_names_end_at_count);
  tcase_add_test(tc, cause_counter_ids_unique_and_complete);
  tcase_add_test(tc, cause_counter_round_trip);
  tcase_add_test(tc, table_rows_generate_everything);
  tcase_add_test(tc, kind_phases_are_the_52_spans);
  tcase_add_test(tc, ids_match_ocaml52);
  suite_add_tcase(s, tc);
  tc = tcase_create("sizes");
  tcase_add_test(tc, ext_size_values);
  tcase_add_test(tc, ext_layout_of_producer_file);
  tcase_add_test(tc, ext_magic_bytes);
  tcase_add_test(tc, phase_ids_53_match_names);
  tcase_add_test(tc, totals_words_cover_the_fields);
  tcase_add_test(tc, user_event_names_fit);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(wire_suite);
