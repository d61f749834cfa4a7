/* layout.c - validation of a ring file's header and extension block.
 *
 * Invariant: ocgc_layout_parse() accepts a file only if every region the
 * reader will touch (ring headers, rings, name table, ext ring records,
 * totals, the allocation profile's header) lies inside the file, computed with overflow-checked arithmetic
 * from one read of each field. */

#include <string.h>

#include "layout.h"
#include "ocgc/consumer.h"
#include "shm.h"

/* a + b * c <= limit, without overflow; stores a + b * c in *end. */
static int span_ok(uint64_t a, uint64_t b, uint64_t c, uint64_t limit, uint64_t *end)
{
  uint64_t prod, sum;
  if (__builtin_mul_overflow(b, c, &prod)) return 0;
  if (__builtin_add_overflow(a, prod, &sum)) return 0;
  if (sum > limit) return 0;
  *end = sum;
  return 1;
}

static int parse_ext(const uint64_t *w, struct ocgc_layout *l)
{
  const uint64_t x = OCGC_WIRE_HEADER_SIZE / 8; /* ext starts at word 8 */
  uint64_t ext_size, end;
  uint64_t ext_end;

  l->ext_version = shm_load(&w[x + 1]);
  ext_size = shm_load(&w[x + 2]);
  if (l->ext_version < 1) return OCGC_E_VERSION;
  if (ext_size < sizeof(struct ocgc_wire_ext) ||
      ext_size > l->headers_offset - OCGC_WIRE_HEADER_SIZE)
    return OCGC_E_CORRUPT;
  ext_end = OCGC_WIRE_HEADER_SIZE + ext_size;
  l->cause_slots = shm_load(&w[x + offsetof(struct ocgc_wire_ext, cause_slots) / 8]);
  l->kind_count = shm_load(&w[x + offsetof(struct ocgc_wire_ext, kind_count) / 8]);
  l->rings_offset = shm_load(&w[x + offsetof(struct ocgc_wire_ext, rings_offset) / 8]);
  l->totals_offset = shm_load(&w[x + offsetof(struct ocgc_wire_ext, totals_offset) / 8]);
  l->ext_ids = shm_load(&w[x + offsetof(struct ocgc_wire_ext, ids) / 8]);
  if (l->cause_slots < OCGC_CAUSE_COUNT || l->cause_slots > 256 ||
      l->kind_count < OCGC_KIND_COUNT || l->kind_count > 16)
    return OCGC_E_CORRUPT;
  if (l->rings_offset % 8 || l->totals_offset % 8 ||
      l->rings_offset < OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext) ||
      l->totals_offset < OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext))
    return OCGC_E_CORRUPT;
  if (!span_ok(l->rings_offset, l->max_domains, sizeof(struct ocgc_wire_ext_ring),
               ext_end, &end))
    return OCGC_E_CORRUPT;
  /* totals: the fixed 256 bytes, then kind_count x cause_slots words */
  if (l->totals_offset > ext_end ||
      !span_ok(l->totals_offset + offsetof(struct ocgc_wire_totals, by_cause),
               l->kind_count * 8, l->cause_slots, ext_end, &end))
    return OCGC_E_CORRUPT;
  l->ext_end = ext_end;
  /* the allocation profile follows the totals; a file too short for its
   * header has none (its rows are checked where they are read) */
  if (l->ext_version >= 5 &&
      span_ok(end, 1, sizeof(struct ocgc_wire_mp), ext_end, &(uint64_t){0}))
    l->mp_offset = end;
  l->has_ext = 1;
  return 0;
}

int ocgc_layout_parse(const void *base, uint64_t size, struct ocgc_layout *out)
{
  const uint64_t *w = base;
  struct ocgc_layout l;
  uint64_t end, ring_bytes;

  memset(&l, 0, sizeof l);
  l.file_size = size;
  if (size < OCGC_WIRE_HEADER_SIZE) return OCGC_E_CORRUPT;
  if (shm_load(&w[0]) != OCGC_WIRE_VERSION)
    return shm_load(&w[0]) == 0 ? OCGC_E_CORRUPT : OCGC_E_VERSION;
  l.max_domains = shm_load(&w[1]);
  l.rh_size = shm_load(&w[2]);
  ring_bytes = shm_load(&w[3]);
  l.ring_words = shm_load(&w[4]);
  l.headers_offset = shm_load(&w[5]);
  l.data_offset = shm_load(&w[6]);
  l.names_offset = shm_load(&w[7]);

  if (l.max_domains == 0 || l.max_domains > OCGC_LAYOUT_MAX_DOMAINS) return OCGC_E_CORRUPT;
  if (l.rh_size < 16 || l.rh_size > OCGC_LAYOUT_MAX_RH_SIZE || l.rh_size % 8)
    return OCGC_E_CORRUPT;
  if (l.ring_words < 16 || l.ring_words > OCGC_LAYOUT_MAX_RING_WORDS ||
      (l.ring_words & (l.ring_words - 1)) || ring_bytes != l.ring_words * 8)
    return OCGC_E_CORRUPT;
  if (l.headers_offset < OCGC_WIRE_HEADER_SIZE || l.headers_offset % 8 ||
      l.data_offset % 8 || l.names_offset % 8)
    return OCGC_E_CORRUPT;
  if (!span_ok(l.headers_offset, l.max_domains, l.rh_size, size, &end) ||
      end > l.data_offset)
    return OCGC_E_CORRUPT;
  if (!span_ok(l.data_offset, l.max_domains, ring_bytes, size, &end) ||
      end > l.names_offset)
    return OCGC_E_CORRUPT;
  if (!span_ok(l.names_offset, OCGC_WIRE_USER_EVENTS, OCGC_WIRE_USER_NAME_LEN, size, &end))
    return OCGC_E_CORRUPT;

  if (l.headers_offset >= OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext) &&
      shm_load(&w[OCGC_WIRE_HEADER_SIZE / 8]) == OCGC_EXT_MAGIC) {
    int err = parse_ext(w, &l);
    if (err) return err;
  }
  *out = l;
  return 0;
}
