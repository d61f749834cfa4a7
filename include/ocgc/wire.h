/* ocgc/wire.h - the shared-memory ring format, the one ABI that the runtime
 * producer (runtime_patch/) and every reader (libocgc, or a reader in another
 * language) must agree on.
 *
 * The file is the OCaml 5.2 "runtime events" file, version 1, plus an optional
 * ocgc extension block that stock OCaml 5 readers skip.  docs/wire-format.md is
 * the prose description of the same facts.  Everything is little-endian; all
 * fields are 64-bit words unless said otherwise; all offsets are from the
 * start of the file.
 *
 *   +------------------------------+ 0
 *   | struct ocgc_wire_header (64) |
 *   +------------------------------+ 64
 *   | ocgc extension block         |  only in files written by ocgc; stock
 *   | (struct ocgc_wire_ext, ...)  |  files have headers_offset == 64
 *   +------------------------------+ headers_offset
 *   | max_domains ring headers     |  ring_header_size_bytes each
 *   +------------------------------+ data_offset
 *   | max_domains rings            |  ring_size_bytes each
 *   +------------------------------+ custom_events_offset
 *   | 8192 user event names        |  char[128] each, NUL-terminated
 *   +------------------------------+
 *
 * Readers must take every size and offset from the header, never from the
 * constants below: OCaml 5.3 makes max_domains configurable, and the ocgc
 * producer writes max_domains = 1 (OCaml 4 has one domain).
 *
 * This header is plain C11 with no dependencies beyond <stdint.h>; it is
 * copied verbatim into the patched runtime tree by the build.
 */
#ifndef OCGC_WIRE_H
#define OCGC_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* C++ (readers are often C++ agents) spells C11's _Static_assert as
 * static_assert. */
#ifdef __cplusplus
#define OCGC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define OCGC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ---------------------------------------------------------------------- */
/* File header (identical to OCaml 5.2's runtime_events_metadata_header)  */
/* ---------------------------------------------------------------------- */

#define OCGC_WIRE_VERSION 1u          /* the only version this format has */
#define OCGC_WIRE_HEADER_SIZE 64u
#define OCGC_WIRE_USER_EVENTS 8192u   /* slots in the name table */
#define OCGC_WIRE_USER_NAME_LEN 128u  /* bytes per name, NUL included */
#define OCGC_WIRE_MAX_EVENT_WORDS 1024u /* longest event, header included */

struct ocgc_wire_header {
  uint64_t version;                /* OCGC_WIRE_VERSION */
  uint64_t max_domains;            /* number of rings in the file */
  uint64_t ring_header_size_bytes; /* stride of ring headers (80 in 5.2) */
  uint64_t ring_size_bytes;        /* stride of ring data = elements * 8 */
  uint64_t ring_size_elements;     /* words per ring, a power of two */
  uint64_t headers_offset;         /* first ring header */
  uint64_t data_offset;            /* first ring's data */
  uint64_t custom_events_offset;   /* user event name table */
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_header) == 64, "header is 64 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, version) == 0, "version");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, max_domains) == 8, "max_domains");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, ring_header_size_bytes) == 16, "rhs");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, ring_size_bytes) == 24, "rsb");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, ring_size_elements) == 32, "rse");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, headers_offset) == 40, "ho");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, data_offset) == 48, "do");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_header, custom_events_offset) == 56, "ceo");

/* Ring header of domain d, at headers_offset + d * ring_header_size_bytes.
 * head and tail are ever-increasing word counters (never wrapped); the word
 * for counter c lives at slot c & (ring_size_elements - 1).  Only the writer
 * stores them: tail with release after the event's words (pairs with the
 * reader's acquire load of tail), head with release before any old word is
 * overwritten (pairs with the reader's re-load of head after its copy). */
struct ocgc_wire_ring_header {
  uint64_t head;       /* oldest word still valid */
  uint64_t tail;       /* one past the newest complete event */
  uint64_t padding[8];
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_ring_header) == 80, "ring header is 80 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ring_header, head) == 0, "head");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ring_header, tail) == 8, "tail");

/* ---------------------------------------------------------------------- */
/* The ring folder's entries (docs/wire-format.md, "Finding the file")     */
/* ---------------------------------------------------------------------- */

/* What a producer names its entries, and what readers look for: defined
 * here once for both.  <pid>.events is a ring (the OCaml 5 name), or the
 * alias of a memory ring that stock readers open; a producer's hidden
 * entries are .ocgc-<kind>.<ns>.<pid> (<ns> the inode of its pid
 * namespace), kinds: "ring" (a memory ring's identity link), "tmp" (an
 * entry being made), "sweep" (the sweep's aside name); a memory ring is a
 * memfd named ocgc:<pid>.events, which /proc/PID/maps shows as
 * /memfd:ocgc:<pid>.events (deleted). */
#define OCGC_DIR_EVENTS_SUFFIX ".events"
#define OCGC_DIR_ENTRY_PREFIX ".ocgc-"
#define OCGC_DIR_KIND_RING "ring"
#define OCGC_DIR_KIND_TMP "tmp"
#define OCGC_DIR_KIND_SWEEP "sweep"
#define OCGC_DIR_RING_PREFIX OCGC_DIR_ENTRY_PREFIX OCGC_DIR_KIND_RING "." /* ".ocgc-ring." */
#define OCGC_DIR_TMP_PREFIX OCGC_DIR_ENTRY_PREFIX OCGC_DIR_KIND_TMP "."   /* ".ocgc-tmp." */
#define OCGC_MEMFD_NAME_PREFIX "ocgc:"
#define OCGC_MEMFD_MAPS_PREFIX "/memfd:" OCGC_MEMFD_NAME_PREFIX /* as /proc/PID/maps shows it */

/* ---------------------------------------------------------------------- */
/* Events                                                                  */
/* ---------------------------------------------------------------------- */

/* Word 0 of every event:
 *   bits 63..54  length in words, header and timestamp included
 *   bit  53      1 = user event, 0 = runtime event
 *   bits 52..49  message type
 *   bits 48..36  event id (runtime: phase/counter/lifecycle id; user: slot)
 *   bits 35..0   zero
 * Word 1: timestamp, CLOCK_MONOTONIC nanoseconds (absent in padding).
 * Then the payload. */
#define OCGC_EV_LENGTH(h) ((uint64_t)(h) >> 54)
#define OCGC_EV_IS_USER(h) ((unsigned)(((uint64_t)(h) >> 53) & 1u))
#define OCGC_EV_TYPE(h) ((unsigned)(((uint64_t)(h) >> 49) & 0xfu))
#define OCGC_EV_ID(h) ((unsigned)(((uint64_t)(h) >> 36) & 0x1fffu))
#define OCGC_EV_RESERVED_MASK ((UINT64_C(1) << 36) - 1)
#define OCGC_EV_HEADER(len, user, type, id)                                    \
  (((uint64_t)(len) << 54) | ((uint64_t)((user) ? 1 : 0) << 53) |             \
   ((uint64_t)(type) << 49) | ((uint64_t)(id) << 36))

