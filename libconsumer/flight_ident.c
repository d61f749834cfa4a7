/* flight_ident.c - what a recording says of who the process was: its
 * executable's path and GNU build id (ocgc_flight_ident, ocgc/flight.h).
 *
 * Invariants (the process and its file are hostile):
 * - only /proc/PID/exe is read: its link text for the path (cut to the
 *   field, the target's bytes: escaped by whoever prints them), and the
 *   file itself opened as the symbolizer opens files (openreg.c: O_PATH,
 *   proved a regular file, reopened through /proc/self/fd), never by the
 *   path it names;
 * - the build id is elfload.c's (the one ELF reader: its checks of the
 *   headers against the file's size, at most 16 note sections of 64 KiB),
 *   asked to read nothing else (no symbols, lines or CFI);
 * - with m->start_ticks set, the process must still be that one when the
 *   reading ends (a pid reused meanwhile is OCGC_E_STALE), as symbols.c
 *   checks its reading. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "elfimage.h"
#include "elfload.h"
#include "ocgc/flight.h"
#include "openreg.h"
#include "procfs.h"

_Static_assert(sizeof(((struct elf_loaded *)0)->build_id) <=
                   sizeof(((struct ocgc_flight_meta *)0)->build_id),
               "a build id fits the meta");

#define IDENT_MAX_FILE_BYTES (UINT64_C(4) << 30) /* as the symbolizer's */

int ocgc_flight_ident(int pid, struct ocgc_flight_meta *m)
{
  char path[64], link[PATH_MAX];
  struct elf_bounds b;
  struct elf_loaded l;
  struct ocgc_proc_ident id;
  ssize_t n;
  int fd, err;
  if (pid <= 0 || m == NULL || m->sz < offsetof(struct ocgc_flight_meta, rss_bytes)) return -EINVAL;
  snprintf(path, sizeof path, "/proc/%d/exe", pid);
  if ((n = readlink(path, link, sizeof link - 1)) < 0) return errno == ENOENT ? -ESRCH : -errno;
  if ((size_t)n >= sizeof m->exe) n = (ssize_t)sizeof m->exe - 1; /* cut to the field */
  memcpy(m->exe, link, (size_t)n);
  m->exe[n] = '\0';
  m->build_id[0] = '\0';
  fd = ocgc_open_regular(AT_FDCWD, path, OCGC_OPENREG_MAGIC_LAST, 0, 0);
  if (fd < 0) return fd == OCGC_E_NORING ? -EINVAL : fd;
  memset(&b, 0, sizeof b);
  b.max_file_bytes = IDENT_MAX_FILE_BYTES;
  b.no_lines = 1; /* max_read_bytes 0: no symbol table either */
  err = elf_load(fd, &b, &l);
  close(fd);
  if (err == 0) {
    memcpy(m->build_id, l.build_id, sizeof l.build_id); /* 41 < 64, NUL-ended */
    elf_unload(&l);
  }
  if (m->start_ticks != 0 && (ocgc_proc_ident(pid, &id) != 0 || id.start_time != m->start_ticks))
    return OCGC_E_STALE;
  /* not an ELF file we read (a script's interpreter is one; a file on
   * FUSE is not read): the path alone */
  return err == OCGC_E_CORRUPT || err == -EINVAL || err == -EFBIG ? 0 : err;
}
