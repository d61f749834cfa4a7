/* target.c - what every `ocgc` subcommand that reads a ring shares about
 * its target (common.h): parsing a PID or --file FILE, opening it through
 * libocgc's attach API, and saying clearly why that failed and what to do
 * (whether its process is still there is libocgc's: ocgc_source_gone()).
 *
 * Invariants: every failure is one line on stderr, "ocgc NAME: ...", with
 * the exit code of tool_exit_code(); a target is a PID (with an optional
 * --dir) or a file, never both. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"

int tool_target_pid(struct tool_target *t, const char *arg, const char *hint)
{
  t->pid = tool_parse_pid(arg);
  if (t->pid > 0) {
    snprintf(t->label, sizeof t->label, "process %d", t->pid);
    return 0;
  }
  t->pid = 0;
  return tool_usage_error("'%s' is not a process id %s", arg,
                          hint ? hint : "('ocgc ls' lists the attachable processes)");
}

int tool_target_operands(struct tool_target *t, int noperands, char **operands)
{
  if (t->file != NULL) {
    if (noperands != 0) return tool_usage_error("give a PID or --file FILE, not both");
    if (t->dir != NULL) return tool_usage_error("--dir goes with a PID, not with --file");
    return 0;
  }
  if (noperands == 0)
    return tool_usage_error("give a PID or --file FILE ('ocgc %s --help' tells more)",
                            tool_name);
  if (noperands > 1) return tool_usage_error("one PID only, not '%s'", operands[1]);
  return tool_target_pid(t, operands[0], "(for a ring file use --file)");
}

const char *tool_target_label(const struct tool_target *t)
{
  return t->pid > 0 ? t->label : t->file;
}

/* Whether DIR/PID.events is a link that leads nowhere: the publication of
 * a memfd ring whose process is gone. */
static int ring_gone(const char *dir, int pid)
{
  char path[PATH_MAX];
  struct stat st;
  if (dir == NULL) return 0;
  if (snprintf(path, sizeof path, "%s/%d" OCGC_DIR_EVENTS_SUFFIX, dir, pid) >= (int)sizeof path) return 0;
  /* EPERM is no answer: a memfd ring's link leads through map_files, which
   * only root may follow. */
  return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0 && errno == ENOENT;
}

static void say_no_ring(int pid, const char *dir)
{
  if (dir != NULL)
    tool_say("process %d has no ring %s/%d.events: is that its OCAML_RUNTIME_EVENTS_DIR? "
             "(without --dir, its memory map is searched)", pid, dir, pid);
  else
    tool_say("process %d has no ring: was it linked with -runtime-variant _ocgc (or run by "
             "ocamlrun_ocgc), without OCGC_DISABLE set?", pid);
}

void tool_say_attach_error(int pid, const char *dir, int err)
{
  switch (err) {
  case -ESRCH:
    tool_say("process %d: no such process", pid);
    break;
  case OCGC_E_NORING:
    say_no_ring(pid, dir);
    break;
  case OCGC_E_STALE:
    tool_say("process %d: its ring is stale: the process that wrote it has exited or was "
             "killed, or the pid now names another process; %s", pid, ring_gone(dir, pid)
               ? "its ring lived in its memory and went with it (only a normal exit with "
                 "OCAML_RUNTIME_EVENTS_PRESERVE set leaves a file)"
               : "'ocgc dump FILE' still reads the file");
    break;
  case -EACCES:
  case -EPERM:
    tool_say("process %d: permission denied reading its memory map or ring: run ocgc as the "
             "process's user (or root)", pid);
    break;
  default:
    tool_say("process %d: %s", pid, ocgc_strerror(err));
    break;
  }
}

int tool_target_open(struct tool_target *t, struct ocgc_source **out)
{
  int err;
  if (t->pid > 0) {
    struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
    ao.dir = t->dir;
    ao.ids = t->ids;
    err = ocgc_source_open_pid(t->pid, &ao, out);
    if (err) tool_say_attach_error(t->pid, t->dir, err);
    return err;
  }
  {
    struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
    oo.ids = t->ids;
    err = ocgc_source_open_path(t->file, &oo, out);
  }
  if (err == -ENOENT)
    tool_say("%s: no such file (rings are <pid>.events files; 'ocgc ls' lists the "
             "attachable processes)", t->file);
  else if (err)
    tool_say("%s: %s", t->file, ocgc_strerror(err));
  return err;
}

int tool_target_error(const struct tool_target *t, int err)
{
  tool_say("%s: %s", tool_target_label(t), ocgc_strerror(err));
  return err ? tool_exit_code(err) : TOOL_EXIT_ERROR;
}