/* Runtime message types (bit 53 clear). */
enum ocgc_wire_rt_type {
  OCGC_RT_PADDING = 0,   /* fills the gap at the end of the ring; id 0, no ts */
  OCGC_RT_LIFECYCLE = 1, /* 3 words: data (RING_STOP: 2 words, no data) */
  OCGC_RT_BEGIN = 2,     /* 2 words: phase begins */
  OCGC_RT_END = 3,       /* 2 words: phase ends */
  OCGC_RT_COUNTER = 4,   /* 3 words: value */
  OCGC_RT_ALLOC = 5      /* 22 words: 20 allocation-size buckets */
};

/* User message types (bit 53 set); the id is the name-table slot. */
enum ocgc_wire_user_type {
  OCGC_USER_UNIT = 0,       /* 2 words */
  OCGC_USER_INT = 1,        /* 3 words: value */
  OCGC_USER_SPAN_BEGIN = 2, /* 2 words */
  OCGC_USER_SPAN_END = 3,   /* 2 words */
  OCGC_USER_CUSTOM = 4      /* bytes padded to words, last byte = pad count */
};

/* OCaml 5.2 lifecycle ids. */
enum ocgc_wire_lifecycle {
  OCGC_LC_RING_START = 0,  /* data: pid */
  OCGC_LC_RING_STOP = 1,
  OCGC_LC_RING_PAUSE = 2,
  OCGC_LC_RING_RESUME = 3,
  OCGC_LC_FORK_PARENT = 4, /* data: child pid */
  OCGC_LC_FORK_CHILD = 5,  /* ocgc writes the parent pid as data; 5.2 writes 0 */
  OCGC_LC_DOMAIN_SPAWN = 6,
  OCGC_LC_DOMAIN_TERMINATE = 7
};

/* OCaml 5.2 phase ids that the ocgc producer writes.  The complete 5.2, 5.3
 * and 5.4 tables live in libocgc (ocgc_phase_name()); these are the
 * contract. */
enum ocgc_wire_phase {
  OCGC_PH_EXPLICIT_GC_SET = 0,
  OCGC_PH_EXPLICIT_GC_STAT = 1,
  OCGC_PH_EXPLICIT_GC_MINOR = 2,
  OCGC_PH_EXPLICIT_GC_MAJOR = 3,
  OCGC_PH_EXPLICIT_GC_FULL_MAJOR = 4,
  OCGC_PH_EXPLICIT_GC_COMPACT = 5,
  OCGC_PH_MAJOR = 6,
  OCGC_PH_MAJOR_SWEEP = 7,
  OCGC_PH_MAJOR_MARK_ROOTS = 8,
  OCGC_PH_MAJOR_MARK = 9,
  OCGC_PH_MINOR = 10,
  OCGC_PH_MINOR_LOCAL_ROOTS = 11,
  OCGC_PH_MINOR_FINALIZED = 12,
  OCGC_PH_EXPLICIT_GC_MAJOR_SLICE = 13,
  OCGC_PH_MAJOR_SLICE = 24,
  OCGC_PH_MAJOR_FINISH_CYCLE = 25,
  OCGC_PH_MINOR_REMEMBERED_SET = 35,
  OCGC_PH_COMPACT = 40
};

/* OCaml 5.2 counter ids that the ocgc producer writes. */
enum ocgc_wire_counter {
  OCGC_CT_FORCE_MINOR_ALLOC_SMALL = 0,
  OCGC_CT_FORCE_MINOR_MAKE_VECT = 1,
  OCGC_CT_FORCE_MINOR_SET_MINOR_HEAP_SIZE = 2,
  OCGC_CT_FORCE_MINOR_MEMPROF = 3,
  OCGC_CT_MINOR_PROMOTED = 4,   /* bytes promoted by this minor collection */
  OCGC_CT_MINOR_ALLOCATED = 5,  /* bytes allocated in the minor heap since the last */
  OCGC_CT_REQUEST_MAJOR_ALLOC_SHR = 6,
  OCGC_CT_REQUEST_MAJOR_ADJUST_GC_SPEED = 7,
  OCGC_CT_REQUEST_MINOR_REALLOC_REF_TABLE = 8,
  OCGC_CT_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE = 9,
  OCGC_CT_REQUEST_MINOR_REALLOC_CUSTOM_TABLE = 10
};

/* ---------------------------------------------------------------------- */
/* Collection kinds and causes                                             */
/* ---------------------------------------------------------------------- */

/* ---- the one table of kinds and causes -----------------------------------
 * Everything that lists kinds or causes (the enums, the names, the
 * cause->counter map, the producer's mirrors and user-event names, libocgc's
 * span classifier) is generated from the two tables below.  Add a row at the
 * end, with the next number: the numbers are ABI (the rows and columns of
 * the totals' by_cause table, which readers of older files index), so a row
 * is never renumbered or removed (tests/unit/test_wire.c pins them).  A
 * cause fits in the spare columns (OCGC_CAUSE_SLOTS); a kind would change
 * the totals' layout.
 *
 * OCGC_KIND_TABLE(X): X(SUFFIX, number, name, phase) per collection kind:
 * OCGC_KIND_<SUFFIX> = number, its short stable name, and the OCaml 5.2
 * phase id of its span (enum ocgc_wire_phase). */
#define OCGC_KIND_TABLE(X)                                                      \
  /* MINOR span: one Gc minor_collections */                                    \
  X(MINOR, 0, "minor", OCGC_PH_MINOR)                                           \
  /* MAJOR_SLICE span */                                                        \
  X(MAJOR_SLICE, 1, "major_slice", OCGC_PH_MAJOR_SLICE)                         \
  /* MAJOR_FINISH_CYCLE span: a major cycle forced to its end */                \
  X(MAJOR_FINISH, 2, "major_finish", OCGC_PH_MAJOR_FINISH_CYCLE)                \
  /* COMPACT span: one Gc compactions */                                        \
  X(COMPACTION, 3, "compaction", OCGC_PH_COMPACT)

/* OCGC_CAUSE_TABLE(X): X(SUFFIX, number, name, counter) per cause:
 * OCGC_CAUSE_<SUFFIX> = number, its short stable name (the user event that
 * carries it is OCGC_UEV_CAUSE_PREFIX + name), and the OCaml 5.2 counter id
 * that carries it instead, or OCGC_NO_COUNTER. */
