/* cfigen.h - an executable around crafted call frame information, for the
 * unwinder's fuzz target and tests (cfigen.c): ELF64 x86-64 ET_EXEC, one
 * PT_LOAD at 0x400000 over the whole file, CFIGEN_TEXT_SIZE bytes of
 * .text at CFIGEN_TEXT (a function "f" over all of it), the given bytes as
 * .eh_frame at CFIGEN_EH_FRAME and, when given, as .eh_frame_hdr right
 * after it (8-aligned, with its PT_GNU_EH_FRAME). */
#ifndef OCGC_TEST_CFIGEN_H
#define OCGC_TEST_CFIGEN_H

#include <stddef.h>
#include <stdint.h>

#define CFIGEN_TEXT UINT64_C(0x401000)
#define CFIGEN_TEXT_SIZE 0x1000u
#define CFIGEN_EH_FRAME UINT64_C(0x402000)

/* Where .eh_frame_hdr goes for an .eh_frame of [eh_len] bytes. */
uint64_t cfigen_hdr_addr(size_t eh_len);

/* Write the file to [fd] (empty, seekable): 0, or -1 with errno. */
int cfigen_write(int fd, const unsigned char *eh, size_t eh_len, const unsigned char *hdr,
                 size_t hdr_len);

#endif /* OCGC_TEST_CFIGEN_H */
