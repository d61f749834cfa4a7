/* elfimage.h - what the symbolizer keeps of one ELF file (private): its
 * function symbols, its DWARF line rows, its loadable segments and build
 * id, copied into private memory so the file can be closed. */
#ifndef OCGC_ELFIMAGE_H
#define OCGC_ELFIMAGE_H

#include <stddef.h>
#include <stdint.h>

struct elf_func {
  uint64_t addr, size; /* file virtual addresses; size 0: up to the next */
  uint32_t name;       /* offset in the pool */
  uint32_t demangled;  /* offset in the pool, or UINT32_MAX: not an OCaml name;
                          made the function's own where symbols alone do not
                          tell it apart ("Main.fun@main.ml:12") */
  uint32_t entry_file; /* the first line row at addr: file (pool offset) */
  uint32_t entry_line; /* and line, 0: none */
};

struct elf_line {
  uint64_t addr;  /* first address of the row */
  uint32_t file;  /* offset in the pool */
  uint32_t line;  /* 0: the end of a sequence (no line from here) */
};

struct elf_load {
  uint64_t vaddr, offset, filesz;
};

struct elf_image {
  struct elf_func *funcs;
  size_t nfuncs;
  struct elf_line *lines;
  size_t nlines;
  struct elf_load loads[16];
  size_t nloads;
  char *pool;
  size_t pool_len, pool_cap;
  char build_id[41]; /* hex of the first 20 bytes, "" if none */
  int lines_cut;     /* the line rows hit a bound: some addresses have none */
  int names_cut;     /* the functions hit a bound: some are not kept */
  uint64_t read_bytes; /* bytes of sections read (figures for the bench) */
  uint64_t held;     /* bytes of memory funcs, lines and pool hold */
};

/* The bounds of one reading. */
struct elf_bounds {
  uint64_t max_file_bytes, max_read_bytes, max_symbols, max_lines;
  uint64_t max_hold_bytes; /* what the image may hold: funcs, lines and pool */
  uint64_t deadline_ns; /* CLOCK_MONOTONIC */
  int no_lines;
  int cfi;      /* also read the call frame information (.eh_frame,
                   .eh_frame_hdr, .debug_frame) within max_read_bytes: the
                   unwinder's (cpu_unwind.c), elf_load() only */
};

/* Read the regular file [fd] (not kept) into *img, checked first by
 * elfload.c.  Returns 0, -EINVAL (not a regular file, or on FUSE), -EFBIG,
 * OCGC_E_CORRUPT (not an ELF executable or shared object this reads),
 * -ENOMEM.  A file whose symbols were read but not its lines returns 0
 * with nlines 0. */
int elf_image_read(int fd, const struct elf_bounds *b, struct elf_image *img);

void elf_image_free(struct elf_image *img);

/* The file virtual address of file offset [off], through the loadable
 * segment holding it: 0 and *vaddr, or -1. */
int elf_image_vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr);

/* The function holding [vaddr], or NULL. */
const struct elf_func *elf_image_func(const struct elf_image *img, uint64_t vaddr);

/* The line row holding [vaddr], or NULL. */
const struct elf_line *elf_image_line(const struct elf_image *img, uint64_t vaddr);

#endif /* OCGC_ELFIMAGE_H */
