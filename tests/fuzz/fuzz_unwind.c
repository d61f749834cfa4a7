/* fuzz_unwind.c - libFuzzer target for the unwinder's inputs
 * (libconsumer/cpu_unwind.c through ocgc_unwind_open and
 * ocgc_unwind_sample): a sample's registers and stack copy, and the
 * executable's CFI, are all a target's to choose.  The input:
 *   byte 0        mode: bit 0 the rest after the sample is a whole ELF
 *                 file; else it is CFI put in an executable by cfigen.c;
 *                 bit 1 the instruction pointer is taken as it is, else
 *                 as an offset into the text (CFIGEN_TEXT); bits 2..3 the
 *                 max_depth (0: default, 1: 1, 2: 3, 3: 16)
 *   17 x 8 bytes  the registers, DWARF numbering (little-endian)
 *   2 bytes       the stack copy's size (at most 16 KiB), then its bytes
 *   2 bytes       (CFI mode) the .eh_frame's size, its bytes, and the
 *                 rest: .eh_frame_hdr (none when empty)
 * Short inputs are read as if zero-filled.  The file is a memfd: nothing
 * on disk.  Invariants checked (abort() if one breaks): a failed open
 * leaves no unwinder; a sample gives between 1 and max_depth frames, the
 * first the sampled instruction, and a known end, and so does unwinding
 * it again (the unwinder keeps libdwfl's state between samples); under
 * ASan, no read outside the copy.  Not checked: that the second stack is
 * the first.  Without a usable .eh_frame_hdr, libdw looks an address up by
 * reading the .eh_frame's entries in order, and a corrupt entry fails the
 * lookup that meets it but is passed over by the next one (fde.c keeps
 * where it stopped): a sample through crafted CFI may end LOST once and
 * unwind further the next time, marked either way (found by this target:
 * corpus/unwind/crash-4afe788f...). */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfigen.h"
#include "ocgc/consumer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
  const uint8_t *p;
  size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < bytes && in->n > 0; i++, in->p++, in->n--) v |= (uint64_t)in->p[0] << (8 * i);
  return v;
}

static const uint8_t *take_bytes(struct in *in, size_t *len)
{
  const uint8_t *p = in->p;
  if (*len > in->n) *len = in->n;
  in->p += *len;
  in->n -= *len;
  return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const unsigned depths[4] = {0, 1, 3, 16};
  struct ocgc_unwind_opts o = OCGC_OPTS_INIT(struct ocgc_unwind_opts);
  struct ocgc_symbols *names = (struct ocgc_symbols *)1;
  struct ocgc_unwind *u = (struct ocgc_unwind *)1;
  struct ocgc_cpu_sample s;
  struct ocgc_unwind_stack st, again;
  struct in in = {data, size};
  unsigned mode = (unsigned)take(&in, 1), i, max;
  size_t stack_len, eh_len;
  const uint8_t *eh;
  int fd, d;

  memset(&s, 0, sizeof s);
  s.pid = s.tid = 4242;
  s.regs_known = 1;
  for (i = 0; i < OCGC_CPU_NREGS; i++) s.regs[i] = take(&in, 8);
  if (!(mode & 2)) s.regs[OCGC_CPU_REG_IP] = CFIGEN_TEXT + s.regs[OCGC_CPU_REG_IP] % CFIGEN_TEXT_SIZE;
  s.ip = s.regs[OCGC_CPU_REG_IP];
  stack_len = (size_t)take(&in, 2) % 16385;
  s.stack = take_bytes(&in, &stack_len);
  s.stack_size = stack_len;
  o.max_depth = depths[(mode >> 2) & 3];
  max = o.max_depth ? o.max_depth : OCGC_UNWIND_MAX_DEPTH;

  if ((fd = memfd_create("fuzz-unwind", MFD_CLOEXEC)) < 0) abort();
  if (mode & 1) {
    if (in.n > 0 && write(fd, in.p, in.n) != (ssize_t)in.n) abort();
  } else {
    eh_len = (size_t)take(&in, 2);
    eh = take_bytes(&in, &eh_len);
    if (cfigen_write(fd, eh, eh_len, in.p, in.n) != 0) abort();
  }
  if (ocgc_symbols_open_elf(fd, "fuzz", NULL, &names) != 0) {
    if (names != NULL) abort();
    close(fd);
    return 0;
  }
  if (ocgc_unwind_open(names, fd, &o, &u) != 0) {
    if (u != NULL) abort();
    goto out;
  }
  d = ocgc_unwind_sample(u, &s, &st);
  if (d < 1 || (unsigned)d != st.depth || st.depth > max || st.frames[0] != s.ip ||
      (unsigned)st.end > OCGC_UNWIND_NO_REGS || st.end == OCGC_UNWIND_NO_REGS)
    abort();
  if (st.end == OCGC_UNWIND_DEPTH && st.depth != max) abort();
  d = ocgc_unwind_sample(u, &s, &again);
  if (d < 1 || (unsigned)d != again.depth || again.depth > max || again.frames[0] != s.ip ||
      (unsigned)again.end >= OCGC_UNWIND_NO_REGS ||
      (again.end == OCGC_UNWIND_DEPTH && again.depth != max))
    abort();
  ocgc_unwind_close(u);
out:
  ocgc_symbols_close(names);
  close(fd);
  return 0;
}
