/* elfimage.c - one ELF file read for the symbolizer (elfimage.h): its
 * function symbols (libelf), its DWARF line rows (libdw's line tables), its
 * loadable segments and GNU build id, copied into private memory.
 *
 * The file is a target's, so hostile.  Invariants:
 * - libelf and libdw never see the file: elfload.c checks its headers
 *   and sections against the file's size and our counts, and reads what
 *   is needed into a private copy, counted against max_read_bytes (the
 *   symbol and string tables, the DWARF sections and their inflated
 *   sizes); libelf reads that copy (elf_memory);
 * - the string sections libdw reads must end in a NUL (libdw 0.188 reads
 *   past one that does not), compressed ones checked once inflated;
 * - no other file is opened: a file that names one for its DWARF
 *   (.gnu_debugaltlink, .debug_sup) gets no lines; libdw is given only
 *   the line tables to read (dwarf_next_lines), not the DIE tree;
 * - libdw keeps every row of every table it has read till dwarf_end(),
 *   at most LIBDW_ROW_BYTES each, and a row takes at least one byte of
 *   its table: it is ended and begun again every LINES_CHUNK_BYTES of
 *   tables, and a table larger than that is not read, so it never holds
 *   more than LIBDW_ROW_BYTES x LINES_CHUNK_BYTES;
 * - what the image keeps (funcs, lines, pool, by their capacities: held)
 *   stays within max_hold_bytes, names deduplicated by their string-table
 *   offset (a table whose symbols all share one long name costs it once);
 *   every count is bounded (symbols, rows, segments, name lengths) and the
 *   clock is checked between tables and every 64 Ki symbols;
 * - names are copied NUL-terminated and cut at NAME_MAX_BYTES; the pool
 *   stays below 4 GiB (offsets are 32 bits);
 * - an OCaml name is one person can tell apart: an anonymous function's,
 *   or one that functions of different symbols share, carries the file
 *   and line of the function's entry (own_names), within the same bounds. */

#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "elfimage.h"
#include "elfload.h"
#include "ocgc/api.h"
#include "ocgc/symbols.h"

#define NAME_MAX_BYTES 1024u
#define MAX_PHDRS 4096u
#define POOL_MAX (UINT32_C(0xffffffff) - NAME_MAX_BYTES)
#define NOT_OCAML UINT32_MAX
/* libdw's cost of one line row while its tables are held (measured on
 * 0.188: about 95 bytes; a margin over it), and the bytes of tables read
 * between a dwarf_begin and its dwarf_end. */
#define LIBDW_ROW_BYTES 160u
#define LINES_CHUNK_BYTES (UINT64_C(256) << 10)
#define NAME_CACHE 4096u

/* Whether the image may grow by [more] bytes. */
static int may_hold(struct elf_image *img, uint64_t max, size_t more)
{
  return more <= max && img->held <= max - more;
}

/* Append [s] (cut at NAME_MAX_BYTES - 1) and its NUL to the pool: its
 * offset, or UINT32_MAX when the pool may not grow. */
