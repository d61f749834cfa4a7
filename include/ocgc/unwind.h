/* ocgc/unwind.h - the call stack of a CPU sample (ocgc/cpu.h), without
 * frame pointers: from the sample's registers and its copy of the stack,
 * by the call frame information (.eh_frame, .debug_frame) of the
 * process's executable files, with elfutils' libdwfl.  OCaml 4.13/4.14
 * emits .eh_frame CFI for its native code, as GCC does for the runtime's C
 * (the collector included) and C stubs.
 *
 * Memory is read only from the sample's stack copy: never from the live
 * process.  The files are the symbolizer's (ocgc/symbols.h): its mappings,
 * each file opened as it opens them (/proc/PID/exe, /proc/PID/map_files),
 * its headers checked and its symbol tables and CFI sections copied into
 * private memory (within max_read_bytes) before libelf or libdw see any of
 * it (libconsumer/elfload.c, the symbolizer's checks); libdw reads only
 * that copy.  A file that fails the checks has no CFI: a stack through it
 * ends there.
 *
 * A stack ends, and says why (enum ocgc_unwind_end), at the outermost frame,
 * at a frame that cannot be unwound (no CFI for its address, a value the
 * CFI asks for outside the stack copy), at a frame whose stack pointer does
 * not grow (it would loop), or at max_depth frames.  Names come from the
 * symbolizer: ocgc_symbols_lookup(names, frames[i], i > 0, ...).
 *
 * x86-64 only for now. */
#ifndef OCGC_PUBLIC_UNWIND_H
#define OCGC_PUBLIC_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>
#include <ocgc/cpu.h>
#include <ocgc/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Frames a stack holds at most. */
#define OCGC_UNWIND_MAX_DEPTH 128u

/** Why a stack ends. */
enum ocgc_unwind_end {
  OCGC_UNWIND_OUTERMOST = 0, /**< the CFI says the last frame is the outermost */
  OCGC_UNWIND_LOST = 1,      /**< the next frame could not be unwound (the
                                  marker: the stack is partial) */
  OCGC_UNWIND_LOOP = 2,      /**< the next frame's stack pointer did not grow */
  OCGC_UNWIND_DEPTH = 3,     /**< max_depth frames: cut */
  OCGC_UNWIND_NO_REGS = 4,   /**< the sample has no user registers: no frame */
};

/** Options of ocgc_unwind_open (0: the default). */
struct ocgc_unwind_opts {
  size_t sz;                /**< OCGC_OPTS_INIT */
  unsigned max_depth;       /**< frames (default and at most OCGC_UNWIND_MAX_DEPTH) */
  uint64_t max_read_bytes;  /**< bytes read of one file: symbol tables and
                                 CFI (default 64 MiB) */
  uint64_t max_file_bytes;  /**< a larger file is not read (default 4 GiB) */
};

/** One stack: frames[0] the sampled instruction, then return addresses. */
struct ocgc_unwind_stack {
  unsigned depth;
  enum ocgc_unwind_end end;
  uint64_t frames[OCGC_UNWIND_MAX_DEPTH];
};

struct ocgc_unwind;

/** An unwinder for the process [names] reads (ocgc_symbols_open_pid), or
 * for the one file of ocgc_symbols_open_elf at its own addresses (then
 * [fd] is that file, read again here; -1 otherwise).  [names] is borrowed:
 * it must outlive the unwinder, and is used by it (the mappings) in the
 * calls below, not by another thread at the same time.  Its files are read
 * here (at most 64 in all); a file mapped later (dlopen) is read when a
 * stack meets an address no file covers (the process's maps read again,
 * at most every 100 ms, each mapping tried once, through
 * /proc/PID/map_files as the symbolizer opens its files; the symbolizer
 * itself does not learn it: its frames have no names, but the stacks
 * unwind through them).  Returns 0; -EINVAL; -ENOTSUP (not x86-64);
 * -ENOMEM. */
OCGC_API int ocgc_unwind_open(struct ocgc_symbols *names, int fd,
                              const struct ocgc_unwind_opts *opts, struct ocgc_unwind **out);

/** Unwind [s] into *out.  Returns the depth (0 only when the sample has
 * no user registers). */
OCGC_API int ocgc_unwind_sample(struct ocgc_unwind *u, const struct ocgc_cpu_sample *s,
                                struct ocgc_unwind_stack *out);

/** A word for [end] ("outermost", "lost", "loop", "depth", "no-regs"). */
OCGC_API const char *ocgc_unwind_end_name(enum ocgc_unwind_end end);

/** Free [u] (not its symbolizer).  NULL is accepted. */
OCGC_API void ocgc_unwind_close(struct ocgc_unwind *u);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_UNWIND_H */
