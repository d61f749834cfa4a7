/* elfimage.c - one ELF file read for the symbolizer (elfimage.h): its
 * function symbols (libelf), its DWARF line rows (libdw's line tables), its
 * loadable segments and GNU build id, copied into private memory.
 *
 * The file is a target's, so hostile.  Invariants:
 * - it is read with pread() by libelf (ELF_C_READ), never mapped: a file
 *   truncated under us gives a read error, not SIGBUS;
 * - a regular file only, off FUSE (a FUSE daemon can hold a read for
 *   ever), at most max_file_bytes;
 * - bytes read are counted before they are asked for: the symbol and
 *   string tables by their section sizes, the DWARF sections by their
 *   decompressed sizes (SHF_COMPRESSED's header, .zdebug's), so no
 *   section, compressed or not, makes libelf or libdw allocate past
 *   max_read_bytes; past it, the lines are not read (or the symbols);
 * - the string sections libdw reads must end in a NUL (libdw 0.188 reads
 *   past one that does not), compressed ones checked once inflated;
 * - no other file is opened: a file that names one for its DWARF
 *   (.gnu_debugaltlink, .debug_sup) gets no lines; libdw is given only
 *   the line tables to read (dwarf_next_lines), not the DIE tree;
 * - every count is bounded (symbols, rows, segments, sections, name
 *   lengths) and the clock is checked between tables and every 64 Ki
 *   symbols;
 * - names are copied NUL-terminated and cut at NAME_MAX_BYTES; the pool
 *   stays below 4 GiB (offsets are 32 bits). */

#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "clock.h"
#include "elfimage.h"
#include "ocgc/api.h"
#include "ocgc/symbols.h"

#define FUSE_SUPER_MAGIC 0x65735546
#define NAME_MAX_BYTES 1024u
#define MAX_SECTIONS 65536u
#define MAX_PHDRS 4096u
#define MAX_NOTE_BYTES 65536u
#define POOL_MAX (UINT32_C(0xffffffff) - NAME_MAX_BYTES)
#define NOT_OCAML UINT32_MAX

/* Append [s] (cut at NAME_MAX_BYTES - 1) and its NUL to the pool: its
 * offset, or UINT32_MAX when the pool may not grow. */
static uint32_t pool_add(struct elf_image *img, const char *s, size_t len)
{
  uint32_t at;
  if (len >= NAME_MAX_BYTES) len = NAME_MAX_BYTES - 1;
  if (img->pool_len + len + 1 > img->pool_cap) {
    size_t cap = img->pool_cap ? img->pool_cap * 2 : 65536;
    char *p;
    while (cap < img->pool_len + len + 1) cap *= 2;
    if (cap > POOL_MAX) cap = POOL_MAX;
    if (cap < img->pool_len + len + 1) return UINT32_MAX;
    if ((p = realloc(img->pool, cap)) == NULL) return UINT32_MAX;
    img->pool = p;
    img->pool_cap = cap;
  }
  at = (uint32_t)img->pool_len;
  memcpy(img->pool + img->pool_len, s, len);
  img->pool[img->pool_len + len] = '\0';
  img->pool_len += len + 1;
  return at;
}

/* The bytes a DWARF section will take once libelf or libdw has it in
 * memory: its decompressed size if compressed, or UINT64_MAX if that
 * cannot be read. */
static uint64_t debug_bytes(Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
  if (sh->sh_type == SHT_NOBITS) return 0;
  if (sh->sh_flags & SHF_COMPRESSED) {
    GElf_Chdr ch;
    if (gelf_getchdr(scn, &ch) == NULL) return UINT64_MAX;
    return ch.ch_size > sh->sh_size ? ch.ch_size : sh->sh_size;
  }
  if (strncmp(name, ".zdebug", 7) == 0) {
    /* "ZLIB" and the size, big-endian, in the first 12 bytes. */
    Elf_Data *d = elf_rawdata(scn, NULL);
    const unsigned char *p;
    uint64_t v = 0;
    unsigned i;
    if (d == NULL || d->d_size < 12) return UINT64_MAX;
    p = d->d_buf;
    if (memcmp(p, "ZLIB", 4) != 0) return UINT64_MAX;
    for (i = 4; i < 12; i++) v = v << 8 | p[i];
    return v + sh->sh_size;
  }
  return sh->sh_size;
}

