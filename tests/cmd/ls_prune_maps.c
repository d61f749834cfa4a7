/* ls_prune_maps.c - for ls_prune_mapped.sh: runs the host maps scan of
 * `ocgc ls` (libocgc's host scan, libconsumer/hostmaps.c) over a /proc made up by the test, whose
 * maps files hold hostile text, and says what it found.
 *
 *   ls_prune_maps PROC [--limits LINES_PER_PROC LINES BYTES FILES MEMFDS]
 *                 [--file MAJOR:MINOR:INODE]... [--memfd P]...
 *
 * (decimal numbers; a limit of 0 is the default) prints
 *
 *   complete 0|1
 *   counts FILES MEMFDS PROCS
 *   file MAJOR:MINOR:INODE PID      (PID 0: no process maps it)
 *   memfd P PID
 *
 * one line per --file and --memfd, in order.  The device is built with
 * makedev() as st_dev would be, so that the hex major:minor of the maps
 * is checked against it.  Exit status: 0, 1 usage, 2 the scan failed. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "hostmaps.h"

static int num(const char *s, unsigned long long *v)
{
  char *end;
  if (s[0] < '0' || s[0] > '9') return -1;
  errno = 0;
  *v = strtoull(s, &end, 10);
  return errno == 0 && *end == '\0' ? 0 : -1;
}

static int usage(void)
{
  fprintf(stderr, "usage: ls_prune_maps PROC [--limits LPP LINES BYTES FILES MEMFDS] "
                  "[--file MAJOR:MINOR:INODE]... [--memfd P]...\n");
  return 1;
}

int main(int argc, char **argv)
{
  struct hostmaps_limits lim;
  struct hostmaps *h;
  unsigned long files, memfds, procs;
  unsigned long long v[5];
  int i = 2, k, err;

  memset(&lim, 0, sizeof lim);
  if (argc < 2) return usage();
  if (argc >= 8 && strcmp(argv[2], "--limits") == 0) {
    for (k = 0; k < 5; k++)
      if (num(argv[3 + k], &v[k]) != 0) return usage();
    lim.lines_per_proc = (unsigned long)v[0];
    lim.lines_total = (unsigned long)v[1];
    lim.bytes_total = v[2];
    lim.files_max = (unsigned long)v[3];
    lim.memfds_max = (unsigned long)v[4];
    i = 8;
  }
  if ((err = hostmaps_scan(argv[1], &lim, &h)) != 0) {
    fprintf(stderr, "ls_prune_maps: %s: %s\n", argv[1], strerror(-err));
    return 2;
  }
  hostmaps_counts(h, &files, &memfds, &procs);
  printf("complete %d\ncounts %lu %lu %lu\n", hostmaps_complete(h), files, memfds, procs);
  for (; i < argc; i++) {
    unsigned major, minor;
    unsigned long long ino, p;
    char extra;
    if (strcmp(argv[i], "--file") == 0 && i + 1 < argc &&
        sscanf(argv[i + 1], "%u:%u:%llu%c", &major, &minor, &ino, &extra) == 3) {
      printf("file %s %d\n", argv[i + 1], hostmaps_file(h, makedev(major, minor), (ino_t)ino));
      i++;
    } else if (strcmp(argv[i], "--memfd") == 0 && i + 1 < argc && num(argv[i + 1], &p) == 0) {
      printf("memfd %s %d\n", argv[i + 1], hostmaps_memfd(h, (long)p));
      i++;
    } else {
      hostmaps_free(h);
      return usage();
    }
  }
  hostmaps_free(h);
  return 0;
}
