/* mapsline.c - splitting one /proc/PID/maps line into fields (mapsline.h).
 *
 * Owns the text format only; which mapping is a ring is attach.c's call.
 * Invariants: every read stays inside the NUL-terminated line (each scan
 * stops at NUL, and the "\012" test checks one byte at a time); numbers go
 * through strtoul, whose overflow is defined (ULONG_MAX), never sscanf,
 * whose overflow is not; the line is only ever shortened in place, so the
 * path cannot outgrow it. */

#include "mapsline.h"

#include <stdlib.h>
#include <string.h>

#define DELETED_SUFFIX " (deleted)"

/* Skip one whitespace-separated field and the blanks after it. */
static char *skip_field(char *p)
{
  while (*p != '\0' && *p != ' ' && *p != '\t') p++;
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* The kernel writes a newline in a path as "\012" (seq_file_path() with
 * "\n" to escape); a backslash itself is not escaped, so a literal "\012"
 * reads the same: both come out as '\n'. */
size_t ocgc_maps_unescape(char *s)
{
  char *r = s, *w = s;
  while (*r != '\0') {
    if (r[0] == '\\' && r[1] == '0' && r[2] == '1' && r[3] == '2') {
      *w++ = '\n';
      r += 4;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return (size_t)(w - s);
}

int ocgc_maps_parse_line(char *line, struct ocgc_maps_line *out)
{
  char *p, *end, *perms;
  size_t i, len, dl = strlen(DELETED_SUFFIX);

  memset(out, 0, sizeof *out);
  line[strcspn(line, "\n")] = '\0';
  out->start = strtoul(line, &end, 16);
  if (*end != '-') return -1;
  out->end = strtoul(end + 1, NULL, 16);
  perms = skip_field(line);
  for (i = 0; i < 4 && perms[i] != '\0' && perms[i] != ' ' && perms[i] != '\t'; i++)
    out->perms[i] = perms[i];
  p = skip_field(perms); /* offset */
  p = skip_field(p);     /* major:minor, in hex */
  out->dev_major = strtoul(p, &end, 16);
  if (end == p || *end != ':') return -1;
  p = end + 1;
  out->dev_minor = strtoul(p, &end, 16);
  if (end == p) return -1;
  p = skip_field(p);
  out->inode = strtoul(p, NULL, 10);
  p = skip_field(p);
  if (*p == '\0') return 0; /* anonymous */
  len = strlen(p);
  if (len >= dl && memcmp(p + len - dl, DELETED_SUFFIX, dl) == 0) {
    p[len - dl] = '\0';
    out->deleted = 1;
  }
  out->path = p;
  out->path_len = ocgc_maps_unescape(p);
  return 0;
}
