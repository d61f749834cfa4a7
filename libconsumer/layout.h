/* layout.h - validated geometry of a ring file (private). */
#ifndef OCGC_LAYOUT_H
#define OCGC_LAYOUT_H

#include <stdint.h>

#include "ocgc/wire.h"

/* Everything here was read once from the file and checked against its size;
 * code that uses it never re-reads these fields from the mapping. */
struct ocgc_layout {
  uint64_t file_size;
  uint64_t max_domains;
  uint64_t rh_size;        /* ring header stride */
  uint64_t ring_words;     /* power of two */
  uint64_t headers_offset;
  uint64_t data_offset;
  uint64_t names_offset;
  int has_ext;
  uint64_t ext_version;
  uint64_t rings_offset;   /* ext ring records; valid when has_ext */
  uint64_t totals_offset;  /* totals; valid when has_ext */
  uint64_t cause_slots;    /* by_cause columns */
  uint64_t kind_count;     /* by_cause rows */
  uint64_t ext_ids;        /* enum ocgc_ext_ids, or 0 (files before it: 5.2) */
  uint64_t ext_end;        /* first byte past the extension block */
  uint64_t mp_offset;      /* the allocation profile's header (ext_version >= 5,
                              its 256 bytes inside the block), or 0 */
};

/* Limits beyond which a file is called corrupt rather than mapped. */
#define OCGC_LAYOUT_MAX_DOMAINS 4096u
#define OCGC_LAYOUT_MAX_RING_WORDS (UINT64_C(1) << 30)
#define OCGC_LAYOUT_MAX_RH_SIZE 4096u

/* The bytes at the start of a file that ocgc_layout_parse() reads: the
 * header and the extension block's fixed part. */
#define OCGC_LAYOUT_PARSE_BYTES (OCGC_WIRE_HEADER_SIZE + sizeof(struct ocgc_wire_ext))

/* Validate the header (and extension block) of a file of [size] bytes,
 * from [base]: a copy of its first OCGC_LAYOUT_PARSE_BYTES bytes, or of
 * all of it if shorter, the rest zero.  Returns 0, OCGC_E_CORRUPT or
 * OCGC_E_VERSION. */
int ocgc_layout_parse(const void *base, uint64_t size, struct ocgc_layout *out);

#endif /* OCGC_LAYOUT_H */
