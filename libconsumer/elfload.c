/* elfload.c - a target's ELF file checked, and what the symbolizer reads
 * of it copied into private memory, before libelf or libdw see any of it
 * (elfload.h).
 *
 * libelf allocates per section header at elf_begin(), per section read,
 * and keeps each section's data till elf_end(); libdw keeps every line row
 * of every table read till dwarf_end().  Their costs follow the file's
 * claims, not its size, so the claims are checked here first, with pread()
 * and our own parsing of the ELF and section headers:
 * - a regular file off FUSE, at most max_file_bytes; an ELF executable or
 *   shared object (either class, either byte order);
 * - the section header table (extended numbering: section 0's sh_size and
 *   sh_link), the program header table and every section that has bytes
 *   (not NOBITS) lie within the file; at most MAX_SECTIONS sections and
 *   MAX_PHDRS program headers;
 * - the build id is read here from at most MAX_NOTE_SECTIONS note
 *   sections of at most MAX_NOTE_BYTES each, into one buffer;
 * - a symbol table is read with its string table only if both fit in
 *   max_read_bytes and it holds at most MAX_SYMBOL_ENTRIES_PER x
 *   max_symbols + 64 Ki entries (most of a table is not functions); the
 *   DWARF sections only if, with their inflated sizes (SHF_COMPRESSED's
 *   header, .zdebug's, told again from the copy), they fit in what is
 *   left;
 * - with b->cfi (the unwinder's reading), the call frame information
 *   (.eh_frame, .eh_frame_hdr, .debug_frame, uncompressed) too, all or
 *   none, within what is left after the symbol tables and before the
 *   DWARF.
 * What libelf is given (elf_memory) is this copy, not the file: a target
 * that rewrites its file after the checks cannot change what they passed.
 * The copy is an anonymous mapping of the file's size, untouched but for
 * what was read: it costs the bytes read, which are counted in
 * read_bytes. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "elfimage.h"
#include "elfload.h"
#include "ocgc/api.h"

#define FUSE_SUPER_MAGIC 0x65735546
#define MAX_SECTIONS 8192u
#define MAX_PHDRS 4096u
#define MAX_SHSTRTAB_BYTES (UINT64_C(1) << 20)
#define MAX_NOTE_SECTIONS 16u
#define MAX_NOTE_BYTES 65536u
#define MAX_SYMBOL_ENTRIES_PER 4u
#define NT_GNU_BUILD_ID_ 3u

/* Field access in the file's class and byte order. */
struct ecls {
  int is64, msb;
};

static uint64_t rd(const struct ecls *c, const unsigned char *p, unsigned n)
{
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < n; i++) v |= (uint64_t)p[c->msb ? i : n - 1 - i] << (8 * (n - 1 - i));
  return v;
}

/* The fields of a section header this uses. */
struct shdr {
  uint64_t name, type, flags, offset, size, link, info, entsize;
};

static void shdr_at(const struct ecls *c, const unsigned char *p, struct shdr *s)
{
  s->name = rd(c, p, 4);
  s->type = rd(c, p + 4, 4);
  if (c->is64) {
    s->flags = rd(c, p + 8, 8);
    s->offset = rd(c, p + 24, 8);
    s->size = rd(c, p + 32, 8);
    s->link = rd(c, p + 40, 4);
    s->info = rd(c, p + 44, 4);
    s->entsize = rd(c, p + 56, 8);
  } else {
    s->flags = rd(c, p + 8, 4);
    s->offset = rd(c, p + 16, 4);
    s->size = rd(c, p + 20, 4);
    s->link = rd(c, p + 24, 4);
    s->info = rd(c, p + 28, 4);
    s->entsize = rd(c, p + 36, 4);
  }
}

