/* cfigen.c - the executable of cfigen.h: whatever .eh_frame and
 * .eh_frame_hdr bytes it is given, in a file whose headers are sound, so
 * that what is tested (fuzzed) is the CFI and not the ELF headers (those
 * are fuzz_elf's).  Layout: headers, .text at file offset 0x1000, the CFI
 * at 0x2000, the symbol table, the section names, the section headers. */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cfigen.h"

#define BASE UINT64_C(0x400000)

static void le(unsigned char *p, uint64_t v, unsigned n)
{
  unsigned i;
  for (i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void shdr(unsigned char *p, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
                 uint64_t off, uint64_t size, uint32_t link, uint32_t info, uint64_t align,
                 uint64_t entsize)
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
  le(p + 48, align, 8);
  le(p + 56, entsize, 8);
}

static void phdr(unsigned char *p, uint32_t type, uint32_t flags, uint64_t off, uint64_t size,
                 uint64_t align)
{
  memset(p, 0, 56);
  le(p, type, 4);
  le(p + 4, flags, 4);
  le(p + 8, off, 8);
  le(p + 16, BASE + off, 8);
  le(p + 24, BASE + off, 8);
  le(p + 32, size, 8);
  le(p + 40, size, 8);
  le(p + 48, align, 8);
}

static uint64_t up8(uint64_t v)
{
  return (v + 7) & ~UINT64_C(7);
}

uint64_t cfigen_hdr_addr(size_t eh_len)
{
  return up8(CFIGEN_EH_FRAME + eh_len);
}

static int put(int fd, const void *p, size_t n, uint64_t at)
{
  return n == 0 || pwrite(fd, p, n, (off_t)at) == (ssize_t)n ? 0 : -1;
}

int cfigen_write(int fd, const unsigned char *eh, size_t eh_len, const unsigned char *hdr,
                 size_t hdr_len)
{
  static const char names[] = "\0.text\0.eh_frame\0.eh_frame_hdr\0.symtab\0.strtab\0.shstrtab\0";
  static const char strtab[] = "\0f\0";
  enum { N_TEXT = 1, N_EH = 7, N_HDR = 17, N_SYMTAB = 31, N_STRTAB = 39, N_SHSTR = 47 };
  unsigned char eh0[64], ph[2 * 56], text[CFIGEN_TEXT_SIZE], sym[48], sh[7 * 64];
  uint64_t eh_off = CFIGEN_EH_FRAME - BASE, hdr_off = cfigen_hdr_addr(eh_len) - BASE;
  uint64_t sym_off = up8(hdr_off + hdr_len), str_off = sym_off + sizeof sym;
  uint64_t names_off = str_off + sizeof strtab, sh_off = up8(names_off + sizeof names);
  unsigned nph = hdr_len > 0 ? 2 : 1, nsh = 0;

  memset(eh0, 0, sizeof eh0);
  memcpy(eh0, "\177ELF\2\1\1", 7);
  le(eh0 + 16, 2, 2);  /* ET_EXEC */
  le(eh0 + 18, 62, 2); /* EM_X86_64 */
  le(eh0 + 20, 1, 4);
  le(eh0 + 24, CFIGEN_TEXT, 8);
  le(eh0 + 32, 64, 8);
  le(eh0 + 40, sh_off, 8);
  le(eh0 + 52, 64, 2);
  le(eh0 + 54, 56, 2);
  le(eh0 + 56, nph, 2);
  le(eh0 + 58, 64, 2);

  phdr(ph, 1, 5, 0, sh_off, 0x1000); /* PT_LOAD r-x over everything before the section headers */
  if (hdr_len > 0) phdr(ph + 56, 0x6474e550, 4, hdr_off, hdr_len, 4); /* PT_GNU_EH_FRAME */

  memset(text, 0x90, sizeof text); /* nop */
  memset(sym, 0, sizeof sym);      /* [0] null, [1] f: FUNC GLOBAL in .text */
  le(sym + 24, 1, 4);
  sym[24 + 4] = 0x12;
  le(sym + 24 + 6, 1, 2); /* .text */
  le(sym + 24 + 8, CFIGEN_TEXT, 8);
  le(sym + 24 + 16, CFIGEN_TEXT_SIZE, 8);

  memset(sh, 0, sizeof sh);
  nsh = 1;
  shdr(sh + 64 * nsh++, N_TEXT, 1, 6, CFIGEN_TEXT, CFIGEN_TEXT - BASE, CFIGEN_TEXT_SIZE, 0, 0, 16, 0);
  shdr(sh + 64 * nsh++, N_EH, 1, 2, CFIGEN_EH_FRAME, eh_off, eh_len, 0, 0, 8, 0);
  if (hdr_len > 0)
    shdr(sh + 64 * nsh++, N_HDR, 1, 2, BASE + hdr_off, hdr_off, hdr_len, 0, 0, 4, 0);
  shdr(sh + 64 * nsh, N_SYMTAB, 2, 0, 0, sym_off, sizeof sym, nsh + 1, 1, 8, 24);
  nsh++;
  shdr(sh + 64 * nsh++, N_STRTAB, 3, 0, 0, str_off, sizeof strtab, 0, 0, 1, 0);
  shdr(sh + 64 * nsh++, N_SHSTR, 3, 0, 0, names_off, sizeof names, 0, 0, 1, 0);
  le(eh0 + 60, nsh, 2);
  le(eh0 + 62, nsh - 1, 2);

  if (ftruncate(fd, 0) != 0 || put(fd, eh0, sizeof eh0, 0) != 0 ||
      put(fd, ph, 56 * nph, 64) != 0 || put(fd, text, sizeof text, CFIGEN_TEXT - BASE) != 0 ||
      put(fd, eh, eh_len, eh_off) != 0 || put(fd, hdr, hdr_len, hdr_off) != 0 ||
      put(fd, sym, sizeof sym, sym_off) != 0 || put(fd, strtab, sizeof strtab, str_off) != 0 ||
      put(fd, names, sizeof names, names_off) != 0 || put(fd, sh, 64 * nsh, sh_off) != 0)
    return -1;
  return 0;
}
