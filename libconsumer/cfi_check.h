/* cfi_check.h - whether a file's call frame information is safe to hand
 * to libdw, whose CFI interpreter sizes its register table by the largest
 * register number an instruction names and copies it at each
 * DW_CFA_remember_state (private; cfi_check.c). */
#ifndef OCGC_CFI_CHECK_H
#define OCGC_CFI_CHECK_H

#include <stddef.h>

/* Register numbers a CFI instruction may name (x86-64's DWARF numbers end
 * near 130; AArch64's at 127). */
#define CFI_MAX_REG 255u
/* DW_CFA_remember_state without its restore, at once; and in all, in one
 * entry (libdw copies the rules at each, at each lookup). */
#define CFI_MAX_STATES 64u
#define CFI_MAX_REMEMBERED 1024u
/* Bytes of one entry (libdw runs an FDE's instructions up to the address
 * looked up, at each lookup: a sample's time is linear in this). */
#define CFI_MAX_ENTRY (256u * 1024u)

/* Walk every entry of [p, p + n), an .eh_frame (eh nonzero) or a
 * .debug_frame, and every instruction of each: 0 if each names registers
 * up to CFI_MAX_REG only, nests at most CFI_MAX_STATES remembered states
 * (CFI_MAX_REMEMBERED in an entry), holds entries of CFI_MAX_ENTRY bytes at
 * most, its DWARF expressions no branch and only known operations,
 * and uses only instructions and augmentations this walk knows; else -1.
 * Linear in n, no allocation. */
int cfi_check(const unsigned char *p, size_t n, int eh);

#endif /* OCGC_CFI_CHECK_H */