static void build_id(struct elf_image *img, Elf_Scn *scn, const GElf_Shdr *sh)
{
  Elf_Data *d;
  GElf_Nhdr nh;
  size_t off = 0, next, name_off, desc_off;
  static const char hex[] = "0123456789abcdef";
  if (img->build_id[0] != '\0' || sh->sh_size > MAX_NOTE_BYTES) return;
  if ((d = elf_getdata(scn, NULL)) == NULL) return;
  while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
        memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
      const unsigned char *p = (const unsigned char *)d->d_buf + desc_off;
      size_t i, n = nh.n_descsz < 20 ? nh.n_descsz : 20;
      for (i = 0; i < n; i++) {
        img->build_id[2 * i] = hex[p[i] >> 4];
        img->build_id[2 * i + 1] = hex[p[i] & 15];
      }
      img->build_id[2 * n] = '\0';
      return;
    }
    off = next;
  }
}

static int func_cmp(const void *a, const void *b)
{
  const struct elf_func *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1; /* the sized one first */
  return x->name < y->name ? -1 : x->name > y->name;
}

static int line_cmp(const void *a, const void *b)
{
  const struct elf_line *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  /* An end of sequence before a row at the same address: the row wins. */
  if ((x->line == 0) != (y->line == 0)) return x->line == 0 ? -1 : 1;
  return 0;
}

/* The function symbols of [scn] (a symbol table), within the budget. */
static int read_symbols(struct elf_image *img, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
                        const struct elf_bounds *b, uint64_t *budget)
{
  Elf_Scn *strs = elf_getscn(e, sh->sh_link);
  GElf_Shdr ssh;
  Elf_Data *d;
  size_t n, i, cap = 0;
  if (strs == NULL || gelf_getshdr(strs, &ssh) == NULL || sh->sh_entsize == 0) return 0;
  if (sh->sh_size > *budget || ssh.sh_size > *budget - sh->sh_size) return -EFBIG;
  *budget -= sh->sh_size + ssh.sh_size;
  img->read_bytes += sh->sh_size + ssh.sh_size;
  if ((d = elf_getdata(scn, NULL)) == NULL) return 0;
  n = d->d_size / sh->sh_entsize;
  for (i = 0; i < n; i++) {
    GElf_Sym sym;
    const char *name;
    char dem[NAME_MAX_BYTES];
    struct elf_func *f;
    if ((i & 0xffff) == 0xffff && cm_mono_ns() > b->deadline_ns) break;
    if (gelf_getsym(d, (int)i, &sym) == NULL) break;
    if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
        sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
      continue;
    if ((name = elf_strptr(e, sh->sh_link, sym.st_name)) == NULL || name[0] == '\0') continue;
    if (img->nfuncs >= b->max_symbols) break;
    if (img->nfuncs == cap) {
      size_t nc = cap ? cap * 2 : 1024;
      struct elf_func *p;
      if (nc > b->max_symbols) nc = (size_t)b->max_symbols;
      if ((p = realloc(img->funcs, nc * sizeof *p)) == NULL) return -ENOMEM;
      img->funcs = p;
      cap = nc;
    }
    f = &img->funcs[img->nfuncs];
    f->addr = sym.st_value;
    f->size = sym.st_size;
    if ((f->name = pool_add(img, name, strlen(name))) == UINT32_MAX) return -ENOMEM;
    f->demangled = NOT_OCAML;
    if (ocgc_ocaml_demangle(img->pool + f->name, dem, sizeof dem) > 0 &&
        (f->demangled = pool_add(img, dem, strlen(dem))) == UINT32_MAX)
      return -ENOMEM;
    img->nfuncs++;
  }
  return 0;
}

/* One pointer -> pool offset cache for a table's file names. */
struct file_cache {
  const char *src[8];
  uint32_t off[8];
  unsigned next;
};

static uint32_t file_of(struct elf_image *img, struct file_cache *c, const char *src)
{
  unsigned i;
  for (i = 0; i < 8; i++)
    if (c->src[i] == src) return c->off[i];
  i = c->next++ & 7;
  c->src[i] = src;
  c->off[i] = pool_add(img, src, strlen(src));
  return c->off[i];
}

/* Whether the DWARF sections can be given to libdw: each decompressed here
 * (its size was counted), and each string section ending in a NUL byte.
 * libdw 0.188 runs strlen() off the end of a string section that does not
 * (found by test_symbols' byte mutations): a check of ours, before it
 * reads anything. */
