/* ringgen.h - a test-only ring file writer.
 *
 * It lays files out as runtime_patch/src/ocgc_file.c fill_file() does
 * (generalised to any number of rings) or as stock OCaml 5.2 does (no
 * extension block, headers_offset 64), and writes events with the protocol
 * of runtime_patch/src/ocgc_ring.c: an event never straddles the end of a
 * ring (a padding record fills the gap), head is advanced past whole old
 * events before anything is overwritten, and ocgc files publish
 * (head_pos, head_events) under the ext ring seqlock and keep
 * written_events.  Tests poke the mapping directly to make it hostile. */
#ifndef OCGC_TEST_RINGGEN_H
#define OCGC_TEST_RINGGEN_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/wire.h"

/* The writer's private state for one ring (as struct caml_ocgc_ring). */
struct rg_ring {
  uint64_t *data;          /* ring words in the mapping */
  uint64_t size, mask;     /* words, size - 1 */
  uint64_t head, tail;     /* writer's copies of the header counters */
  uint64_t head_events;    /* events that start before head */
  uint64_t written;        /* events written, padding not counted */
  uint64_t seq;            /* writer's copy of the ext ring seq */
  struct ocgc_wire_ring_header *rh;
  struct ocgc_wire_ext_ring *er; /* NULL in stock files */
};

struct rg_file {
  char *map;               /* the whole file, read-write, shared */
  uint64_t size;
  int fd;                  /* -1 for an in-memory image */
  int has_ext;
  unsigned max_domains;
  uint64_t ring_words;
  struct ocgc_wire_header *hdr;
  struct ocgc_wire_ext *ext;       /* NULL in stock files */
  struct ocgc_wire_totals *totals; /* NULL in stock files */
  struct rg_ring *rings;
};

/* Size in bytes of a file with this geometry. */
uint64_t rg_file_size(int has_ext, unsigned max_domains, uint64_t ring_words);

/* Fill a zeroed image of rg_file_size() bytes: header, extension block (with
 * fixed, reproducible identity fields) when has_ext. */
void rg_fill(char *map, int has_ext, unsigned max_domains, uint64_t ring_words);

/* Create [path] (which must not exist), size it, map it and fill it.
 * Returns 0 or -errno. */
int rg_create(struct rg_file *f, const char *path, int has_ext, unsigned max_domains,
              uint64_t ring_words);

/* Unmap and close (the file stays). */
void rg_close(struct rg_file *f);

/* Write one event on ring d: [header] (its length says how many words),
 * timestamp [ts] unless the length is 1, then length - 2 payload words
 * from [payload] (NULL: zeros).  len must be < ring size. */
void rg_write(struct rg_file *f, unsigned d, uint64_t header, uint64_t ts,
              const uint64_t *payload);

/* Shorthand for an event whose only payload word (if any) is [value]. */
void rg_write1(struct rg_file *f, unsigned d, uint64_t header, uint64_t ts, uint64_t value);

/* Store a user event name in slot [slot] (at most 127 bytes are kept). */
void rg_set_name(struct rg_file *f, unsigned slot, const char *name);

#endif /* OCGC_TEST_RINGGEN_H */