static uint32_t pool_add(struct elf_image *img, const struct elf_bounds *b, const char *s,
                         size_t len)
{
  uint32_t at;
  if (len >= NAME_MAX_BYTES) len = NAME_MAX_BYTES - 1;
  if (img->pool_len + len + 1 > img->pool_cap) {
    size_t cap = img->pool_cap ? img->pool_cap * 2 : 65536;
    char *p;
    while (cap < img->pool_len + len + 1) cap *= 2;
    if (cap > POOL_MAX) cap = POOL_MAX;
    if (!may_hold(img, b->max_hold_bytes, cap - img->pool_cap)) cap = img->pool_len + len + 1;
    if (cap < img->pool_len + len + 1 || !may_hold(img, b->max_hold_bytes, cap - img->pool_cap))
      return UINT32_MAX;
    if ((p = realloc(img->pool, cap)) == NULL) return UINT32_MAX;
    img->held += cap - img->pool_cap;
    img->pool = p;
    img->pool_cap = cap;
  }
  at = (uint32_t)img->pool_len;
  memcpy(img->pool + img->pool_len, s, len);
  img->pool[img->pool_len + len] = '\0';
  img->pool_len += len + 1;
  return at;
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

/* Names already in the pool, by string-table offset: direct-mapped. */
struct name_cache {
  uint32_t key[NAME_CACHE]; /* st_name + 1, 0: empty */
  uint32_t name[NAME_CACHE], demangled[NAME_CACHE];
};

/* The function symbols of the symbol table [ndx], within the bounds:
 * 0, or -ENOMEM. */
static int read_symbols(struct elf_image *img, Elf *e, size_t ndx, const struct elf_bounds *b)
{
  Elf_Scn *scn = elf_getscn(e, ndx);
  GElf_Shdr sh;
  Elf_Data *d;
  size_t n, i, cap = 0;
  struct name_cache *nc;
  int err = 0;
  if (scn == NULL || gelf_getshdr(scn, &sh) == NULL || sh.sh_entsize == 0) return 0;
  if ((d = elf_getdata(scn, NULL)) == NULL) return 0;
  if ((nc = calloc(1, sizeof *nc)) == NULL) return -ENOMEM;
  n = d->d_size / sh.sh_entsize;
  for (i = 0; i < n; i++) {
    GElf_Sym sym;
    const char *name;
    char dem[NAME_MAX_BYTES];
    struct elf_func *f;
    unsigned slot;
    if ((i & 0xffff) == 0xffff && cm_mono_ns() > b->deadline_ns) { img->names_cut = 1; break; }
    if (gelf_getsym(d, (int)i, &sym) == NULL) break;
    if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
        sym.st_shndx == SHN_UNDEF || sym.st_value == 0 || sym.st_name == UINT32_MAX)
      continue;
    if ((name = elf_strptr(e, sh.sh_link, sym.st_name)) == NULL || name[0] == '\0') continue;
    if (img->nfuncs >= b->max_symbols) { img->names_cut = 1; break; }
    if (img->nfuncs == cap) {
      size_t nc2 = cap ? cap * 2 : 1024;
      struct elf_func *p;
      if (nc2 > b->max_symbols) nc2 = (size_t)b->max_symbols;
      if (!may_hold(img, b->max_hold_bytes, (nc2 - cap) * sizeof *p)) { img->names_cut = 1; break; }
      if ((p = realloc(img->funcs, nc2 * sizeof *p)) == NULL) { err = -ENOMEM; break; }
      img->held += (nc2 - cap) * sizeof *p;
      img->funcs = p;
      cap = nc2;
    }
    f = &img->funcs[img->nfuncs];
    f->addr = sym.st_value;
    f->size = sym.st_size;
    f->entry_file = UINT32_MAX;
    f->entry_line = 0;
    slot = (unsigned)(sym.st_name * 2654435761u >> 20) % NAME_CACHE;
    if (nc->key[slot] == sym.st_name + 1) {
      f->name = nc->name[slot];
      f->demangled = nc->demangled[slot];
    } else {
      if ((f->name = pool_add(img, b, name, strlen(name))) == UINT32_MAX) {
        img->names_cut = 1;
        break;
      }
      f->demangled = NOT_OCAML;
      if (ocgc_ocaml_demangle(img->pool + f->name, dem, sizeof dem) > 0 &&
          (f->demangled = pool_add(img, b, dem, strlen(dem))) == UINT32_MAX) {
        img->names_cut = 1;
        break;
      }
      nc->key[slot] = sym.st_name + 1;
      nc->name[slot] = f->name;
      nc->demangled[slot] = f->demangled;
    }
    img->nfuncs++;
  }
  free(nc);
  return err;
}

/* One pointer -> pool offset cache for a table's file names. */
struct file_cache {
  const char *src[8];
  uint32_t off[8];
  unsigned next;
};

static uint32_t file_of(struct elf_image *img, const struct elf_bounds *b, struct file_cache *c,
                        const char *src)
{
  unsigned i;
  for (i = 0; i < 8; i++)
    if (c->src[i] == src) return c->off[i];
  i = c->next++ & 7;
  c->src[i] = src;
  c->off[i] = pool_add(img, b, src, strlen(src));
  return c->off[i];
}

/* Whether the DWARF sections can be given to libdw: each decompressed here
 * (its size was counted), and each string section ending in a NUL byte.
 * libdw 0.188 runs strlen() off the end of a string section that does not
 * (found by test_symbols' byte mutations): a check of ours, before it
 * reads anything.  *line gets .debug_line's bytes, inflated. */
