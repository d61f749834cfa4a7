/* ocgc/symbols.h - names for the return addresses of a process's profile:
 * the function (its OCaml name), and the source file and line where the
 * program was built with -g.
 *
 * A process's addresses are found in its /proc/PID/maps, and each in the
 * ELF file mapped there: the process's executable (where all of an OCaml
 * program's native code is) through /proc/PID/exe, any other file only
 * through /proc/PID/map_files/ (root), each proved to be the file mapped
 * (device and inode) and a regular file off FUSE (proved through an O_PATH
 * descriptor before it is opened for reading: a device, FIFO or socket the
 * process maps is never opened); never through a path the process wrote.
 * The file is read with pread() into private memory, never mapped (a
 * target that truncates it cannot fault the reader), and is
 * hostile input: its function symbols, build id and DWARF line tables are
 * read within the bounds of struct ocgc_symbols_opts, copied, and the file
 * closed.  No other file is opened: DWARF that lives elsewhere
 * (.gnu_debuglink, split DWARF, dwz) is not followed.  An address that
 * cannot be named keeps its address (function NULL).
 *
 * Every string returned is bytes from the target's file, NUL-terminated:
 * escape it for where it goes.  A struct ocgc_symbols is used by one thread
 * at a time. */
#ifndef OCGC_PUBLIC_SYMBOLS_H
#define OCGC_PUBLIC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include <ocgc/api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bounds of the reading of one process's files (0: the default).
 *
 * Memory: a process's symbolizer holds at most max_process_bytes of names
 * (functions, line rows and their strings, by capacity: what
 * ocgc_symbols_memory() tells), plus 0.5 MiB for its mappings; reading one
 * file costs, on top and only while it is read, at most max_read_bytes
 * (the sections read, and the compressed ones inflated), 40 MiB of
 * libdw's line rows, 2 MiB of libelf's section descriptors and what an
 * array of names may take while it grows (half of max_names_bytes).  With
 * the defaults: at most 64 MiB held and under 200 MiB at the peak,
 * whatever the files claim.  A file's headers are checked against its
 * size before any of it is given to libelf: at most 8192 sections and
 * 4096 program headers, every section with bytes inside the file, the
 * build id looked for in at most 16 note sections of 64 KiB, a symbol
 * table of at most 4 x max_symbols + 64 Ki entries; a file that fails the
 * checks is not read at all.  (In-process, not a child with limits:
 * libocgc lives in its callers' processes, whose threads and signals are
 * theirs.) */
struct ocgc_symbols_opts {
  size_t sz;                /**< OCGC_OPTS_INIT */
  uint64_t max_file_bytes;  /**< a larger file is not read (default 4 GiB) */
  uint64_t max_read_bytes;  /**< bytes read from one file: symbol and string
                                 tables, DWARF sections, and the compressed
                                 ones inflated (default 64 MiB); past it, the
                                 file's lines are not read, or none of it */
  uint64_t max_symbols;     /**< function symbols kept of one file (default 1 M) */
  uint64_t max_lines;       /**< line rows kept of one file (default 4 M) */
  uint64_t max_ns;          /**< time to read one process's files (default 10 s),
                                 counted from the start of the first file's
                                 reading (not from the open): past it, what
                                 remains is left unnamed */
  int no_lines;             /**< nonzero: functions only, no DWARF read */
  int read_now;             /**< nonzero: read every mapped file at the open, not
                                 when first asked for (a process about to exit,
                                 whose /proc entries will be gone) */
  uint64_t max_names_bytes; /**< what one file's names may hold: functions,
                                 rows, strings (default 48 MiB); past it, the
                                 rest of the file is not named */
  uint64_t max_process_bytes; /**< what all of the process's files' names may
                                 hold (default 64 MiB); past it, no other file
                                 is read */
};

/** A file-backed executable mapping of the process (or the one file of
 * ocgc_symbols_open_elf), as pprof's Mapping. */
struct ocgc_symbols_mapping {
  uint64_t start, limit;    /**< [start, limit) in the process */
  uint64_t offset;          /**< file offset of start */
  const char *path;         /**< as /proc/PID/maps names it (the process's own choice) */
  const char *build_id;     /**< GNU build id in hex, "" if none or not read */
  int read;                 /**< the file was found and read */
  int has_functions;        /**< it had function symbols */
  int has_lines;            /**< it had DWARF line tables (-g) */
  int is_main;              /**< it is the process's executable */
};

