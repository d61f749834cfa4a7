/* elfgen.h - hostile ELF files for the symbolizer's tests (elfgen.c): an
 * executable whose claims cost libelf or libdw far more memory than the
 * file's bytes, each with one OCaml function, camlHostile__f_1, at
 * ELFGEN_FUNC (ELFGEN_NAMES: [n] functions, 16 bytes apart from it). */
#ifndef OCGC_TEST_ELFGEN_H
#define OCGC_TEST_ELFGEN_H

#include <stdint.h>

#define ELFGEN_FUNC UINT64_C(0x401000)

enum elfgen_shape {
  ELFGEN_SECTIONS, /* a header claiming [n] sections (extended numbering),
                      the table sparse */
  ELFGEN_LINES,    /* a zlib-compressed .debug_line: [n] rows in [tables] tables */
  ELFGEN_NOTES,    /* [n] note sections over one 64 KiB region, no build id */
  ELFGEN_NAMES,    /* [n] function symbols sharing one 1 KiB name */
};

/* Write the shape to [fd] (empty, seekable): 0, or -1 with errno. */
int elfgen_write(int fd, enum elfgen_shape shape, uint64_t n, uint64_t tables);

/* A plain file of one function at ELFGEN_FUNC, 16 bytes, named [name]
 * (any bytes but NUL, at most 1023): 0, or -1 with errno. */
int elfgen_write_one(int fd, const char *name);

/* The shape named [s] ("sections", "lines", "notes", "names"), or -1. */
int elfgen_shape_of(const char *s);

#endif /* OCGC_TEST_ELFGEN_H */