/* [n] bytes at [off] of the file into the image (counted): 0 or an error. */
static int take(int fd, struct elf_loaded *l, uint64_t off, uint64_t n)
{
  uint64_t done = 0;
  if (off > l->size || n > l->size - off) return OCGC_E_CORRUPT;
  while (done < n) {
    ssize_t r = pread(fd, l->image + off + done, (size_t)(n - done), (off_t)(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return OCGC_E_CORRUPT; /* shorter than it was: truncated under us */
    done += (uint64_t)r;
  }
  l->read_bytes += n;
  return 0;
}

static int within(uint64_t off, uint64_t n, uint64_t size)
{
  return off <= size && n <= size - off;
}

/* The section's name (in the image's shstrtab) or "". */
static const char *sec_name(const struct elf_loaded *l, const struct shdr *strs,
                            const struct shdr *s)
{
  const char *p;
  if (strs == NULL || s->name >= strs->size) return "";
  p = (const char *)l->image + strs->offset + s->name;
  /* the shstrtab is read whole and its last byte checked to be a NUL */
  return p;
}

static void build_id_of(struct elf_loaded *l, const struct ecls *c, const unsigned char *d,
                        size_t n)
{
  static const char hex[] = "0123456789abcdef";
  size_t off = 0;
  while (n - off >= 12) {
    uint64_t namesz = rd(c, d + off, 4), descsz = rd(c, d + off + 4, 4);
    uint64_t type = rd(c, d + off + 8, 4);
    uint64_t nal = (namesz + 3) & ~UINT64_C(3), dal = (descsz + 3) & ~UINT64_C(3);
    size_t at = off + 12;
    if (nal > n - at || dal > n - at - nal) return;
    if (type == NT_GNU_BUILD_ID_ && namesz == 4 && memcmp(d + at, "GNU", 4) == 0 && descsz > 0) {
      const unsigned char *p = d + at + nal;
      size_t i, k = descsz < 20 ? (size_t)descsz : 20;
      for (i = 0; i < k; i++) {
        l->build_id[2 * i] = hex[p[i] >> 4];
        l->build_id[2 * i + 1] = hex[p[i] & 15];
      }
      l->build_id[2 * k] = '\0';
      return;
    }
    off = at + (size_t)nal + (size_t)dal;
  }
}

/* The size a DWARF section claims once inflated, from its first bytes
 * h[0..n) (0: not compressed), or UINT64_MAX when that cannot be told. */
static uint64_t inflated(const struct ecls *c, const unsigned char *h, uint64_t n,
                         const struct shdr *s, const char *name)
{
  static const struct ecls be = {1, 1};
  if (s->flags & 0x800 /* SHF_COMPRESSED */) {
    if (n < (c->is64 ? 24u : 12u)) return UINT64_MAX;
    return c->is64 ? rd(c, h + 8, 8) : rd(c, h + 4, 4);
  }
  if (strncmp(name, ".zdebug", 7) != 0) return 0;
  if (n < 12 || memcmp(h, "ZLIB", 4) != 0) return UINT64_MAX;
  return rd(&be, h + 4, 8);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int is_debug(const char *name)
{
  return strncmp(name, ".debug_", 7) == 0 || strncmp(name, ".zdebug_", 8) == 0;
}

/* The call frame information an unwinder reads.  A compressed
 * .debug_frame (SHF_COMPRESSED) is read as it is: libdw's CFI reader does
 * not inflate it and fails on it, within the copy. */
static int is_cfi(const char *name)
{
  return strcmp(name, ".eh_frame") == 0 || strcmp(name, ".eh_frame_hdr") == 0 ||
         strcmp(name, ".debug_frame") == 0;
}

int elf_load(int fd, const struct elf_bounds *b, struct elf_loaded *l)
{
  struct stat st;
  struct statfs sf;
  unsigned char eh[64], s0[64];
  struct ecls c;
  struct shdr strs, sh;
  uint64_t shoff, phoff, nsec, nph, shstrndx, shent, phent, ehsize, budget, i;
  uint64_t dwarf = 0, infl = 0, raw = 0, max_entries;
  unsigned char *notes = NULL;
  unsigned nnotes = 0;
  int alt = 0, err;

  memset(l, 0, sizeof *l);
  if (fstat(fd, &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  if (fstatfs(fd, &sf) == 0 && sf.f_type == FUSE_SUPER_MAGIC) return -EINVAL;
  if ((uint64_t)st.st_size > b->max_file_bytes || (uint64_t)st.st_size > SIZE_MAX / 2)
    return -EFBIG;
  if (st.st_size < 52 || pread(fd, eh, sizeof eh, 0) < 52) return OCGC_E_CORRUPT;
  if (memcmp(eh, "\177ELF", 4) != 0 || (eh[4] != 1 && eh[4] != 2) || (eh[5] != 1 && eh[5] != 2) ||
      eh[6] != 1)
    return OCGC_E_CORRUPT;
  c.is64 = eh[4] == 2;
  c.msb = eh[5] == 2;
  ehsize = c.is64 ? 64 : 52;
  if ((uint64_t)st.st_size < ehsize) return OCGC_E_CORRUPT;
  if (rd(&c, eh + 16, 2) != 2 /* ET_EXEC */ && rd(&c, eh + 16, 2) != 3 /* ET_DYN */)
    return OCGC_E_CORRUPT;
  l->size = (size_t)st.st_size;
  phoff = c.is64 ? rd(&c, eh + 32, 8) : rd(&c, eh + 28, 4);
  shoff = c.is64 ? rd(&c, eh + 40, 8) : rd(&c, eh + 32, 4);
  phent = rd(&c, eh + (c.is64 ? 54 : 42), 2);
  nph = rd(&c, eh + (c.is64 ? 56 : 44), 2);
  shent = rd(&c, eh + (c.is64 ? 58 : 46), 2);
  nsec = rd(&c, eh + (c.is64 ? 60 : 48), 2);
  shstrndx = rd(&c, eh + (c.is64 ? 62 : 50), 2);

  /* The section header table, its count where extended numbering puts it. */
  if (shoff == 0 || shent != (c.is64 ? 64u : 40u) || !within(shoff, shent, l->size))
    return OCGC_E_CORRUPT;
  if (pread(fd, s0, shent, (off_t)shoff) != (ssize_t)shent) return OCGC_E_CORRUPT;
  shdr_at(&c, s0, &sh);
  if (nsec == 0) nsec = sh.size;
  if (shstrndx == 0xffff) shstrndx = sh.link;
  if (nph == 0xffff) nph = sh.info;
  if (nsec == 0 || nsec > MAX_SECTIONS || !within(shoff, nsec * shent, l->size) ||
      shstrndx >= nsec)
    return OCGC_E_CORRUPT;
  if (nph > MAX_PHDRS || (nph > 0 && (phent != (c.is64 ? 56u : 32u) ||
                                      !within(phoff, nph * phent, l->size))))
    return OCGC_E_CORRUPT;
  l->nsections = (unsigned)nsec;

  /* The copy: the file's size, of which only what is read is touched. */
  l->map_size = l->size;
  l->image = mmap(NULL, l->map_size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (l->image == MAP_FAILED) {
    l->image = NULL;
    return -ENOMEM;
  }
  memcpy(l->image, eh, (size_t)ehsize);
  l->read_bytes = ehsize;
  if ((err = take(fd, l, shoff, nsec * shent)) != 0) goto fail;
  if (nph > 0 && (err = take(fd, l, phoff, nph * phent)) != 0) goto fail;
  /* Section 0 as we read it above: the count and indexes came from it. */
  if (memcmp(l->image + shoff, s0, shent) != 0) { err = OCGC_E_CORRUPT; goto fail; }

  /* Every section that has bytes lies within the file. */
  for (i = 1; i < nsec; i++) {
    shdr_at(&c, l->image + shoff + i * shent, &sh);
    if (sh.type != 8 /* SHT_NOBITS */ && !within(sh.offset, sh.size, l->size)) {
      err = OCGC_E_CORRUPT;
      goto fail;
    }
  }
  shdr_at(&c, l->image + shoff + shstrndx * shent, &strs);
  if (shstrndx == 0 || strs.type != 3 /* SHT_STRTAB */ || strs.size == 0 ||
      strs.size > MAX_SHSTRTAB_BYTES) {
    err = OCGC_E_CORRUPT;
    goto fail;
  }
  if ((err = take(fd, l, strs.offset, strs.size)) != 0) goto fail;
  if (l->image[strs.offset + strs.size - 1] != '\0') { err = OCGC_E_CORRUPT; goto fail; }

  /* Which sections: symbol tables, notes, DWARF. */
  budget = b->max_read_bytes;
  for (i = 1; i < nsec; i++) {
    const char *name;
    shdr_at(&c, l->image + shoff + i * shent, &sh);
    name = sec_name(l, &strs, &sh);
    if (sh.type == 2 /* SHT_SYMTAB */ && l->symtab == 0) l->symtab = (unsigned)i;
    else if (sh.type == 11 /* SHT_DYNSYM */ && l->dynsym == 0) l->dynsym = (unsigned)i;
    else if (sh.type == 7 /* SHT_NOTE */ && l->build_id[0] == '\0' &&
             nnotes < MAX_NOTE_SECTIONS && sh.size <= MAX_NOTE_BYTES) {
      nnotes++;
      if (notes == NULL && (notes = malloc(MAX_NOTE_BYTES)) == NULL) { err = -ENOMEM; goto fail; }
      if (pread(fd, notes, (size_t)sh.size, (off_t)sh.offset) == (ssize_t)sh.size)
        build_id_of(l, &c, notes, (size_t)sh.size);
      l->read_bytes += sh.size;
    }
    if (strcmp(name, ".gnu_debugaltlink") == 0 || strcmp(name, ".debug_sup") == 0) alt = 1;
    if (is_debug(name) && sh.type != 8) {
      unsigned char h[24];
      ssize_t got = pread(fd, h, sh.size < sizeof h ? (size_t)sh.size : sizeof h, (off_t)sh.offset);
      uint64_t claim = inflated(&c, h, got > 0 ? (uint64_t)got : 0, &sh, name);
      dwarf = add_sat(dwarf, add_sat(sh.size, claim));
    }
  }
  free(notes);
  notes = NULL;

  /* The symbol tables with their strings, within the budget. */
  max_entries = b->max_symbols > UINT64_MAX / MAX_SYMBOL_ENTRIES_PER
                    ? UINT64_MAX
                    : add_sat(MAX_SYMBOL_ENTRIES_PER * b->max_symbols, 65536);
  for (i = 0; i < 2; i++) {
    unsigned *which = i == 0 ? &l->symtab : &l->dynsym;
    uint64_t *entries = i == 0 ? &l->symtab_entries : &l->dynsym_entries;
    struct shdr str;
    if (*which == 0) continue;
    shdr_at(&c, l->image + shoff + (uint64_t)*which * shent, &sh);
    if (sh.link == 0 || sh.link >= nsec || sh.entsize != (c.is64 ? 24u : 16u) ||
        sh.size / sh.entsize > max_entries) {
      *which = 0;
      continue;
    }
    shdr_at(&c, l->image + shoff + sh.link * shent, &str);
    if (str.type != 3 || sh.size > budget || str.size > budget - sh.size) {
      *which = 0;
      continue;
    }
    if ((err = take(fd, l, sh.offset, sh.size)) != 0 ||
        (err = take(fd, l, str.offset, str.size)) != 0)
      goto fail;
    budget -= sh.size + str.size;
    *entries = sh.size / sh.entsize;
  }

  /* The CFI sections, all or none, within what is left. */
  if (b->cfi) {
    uint64_t want = 0;
    for (i = 1; i < nsec; i++) {
      shdr_at(&c, l->image + shoff + i * shent, &sh);
      if (sh.type != 8 && is_cfi(sec_name(l, &strs, &sh))) want = add_sat(want, sh.size);
    }
    if (want > budget) {
      l->cfi_cut = 1;
    } else if (want > 0) {
      for (i = 1; i < nsec; i++) {
        shdr_at(&c, l->image + shoff + i * shent, &sh);
        if (sh.type == 8 || !is_cfi(sec_name(l, &strs, &sh))) continue;
        if ((err = take(fd, l, sh.offset, sh.size)) != 0) goto fail;
      }
      budget -= want;
      l->cfi = 1;
    }
  }

  /* The DWARF sections, inflated sizes counted, within what is left. */
  if (dwarf > 0 && !alt && !b->no_lines) {
    if (dwarf > budget) {
      l->dwarf_cut = 1;
    } else {
      /* Read, then the inflated sizes told again from the copy: the
       * claims libelf will act on are the copy's, not the file's. */
      for (i = 1; i < nsec; i++) {
        const char *name;
        shdr_at(&c, l->image + shoff + i * shent, &sh);
        if (sh.type == 8 || !is_debug(name = sec_name(l, &strs, &sh))) continue;
        if ((err = take(fd, l, sh.offset, sh.size)) != 0) goto fail;
        raw += sh.size;
        infl = add_sat(infl, inflated(&c, l->image + sh.offset, sh.size, &sh, name));
      }
      if (add_sat(raw, infl) <= budget) {
        l->read_bytes += infl; /* the inflated copies libelf will make */
        l->dwarf = 1;
      } else {
        l->dwarf_cut = 1;
      }
    }
  }
  return 0;
fail:
  free(notes);
  elf_unload(l);
  return err;
}

void elf_unload(struct elf_loaded *l)
{
  if (l->image != NULL) munmap(l->image, l->map_size);
  memset(l, 0, sizeof *l);
}
