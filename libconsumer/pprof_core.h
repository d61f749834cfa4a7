/* pprof_core.h - what every pprof profile of one process is made of
 * (private): the string table, the functions, locations and mappings of a
 * symbolizer's addresses (escaped, no absolute address by default), the
 * made-up frames, value types, labels, and the end (mappings, strings,
 * gzip).  pprof.c writes allocation profiles with it, cpuprof_pprof.c CPU
 * profiles: one rule for how a frame is placed and named. */
#ifndef OCGC_PPROF_CORE_H
#define OCGC_PPROF_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "pbwrite.h"

struct ocgc_symbols;
struct ocgc_symbols_mapping;

/* Made-up frames a profile may hold (each one location). */
#define PPROF_SYNTHETIC_MAX 8u

/* The string table: each string once, "" first. */
struct pprof_strings {
  struct idmap by_hash; /* hash -> index + 1 of the first string with it */
  const char **s;       /* borrowed: the symbolizer's, ours or the caller's,
                           alive till pprof_end */
  size_t n, cap;
  int err;
};

struct pprof_w {
  struct pb_buf out;      /* the Profile message */
  struct pb_buf msg, sub; /* scratch: a message and one inside it */
  struct pprof_strings str;
  struct idmap loc_by_addr, fn_by_key;
  struct ocgc_symbols *syms;
  unsigned char *mapping_used; /* by mapping index */
  size_t nmappings;
  const struct ocgc_symbols_mapping *mappings;
  uint64_t nloc, nfn;
  uint64_t synthetic[PPROF_SYNTHETIC_MAX]; /* location ids of made-up frames */
  int absolute;
  char **owned; /* escaped copies, freed at the end */
  size_t nowned, capowned;
};

/* A writer of at most [max] bytes over [syms] (may be NULL), the process's
 * own addresses written only if [absolute].  0 or -ENOMEM (nothing to
 * free then). */
int pprof_begin(struct pprof_w *w, struct ocgc_symbols *syms, size_t max, int absolute);
/* The index of [s] in the string table ([s] must live till pprof_end). */
uint64_t pprof_str(struct pprof_w *w, const char *s);
/* The location of return address [addr] (named, in its mapping). */
uint64_t pprof_location(struct pprof_w *w, uint64_t addr);
/* The location of made-up frame [which] (< PPROF_SYNTHETIC_MAX) named
 * [name] (a literal). */
uint64_t pprof_synthetic(struct pprof_w *w, unsigned which, const char *name);
/* A ValueType (type, unit) as field [field] of the profile (1: a sample
 * type, 11: the period type). */
void pprof_value_type(struct pprof_w *w, unsigned field, const char *type, const char *unit);
/* A string label (key, value) into [sample], the Sample being built. */
void pprof_label(struct pprof_w *w, struct pb_buf *sample, const char *key, const char *value);
/* Finish: the mappings used, the string table, gzip unless [no_gzip]; the
 * bytes into *out (free() them), *len; everything of [w] freed.  0,
 * -ENOMEM, -EFBIG. */
int pprof_end(struct pprof_w *w, int no_gzip, unsigned char **out, size_t *len);

#endif /* OCGC_PPROF_CORE_H */
