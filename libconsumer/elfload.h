/* elfload.h - one ELF file's headers checked and the sections the
 * symbolizer needs read, by us, before libelf or libdw see a byte of it
 * (private; elfload.c). */
#ifndef OCGC_ELFLOAD_H
#define OCGC_ELFLOAD_H

#include <stddef.h>
#include <stdint.h>

struct elf_bounds;

struct elf_loaded {
  unsigned char *image; /* the file's size of private anonymous memory: zero
                           but for the headers and the sections read */
  size_t size, map_size;
  uint64_t read_bytes;  /* bytes read into it, and the inflated sizes of the
                           compressed sections read */
  char build_id[41];    /* hex of the first 20 bytes, "" if none */
  unsigned nsections;
  unsigned symtab, dynsym; /* the symbol tables read (0: none) */
  uint64_t symtab_entries, dynsym_entries;
  int dwarf;            /* the DWARF sections were read: the lines may be asked */
  int dwarf_cut;        /* there was DWARF, over its bounds: no lines */
  int cfi;              /* b->cfi: the CFI sections were read (all of them) */
  int cfi_cut;          /* b->cfi: there was CFI, over the budget: none read */
};

/* Check [fd] (a regular file, not kept) and read what may be read of it
 * within [b] into l->image: 0, -EINVAL (not a regular file, or on FUSE),
 * -EFBIG, OCGC_E_CORRUPT (not an ELF executable or shared object, or a
 * header or section outside the file, or past the counts), -ENOMEM. */
int elf_load(int fd, const struct elf_bounds *b, struct elf_loaded *l);

void elf_unload(struct elf_loaded *l);

#endif /* OCGC_ELFLOAD_H */