static int dwarf_ready(Elf *e, size_t shstrndx, Elf_Data **line)
{
  Elf_Scn *scn = NULL;
  *line = NULL;
  while ((scn = elf_nextscn(e, scn)) != NULL) {
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
    if ((strcmp(name, ".debug_line") == 0 || strcmp(name, ".zdebug_line") == 0) && *line == NULL)
      *line = elf_getdata(scn, NULL);
  }
  return *line != NULL;
}

/* The length of the line table at [off] of [d], its unit_length field
 * with it (DWARF's 32- or 64-bit form), or 0 if it runs past the end. */
static uint64_t table_bytes(const Elf_Data *d, uint64_t off, int msb)
{
  const unsigned char *p = (const unsigned char *)d->d_buf + off;
  uint64_t left = d->d_size - off, v = 0, head = 4;
  unsigned i, n = 4;
  if (left < 4) return 0;
  for (i = 0; i < 4; i++) v |= (uint64_t)p[msb ? i : 3 - i] << (8 * (3 - i));
  if (v == 0xffffffffu) {
    if (left < 12) return 0;
    p += 4;
    n = 8;
    head = 12;
    for (v = 0, i = 0; i < n; i++) v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
  }
  if (v > left - head) return 0;
  return v + head;
}

/* [row], the first of its table at its address: the entry row of the
 * function that begins there, if any (the first such row found). */
static void entry_of(struct elf_image *img, const struct elf_line *row)
{
  size_t lo = 0, hi = img->nfuncs;
  struct elf_func *f;
  while (lo < hi) { /* the first function at or above row->addr */
    size_t mid = lo + (hi - lo) / 2;
    if (img->funcs[mid].addr < row->addr) lo = mid + 1; else hi = mid;
  }
  if (lo == img->nfuncs || (f = &img->funcs[lo])->addr != row->addr || f->entry_line != 0) return;
  f->entry_file = row->file;
  f->entry_line = row->line;
}

/* The rows of one table, within the bounds: 0, or -1 to stop. */
static int keep_rows(struct elf_image *img, const struct elf_bounds *b, Dwarf_Lines *lines,
                     size_t nlines, size_t *cap)
{
  struct file_cache fc;
  size_t i;
  uint64_t prev = UINT64_MAX; /* the address of the table's row before */
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
    if (img->nlines >= b->max_lines) return -1;
    if (img->nlines == *cap) {
      size_t nc = *cap ? *cap * 2 : 4096;
      struct elf_line *p;
      if (nc > b->max_lines) nc = (size_t)b->max_lines;
      if (!may_hold(img, b->max_hold_bytes, (nc - *cap) * sizeof *p)) return -1;
      if ((p = realloc(img->lines, nc * sizeof *p)) == NULL) return -1;
      img->held += (nc - *cap) * sizeof *p;
      img->lines = p;
      *cap = nc;
    }
    row = &img->lines[img->nlines];
    row->addr = a;
    row->line = end ? 0 : (uint32_t)lineno;
    row->file = end ? UINT32_MAX : file_of(img, b, &fc, src);
    if (!end && row->file == UINT32_MAX) return -1;
    img->nlines++;
    /* The first row at a function's address is its own line; one after
     * it at that address is code inlined there (which a lookup prefers:
     * tidy_lines keeps the later). */
    if (!end && a != prev) entry_of(img, row);
    prev = a;
  }
  return 0;
}

/* Every row of every line table, within the bounds, LINES_CHUNK_BYTES of
 * tables per libdw session. */
static void read_lines(struct elf_image *img, Elf *e, const struct elf_bounds *b)
{
  Dwarf *dw = NULL;
  Dwarf_Off off = 0, next;
  Dwarf_CU *cu = NULL;
  Elf_Data *line;
  size_t cap = 0, shstrndx;
  uint64_t chunk = 0;
  const char *ident = elf_getident(e, NULL);
  int msb = ident != NULL && ident[EI_DATA] == ELFDATA2MSB;
  if (elf_getshdrstrndx(e, &shstrndx) != 0 || !dwarf_ready(e, shstrndx, &line)) return;
  while (off < line->d_size) {
    Dwarf_Lines *lines;
    size_t nlines;
    uint64_t len = table_bytes(line, off, msb);
    if (len == 0) break;
    if (len > LINES_CHUNK_BYTES) { /* more rows than a session may hold */
      img->lines_cut = 1;
      off += len;
      continue;
    }
    if (dw != NULL && chunk + len > LINES_CHUNK_BYTES) {
      dwarf_end(dw);
      dw = NULL;
    }
    if (dw == NULL) {
      if ((dw = dwarf_begin_elf(e, DWARF_C_READ, NULL)) == NULL) break;
      chunk = 0;
      cu = NULL;
    }
    chunk += len;
    if (cm_mono_ns() > b->deadline_ns) { img->lines_cut = 1; break; }
    if (dwarf_next_lines(dw, off, &next, &cu, NULL, NULL, &lines, &nlines) != 0) break;
    if (next != off + len) break; /* libdw's table is not the one counted */
    off = next;
    if (keep_rows(img, b, lines, nlines, &cap) != 0) { img->lines_cut = 1; break; }
  }
  if (dw != NULL) dwarf_end(dw);
}

