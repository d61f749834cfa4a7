/* cmd.h - what the `ocgc` subcommands share (private to tools/). */
#ifndef OCGC_CMD_H
#define OCGC_CMD_H

/* Exit codes, one per kind of failure a script may want to tell apart
 * (documented in `ocgc --help` and README.md). */
enum {
  OCGC_EXIT_USAGE = 2,    /* bad arguments */
  OCGC_EXIT_NOTFOUND = 3, /* no such file or process */
  OCGC_EXIT_CORRUPT = 4,  /* corrupt, truncated or unsupported ring */
  OCGC_EXIT_ERROR = 5,    /* anything else */
  OCGC_EXIT_NORING = 6,   /* the process has no ring */
  OCGC_EXIT_STALE = 7,    /* the ring's process exited or is gone */
  OCGC_EXIT_DENIED = 8,   /* not allowed to read the process or file */
};

struct ocgc_cmd {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
};

/* Exit code for a libocgc error. */
int ocgc_exit_code(int err);

/* A process id given on the command line, or -1 if [s] is not one. */
int ocgc_cmd_parse_pid(const char *s);

/* One line on stderr: why "ocgc CMD" could not attach to [pid] (looked
 * for in [dir], or in its memory map when dir is NULL), and what to do. */
void ocgc_cmd_attach_error(const char *cmd, int pid, const char *dir, int err);

int cmd_dump(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif /* OCGC_CMD_H */
