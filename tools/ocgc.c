/* ocgc.c - the `ocgc` command: subcommand dispatch, usage and exit codes.
 * Each subcommand lives in its own file (its options, its loop, its
 * output) over what common.h shares, and sees only libocgc's public API. */

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "config.h"

struct cmd {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
};

static const struct cmd cmds[] = {
  {"ls", "list the processes with a GC ring on this host", cmd_ls},
  {"stat", "a row of GC figures per interval, like jstat -gcutil", cmd_stat},
  {"top", "live full-screen view: rates, pause histograms, causes, heap", cmd_top},
  {"report", "GC summary of a process (for a while) or a ring file", cmd_report},
  {"run", "run a program with the ring on; report when it exits", cmd_run},
  {"trace", "write a Chrome/Perfetto JSON trace", cmd_trace},
  {"profile", "the call stacks that allocate: pprof, folded stacks, JSON", cmd_profile},
  {"serve", "serve the GC figures of processes as Prometheus metrics (HTTP)", cmd_serve},
  {"dump", "decode a ring file: a summary of counts, or every event", cmd_dump},
  {"flight", "a recording of a process now: its ring, history and memory", cmd_flight},
};

static void usage(FILE *f)
{
  size_t i;
  fprintf(f, "usage: ocgc COMMAND [ARGS]\n\nCommands:\n");
  for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
  fprintf(f, "\n'ocgc COMMAND --help' tells more.\n\nExit codes: 0 ok, %d bad arguments, "
          "%d no such file or process,\n%d corrupt or unsupported ring, %d other error, "
          "%d the process has no ring,\n%d the ring's process exited or is gone, "
          "%d permission denied,\n%d no allocation profile to give.\n", TOOL_EXIT_USAGE, TOOL_EXIT_NOTFOUND, TOOL_EXIT_CORRUPT,
          TOOL_EXIT_ERROR, TOOL_EXIT_NORING, TOOL_EXIT_STALE, TOOL_EXIT_DENIED,
          TOOL_EXIT_NOPROFILE);
}

int main(int argc, char **argv)
{
  size_t i;
  if (argc < 2) { usage(stderr); return TOOL_EXIT_USAGE; }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("ocgc %s (libocgc %s)\n", PACKAGE_VERSION, ocgc_version());
    return 0;
  }
  for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (strcmp(argv[1], cmds[i].name) == 0) {
      tool_name = cmds[i].name;
      return cmds[i].run(argc - 1, argv + 1);
    }
  fprintf(stderr, "ocgc: unknown command '%s'; 'ocgc --help' lists them\n", argv[1]);
  return TOOL_EXIT_USAGE;
}