#define OCGC_NO_COUNTER (-1)
#define OCGC_CAUSE_TABLE(X)                                                     \
  /* no site claimed it (a bug if seen) */                                      \
  X(UNKNOWN, 0, "unknown", OCGC_NO_COUNTER)                                     \
  /* minor heap full, allocation from OCaml */                                  \
  X(MINOR_HEAP_FULL, 1, "minor_heap_full", OCGC_CT_FORCE_MINOR_ALLOC_SMALL)     \
  /* minor heap full, allocation from C */                                      \
  X(MINOR_HEAP_FULL_C, 2, "minor_heap_full_c", OCGC_NO_COUNTER)                 \
  /* minor heap half full: scheduled slice */                                   \
  X(MAJOR_SLICE_DUE, 3, "major_slice_due", OCGC_NO_COUNTER)                     \
  /* a new major cycle must start */                                            \
  X(MAJOR_CYCLE_START, 4, "major_cycle_start", OCGC_NO_COUNTER)                 \
  /* caml_alloc_shr went over its budget */                                     \
  X(ALLOC_SHR, 5, "alloc_shr", OCGC_CT_REQUEST_MAJOR_ALLOC_SHR)                 \
  /* custom/out-of-heap resources (major) */                                    \
  X(CUSTOM_MAJOR, 6, "custom_major", OCGC_CT_REQUEST_MAJOR_ADJUST_GC_SPEED)     \
  /* custom blocks in the minor heap */                                         \
  X(CUSTOM_MINOR, 7, "custom_minor", OCGC_NO_COUNTER)                           \
  /* remembered set (ref table) overflow */                                     \
  X(REF_TABLE, 8, "ref_table", OCGC_CT_REQUEST_MINOR_REALLOC_REF_TABLE)         \
  /* ephemeron ref table overflow */                                            \
  X(EPHE_REF_TABLE, 9, "ephe_ref_table", OCGC_CT_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE) \
  /* custom table overflow */                                                   \
  X(CUSTOM_TABLE, 10, "custom_table", OCGC_CT_REQUEST_MINOR_REALLOC_CUSTOM_TABLE) \
  /* Array.make of a young value, major array */                                \
  X(MAKE_VECT, 11, "make_vect", OCGC_CT_FORCE_MINOR_MAKE_VECT)                  \
  /* Weak/Ephemeron blit or get_copy */                                         \
  X(WEAK, 12, "weak", OCGC_NO_COUNTER)                                          \
  /* Gc.Memprof sampling */                                                     \
  X(MEMPROF, 13, "memprof", OCGC_CT_FORCE_MINOR_MEMPROF)                        \
  /* minor heap size changed */                                                 \
  X(MINOR_HEAP_RESIZE, 14, "minor_heap_resize", OCGC_CT_FORCE_MINOR_SET_MINOR_HEAP_SIZE) \
  /* allocation policy changed by Gc.set */                                     \
  X(POLICY_CHANGE, 15, "policy_change", OCGC_NO_COUNTER)                        \
  /* Gc.minor/major/full_major/compact/... */                                   \
  X(EXPLICIT, 16, "explicit", OCGC_NO_COUNTER)                                  \
  /* heap finalised at exit (OCAMLRUNPARAM=c) */                                \
  X(SHUTDOWN, 17, "shutdown", OCGC_NO_COUNTER)                                  \
  /* automatic compaction: free space over max */                               \
  X(HEAP_OVERHEAD, 18, "heap_overhead", OCGC_NO_COUNTER)                        \
  /* caml_minor_collection() from C code */                                     \
  X(C_CALL, 19, "c_call", OCGC_NO_COUNTER)

/* Row helpers (not API). */
#define OCGC_ROW_ENUM_KIND_(suffix, num, name, phase) OCGC_KIND_##suffix = num,
#define OCGC_ROW_ENUM_CAUSE_(suffix, num, name, counter) OCGC_CAUSE_##suffix = num,
#define OCGC_ROW_ONE_(suffix, ...) +1
#define OCGC_ROW_NAME_KIND_(suffix, num, name, phase) case OCGC_KIND_##suffix: return name;
#define OCGC_ROW_NAME_CAUSE_(suffix, num, name, counter) case OCGC_CAUSE_##suffix: return name;
#define OCGC_ROW_COUNTER_(suffix, num, name, counter) case OCGC_CAUSE_##suffix: return counter;

/* What the producer counts as one collection.  Each collection is a span in
 * the ring and is preceded, at the same timestamp, by exactly one cause
 * event. */
enum ocgc_kind {
  OCGC_KIND_TABLE(OCGC_ROW_ENUM_KIND_)
  OCGC_KIND_COUNT = 0 OCGC_KIND_TABLE(OCGC_ROW_ONE_)
};

/* Short stable name of a collection kind ("minor", "major_slice",
 * "major_finish", "compaction"), or NULL.  (A switch: two rows with one
 * number do not compile.) */
static inline const char *ocgc_kind_name(unsigned kind) {
  switch (kind) {
  OCGC_KIND_TABLE(OCGC_ROW_NAME_KIND_)
  default: return NULL;
  }
}

/* Why a collection ran.  Where OCaml 5.2 has a counter for the concept, the
 * cause is written as that counter with value 1 (ocgc_cause_counter());
 * otherwise as the user int event "ocgc.cause.<name>" with value 1.  The
 * numbering is ocgc's own and indexes the totals' by_cause table. */
enum ocgc_cause {
  OCGC_CAUSE_TABLE(OCGC_ROW_ENUM_CAUSE_)
  OCGC_CAUSE_COUNT = 0 OCGC_CAUSE_TABLE(OCGC_ROW_ONE_)
};
#define OCGC_CAUSE_SLOTS 32u /* by_cause columns in the totals; room to grow */

/* The numbering is dense (each number below the count, none twice: see the
 * switches) and fits the totals. */
