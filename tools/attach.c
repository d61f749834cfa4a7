/* attach.c - what every `ocgc` subcommand that takes a PID shares: parsing
 * it, and saying clearly why attaching failed and what to do about it. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "ocgc/consumer.h"

/* A pid as the command line gives it: a positive decimal int. */
int ocgc_cmd_parse_pid(const char *s)
{
  char *end;
  long v;
  if (s[0] < '0' || s[0] > '9') return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0 || v > INT_MAX) return -1;
  return (int)v;
}

void ocgc_cmd_attach_error(const char *cmd, int pid, const char *dir, int err)
{
  switch (err) {
  case -ESRCH:
    fprintf(stderr, "ocgc %s: process %d: no such process\n", cmd, pid);
    break;
  case OCGC_E_NORING:
    if (dir != NULL)
      fprintf(stderr, "ocgc %s: process %d has no ring %s/%d.events: is that its "
              "OCAML_RUNTIME_EVENTS_DIR? (without --dir, its memory map is searched)\n",
              cmd, pid, dir, pid);
    else
      fprintf(stderr, "ocgc %s: process %d has no ring: was it linked with "
              "-runtime-variant _ocgc (or run by ocamlrun_ocgc), without "
              "OCGC_DISABLE set?\n", cmd, pid);
    break;
  case OCGC_E_STALE:
    fprintf(stderr, "ocgc %s: process %d: its ring is stale: the process that wrote "
            "it has exited or was killed, or the pid now names another process; "
            "'ocgc dump FILE' still reads the file\n", cmd, pid);
    break;
  case -EACCES:
  case -EPERM:
    fprintf(stderr, "ocgc %s: process %d: permission denied reading its memory map "
            "or ring: run ocgc as the process's user (or root)\n", cmd, pid);
    break;
  default:
    fprintf(stderr, "ocgc %s: process %d: %s\n", cmd, pid, ocgc_strerror(err));
    break;
  }
}
