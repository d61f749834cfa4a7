/* elfgen.c - the hostile ELF shapes of elfgen.h, written small: a shape's
 * cost is in what its headers claim (sparse tables, compressed rows,
 * sections sharing their bytes, symbols sharing their name), not in the
 * bytes written.  ELF64, little-endian, ET_EXEC; one PT_LOAD at 0x400000
 * over the file's first 8 KiB. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "elfgen.h"

#define TEXT_OFF 0x1000u
#define NAME_BYTES 1023u

struct out {
  int fd;
  uint64_t at; /* where the next piece goes */
  int err;
};

static void le(unsigned char *p, uint64_t v, unsigned n)
{
  unsigned i;
  for (i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* [n] bytes at the end: their offset. */
static uint64_t put(struct out *o, const void *p, size_t n)
{
  uint64_t at = (o->at + 7) & ~UINT64_C(7);
  if (n > 0 && pwrite(o->fd, p, n, (off_t)at) != (ssize_t)n) o->err = -1;
  o->at = at + n;
  return at;
}

static void shdr(unsigned char *p, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
                 uint64_t off, uint64_t size, uint32_t link, uint32_t info, uint64_t entsize)
{
  memset(p, 0, 64);
  le(p, name, 4);
  le(p + 4, type, 4);
  le(p + 8, flags, 8);
  le(p + 16, addr, 8);
  le(p + 24, off, 8);
  le(p + 32, size, 8);
  le(p + 40, link, 4);
  le(p + 44, info, 4);
  le(p + 48, 1, 8);
  le(p + 56, entsize, 8);
}

/* A DWARF 4 line table of [rows] rows, one byte each, from [addr]. */
static size_t line_table(unsigned char *p, uint64_t addr, uint64_t rows)
{
  static const unsigned char head[] = {
      4, 0,                                     /* version */
      0, 0, 0, 0,                               /* header_length, below */
      1, 1, 1, (unsigned char)-5, 14, 13,       /* min_inst, max_ops, is_stmt, base, range, opbase */
      0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,      /* standard_opcode_lengths */
      0,                                        /* no include directories */
      'a', '.', 'm', 'l', 0, 0, 0, 0,           /* a.ml, dir 0, mtime 0, length 0 */
      0};                                       /* end of files */
  size_t n = 4, i;
  memcpy(p + n, head, sizeof head);
  le(p + n + 2, sizeof head - 6, 4);
  n += sizeof head;
  p[n++] = 0; p[n++] = 9; p[n++] = 2; /* DW_LNE_set_address */
  le(p + n, addr, 8);
  n += 8;
  for (i = 0; i < rows; i++) p[n++] = (1 + 5) + 14 * 1 + 13; /* address +1, line +1 */
  p[n++] = 0; p[n++] = 1; p[n++] = 1; /* DW_LNE_end_sequence */
  le(p, n - 4, 4);
  return n;
}

int elfgen_shape_of(const char *s)
{
  static const char *const names[] = {"sections", "lines", "notes", "names"};
  int i;
  for (i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static int write_shape(int fd, enum elfgen_shape shape, uint64_t n, uint64_t tables,
                       const char *one);

int elfgen_write(int fd, enum elfgen_shape shape, uint64_t n, uint64_t tables)
{
  return write_shape(fd, shape, n, tables, NULL);
}

int elfgen_write_one(int fd, const char *name)
{
  if (strlen(name) > NAME_BYTES) { errno = EINVAL; return -1; }
  return write_shape(fd, ELFGEN_NAMES, 1, 0, name);
}

static int write_shape(int fd, enum elfgen_shape shape, uint64_t n, uint64_t tables,
                       const char *one)
{
  static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.text\0.debug_line\0.note";
  enum { N_SHSTRTAB = 1, N_STRTAB = 11, N_SYMTAB = 19, N_TEXT = 27, N_LINE = 33, N_NOTE = 45 };
  struct out o = {fd, TEXT_OFF + 0x1000, 0};
  unsigned char eh[64], ph[56], *sh, *buf;
  uint64_t shoff, nsec, i, str_off, str_len, sym_off, sym_len, line_off = 0, line_len = 0,
                                                                  note_off = 0;
  uint64_t nsyms = shape == ELFGEN_NAMES ? n : 1;
  char name[NAME_BYTES + 1];

  if (ftruncate(fd, o.at) != 0) return -1;
  /* The strings: one name, long when the symbols share it. */
  memset(name, 0, sizeof name);
  if (one != NULL) {
    strcpy(name, one);
  } else if (shape == ELFGEN_NAMES) {
    memcpy(name, "camlHostile__", 13);
    memset(name + 13, 'f', NAME_BYTES - 13 - 2);
    memcpy(name + NAME_BYTES - 2, "_1", 2);
  } else {
    strcpy(name, "camlHostile__f_1");
  }
  {
    size_t len = strlen(name);
    unsigned char *s = calloc(1, len + 2);
    if (s == NULL) return -1;
    memcpy(s + 1, name, len);
    str_len = len + 2;
    str_off = put(&o, s, str_len);
    free(s);
  }
  /* The symbols: null, then functions, 16 bytes apart. */
  sym_len = (nsyms + 1) * 24;
  if ((buf = calloc(1, (size_t)sym_len)) == NULL) return -1;
  for (i = 0; i < nsyms; i++) {
    unsigned char *p = buf + (i + 1) * 24;
    le(p, 1, 4);             /* st_name: the one name */
    p[4] = 0x12;             /* GLOBAL FUNC */
    le(p + 6, 3, 2);         /* .text */
    le(p + 8, ELFGEN_FUNC + 16 * i, 8);
    le(p + 16, 16, 8);
  }
  sym_off = put(&o, buf, (size_t)sym_len);
  free(buf);
  if (shape == ELFGEN_LINES) {
    /* tables x (n / tables) rows, inflated here and zlib-compressed. */
    uint64_t per = n / (tables ? tables : 1), raw_len = 0;
    size_t room = (size_t)per + 64;
    unsigned char *raw = malloc((size_t)(tables ? tables : 1) * room);
    uLongf zlen;
    unsigned char *z;
    if (raw == NULL) return -1;
    for (i = 0; i < (tables ? tables : 1); i++)
      raw_len += line_table(raw + raw_len, ELFGEN_FUNC, per);
    zlen = compressBound((uLong)raw_len);
    if ((z = malloc(24 + zlen)) == NULL) { free(raw); return -1; }
    memset(z, 0, 24);
    le(z, 1, 4);            /* ELFCOMPRESS_ZLIB */
    le(z + 8, raw_len, 8);  /* ch_size */
    le(z + 16, 1, 8);       /* ch_addralign */
    if (compress2(z + 24, &zlen, raw, (uLong)raw_len, 9) != Z_OK) { free(raw); free(z); return -1; }
    line_len = 24 + zlen;
    line_off = put(&o, z, (size_t)line_len);
    free(raw);
    free(z);
  }
  if (shape == ELFGEN_NOTES) {
    /* 64 KiB of empty notes (no name, no type), shared by every section. */
    unsigned char *z = calloc(1, 65536);
    if (z == NULL) return -1;
    note_off = put(&o, z, 65536);
    free(z);
  }
  put(&o, shstr, sizeof shstr);
  /* The section header table. */
  nsec = shape == ELFGEN_SECTIONS ? n : shape == ELFGEN_NOTES ? 5 + n : shape == ELFGEN_LINES ? 6 : 5;
  shoff = (o.at + 63) & ~UINT64_C(63);
  {
    uint64_t shstr_off = o.at - sizeof shstr;
    size_t k = shape == ELFGEN_SECTIONS ? 5 : (size_t)nsec;
    if ((sh = calloc(k, 64)) == NULL) return -1;
    if (shape == ELFGEN_SECTIONS) le(sh + 32, n, 8); /* section 0's sh_size: the count */
    shdr(sh + 64, N_SHSTRTAB, 3, 0, 0, shstr_off, sizeof shstr, 0, 0, 0);
    shdr(sh + 128, N_STRTAB, 3, 0, 0, str_off, str_len, 0, 0, 0);
    shdr(sh + 192, N_TEXT, 1, 6, ELFGEN_FUNC, TEXT_OFF, 0x1000, 0, 0, 0);
    shdr(sh + 256, N_SYMTAB, 2, 0, 0, sym_off, sym_len, 2, 1, 24);
    if (shape == ELFGEN_LINES) shdr(sh + 320, N_LINE, 1, 0x800, 0, line_off, line_len, 0, 0, 0);
    if (shape == ELFGEN_NOTES)
      for (i = 5; i < nsec; i++) shdr(sh + 64 * i, N_NOTE, 7, 2, 0, note_off, 65536, 0, 0, 0);
    if (pwrite(fd, sh, k * 64, (off_t)shoff) != (ssize_t)(k * 64)) o.err = -1;
    free(sh);
    /* the rest of a claimed table: sparse */
    if (ftruncate(fd, (off_t)(shoff + nsec * 64)) != 0) o.err = -1;
  }
  /* The headers. */
  memset(eh, 0, sizeof eh);
  memcpy(eh, "\177ELF\2\1\1", 7);
  le(eh + 16, 2, 2);           /* ET_EXEC */
  le(eh + 18, 62, 2);          /* x86-64 */
  le(eh + 20, 1, 4);
  le(eh + 24, ELFGEN_FUNC, 8); /* entry */
  le(eh + 32, 64, 8);          /* phoff */
  le(eh + 40, shoff, 8);
  le(eh + 52, 64, 2);
  le(eh + 54, 56, 2);
  le(eh + 56, 1, 2);
  le(eh + 58, 64, 2);
  le(eh + 60, nsec < 0xff00 ? nsec : 0, 2);
  le(eh + 62, 1, 2);           /* .shstrtab */
  memset(ph, 0, sizeof ph);
  le(ph, 1, 4);                /* PT_LOAD */
  le(ph + 4, 5, 4);            /* R X */
  le(ph + 16, 0x400000, 8);
  le(ph + 24, 0x400000, 8);
  le(ph + 32, 0x2000, 8);
  le(ph + 40, 0x2000, 8);
  le(ph + 48, 0x1000, 8);
  if (pwrite(fd, eh, sizeof eh, 0) != sizeof eh || pwrite(fd, ph, sizeof ph, 64) != sizeof ph)
    o.err = -1;
  if (o.err) {
    if (errno == 0) errno = EIO;
    return -1;
  }
  return 0;
}