#define OCGC_ROW_KIND_DENSE_(suffix, num, name, phase)                          \
  OCGC_STATIC_ASSERT(num < OCGC_KIND_COUNT, "kind " #suffix " numbered past the count");
#define OCGC_ROW_CAUSE_DENSE_(suffix, num, name, counter)                       \
  OCGC_STATIC_ASSERT(num < OCGC_CAUSE_COUNT, "cause " #suffix " numbered past the count");
OCGC_KIND_TABLE(OCGC_ROW_KIND_DENSE_)
OCGC_CAUSE_TABLE(OCGC_ROW_CAUSE_DENSE_)
OCGC_STATIC_ASSERT(OCGC_CAUSE_COUNT <= OCGC_CAUSE_SLOTS, "cause slots");
OCGC_STATIC_ASSERT(OCGC_KIND_COUNT == 4, "the kinds are the totals' rows: a fifth changes the layout");

/* The 5.2 counter id that carries a cause, or -1 (OCGC_NO_COUNTER) for a
 * user event. */
static inline int ocgc_cause_counter(unsigned cause) {
  switch (cause) {
  OCGC_CAUSE_TABLE(OCGC_ROW_COUNTER_)
  default: return OCGC_NO_COUNTER;
  }
}

/* Short stable name of a cause: the user event is "ocgc.cause." + name. */
static inline const char *ocgc_cause_name(unsigned cause) {
  switch (cause) {
  OCGC_CAUSE_TABLE(OCGC_ROW_NAME_CAUSE_)
  default: return NULL;
  }
}

/* User events (type OCGC_USER_INT) that the ocgc producer registers, besides
 * "ocgc.cause.<name>" for each cause without a 5.2 counter.  Readers find
 * them by name in the name table, never by slot. */
#define OCGC_UEV_CAUSE_PREFIX "ocgc.cause."
#define OCGC_UEV_SLICE_WORK "ocgc.major_slice.work"   /* words of work ordered for the slice */
#define OCGC_UEV_CYCLE_START "ocgc.major_cycle.start" /* index of the cycle starting (1-based) */
#define OCGC_UEV_CYCLE_END "ocgc.major_cycle.end"     /* Gc major_collections after it */
#define OCGC_UEV_FORCED_MAJOR "ocgc.forced_major"     /* Gc forced_major_collections after it */
#define OCGC_UEV_HEAP_GROW "ocgc.heap.grow"           /* heap words after growing */
#define OCGC_UEV_HEAP_SHRINK "ocgc.heap.shrink"       /* heap words after shrinking */
#define OCGC_UEV_DIRECT_ALLOC "ocgc.major_alloc.direct" /* words allocated directly in the
                                                          major heap since the last report */
/* A unit event (OCGC_USER_UNIT) written just before the cause event of a
 * collection that continues the stop of the mutator the previous collection
 * began: the runtime ran no OCaml code between them (a minor collection and
 * the major slice of one caml_gc_dispatch, the collections of one Gc.* call).
 * A collection without it begins a new stop.  A file whose name table has
 * this name marks every stop so; readers group collections into pauses by
 * it (libocgc's OCGC_PAUSE_MARKS). */
#define OCGC_UEV_STOP_JOIN "ocgc.stop.join"

/* ---------------------------------------------------------------------- */
/* The ocgc extension block                                               */
/* ---------------------------------------------------------------------- */

/* "OCGCEXT\0" read as a little-endian word. */
#define OCGC_EXT_MAGIC UINT64_C(0x005458454347434f)
/* 2: the totals carry the GC settings (struct ocgc_wire_totals).
 * 3: flags say which clock timed the events and which sub-phase spans
 *    were written (OCGC_EXT_CLOCK_TSC, OCGC_EXT_PHASES_*).
 * 4: the totals carry live_words, the heap when the last major cycle
 *    ended, and program_memprof.
 * 5: the allocation profile follows the totals (struct ocgc_wire_mp). */
#define OCGC_EXT_VERSION 5u

enum ocgc_ext_state {
  OCGC_STATE_RUNNING = 1, /* the producer is live */
  OCGC_STATE_EXITED = 2   /* RING_STOP written, process exited normally */
};

/* Which numbering of runtime phase ids a producer wrote (ext.ids).  OCaml
 * 5.3 renumbered the phases (it inserted memprof phases) without changing
 * the file version, so only the producer can say; the counter and
 * lifecycle ids our producer writes are the same in both.  Files made
 * before this field have 0 there: 5.2. */
enum ocgc_ext_ids {
  OCGC_EXT_IDS_52 = 1,
  OCGC_EXT_IDS_53 = 2
};

/* The 5.3 id of the phase whose 5.2 id is [id52]: 5.3 inserted
 * major_memprof_roots after major_mark_roots (8), minor_memprof_roots and
 * minor_memprof_clean after minor_local_roots (11), and
 * major_memprof_clean after major_finish_sweeping (33).  libocgc's names of
 * both numberings are tested against it. */
static inline unsigned ocgc_phase_id_53(unsigned id52) {
  return id52 < 9 ? id52 : id52 < 12 ? id52 + 1 : id52 < 34 ? id52 + 3 : id52 + 4;
}

enum ocgc_ext_flags {
  OCGC_EXT_NATIVE = 1u << 0,    /* native-code program */
  OCGC_EXT_BYTECODE = 1u << 1   /* bytecode program (ocamlrun_ocgc) */
};

/* ext_version >= 3: flags bits 2-3, the clock that timed the events. */
#define OCGC_EXT_CLOCK_SHIFT 2
#define OCGC_EXT_CLOCK_MASK (3u << OCGC_EXT_CLOCK_SHIFT)
enum ocgc_ext_clock {
  OCGC_EXT_CLOCK_UNSTATED = 0,  /* ext_version < 3 */
  /* Every timestamp is a CLOCK_MONOTONIC reading: no invariant TSC, the
   * kernel's clocksource is not one the TSC drives, or OCGC_TSC=0. */
  OCGC_EXT_CLOCK_MONOTONIC = 1,
  /* Every timestamp is one TSC read: the newest CLOCK_MONOTONIC reading
   * plus the cycles since, at a rate measured against that clock; the
   * clock is read again at least every millisecond (and in the first 20 ms,
   * until the rate is known, every timestamp is a clock reading). */
  OCGC_EXT_CLOCK_TSC = 2
};

/* ext_version >= 3: flags bits 4-5, which sub-phase spans inside
 * collections the producer writes (OCGC_PHASES); the collections' own
 * spans, counters and Gc.* spans are always written. */
#define OCGC_EXT_PHASES_SHIFT 4
#define OCGC_EXT_PHASES_MASK (3u << OCGC_EXT_PHASES_SHIFT)
enum ocgc_ext_phases {
  OCGC_EXT_PHASES_UNSTATED = 0, /* ext_version < 3: every phase */
  OCGC_EXT_PHASES_NONE = 1,     /* OCGC_PHASES=0 */
  OCGC_EXT_PHASES_MEASURED = 2, /* OCGC_PHASES=1, the default: the phases
                                   that last longer than their events cost
                                   (not minor_remembered_set, minor_finalized) */
  OCGC_EXT_PHASES_ALL = 3       /* OCGC_PHASES=2: every phase */
};

/* At offset 64 in files written by ocgc.  A reader recognises it by
 * headers_offset > 64 and the magic; it must check ext_size, rings_offset and
 * totals_offset against the file size before using them. */
struct ocgc_wire_ext {
  uint64_t magic;              /* OCGC_EXT_MAGIC */
  uint64_t ext_version;        /* OCGC_EXT_VERSION; readers accept >= 1 */
  uint64_t ext_size;           /* bytes from offset 64 to headers_offset */
  uint64_t flags;              /* enum ocgc_ext_flags */
  uint64_t pid;                /* the producer's pid */
  uint64_t start_time;         /* field 22 of /proc/PID/stat (clock ticks after
                                  boot): pid + start_time name one process */
  char boot_id[40];            /* /proc/sys/kernel/random/boot_id, NUL-ended */
  int64_t realtime_offset_ns;  /* CLOCK_REALTIME - CLOCK_MONOTONIC at creation */
  uint64_t created_ns;         /* CLOCK_MONOTONIC when the file was made */
  uint64_t state;              /* enum ocgc_ext_state; release-stored */
  uint64_t exited_ns;          /* CLOCK_MONOTONIC at exit, else 0 */
  char ocaml_version[16];      /* "4.13.1", NUL-ended */
  char ocgc_version[16];       /* producer's ocgc version, NUL-ended */
  char program[64];            /* executable name, NUL-ended, may be cut */
  uint64_t cause_slots;        /* columns of totals.by_cause (OCGC_CAUSE_SLOTS) */
  uint64_t kind_count;         /* rows of totals.by_cause (OCGC_KIND_COUNT) */
  uint64_t rings_offset;       /* file offset of struct ocgc_wire_ext_ring[max_domains] */
  uint64_t totals_offset;      /* file offset of struct ocgc_wire_totals */
  uint64_t ids;                /* enum ocgc_ext_ids: the numbering of phase ids */
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_ext) == 256, "ext fixed part is 256 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, magic) == 0, "magic");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, ext_version) == 8, "ext_version");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, ext_size) == 16, "ext_size");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, flags) == 24, "flags");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, pid) == 32, "pid");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, start_time) == 40, "start_time");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, boot_id) == 48, "boot_id");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, realtime_offset_ns) == 88, "rt offset");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, created_ns) == 96, "created_ns");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, state) == 104, "state");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, exited_ns) == 112, "exited_ns");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, ocaml_version) == 120, "ocaml_version");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, ocgc_version) == 136, "ocgc_version");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, program) == 152, "program");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, cause_slots) == 216, "cause_slots");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, kind_count) == 224, "kind_count");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, rings_offset) == 232, "rings_offset");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, totals_offset) == 240, "totals_offset");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext, ids) == 248, "ids");

/* Per-ring loss accounting, one per domain.  (head_pos, head_events) is a
 * seqlock-protected pair: the writer makes seq odd, stores both, makes seq
 * even (release), and only then overwrites old words.  A reader that finds
 * its position behind head_pos has lost exactly head_events minus the number
 * of events it had accounted for.  Only the overwrite path touches it. */
struct ocgc_wire_ext_ring {
  uint64_t seq;            /* seqlock generation: odd while being updated */
  uint64_t head_pos;       /* copy of the ring's head word counter */
  uint64_t head_events;    /* events that start before head_pos (dropped) */
  uint64_t written_events; /* events written (padding not counted), as of
                              the end of the last collection or overwrite;
                              exact once the producer has exited */
  uint64_t reserved[4];
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_ext_ring) == 64, "ext ring is 64 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext_ring, head_pos) == 8, "head_pos");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext_ring, head_events) == 16, "head_events");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_ext_ring, written_events) == 24, "written");

/* Cumulative totals kept by the producer: exact even when the ring has
 * overflowed.  The Gc-named fields mirror the runtime's own Gc.quick_stat
 * counters (minor_words, as Gc.quick_stat's, counts the words in the minor
 * heap at the publication).  seq is
 * a seqlock: odd while the producer updates, so a reader retries until it
 * reads the same even value before and after. */
struct ocgc_wire_totals {
  uint64_t seq;
  uint64_t minor_collections;        /* Gc minor_collections */
  uint64_t major_collections;        /* Gc major_collections (cycles ended) */
  uint64_t compactions;              /* Gc compactions */
  uint64_t forced_major_collections; /* Gc forced_major_collections */
  uint64_t major_slices;             /* MAJOR_SLICE spans */
  uint64_t minor_words;              /* Gc minor_words at the last update */
  uint64_t promoted_words;           /* Gc promoted_words */
  uint64_t major_words;              /* Gc major_words at the last update */
  uint64_t direct_major_words;       /* words allocated straight in the major heap */
  uint64_t heap_words;               /* Gc heap_words */
  uint64_t top_heap_words;           /* Gc top_heap_words */
  uint64_t heap_chunks;              /* Gc heap_chunks */
  uint64_t gc_time_ns;               /* time inside outermost collections */
  uint64_t kind_time_ns[OCGC_KIND_COUNT]; /* time per kind, outermost of the kind:
                                             they partition gc_time_ns, except that
                                             a slice's own compaction (a forced cycle
                                             end and a compaction run from inside the
                                             slice) counts in all three (docs/wire-
                                             format.md, "How the times nest") */
  uint64_t updated_ns;               /* CLOCK_MONOTONIC of the last update */
  /* The GC settings (Gc.get) as of the last update; ext_version >= 2 only
   * (version 1 left these words zero).  They live here because the producer
   * publishes nothing between collections, and a change of the minor heap or
   * of the policy is itself a collection. */
  uint64_t minor_heap_words;         /* Gc minor_heap_size */
  uint64_t space_overhead;           /* Gc space_overhead (percent) */
  uint64_t max_overhead;             /* Gc max_overhead (percent; 1000000: never compact) */
  uint64_t allocation_policy;        /* Gc allocation_policy (0 next, 1 first, 2 best fit) */
  /* The words of the major heap not on its free list when the last major
   * cycle ended (its sweep done): Gc.stat's heap_words - free_words at that
   * moment, i.e. its live words and fragments; the heap after GC, what an
   * operator watches for a leak.  0: no cycle has ended yet (and in files
   * of ext_version < 4, which left the word zero). */
  uint64_t live_words;
  /* 1 while the program's own statistical memory profiler (Gc.Memprof)
   * runs, else 0 (ext_version >= 4). */
  uint64_t program_memprof;
  uint64_t reserved[7];
  uint64_t by_cause[OCGC_KIND_COUNT][OCGC_CAUSE_SLOTS]; /* collections */
};
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, minor_collections) == 8, "t.minor");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, major_collections) == 16, "t.major");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, compactions) == 24, "t.compact");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, forced_major_collections) == 32, "t.forced");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, major_slices) == 40, "t.slices");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, minor_words) == 48, "t.minor_words");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, promoted_words) == 56, "t.promoted");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, major_words) == 64, "t.major_words");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, direct_major_words) == 72, "t.direct");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, heap_words) == 80, "t.heap");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, top_heap_words) == 88, "t.top");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, heap_chunks) == 96, "t.chunks");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, gc_time_ns) == 104, "t.gc_time");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, kind_time_ns) == 112, "t.kind_time");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, updated_ns) == 144, "t.updated");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, minor_heap_words) == 152, "t.minor_heap");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, allocation_policy) == 176, "t.policy");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, live_words) == 184, "t.live");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, program_memprof) == 192, "t.memprof");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_totals, by_cause) == 256, "t.by_cause");
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_totals) == 256 + 8 * OCGC_KIND_COUNT * OCGC_CAUSE_SLOTS,
               "totals size");

