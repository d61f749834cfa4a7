/* ocgc_proc.c - a process's identity beyond its pid: its start time and
 * the boot it runs in, read from /proc, for the file's extension block
 * (ocgc_file.c) and for the judgement of dead processes' files
 * (ocgc_stale.c).  Invariant: both only read /proc, never fail (an empty
 * or 0 answer when /proc is not there), and hold nothing. */

#define CAML_INTERNALS
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ocgc_proc.h"
#include "ocgc_ring.h" /* caml_ocgc_proc_stat_field */

static void read_small_file(const char *path, char *buf, size_t n)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t got = -1;
  buf[0] = '\0';
  if (fd < 0) return;
  got = read(fd, buf, n - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
}

/* Field 22 of /proc/PID/stat: start time in clock ticks after boot; 0 if
 * the process is gone. */
uint64_t caml_ocgc_start_time(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  return caml_ocgc_proc_stat_field(path, 22);
}

void caml_ocgc_boot_id(char *out, size_t n)
{
  read_small_file("/proc/sys/kernel/random/boot_id", out, n);
  out[strcspn(out, "\n")] = '\0';
}