/* Sort, then drop what a lookup cannot tell apart: a symbol at the address
 * of the one before it (tidy_funcs), a row with the file and line of the
 * one before (tidy_lines). */
static void tidy_funcs(struct elf_image *img)
{
  size_t i, o;
  if (img->nfuncs > 1) {
    qsort(img->funcs, img->nfuncs, sizeof *img->funcs, func_cmp);
    for (i = 1, o = 1; i < img->nfuncs; i++)
      if (img->funcs[i].addr != img->funcs[o - 1].addr) img->funcs[o++] = img->funcs[i];
    img->nfuncs = o;
  }
}

static void tidy_lines(struct elf_image *img)
{
  size_t i, o;
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

/* ---- names a person tells apart ----------------------------------------------------- */

static const char *demangled_of(const struct elf_image *img, const struct elf_func *f)
{
  return img->pool + f->demangled;
}

/* qsort_r's: the OCaml functions by name, then address. */
static int by_name(const void *a, const void *b, void *arg)
{
  const struct elf_image *img = arg;
  const struct elf_func *x = &img->funcs[*(const uint32_t *)a];
  const struct elf_func *y = &img->funcs[*(const uint32_t *)b];
  int c = x->demangled == y->demangled ? 0 : strcmp(demangled_of(img, x), demangled_of(img, y));
  if (c != 0) return c;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Whether [name] is an anonymous function's: its last step "fun". */
static int anonymous(const char *name)
{
  size_t n = strlen(name);
  return n >= 4 && strcmp(name + n - 4, ".fun") == 0;
}

/* The stamp of OCaml symbol [sym] ("_" and digits at its end), or "". */
static const char *stamp_of(const char *sym)
{
  size_t n = strlen(sym), i = n;
  while (i > 0 && sym[i - 1] >= '0' && sym[i - 1] <= '9') i--;
  return i < n && i > 0 && sym[i - 1] == '_' ? sym + i - 1 : "";
}

/* Qualified names already in the pool, by hash: direct-mapped, so that
 * functions of one name, file and line share one string. */
struct qual_cache {
  uint32_t hash[NAME_CACHE], at[NAME_CACHE]; /* at + 1, 0: empty */
};

/* [f]'s name made its own: "Module.fun@file.ml:LINE" (the first line row
 * at its entry: where ocamlopt puts the function's definition; a row after
 * it at that address is code inlined there, another file's), else, where no
 * row is known (built without -g), its symbol's stamp ("Main.fun_1234",
 * "Stdlib.List.find_436").  0, or -1
 * when the pool may not grow (the plain name stays). */
static int qualify(struct elf_image *img, const struct elf_bounds *b, struct qual_cache *qc,
                   struct elf_func *f)
{
  char name[NAME_MAX_BYTES];
  const char *dem = demangled_of(img, f);
  uint32_t at, h = 2166136261u;
  unsigned slot;
  int n, i;
  if (f->entry_line != 0) {
    const char *file = img->pool + f->entry_file, *slash = strrchr(file, '/');
    n = snprintf(name, sizeof name, "%s@%s:%u", dem, slash ? slash + 1 : file, f->entry_line);
  } else {
    const char *st = stamp_of(img->pool + f->name);
    if (st[0] == '\0') return 0; /* nothing to add */
    n = snprintf(name, sizeof name, "%s%s", dem, st);
  }
  if (n < 0 || (size_t)n >= sizeof name) return 0;
  for (i = 0; i < n; i++) h = (h ^ (unsigned char)name[i]) * 16777619u;
  slot = h % NAME_CACHE;
  if (qc->at[slot] != 0 && qc->hash[slot] == h && strcmp(img->pool + qc->at[slot] - 1, name) == 0) {
    f->demangled = qc->at[slot] - 1;
    return 0;
  }
  if ((at = pool_add(img, b, name, (size_t)n)) == UINT32_MAX) return -1;
  qc->hash[slot] = h;
  qc->at[slot] = at + 1;
  f->demangled = at;
  return 0;
}

/* OCaml gives every function a symbol of its own but the demangled name
 * drops the stamp that tells two apart: every anonymous function of a
 * module is "Module.fun", and a local function is named as a top-level
 * one of the same name (List.find_all's inner "find" reads
 * "Stdlib.List.find").  Such names are made their own (qualify): every
 * anonymous function, and every function whose name another function of
 * the file shares under another symbol (the same symbol at two addresses
 * tells nothing more).  Bounded: one sort of the functions, a line lookup
 * and at most NAME_MAX_BYTES of pool each (within max_hold_bytes; one
 * string for every function of one name, file and line), the clock
 * checked every 64 Ki. */
static void own_names(struct elf_image *img, const struct elf_bounds *b)
{
  struct qual_cache *qc;
  uint32_t *ix;
  size_t n = 0, i, j;
  if (img->nfuncs == 0 || img->nfuncs > UINT32_MAX) return;
  if ((ix = malloc(img->nfuncs * sizeof *ix)) == NULL) return;
  if ((qc = calloc(1, sizeof *qc)) == NULL) {
    free(ix);
    return;
  }
  for (i = 0; i < img->nfuncs; i++)
    if (img->funcs[i].demangled != NOT_OCAML) ix[n++] = (uint32_t)i;
  qsort_r(ix, n, sizeof *ix, by_name, img);
  for (i = 0; i < n; i = j) {
    const struct elf_func *first = &img->funcs[ix[i]];
    const char *dem = demangled_of(img, first);
    int own = anonymous(dem);
    for (j = i + 1; j < n && (img->funcs[ix[j]].demangled == first->demangled ||
                              strcmp(demangled_of(img, &img->funcs[ix[j]]), dem) == 0); j++)
      if (img->funcs[ix[j]].name != first->name &&
          strcmp(img->pool + img->funcs[ix[j]].name, img->pool + first->name) != 0)
        own = 1;
    if (!own) continue;
    for (; i < j; i++) {
      if ((i & 0xffff) == 0xffff && cm_mono_ns() > b->deadline_ns) goto done;
      if (qualify(img, b, qc, &img->funcs[ix[i]]) != 0) {
        img->names_cut = 1;
        goto done;
      }
    }
  }
done:
  free(qc);
  free(ix);
}

int elf_image_read(int fd, const struct elf_bounds *b, struct elf_image *img)
{
  struct elf_loaded ld;
  Elf *e;
  GElf_Ehdr eh;
  size_t shstrndx, nph = 0, nsec = 0, i;
  int err = 0;

  memset(img, 0, sizeof *img);
  if (elf_version(EV_CURRENT) == EV_NONE) return OCGC_E_CORRUPT;
  if ((err = elf_load(fd, b, &ld)) != 0) return err;
  memcpy(img->build_id, ld.build_id, sizeof img->build_id);
  img->read_bytes = ld.read_bytes;
  img->lines_cut = ld.dwarf_cut;
  if ((e = elf_memory((char *)ld.image, ld.size)) == NULL) {
    elf_unload(&ld);
    return OCGC_E_CORRUPT;
  }
  /* libelf reads the copy elfload.c checked: the same counts, or nothing. */
  if (elf_kind(e) != ELF_K_ELF || gelf_getehdr(e, &eh) == NULL ||
      (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getshdrstrndx(e, &shstrndx) != 0 ||
      elf_getshdrnum(e, &nsec) != 0 || nsec != ld.nsections) {
    elf_end(e);
    elf_unload(&ld);
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
  if (ld.symtab != 0) err = read_symbols(img, e, ld.symtab, b);
  if (img->nfuncs == 0 && err == 0 && ld.dynsym != 0) err = read_symbols(img, e, ld.dynsym, b);
  tidy_funcs(img); /* sorted: keep_rows finds a function's entry row */
  if (err == 0 && ld.dwarf) read_lines(img, e, b);
  elf_end(e);
  elf_unload(&ld);
  if (err == -ENOMEM) {
    elf_image_free(img);
    return err;
  }
  tidy_lines(img);
  own_names(img, b);
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