/* The one-word fields of the totals, X(field) each: all but seq,
 * kind_time_ns, reserved and by_cause.  libocgc's struct ocgc_totals has the
 * same names; the producer stores and readers load field by field from it. */
#define OCGC_TOTALS_WORDS(X)                                                    \
  X(minor_collections) X(major_collections) X(compactions)                      \
  X(forced_major_collections) X(major_slices) X(minor_words) X(promoted_words)  \
  X(major_words) X(direct_major_words) X(heap_words) X(top_heap_words)          \
  X(heap_chunks) X(gc_time_ns) X(updated_ns)
/* The GC settings' words, X(field) each (ext_version >= 2). */
#define OCGC_CONFIG_WORDS(X) X(minor_heap_words) X(space_overhead) X(max_overhead) \
  X(allocation_policy)
#define OCGC_ROW_WORD_(field) +1
OCGC_STATIC_ASSERT((0 OCGC_TOTALS_WORDS(OCGC_ROW_WORD_)) ==
                       (offsetof(struct ocgc_wire_totals, kind_time_ns) -
                        offsetof(struct ocgc_wire_totals, minor_collections)) / 8 + 1,
                   "OCGC_TOTALS_WORDS lists every one-word field");

/* ---------------------------------------------------------------------- */
/* The allocation profile (ext_version >= 5)                               */
/* ---------------------------------------------------------------------- */

