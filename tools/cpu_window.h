/* cpu_window.h - a CPU profile being gathered from a running process
 * (cpu_window.c), for `ocgc profile --cpu` (profile_cpu.c: a window of a
 * duration) and `ocgc run --cpu` (run.c: the whole run). */
#ifndef OCGC_TOOLS_CPU_WINDOW_H
#define OCGC_TOOLS_CPU_WINDOW_H

#include <stdint.h>

#include "common.h"
#include "profile.h"

struct cpu_window;

/* Start sampling process [pid] ([label] names it in messages) at
 * [frequency] Hz, its collections read from [src] (borrowed, may be NULL:
 * then gc_cause is unknown, and [noring_why], if not NULL, is said once
 * the sampling is allowed).  0 and *out, or an exit code after one line
 * (a refusal of perf_event_open: libocgc's hint, TOOL_EXIT_DENIED). */
int cpu_window_open(struct cpu_window **out, int pid, const char *label,
                    struct ocgc_source *src, const char *noring_why, unsigned frequency,
                    int no_lines);

/* How long to sleep between turns (5 to 50 ms: a ring holds some 15
 * samples). */
uint64_t cpu_window_poll_ns(const struct cpu_window *w);

/* One turn: the ring read, then the samples, then the profile settled up
 * to the ring's read.  0; OCGC_E_STALE once the process exec'd or is gone
 * (the samples before are in); another negative error of the sampler; or
 * TOOL_EXIT_ERROR after a line (no memory). */
int cpu_window_turn(struct cpu_window *w);

/* The window's end: the ring read a last time, every sample labelled. */
void cpu_window_end(struct cpu_window *w);

/* One line on stderr: the samples, threads, lost, the samples' GC share
 * beside the ring's share of the window's wall time in collections. */
void cpu_window_say(const struct cpu_window *w);

/* The profile in [format] (folded: [by_phase]) to [path] or stdout (NULL):
 * 0 or an exit code after a line. */
int cpu_window_write(struct cpu_window *w, enum format format, int by_phase, const char *path);

/* libocgc's window (its figures, profile and names: ocgc/cpuwindow.h). */
const struct ocgc_cpuwindow *cpu_window_lib(const struct cpu_window *w);

/* The profile gathered (finished once cpu_window_end has run). */
const struct ocgc_cpuprof *cpu_window_profile(const struct cpu_window *w);

/* The window's length so far, ns. */
uint64_t cpu_window_ns(const struct cpu_window *w);

/* Free [w] (not its ring source).  NULL is accepted. */
void cpu_window_free(struct cpu_window *w);

#endif /* OCGC_TOOLS_CPU_WINDOW_H */
