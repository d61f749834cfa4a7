/* profile.h - what `ocgc profile` (profile.c, allocations) and `ocgc
 * profile --cpu` (profile_cpu.c) share: the forms and the output
 * (profile_output.c). */
#ifndef OCGC_TOOLS_PROFILE_H
#define OCGC_TOOLS_PROFILE_H

#include <stddef.h>
#include <stdio.h>

enum format { FMT_PPROF, FMT_FOLDED, FMT_JSON };

/* CPU samples a second: the default (Go's), and the most a command takes
 * (ocgc profile --cpu and --gc-cpu, ocgc run --cpu). */
#define PROFILE_CPU_DEFAULT_HZ 100u
#define PROFILE_CPU_MAX_HZ 1000u

/* profile_output.c: [len] bytes, or what [write] writes (when not NULL),
 * to [path] (replaced whole, or left as it was on an error) or to stdout
 * (NULL).  0, or an exit code after a line. */
int profile_output(const char *path, const unsigned char *bytes, size_t len,
                   void (*write)(FILE *f, void *arg), void *arg);

/* `ocgc profile PID --cpu ...` (argv as cmd_profile's). */
int cmd_profile_cpu(int argc, char **argv);

#endif /* OCGC_TOOLS_PROFILE_H */