/* Right after the totals (at totals_offset + sizeof(struct ocgc_wire_totals),
 * inside ext_size): a header, then mp.rows rows of mp.row_size bytes.  Row 0
 * is the overflow row; stack rows are taken in order from row 1, so the rows
 * in use are rows 0 .. stacks.  A row whose blocks are all dead and which
 * has not changed for OCGC_MP_RECYCLE_NS may be given to another stack when
 * no row is free: its generation word grows, and its counts start again
 * from 0.  Only the producer writes, but for `control` and the lease
 * slots, which a permitted process writes to change the rate
 * (docs/wire-format.md, "The allocation profile").  Everything but those
 * is under the seqlock seq, as the totals are.  The file's pages of the
 * rows are written (so committed) only as rows are taken. */
#define OCGC_MP_MAGIC UINT64_C(0x464f52504347434f) /* "OCGCPROF" read as a little-endian word */
#define OCGC_MP_DEPTH 128u  /* frames kept per stack, innermost first (after folding) */
#define OCGC_MP_ROWS 8192u  /* rows, the overflow row included */
/* A row unchanged this long, none of its blocks followed, may be recycled. */
#define OCGC_MP_RECYCLE_NS (UINT64_C(300) * 1000000000u)
/* mp.features bits. */
#define OCGC_MP_FEATURE_LIVE UINT64_C(1) /* rows carry `live`, `generation` and
                                            `changed_ns`; the header live_cycle */

/* What a sampled block is. */
enum ocgc_mp_kind {
  OCGC_MP_MINOR = 0,   /* allocated in the minor heap */
  OCGC_MP_MAJOR = 1,   /* allocated straight in the major heap */
  OCGC_MP_CUSTOM = 2,  /* a custom block's memory outside the heap */
  OCGC_MP_MARSHAL = 3  /* made by unmarshalling */
};

/* Whether and how the producer samples (mp.state). */
enum ocgc_mp_state {
  OCGC_MP_OFF = 0,         /* no sampling (rate_bytes 0) */
  OCGC_MP_ON = 1,          /* sampling at rate_bytes */
  OCGC_MP_ASIDE = 2,       /* rate set, but the program's own Gc.Memprof runs:
                              ocgc takes no sample meanwhile */
  OCGC_MP_UNAVAILABLE = 3  /* a bytecode program: never sampled */
};

/* What the producer did with the last control word it read (mp.control_result). */
enum ocgc_mp_control_result {
  OCGC_MP_CONTROL_NONE = 0,      /* no control word read yet */
  OCGC_MP_CONTROL_APPLIED = 1,   /* its rate is in force */
  OCGC_MP_CONTROL_REFUSED = 2,   /* its rate is out of bounds: nothing changed */
  OCGC_MP_CONTROL_BYTECODE = 3   /* a bytecode program: nothing changed */
};

/* The control word: bits 0..39 the rate in bytes (0: off), bits 40..63 a
 * request number the writer bumps, so that asking again for the rate in
 * force is a new request.  The producer reads it at the end of each minor
 * collection and acts when it differs from control_seen. */
#define OCGC_MP_CONTROL_RATE_MASK ((UINT64_C(1) << 40) - 1)
#define OCGC_MP_CONTROL_REQ_SHIFT 40
#define OCGC_MP_RATE_MIN 64u                  /* bytes: smaller is refused */
#define OCGC_MP_RATE_MAX (UINT64_C(1) << 30)  /* bytes: larger is refused */
#define OCGC_MP_RATE_DEFAULT (512u * 1024u)   /* OCGC_MEMPROF=on: Go's MemProfileRate */

/* Leases: a rate asked for a while (docs/wire-format.md, "Leases").  Header
 * words reserved[0 .. OCGC_MP_LEASE_SLOTS - 1] are the slots, written by
 * readers only with an 8-byte compare-and-swap through a shared mapping of
 * the file (claim 0 -> word, renew word -> word with the beat bumped,
 * release word -> 0), and by the producer only to free a slot it found
 * dead (the same compare-and-swap, word -> 0).  A slot word: bits 0..31 the
 * rate in bytes (0: the slot is free), bits 32..53 the holder's pid (for
 * display only), bits 54..63 a beat the holder bumps to renew.  The
 * producer reads the slots where it reads the control word, notes in its
 * own clock when each word last changed, and samples at the finest rate
 * (fewest bytes) among the base rate (OCGC_MEMPROF's, or the control
 * word's) and the slots that changed within lease_ns; a slot unchanged for
 * longer is dead, and freed.  What it found is published under seq in
 * reserved[OCGC_MP_LEASE_STATE ..]. */