static int dwarf_ready(Elf *e, size_t shstrndx)
{
  Elf_Scn *scn = NULL;
  size_t nsec = 0;
  while ((scn = elf_nextscn(e, scn)) != NULL && nsec++ < MAX_SECTIONS) {
    GElf_Shdr sh;
    const char *name;
    Elf_Data *d;
    if (gelf_getshdr(scn, &sh) == NULL) return 0;
    if ((name = elf_strptr(e, shstrndx, sh.sh_name)) == NULL) continue;
    if (strncmp(name, ".debug_", 7) != 0 && strncmp(name, ".zdebug_", 8) != 0) continue;
    if (sh.sh_type == SHT_NOBITS) continue;
    if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) return 0;
    if (name[1] == 'z' && elf_compress_gnu(scn, 0, 0) < 0) return 0;
    if (strcmp(name, ".debug_str") == 0 || strcmp(name, ".debug_line_str") == 0 ||
        strcmp(name, ".zdebug_str") == 0 || strcmp(name, ".zdebug_line_str") == 0) {
      if ((d = elf_getdata(scn, NULL)) == NULL || d->d_size == 0 ||
          ((const char *)d->d_buf)[d->d_size - 1] != '\0')
        return 0;
    }
  }
  return 1;
}

/* Every row of every line table, within the bounds. */
static void read_lines(struct elf_image *img, Elf *e, const struct elf_bounds *b)
{
  Dwarf *dw;
  Dwarf_Off off = 0, next;
  Dwarf_CU *cu = NULL;
  size_t cap = 0, shstrndx;
  if (elf_getshdrstrndx(e, &shstrndx) != 0 || !dwarf_ready(e, shstrndx)) return;
  if ((dw = dwarf_begin_elf(e, DWARF_C_READ, NULL)) == NULL) return;
  for (;;) {
    Dwarf_Lines *lines;
    size_t nlines, i;
    struct file_cache fc;
    if (cm_mono_ns() > b->deadline_ns) { img->lines_cut = 1; break; }
    if (dwarf_next_lines(dw, off, &next, &cu, NULL, NULL, &lines, &nlines) != 0) break;
    if (next <= off) break; /* a table that does not move on would loop */
    off = next;
    memset(&fc, 0, sizeof fc);
    for (i = 0; i < nlines; i++) {
      Dwarf_Line *l = dwarf_onesrcline(lines, i);
      Dwarf_Addr a;
      int lineno;
      bool end = false;
      const char *src;
      struct elf_line *row;
      if (l == NULL || dwarf_lineaddr(l, &a) != 0) continue;
      if (dwarf_lineno(l, &lineno) != 0 || lineno < 0) lineno = 0;
      (void)dwarf_lineendsequence(l, &end);
      src = end ? NULL : dwarf_linesrc(l, NULL, NULL);
      if (!end && (src == NULL || lineno == 0)) continue;
      if (img->nlines >= b->max_lines) { img->lines_cut = 1; goto done; }
      if (img->nlines == cap) {
        size_t nc = cap ? cap * 2 : 4096;
        struct elf_line *p;
        if (nc > b->max_lines) nc = (size_t)b->max_lines;
        if ((p = realloc(img->lines, nc * sizeof *p)) == NULL) { img->lines_cut = 1; goto done; }
        img->lines = p;
        cap = nc;
      }
      row = &img->lines[img->nlines];
      row->addr = a;
      row->line = end ? 0 : (uint32_t)lineno;
      row->file = end ? UINT32_MAX : file_of(img, &fc, src);
      if (!end && row->file == UINT32_MAX) { img->lines_cut = 1; goto done; }
      img->nlines++;
    }
  }
done:
  dwarf_end(dw);
}

/* Sort, then drop what a lookup cannot tell apart: a symbol at the address
 * of the one before it, a row with the file and line of the one before. */
static void tidy(struct elf_image *img)
{
  size_t i, o;
  if (img->nfuncs > 1) {
    qsort(img->funcs, img->nfuncs, sizeof *img->funcs, func_cmp);
    for (i = 1, o = 1; i < img->nfuncs; i++)
      if (img->funcs[i].addr != img->funcs[o - 1].addr) img->funcs[o++] = img->funcs[i];
    img->nfuncs = o;
  }
  if (img->nlines > 1) {
    qsort(img->lines, img->nlines, sizeof *img->lines, line_cmp);
    for (i = 1, o = 1; i < img->nlines; i++) {
      const struct elf_line *p = &img->lines[o - 1], *r = &img->lines[i];
      if (r->addr == p->addr) {
        img->lines[o - 1] = *r; /* the later of two rows at one address */
        continue;
      }
      if (r->line == p->line && r->file == p->file) continue;
      img->lines[o++] = *r;
    }
    img->nlines = o;
  }
}