/** What an address is. */
struct ocgc_symbol {
  const char *function;     /**< demangled name (ocgc_ocaml_demangle), else the
                                 symbol's; NULL: not named.  An OCaml name
                                 two functions of the file would share is
                                 made the function's own: an anonymous
                                 function, or a local one named as another
                                 ("Stdlib.List.find", List.find_all's inner
                                 loop), gets "@" and the file and line of
                                 its entry's line row ("Main.fun@main.ml:12",
                                 the file without its folders), or without
                                 line rows its symbol's stamp
                                 ("Main.fun_1234", "Stdlib.List.find_436") */
  const char *symbol;       /**< the ELF symbol, NULL: not named */
  uint64_t symbol_start;    /**< the symbol's address in the process */
  const char *file;         /**< source file, NULL: not known */
  unsigned line;            /**< source line, 0: not known */
  unsigned mapping;         /**< index in the mappings, or OCGC_SYMBOLS_NONE */
};

#define OCGC_SYMBOLS_NONE (~0u)

struct ocgc_symbols;

/** Read the names of process [pid]: its maps once, then each mapped file
 * when it is first asked for.  [start_time] (from /proc/PID/stat, field 22;
 * 0: not checked) is the process that must be the one read: if [pid] is
 * another process by the end of a file's reading, what was read of that
 * file is dropped.  Returns 0; -ESRCH; -EACCES (not allowed to read its
 * maps); OCGC_E_STALE; -ENOMEM. */
OCGC_API int ocgc_symbols_open_pid(int pid, uint64_t start_time,
                                   const struct ocgc_symbols_opts *opts,
                                   struct ocgc_symbols **out);

/** Read the ELF file [fd] (a regular file; the descriptor is the caller's
 * and is not kept) as if it were mapped at its own addresses: an address
 * is looked up as the file's virtual address.  For tools and tests that
 * name the addresses of a file.  Returns 0; -EINVAL (not a regular file);
 * OCGC_E_CORRUPT (not an ELF file this reads); -EFBIG; -ENOMEM. */
OCGC_API int ocgc_symbols_open_elf(int fd, const char *name, const struct ocgc_symbols_opts *opts,
                                   struct ocgc_symbols **out);

/** Name [addr].  [return_address] nonzero: addr is where a call returns to
 * (every frame of a profile), so its line is the call's, at addr - 1.
 * Fills *out (all NULL and 0 when nothing is known) and returns 1 if the
 * function was named, 0 if not.  The strings live as long as [s]. */
OCGC_API int ocgc_symbols_lookup(struct ocgc_symbols *s, uint64_t addr, int return_address,
                                 struct ocgc_symbol *out);

/** The mappings known: *out gets an array of the returned count, valid
 * until the next call on [s]. */
OCGC_API size_t ocgc_symbols_mappings(struct ocgc_symbols *s,
                                      const struct ocgc_symbols_mapping **out);

/** The bytes of memory [s] holds now (its names, rows and mappings): at
 * most max_process_bytes and 0.5 MiB more.  It grows as files are read
 * (at a lookup, unless read_now).  NULL: 0.  For a cache of symbolizers
 * bounded in bytes. */
OCGC_API uint64_t ocgc_symbols_memory(const struct ocgc_symbols *s);

/** Free [s].  NULL is accepted. */
OCGC_API void ocgc_symbols_close(struct ocgc_symbols *s);

/** The OCaml name of a native-code symbol: "camlStdlib__List__map_295"
 * reads "Stdlib.List.map", "camlMain__fun_1234" "Main.fun" (an anonymous
 * function), "$xx" escapes of operators decoded ("camlStdlib__$40_187":
 * "Stdlib.@").  Writes it NUL-terminated to out[0..n) and returns its
 * length, or 0 when [sym] is not an OCaml symbol ("caml" and a capital, a
 * unit name) or the name does not fit; an escape that does not decode to
 * printable ASCII is kept as it is. */
OCGC_API size_t ocgc_ocaml_demangle(const char *sym, char *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_SYMBOLS_H */