#define OCGC_MP_LEASE_SLOTS 4u
#define OCGC_MP_LEASE_RATE_MASK UINT64_C(0xffffffff)
#define OCGC_MP_LEASE_PID_SHIFT 32
#define OCGC_MP_LEASE_PID_MASK ((UINT64_C(1) << 22) - 1)
#define OCGC_MP_LEASE_BEAT_SHIFT 54
#define OCGC_MP_LEASE_WORD(rate, pid, beat)                                              \
  (((uint64_t)(rate) & OCGC_MP_LEASE_RATE_MASK) |                                        \
   (((uint64_t)(pid) & OCGC_MP_LEASE_PID_MASK) << OCGC_MP_LEASE_PID_SHIFT) |             \
   ((uint64_t)(beat) << OCGC_MP_LEASE_BEAT_SHIFT))
#define OCGC_MP_LEASE_RATE(w) ((w) & OCGC_MP_LEASE_RATE_MASK)
#define OCGC_MP_LEASE_PID(w) (((w) >> OCGC_MP_LEASE_PID_SHIFT) & OCGC_MP_LEASE_PID_MASK)
/* Producer-written words (under seq), as indexes of reserved[]: */
#define OCGC_MP_LEASE_STATE 4u   /* bits 0..3: the slots alive; bit 8: rate_bytes is a lease's */
#define OCGC_MP_LEASE_REFUSED 5u /* slot words refused (a rate out of bounds) */
#define OCGC_MP_LEASE_BASE 6u    /* the base rate: OCGC_MEMPROF's or the control word's */
#define OCGC_MP_LEASE_NS 7u      /* the producer's lease: a slot unchanged longer is dead */
#define OCGC_MP_LEASE_ALIVE_MASK UINT64_C(0xf)
#define OCGC_MP_LEASE_IN_FORCE (UINT64_C(1) << 8)

/* Row meta word: bits 0..7 frames used, bit 8 the stack was cut (deeper than
 * OCGC_MP_DEPTH frames once folded, or than the producer walks), bit 9 the overflow row, bits 16..19 enum ocgc_mp_kind,
 * bits 24..31 the allocation's index in a combined allocation (several
 * blocks that one allocation point makes at once share a return address). */
#define OCGC_MP_META_DEPTH(m) ((unsigned)((m) & 0xffu))
#define OCGC_MP_META_CUT (UINT64_C(1) << 8)
#define OCGC_MP_META_OVERFLOW (UINT64_C(1) << 9)
#define OCGC_MP_META_KIND(m) ((unsigned)(((m) >> 16) & 0xfu))
#define OCGC_MP_META_INDEX(m) ((unsigned)(((m) >> 24) & 0xffu))
#define OCGC_MP_META(depth, cut, kind, index)                                   \
  ((uint64_t)(depth) | ((cut) ? OCGC_MP_META_CUT : 0) | ((uint64_t)(kind) << 16) | \
   ((uint64_t)(index) << 24))

/* Sampled figures (alloc, promoted, freed only grow; live is a gauge).  A block of h words (header
 * included) drawn n times at a rate of W words per sample stands for n * W
 * words and n * W / h blocks (each word is drawn with probability 1/W). */
struct ocgc_wire_mp_counts {
  uint64_t samples;       /* sum of n */
  uint64_t words;         /* sum of n * W: the estimate of words */
  uint64_t blocks_x1024;  /* sum of n * W * 1024 / h: the estimate of blocks, x1024 */
};

struct ocgc_wire_mp_row {
  uint64_t meta;                        /* 0: not in use */
  uint64_t reserved0;
  struct ocgc_wire_mp_counts alloc;     /* allocated */
  struct ocgc_wire_mp_counts promoted;  /* minor samples that reached the major heap */
  struct ocgc_wire_mp_counts freed;     /* found dead */
  struct ocgc_wire_mp_counts live;      /* in use: known live at the end of a
                                           marking, not found dead since */
  uint64_t generation;                  /* grows each time the row is recycled */
  uint64_t changed_ns;                  /* CLOCK_MONOTONIC of the last change */
  uint64_t frames[OCGC_MP_DEPTH];       /* return addresses, innermost first */
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_mp_row) == 1152, "profile row is 1152 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp_row, live) == 88, "row.live");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp_row, generation) == 112, "row.generation");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp_row, alloc) == 16, "row.alloc");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp_row, promoted) == 40, "row.promoted");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp_row, freed) == 64, "row.freed");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp_row, frames) == 128, "row.frames");

struct ocgc_wire_mp {
  uint64_t magic;          /* OCGC_MP_MAGIC */
  uint64_t size;           /* bytes: this header and the rows */
  uint64_t rows;           /* rows (OCGC_MP_ROWS), the overflow row included */
  uint64_t row_size;       /* bytes per row */
  uint64_t depth;          /* frames per row (OCGC_MP_DEPTH) */
  uint64_t seq;            /* seqlock: odd while the producer updates */
  uint64_t state;          /* enum ocgc_mp_state */
  uint64_t rate_bytes;     /* mean bytes between samples in force, 0: off */
  uint64_t rate_since_ns;  /* CLOCK_MONOTONIC when rate_bytes took its value */
  uint64_t rate_changes;   /* times the rate changed */
  uint64_t stacks;         /* stack rows in use (rows 1 .. stacks) */
  uint64_t samples;        /* all samples, the overflow row's included */
  uint64_t words;          /* their estimate of words */
  uint64_t overflow_samples; /* samples counted in row 0: the table was full */
  uint64_t cut_samples;    /* samples whose stack was cut */
  uint64_t unfollowed;     /* sampled blocks not followed (too many at once):
                              their promotion and death are never counted */
  uint64_t followed;       /* sampled blocks followed now */
  uint64_t control;        /* written by others (OCGC_MP_CONTROL_*), never by
                              the producer */
  uint64_t control_seen;   /* the last control word the producer acted on */
  uint64_t control_result; /* enum ocgc_mp_control_result */
  uint64_t control_refused; /* control words refused */
  uint64_t reserved[8];    /* [0..7]: the leases (OCGC_MP_LEASE_*) */
  uint64_t live_cycle;     /* markings ended: rows' live is as of the last */
  uint64_t live_cycle_ns;  /* CLOCK_MONOTONIC when it ended, 0: none yet */
  uint64_t features;       /* OCGC_MP_FEATURE_* */
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_mp) == 256, "profile header is 256 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp, seq) == 40, "mp.seq");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp, stacks) == 80, "mp.stacks");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp, control) == 136, "mp.control");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp, control_refused) == 160, "mp.refused");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp, live_cycle) == 232, "mp.live_cycle");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_mp, features) == 248, "mp.features");

/* Bytes of the profile: header and rows. */
#define OCGC_WIRE_MP_SIZE                                                       \
  ((uint64_t)sizeof(struct ocgc_wire_mp) + (uint64_t)OCGC_MP_ROWS * sizeof(struct ocgc_wire_mp_row))

