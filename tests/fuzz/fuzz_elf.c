/* fuzz_elf.c - libFuzzer target for the symbolizer's reading of an ELF
 * file (libconsumer/elfimage.c through ocgc_symbols_open_elf): a target's
 * executable is hostile input.  The bytes are a file (a memfd: nothing on
 * disk); it is read with the default bounds and looked up at addresses
 * around the seeds' functions (tests/fixtures/elf: 0x40010c..0x400150).
 * Invariants checked (abort() if one breaks): a failed open leaves no
 * symbolizer; a named address has a symbol, and every string is
 * NUL-terminated within its bound (1024 bytes). */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ocgc/consumer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct ocgc_symbols *s = (struct ocgc_symbols *)1;
  struct ocgc_symbol sym;
  uint64_t a;
  int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
  if (fd < 0) abort();
  if (size > 0 && write(fd, data, size) != (ssize_t)size) abort();
  if (ocgc_symbols_open_elf(fd, "fuzz", NULL, &s) != 0) {
    if (s != NULL) abort();
    close(fd);
    return 0;
  }
  for (a = 0x400100; a < 0x400160; a += 5)
    if (ocgc_symbols_lookup(s, a, 1, &sym) == 1) {
      if (sym.function == NULL || sym.symbol == NULL) abort();
      if (strnlen(sym.symbol, 1024) == 1024 || strnlen(sym.function, 1024) == 1024) abort();
      if (sym.file != NULL && strnlen(sym.file, 1024) == 1024) abort();
    }
  ocgc_symbols_close(s);
  close(fd);
  return 0;
}