int elf_image_read(int fd, const struct elf_bounds *b, struct elf_image *img)
{
  struct stat st;
  struct statfs sf;
  Elf *e;
  GElf_Ehdr eh;
  Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
  GElf_Shdr symsh, dynsh;
  size_t shstrndx, nph = 0, i, nsec = 0;
  uint64_t budget = b->max_read_bytes, dwarf = 0;
  int alt = 0, err = 0;

  memset(img, 0, sizeof *img);
  if (fstat(fd, &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  if (fstatfs(fd, &sf) == 0 && sf.f_type == FUSE_SUPER_MAGIC) return -EINVAL;
  if ((uint64_t)st.st_size > b->max_file_bytes) return -EFBIG;
  if (elf_version(EV_CURRENT) == EV_NONE) return OCGC_E_CORRUPT;
  if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL) return OCGC_E_CORRUPT;
  if (elf_kind(e) != ELF_K_ELF || gelf_getehdr(e, &eh) == NULL ||
      (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getshdrstrndx(e, &shstrndx) != 0) {
    elf_end(e);
    return OCGC_E_CORRUPT;
  }
  if (elf_getphdrnum(e, &nph) != 0) nph = 0;
  for (i = 0; i < nph && i < MAX_PHDRS && img->nloads < 16; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(e, (int)i, &ph) == NULL || ph.p_type != PT_LOAD) continue;
    img->loads[img->nloads].vaddr = ph.p_vaddr;
    img->loads[img->nloads].offset = ph.p_offset;
    img->loads[img->nloads].filesz = ph.p_filesz;
    img->nloads++;
  }
  while ((scn = elf_nextscn(e, scn)) != NULL && nsec++ < MAX_SECTIONS) {
    GElf_Shdr sh;
    const char *name;
    if (gelf_getshdr(scn, &sh) == NULL) continue;
    name = elf_strptr(e, shstrndx, sh.sh_name);
    if (name == NULL) name = "";
    if (sh.sh_type == SHT_SYMTAB && symtab == NULL) { symtab = scn; symsh = sh; }
    else if (sh.sh_type == SHT_DYNSYM && dynsym == NULL) { dynsym = scn; dynsh = sh; }
    else if (sh.sh_type == SHT_NOTE) build_id(img, scn, &sh);
    if (strcmp(name, ".gnu_debugaltlink") == 0 || strcmp(name, ".debug_sup") == 0) alt = 1;
    if (strncmp(name, ".debug_", 7) == 0 || strncmp(name, ".zdebug_", 8) == 0) {
      uint64_t n = debug_bytes(scn, &sh, name);
      dwarf = n > UINT64_MAX - dwarf ? UINT64_MAX : dwarf + n;
    }
  }
  if (symtab != NULL) err = read_symbols(img, e, symtab, &symsh, b, &budget);
  if (img->nfuncs == 0 && err == 0 && dynsym != NULL)
    err = read_symbols(img, e, dynsym, &dynsh, b, &budget);
  if (err == 0 && !b->no_lines && !alt && dwarf > 0) {
    if (dwarf <= budget) {
      img->read_bytes += dwarf;
      read_lines(img, e, b);
    } else {
      img->lines_cut = 1;
    }
  }
  elf_end(e);
  if (err == -ENOMEM) {
    elf_image_free(img);
    return err;
  }
  tidy(img);
  return 0;
}

void elf_image_free(struct elf_image *img)
{
  free(img->funcs);
  free(img->lines);
  free(img->pool);
  memset(img, 0, sizeof *img);
}

int elf_image_vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr)
{
  size_t i;
  for (i = 0; i < img->nloads; i++) {
    const struct elf_load *l = &img->loads[i];
    if (off >= l->offset && off - l->offset < l->filesz) {
      *vaddr = off - l->offset + l->vaddr;
      return 0;
    }
  }
  return -1;
}

const struct elf_func *elf_image_func(const struct elf_image *img, uint64_t vaddr)
{
  size_t lo = 0, hi = img->nfuncs;
  const struct elf_func *f;
  while (lo < hi) { /* the first symbol above vaddr */
    size_t mid = lo + (hi - lo) / 2;
    if (img->funcs[mid].addr <= vaddr) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return NULL;
  f = &img->funcs[lo - 1];
  if (f->size > 0) return vaddr - f->addr < f->size ? f : NULL;
  return lo < img->nfuncs ? f : NULL; /* unsized: up to the next symbol only */
}

const struct elf_line *elf_image_line(const struct elf_image *img, uint64_t vaddr)
{
  size_t lo = 0, hi = img->nlines;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (img->lines[mid].addr <= vaddr) lo = mid + 1; else hi = mid;
  }
  if (lo == 0 || img->lines[lo - 1].line == 0) return NULL;
  return &img->lines[lo - 1];
}
