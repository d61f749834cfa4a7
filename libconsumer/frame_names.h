/* frame_names.h - what frame_names.c and pprof_merge.c share (private):
 * a process's frame addresses as frame_names.c keeps them. */
#ifndef OCGC_FRAME_NAMES_H
#define OCGC_FRAME_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

#define FN_NONE (~0u)

/* A file mapping of the process, as it was named (strings escaped). */
struct fn_map {
  const char *path, *build_id;
  uint64_t offset, size;        /* the segment: its file offset, its length */
  int has_functions, has_lines;
};

/* One address: where it is (a mapping and its place in that file) and
 * what (function NULL: not named). */
struct fn_frame {
  unsigned map;                 /* index in maps, or FN_NONE: not placed */
  uint64_t file_addr;           /* address - start + offset */
  const char *function, *symbol, *file;
  unsigned line;
};

struct ocgc_frame_names {
  struct idmap by_addr;         /* address -> index + 1 in frames */
  struct fn_frame *frames;
  size_t nframes, capframes;
  struct fn_map *maps;
  size_t nmaps, capmaps;
  struct idmap str_by_hash;     /* fnv -> index + 1 in strs */
  char **strs;                  /* owned, escaped */
  size_t nstrs, capstrs;
  uint64_t bytes;               /* strings held */
};

/* The frame of [addr], or NULL if it was never looked up. */
static inline const struct fn_frame *fn_get(const struct ocgc_frame_names *fn, uint64_t addr)
{
  uint64_t i = fn != NULL ? im_get(&fn->by_addr, addr) : 0;
  return i != 0 ? &fn->frames[i - 1] : NULL;
}

#endif /* OCGC_FRAME_NAMES_H */
