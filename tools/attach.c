/* attach.c - what every `ocgc` subcommand that takes a PID shares: parsing
 * it, and saying clearly why attaching failed and what to do about it. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

/* Whether DIR/PID.events is a link that leads nowhere: the publication of
 * a memfd ring whose process is gone. */
static int ring_gone(const char *dir, int pid)
{
  char path[PATH_MAX];
  struct stat st;
  if (dir == NULL) return 0;
  if (snprintf(path, sizeof path, "%s/%d.events", dir, pid) >= (int)sizeof path) return 0;
  return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0;
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
            "it has exited or was killed, or the pid now names another process; %s\n",
            cmd, pid, ring_gone(dir, pid)
              ? "its ring lived in its memory and went with it (only a normal exit with "
                "OCAML_RUNTIME_EVENTS_PRESERVE set leaves a file)"
              : "'ocgc dump FILE' still reads the file");
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
