/* mapsline.h - one line of /proc/PID/maps split into its fields (private).
 *
 * The kernel writes each line as
 *   start-end perms offset major:minor inode [padding path[ (deleted)]]
 * with a newline in the path written as "\012".  The path is the only part
 * the process chooses (it names its own files), so it is hostile; the
 * parser is total over any NUL-terminated text. */
#ifndef OCGC_MAPSLINE_H
#define OCGC_MAPSLINE_H

#include <stddef.h>

struct ocgc_maps_line {
  unsigned long start, end;         /* the address range */
  char perms[5];                    /* first 4 characters of the perms field, NUL-padded */
  unsigned long dev_major, dev_minor;
  unsigned long inode;
  char *path;                       /* NULL if the line names nothing; else in the
                                       line, unescaped, NUL-terminated */
  size_t path_len;                  /* strlen(path) (it may hold '\n': "\012") */
  int deleted;                      /* " (deleted)" ended the path (cut off) */
};

/* Split [line] (NUL-terminated; its first newline and what follows are cut
 * off) into *out, in place.  Returns 0, or -1 if the address range or the
 * device field is missing.  The path is never longer than the line, and the
 * only newlines in it come from "\012". */
int ocgc_maps_parse_line(char *line, struct ocgc_maps_line *out);

/* Whether [f] maps a file as a producer maps its ring: shared and
 * writable, an absolute path whose last name ends in ".events" after at
 * least one byte (a file, maybe deleted, or ocgc's memory ring
 * "/memfd:ocgc:<P>.events").  Whose ring it is, is the caller's question. */
int ocgc_maps_ring_like(const struct ocgc_maps_line *f);

/* The P of ocgc's memory ring "/memfd:ocgc:<P>.events" that [f] maps (P a
 * pid: 1 to INT_MAX, no leading zero), or 0. */
long ocgc_maps_memfd_pid(const struct ocgc_maps_line *f);

/* Undo the kernel's "\012" escape of '\n' in [s], in place.  Returns the
 * new length. */
size_t ocgc_maps_unescape(char *s);

#endif /* OCGC_MAPSLINE_H */