/* ---------------------------------------------------------------------- */
/* Recordings: the flight block (docs/wire-format.md, "Recordings")        */
/* ---------------------------------------------------------------------- */

/* A recording is a ring file (its bytes up to the end of the user-event
 * name table, custom_events_offset + OCGC_WIRE_USER_EVENTS *
 * OCGC_WIRE_USER_NAME_LEN, itself a multiple of 8) followed, at that very
 * offset, by a flight block: this header, then `nseconds` records of
 * `second_size` bytes at `header_size` from the block's start.  Readers of
 * the ring (libocgc, stock OCaml 5) take every offset from the header and
 * never look past the name table.  Strings are NUL-ended within their
 * field (a reader refuses a block where one is not); the block is written
 * once, by ocgc_flight_write(), and never changes. */
#define OCGC_FLIGHT_MAGIC UINT64_C(0x00544c464347434f) /* "OCGCFLT\0" read as a
                                                           little-endian word */
#define OCGC_FLIGHT_BLOCK_VERSION 1u
#define OCGC_FLIGHT_MAX_SECONDS 3600u /* nseconds at most (OCGC_FLIGHT_MAX_WINDOW_S) */

struct ocgc_wire_flight {
  uint64_t magic;          /* OCGC_FLIGHT_MAGIC */
  uint64_t version;        /* OCGC_FLIGHT_BLOCK_VERSION; readers accept >= 1 */
  uint64_t size;           /* bytes of the block: header_size + nseconds * second_size */
  uint64_t header_size;    /* bytes of this header (1024; a later version's may be more) */
  uint64_t second_size;    /* bytes per second (256; a later version's may be more) */
  uint64_t nseconds;       /* seconds that follow, oldest first (<= OCGC_FLIGHT_MAX_SECONDS) */
  uint64_t reason;         /* enum ocgc_flight_reason (ocgc/flight.h) */
  uint64_t recorded_ns;    /* CLOCK_REALTIME when the recording was made */
  uint64_t window_s;       /* the history's window, seconds */
  uint64_t pid;            /* the process */
  uint64_t start_ticks;    /* its start (/proc/PID/stat field 22): with pid, its identity */
  uint64_t rss_bytes;      /* resident memory at the last read while it lived (0: unknown) */
  /* how it ended (struct ocgc_exit; all 0 when it did not, or for code -1) */
  uint64_t exit_known, exit_how;
  int64_t exit_code;       /* signed: -1 when it did not exit */
  uint64_t exit_signal, exit_core_dumped, exit_oom_killed, exit_mark, exit_gone_ns;
  /* its memory cgroup at the end (struct ocgc_memcg; known 0: none) */
  uint64_t memcg_known, memcg_v2, memcg_usage, memcg_limit, memcg_peak, memcg_oom_kills;
  uint64_t reserved[4];
  char detail[128];        /* the trigger in words, NUL-ended ("" none) */
  char program[80];        /* the program, as the watch names it, NUL-ended */
  char exe[256];           /* its executable's path, NUL-ended, may be cut */
  char build_id[64];       /* its executable's GNU build id in hex, NUL-ended ("" none) */
  char memcg_path[256];    /* its memory cgroup's path, NUL-ended, may be cut */
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_flight) == 1024, "flight header is 1024 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, size) == 16, "f.size");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, nseconds) == 40, "f.nseconds");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, reason) == 48, "f.reason");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, pid) == 72, "f.pid");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, exit_known) == 96, "f.exit_known");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, exit_code) == 112, "f.exit_code");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, exit_gone_ns) == 152, "f.gone");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, memcg_known) == 160, "f.memcg_known");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, memcg_oom_kills) == 200, "f.oom_kills");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, detail) == 240, "f.detail");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, program) == 368, "f.program");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, exe) == 448, "f.exe");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, build_id) == 704, "f.build_id");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight, memcg_path) == 768, "f.memcg_path");

/* One second of the history: [t, t + 1 s) of the producer's clock. */
struct ocgc_wire_flight_second {
  uint64_t t;              /* its start, ns, a multiple of 10^9 */
  uint64_t pauses, pause_ns, max_ns; /* pauses that ended in it, their time, the longest */
  uint64_t coll[OCGC_KIND_COUNT];    /* collections by kind */
  uint64_t alloc, promo;   /* bytes allocated and promoted */
  uint64_t heap, top_heap; /* the major heap at its last pause (0: no figure) */
  uint64_t lost;           /* events lost */
  uint64_t rss;            /* resident memory at its last sample (0: none) */
  uint64_t cg_usage;       /* memory cgroup usage at its last sample (0: none) */
  uint64_t reserved;
  uint32_t cause[OCGC_CAUSE_SLOTS]; /* pauses by the cause of their most significant
                                       collection (enum ocgc_cause) */
};
OCGC_STATIC_ASSERT(sizeof(struct ocgc_wire_flight_second) == 256, "a second is 256 bytes");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight_second, coll) == 32, "s.coll");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight_second, alloc) == 64, "s.alloc");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight_second, cg_usage) == 112, "s.cg_usage");
OCGC_STATIC_ASSERT(offsetof(struct ocgc_wire_flight_second, cause) == 128, "s.cause");

/* Size of the extension block for a given number of rings: fixed part, ring
 * records, totals, the allocation profile; a multiple of 64 bytes. */
static inline uint64_t ocgc_wire_ext_size(uint64_t max_domains) {
  return sizeof(struct ocgc_wire_ext) + max_domains * sizeof(struct ocgc_wire_ext_ring) +
         sizeof(struct ocgc_wire_totals) + OCGC_WIRE_MP_SIZE;
}

/* The geometry of a file as the ocgc producer lays it out: the header,
 * [ext_size] bytes of extension block (0: none, a stock file), then
 * [max_domains] ring headers, the rings of [ring_words] words each, and the
 * user-event name table last.  Fills the header's geometry fields (the
 * version and everything else are the caller's) and returns the file size.
 * The one place that layout is written down, for the producer and for the
 * tools that make rings (tests, benchmarks). */
static inline uint64_t ocgc_wire_layout(struct ocgc_wire_header *h, uint64_t max_domains,
                                        uint64_t ring_words, uint64_t ext_size) {
  h->max_domains = max_domains;
  h->ring_header_size_bytes = sizeof(struct ocgc_wire_ring_header);
  h->ring_size_bytes = ring_words * 8;
  h->ring_size_elements = ring_words;
  h->headers_offset = OCGC_WIRE_HEADER_SIZE + ext_size;
  h->data_offset = h->headers_offset + max_domains * sizeof(struct ocgc_wire_ring_header);
  h->custom_events_offset = h->data_offset + max_domains * h->ring_size_bytes;
  return h->custom_events_offset + (uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN;
}

#endif /* OCGC_WIRE_H */
