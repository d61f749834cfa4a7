/* profile.c - `ocgc profile PID`: a process's allocation profile, of a
 * window (--duration) or of everything since sampling began, named
 * (libocgc's symbolizer) and written as pprof, folded stacks or JSON.
 *
 * What it owns: the command line, the window's course (libocgc's
 * ocgc/allocwindow.h: the rate asked and its answer, the copies, the
 * delta, the rate let go), its messages and exit codes, the stop signals,
 * and the output's form (the file is profile_output.c's).  Every rule of
 * the profile itself (copies, windows, leases, answers to a request,
 * figures, names, the forms) is libocgc's.
 *
 * Invariants:
 * - --rate is asked of the window (a lease, renewed at every poll of the
 *   wait, or of a producer without leases the rate switched) and let go
 *   on every way out, SIGINT and SIGTERM included (they end the window
 *   early: the profile so far is written, and said to be short), before
 *   the profile is named and written; a SIGKILL leaves a lease to lapse in
 *   the producer (10 s), a switched rate not put back;
 * - a copy the producer keeps busy (-EAGAIN) is tried again for BUSY_NS at
 *   most, then the command fails with a line;
 * - the window starts when the producer has applied the rate, not when it
 *   was asked, and ends when the time asked for from the request is over:
 *   no window holds samples at the old rate;
 * - output goes whole or not at all to -o FILE (replaced atomically:
 *   profile_output.c), or to stdout; pprof, which is binary, never to a
 *   terminal;
 * - every string of the target's goes through json.h (JSON) or libocgc's
 *   folded writer (printable ASCII only);
 * - --gc-cpu samples the CPU over the window (cpu_window.c, opened before
 *   the window begins again, so that both begin together; read at its
 *   pace in the window's wait) and charges the collector's CPU to the
 *   window's stacks by libocgc's rule (ocgc/gccharge.h); the sampler is
 *   let go on every way out. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "cpu_window.h"
#include "json.h"
#include "profile.h"

#define POLL_NS UINT64_C(20000000)
#define BUSY_NS UINT64_C(5000000000)  /* a busy copy is tried again this long */


struct profile_args {
  struct tool_target t;
  uint64_t duration_ns, rate;
  int has_duration, has_rate, no_lines;
  enum format format;
  enum ocgc_profile_value value;
  int value_set;
  const char *out;
  unsigned gc_cpu_hz;   /* --gc-cpu: the CPU sampler's frequency; 0: none */
};

/* The collector's CPU over the window, charged to the stacks (--gc-cpu). */
struct gc_cpu {
  struct cpu_window *w;     /* sampling beside the window; NULL: none */
  uint64_t *charge;         /* a figure per stack of the window's profile */
  struct ocgc_gc_cpu cpu;
  struct ocgc_gc_charge_sum sum;
  uint64_t other_ns;        /* the collector's, in no phase: not charged */
};

static void profile_usage(FILE *f)
{
  fprintf(f,
          "usage: ocgc profile PID [--duration D] [--rate BYTES] [--format pprof|folded|json]\n"
          "                        [--sample NAME] [--gc-cpu [--frequency HZ]] [-o FILE]\n"
          "                        [--no-lines] [--dir DIR]\n"
          "\n"
          "The allocation profile of process PID (a program on the patched runtime):\n"
          "the call stacks that allocated, what they allocated, promoted and hold.\n"
          "Without --duration: everything since sampling began (in-use is what is\n"
          "live now); with it: what a window of D added (Go's delta profiles).\n"
          "\n"
          "  --duration D     a window of D (\"30s\", \"2m\"); SIGINT ends it early\n"
          "  --rate BYTES     sample every BYTES allocated on average (\"512k\") for the\n"
          "                   window (default 10 s): a lease, joined with other windows'\n"
          "                   (the finest rate wins) and let go at the end, or 10 s\n"
          "                   after this command is killed\n"
          "  --format F       pprof (gzipped profile.proto, default; `go tool pprof`,\n"
          "                   Pyroscope, Parca, speedscope), folded (\"a;b;c N\" lines for\n"
          "                   flamegraph.pl and speedscope) or json\n"
          "  --sample NAME    folded's figure: alloc_space (default), alloc_objects,\n"
          "                   inuse_space, inuse_objects, promoted_space, promoted_objects;\n"
          "                   pprof's default sample type\n"
          "  --gc-cpu         also sample the process's CPU over the window (perf_event_open,\n"
          "                   as ocgc profile --cpu) and charge the collector's CPU to the\n"
          "                   stacks that cause it: a sample type gc_cpu (nanoseconds) in\n"
          "                   pprof and JSON (minor collections by bytes allocated in the\n"
          "                   minor heap, the major collector by bytes entering the major\n"
          "                   heap; docs/profiling.md); needs --duration or --rate\n"
          "  --frequency HZ   --gc-cpu's samples a second (default 100, 1 to 1000)\n"
          "  -o FILE          write FILE (replaced whole) instead of stdout\n"
          "  --no-lines       function names only: no DWARF read\n"
          "  --dir DIR        the ring is DIR/PID.events (not searched)\n"
          "\n"
          "Exit codes as ocgc(1), and %d: the process has no profile to give (a stock\n"
          "OCaml 5 or bytecode program, sampling off without --rate, its own Gc.Memprof\n"
          "running, a rate it refused, or all its rate leases held by other windows).\n",
          TOOL_EXIT_NOPROFILE);
}

static int parse_args(int argc, char **argv, struct profile_args *a)
{
  static const struct option longopts[] = {
    {"duration", required_argument, NULL, 'd'},
    {"rate", required_argument, NULL, 'r'},
    {"format", required_argument, NULL, 'f'},
    {"sample", required_argument, NULL, 's'},
    {"output", required_argument, NULL, 'o'},
    {"no-lines", no_argument, NULL, 'n'},
    {"gc-cpu", no_argument, NULL, 'g'},
    {"frequency", required_argument, NULL, 'F'},
    TOOL_LONGOPT_DIR,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int opt, c, gc_cpu = 0;
  uint64_t hz = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
    if ((c = tool_common_opt(opt, optarg, &a->t, NULL)) != 0) {
      if (c != 1) return c;
      continue;
    }
    switch (opt) {
    case 'd':
      if (tool_parse_duration(optarg, &a->duration_ns) != 0 || a->duration_ns == 0)
        return tool_usage_error("--duration takes a duration (\"30s\"), not '%s'", optarg);
      a->has_duration = 1;
      break;
    case 'r':
      if (tool_parse_size(optarg, &a->rate) != 0 || a->rate < OCGC_MP_RATE_MIN ||
          a->rate > OCGC_MP_RATE_MAX)
        return tool_usage_error("--rate takes a size from %u bytes to 1G, not '%s'",
                                OCGC_MP_RATE_MIN, optarg);
      a->has_rate = 1;
      break;
    case 'f':
      if (strcmp(optarg, "pprof") == 0) a->format = FMT_PPROF;
      else if (strcmp(optarg, "folded") == 0) a->format = FMT_FOLDED;
      else if (strcmp(optarg, "json") == 0) a->format = FMT_JSON;
      else return tool_usage_error("--format is pprof, folded or json, not '%s'", optarg);
      break;
    case 's':
      if (ocgc_profile_value_parse(optarg, &a->value) != 0)
        return tool_usage_error("--sample is alloc_space, alloc_objects, inuse_space, "
                                "inuse_objects, promoted_space or promoted_objects, not '%s'",
                                optarg);
      a->value_set = 1;
      break;
    case 'o': a->out = optarg; break;
    case 'n': a->no_lines = 1; break;
    case 'g': gc_cpu = 1; break;
    case 'F':
      if (tool_parse_count(optarg, &hz) != 0 || hz == 0 || hz > PROFILE_CPU_MAX_HZ)
        return tool_usage_error("--frequency takes 1 to %u samples a second, not '%s'",
                                PROFILE_CPU_MAX_HZ, optarg);
      break;
    case 'h': profile_usage(stdout); exit(0);
    default: profile_usage(stderr); return TOOL_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    profile_usage(stderr);
    return TOOL_EXIT_USAGE;
  }
  if ((c = tool_target_pid(&a->t, argv[optind], NULL)) != 0) return c;
  if (a->has_rate && !a->has_duration) {
    a->duration_ns = UINT64_C(10000000000);
    a->has_duration = 1;
  }
  if (hz != 0 && !gc_cpu) return tool_usage_error("--frequency goes with --gc-cpu");
  if (gc_cpu && !a->has_duration)
    return tool_usage_error("--gc-cpu charges a window's collector CPU: give --duration");
  if (gc_cpu && a->format == FMT_FOLDED)
    return tool_usage_error("--gc-cpu's figure is in pprof and json, not folded");
  if (gc_cpu) a->gc_cpu_hz = hz ? (unsigned)hz : PROFILE_CPU_DEFAULT_HZ;
  if (!a->value_set) a->value = OCGC_PV_ALLOC_SPACE;
  if (a->format == FMT_PPROF && a->out == NULL && isatty(STDOUT_FILENO))
    return tool_usage_error("pprof is binary: give -o FILE, or send stdout to a file or pipe");
  return 0;
}

/* An error of the window ([rate]: the one asked, or put back) said in one
 * line: the exit code.  [t0]: when the copy that failed began, for one the
 * program kept busy; [holders]: of -EBUSY. */
static int window_error(const struct profile_args *a, int err, uint64_t rate, uint64_t t0,
                        const int *holders)
{
  const char *who = tool_target_label(&a->t);
  switch (err) {
  case -EAGAIN:
    tool_say("%s: its allocation profile stayed busy for %.1f s (the program was updating "
             "it at every try): no copy", who, (double)(cm_mono_ns() - t0) / 1e9);
    return TOOL_EXIT_ERROR;
  case -ENODATA:
    tool_say("%s has no allocation profile (a stock OCaml 5 runtime, or a patched "
             "runtime older than ext_version 5)", who);
    return TOOL_EXIT_NOPROFILE;
  case -ENOTSUP:
    tool_say("%s is a bytecode program: its allocations are not sampled", who);
    return TOOL_EXIT_NOPROFILE;
  case -EACCES:
  case -EPERM:
    tool_say("%s: not allowed to switch its sampling (only its own user or root may)", who);
    return TOOL_EXIT_DENIED;
  case -EBUSY:
    tool_say("%s: all %u of its rate leases are held (by processes %d, %d, %d and %d, as "
             "they wrote themselves): it samples at the finest of their rates meanwhile; "
             "try again when one of their windows ends (a holder that was killed lets go "
             "within the program's 10 s lease)",
             who, OCGC_MP_LEASE_SLOTS, holders[0], holders[1], holders[2], holders[3]);
    return TOOL_EXIT_NOPROFILE;
  case -ERANGE:
    tool_say("%s refused the rate %" PRIu64 " bytes", who, rate);
    return TOOL_EXIT_NOPROFILE;
  case -ECANCELED:
    tool_say("%s: another request for its sampling came after ours", who);
    return TOOL_EXIT_ERROR;
  default:
    return tool_target_error(&a->t, err);
  }
}

/* ---- the forms -------------------------------------------------------------------- */

static void json_frames(struct json *j, struct ocgc_symbols *syms,
                        const struct ocgc_memprof_stack *s)
{
  unsigned d;
  json_key(j, "frames");
  json_arr(j, JSON_INLINE);
  for (d = 0; d < s->depth; d++) {
    struct ocgc_symbol sym;
    char hex[24];
    snprintf(hex, sizeof hex, "0x%" PRIx64, s->frames[d]);
    ocgc_symbols_lookup(syms, s->frames[d], 1, &sym);
    json_obj(j, JSON_INLINE);
    json_kv_str(j, "address", hex);
    json_kv_str(j, "function", sym.function);
    json_kv_str(j, "symbol", sym.symbol);
    json_kv_str(j, "file", sym.file);
    json_kv_u64_or_null(j, "line", sym.line != 0, sym.line);
    json_obj_end(j);
  }
  json_arr_end(j);
}

/* --gc-cpu's figures of the window: what was charged, and what was not. */
static void json_gc_cpu(struct json *j, const struct gc_cpu *g)
{
  json_key(j, "gc_cpu");
  json_obj(j, JSON_INLINE);
  json_kv_u64(j, "minor_ns", g->cpu.minor_ns);
  json_kv_u64(j, "major_ns", g->cpu.major_ns);
  json_kv_u64(j, "charged_ns", g->sum.charged_ns);
  json_kv_u64(j, "unattributed_ns", g->sum.unattributed_ns);
  json_kv_u64(j, "collector_ns", g->other_ns);
  json_kv_str(j, "model", "minor collections by bytes allocated in the minor heap, the major "
                          "collector by bytes entering the major heap");
  json_obj_end(j);
}

static void write_json(FILE *f, const struct profile_args *a, const struct ocgc_memprof *p,
                       struct ocgc_symbols *syms, uint64_t window_ns, const struct gc_cpu *g)
{
  struct json j;
  size_t i;
  unsigned v;
  json_init_file(&j, f, 0);
  json_obj(&j, JSON_LINES);
  json_kv_u64(&j, "pid", (uint64_t)a->t.pid);
  json_kv_str(&j, "state", ocgc_memprof_state_name(p->state));
  json_kv_u64(&j, "rate_bytes", p->rate_bytes);
  json_kv_bool(&j, "rate_leased", p->rate_leased);
  json_kv_u64(&j, "base_rate_bytes", p->base_rate);
  json_kv_u64(&j, "rate_changes", p->rate_changes);
  json_kv_u64_or_null(&j, "window_ns", window_ns != 0, window_ns);
  json_kv_u64(&j, "samples", p->samples);
  json_kv_u64(&j, "overflow_samples", p->overflow_samples);
  json_kv_u64(&j, "cut_samples", p->cut_samples);
  json_kv_u64(&j, "unfollowed", p->unfollowed);
  /* which in-use rule the figures follow (ocgc/memprof.h) */
  json_kv_str(&j, "inuse", p->live_known ? "as of the last completed marking" : "allocated - freed");
  if (g->charge != NULL) json_gc_cpu(&j, g);
  json_key(&j, "stacks");
  json_arr(&j, JSON_LINES);
  for (i = 0; i < p->nstacks; i++) {
    const struct ocgc_memprof_stack *s = &p->stack[i];
    int64_t vals[OCGC_PV_COUNT];
    int any = 0;
    ocgc_profile_values(s, vals);
    for (v = 0; v < OCGC_PV_COUNT; v++) any |= vals[v] != 0;
    if (g->charge != NULL) any |= g->charge[i] != 0;
    if (!any) continue;
    json_obj(&j, JSON_INLINE);
    json_kv_str(&j, "kind", s->overflow ? "overflow" : ocgc_memprof_kind_name(s->kind));
    json_kv_bool(&j, "cut", s->cut);
    for (v = 0; v < OCGC_PV_COUNT; v++) {
      json_key(&j, ocgc_profile_value_name((enum ocgc_profile_value)v));
      json_i64(&j, vals[v]);
    }
    if (g->charge != NULL) json_kv_u64(&j, "gc_cpu_ns", g->charge[i]);
    json_frames(&j, syms, s);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
  json_raw(&j, "\n");
}

struct json_job {
  const struct profile_args *a;
  const struct ocgc_memprof *p;
  struct ocgc_symbols *syms;
  uint64_t window_ns;
  const struct gc_cpu *g;
};

static void json_out(FILE *f, void *arg)
{
  const struct json_job *j = arg;
  write_json(f, j->a, j->p, j->syms, j->window_ns, j->g);
}

/* The profile in its form, to the output. */
static int emit(const struct profile_args *a, const struct ocgc_memprof *p,
                struct ocgc_symbols *syms, uint64_t window_ns, const struct gc_cpu *g)
{
  unsigned char *bytes = NULL;
  size_t len = 0;
  int err = 0, rc;
  if (a->format == FMT_PPROF) {
    struct ocgc_pprof_opts o = OCGC_OPTS_INIT(struct ocgc_pprof_opts);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    o.time_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    o.duration_ns = (int64_t)window_ns;
    o.default_value_set = a->value_set;
    o.default_value = a->value;
    o.gc_cpu_ns = g->charge;
    err = ocgc_pprof_write(p, syms, &o, &bytes, &len);
  } else if (a->format == FMT_FOLDED) {
    err = ocgc_profile_folded(p, syms, a->value, (char **)&bytes, &len);
  }
  if (err != 0) {
    tool_say("cannot write the profile: %s", ocgc_strerror(err));
    return TOOL_EXIT_ERROR;
  }
  if (a->format == FMT_JSON) {
    struct json_job j = {a, p, syms, window_ns, g};
    rc = profile_output(a->out, NULL, 0, json_out, &j);
  } else {
    rc = profile_output(a->out, bytes, len, NULL, NULL);
  }
  free(bytes);
  return rc;
}

/* ---- the command ---------------------------------------------------------------------- */

static struct ocgc_symbols *symbolizer(const struct profile_args *a, struct ocgc_source *src)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  struct ocgc_symbols *syms = NULL;
  int err;
  o.no_lines = a->no_lines;
  if (ocgc_source_info(src, &info) != 0) info.start_time = 0;
  if ((err = ocgc_symbols_open_pid(a->t.pid, info.start_time, &o, &syms)) != 0)
    tool_say("%s: cannot read its memory map (%s): frames are left as addresses",
             tool_target_label(&a->t), ocgc_strerror(err));
  return syms;
}

/* --gc-cpu: the CPU sampler opened beside the window, which then begins
 * again so that both begin together (the sampler's opening reads the
 * files' CFI: a while).  0, or an exit code after a line. */
static int gc_cpu_begin(const struct profile_args *a, struct ocgc_source *src, struct gc_cpu *g,
                        struct ocgc_allocwindow *w)
{
  uint64_t t0;
  int rc = cpu_window_open(&g->w, a->t.pid, tool_target_label(&a->t), src, NULL, a->gc_cpu_hz,
                           a->no_lines);
  if (rc != 0) return rc;
  t0 = cm_mono_ns();
  if ((rc = ocgc_allocwindow_begin(w)) != 0) return window_error(a, rc, a->rate, t0, NULL);
  return 0;
}

/* The window's wait, [left] ns: the lease kept (a lease lost said once),
 * the CPU sampler (if any) read at its pace (its rings hold some 15
 * samples).  Ends early on a stop signal or the process's end.  Returns
 * the time waited. */
static uint64_t wait_window(const struct profile_args *a, struct ocgc_source *src,
                            struct ocgc_allocwindow *w, struct gc_cpu *g, uint64_t left)
{
  uint64_t t0 = cm_mono_ns(), step = POLL_NS * 10;
  int sampling = g->w != NULL, said = 0, r;
  if (sampling && cpu_window_poll_ns(g->w) < step) step = cpu_window_poll_ns(g->w);
  while (!tool_stop && cm_mono_ns() - t0 < left && !ocgc_source_gone(src)) {
    tool_sleep_ns(left - (cm_mono_ns() - t0) < step ? left - (cm_mono_ns() - t0) : step);
    if ((r = ocgc_allocwindow_renew(w)) != 0 && !said) {
      said = 1;
      tool_say("%s: the lease of the rate lapsed (this process was stopped for longer than "
               "the program's lease)%s: the profile states the rates its samples were drawn "
               "at", tool_target_label(&a->t),
               r == 1 ? " and was taken again" : ", and every slot is held now");
    }
    /* an exec or the end stops the samples; the window goes on as before */
    if (sampling && cpu_window_turn(g->w) != 0) sampling = 0;
  }
  if (g->w != NULL) cpu_window_end(g->w);
  return cm_mono_ns() - t0;
}

/* The rate let go (libocgc: the lease released, or the rate switched put
 * back and its answer waited for a while, only to say if it is refused or
 * overtaken): [rc] kept, or the put-back's failure's exit code if it was 0.
 * A stop signal must not cut the put-back short: tool_stop is cleared for
 * it (a second one does). */
static int end_window(const struct profile_args *a, struct ocgc_allocwindow *w, int rc)
{
  struct ocgc_allocwindow_stats st = OCGC_OPTS_INIT(struct ocgc_allocwindow_stats);
  int err, back;
  if (ocgc_allocwindow_stats(w, &st) != 0 || st.ended) return rc;
  if (st.rate == OCGC_ALLOCWINDOW_SWITCHED) tool_stop = 0;
  if ((err = ocgc_allocwindow_end(w)) == 0) return rc;
  back = window_error(a, err, st.put_back_bytes, cm_mono_ns(), NULL);
  tool_say("%s: could not put its sampling rate back to %" PRIu64 " bytes (0: off)",
           tool_target_label(&a->t), st.put_back_bytes);
  return rc == 0 ? back : rc;
}

/* The window: the rate asked (a lease, or of a producer without leases the
 * rate switched), the copies before and after, their delta into *out (NULL
 * without --duration: the window's copy is the profile), the rate let go
 * on every way out.  *wp is the window, for the caller to free. */
static int window(const struct profile_args *a, struct ocgc_source *src, struct gc_cpu *g,
                  struct ocgc_allocwindow **wp, struct ocgc_memprof **out, uint64_t *window_ns)
{
  struct ocgc_allocwindow_opts o = OCGC_OPTS_INIT(struct ocgc_allocwindow_opts);
  struct ocgc_allocwindow *w = NULL;
  const struct ocgc_memprof *first;
  int holders[OCGC_MP_LEASE_SLOTS] = {0};
  uint64_t t0 = cm_mono_ns(), tc;
  int rc;
  /* The window begins when the rate is in force, within the time asked
   * for the window (the samples of a program that did not collect
   * meanwhile are none: it allocated nothing). */
  o.rate_bytes = a->has_rate ? a->rate : 0;
  o.answer_ns = a->duration_ns;
  o.busy_ns = BUSY_NS;
  o.stop = &tool_stop;
  if ((rc = ocgc_allocwindow_open(src, &o, &w, holders)) != 0)
    return window_error(a, rc, a->rate, t0, holders);
  *wp = w;
  t0 = cm_mono_ns();
  if (ocgc_allocwindow_copy(w)->state == OCGC_MP_UNAVAILABLE) {
    rc = window_error(a, -ENOTSUP, 0, t0, NULL);
    goto end;
  }
  do {
    tc = cm_mono_ns();
    if ((rc = ocgc_allocwindow_answer(w)) == 0 && !tool_stop) tool_sleep_ns(POLL_NS);
  } while (rc == 0 && !tool_stop);
  if ((rc == 0 || rc == -ETIMEDOUT) && tool_stop) {
    tool_say("stopped before %s read the request: no window", tool_target_label(&a->t));
    rc = 128 + tool_stop;
    goto end;
  }
  if (rc == -ETIMEDOUT) {
    tool_say("%s did not read the request in %.1f s (a program reads it at a minor "
             "collection): it allocated nothing to sample", tool_target_label(&a->t),
             (double)(cm_mono_ns() - t0) / 1e9);
    rc = TOOL_EXIT_NOPROFILE;
    goto end;
  }
  if (rc < 0) {
    rc = window_error(a, rc, a->rate, tc, NULL);
    goto end;
  }
  first = ocgc_allocwindow_copy(w);
  if (first->state == OCGC_MP_ASIDE) {
    tool_say("%s runs its own Gc.Memprof: ocgc takes no sample meanwhile",
             tool_target_label(&a->t));
    rc = TOOL_EXIT_NOPROFILE;
    goto end;
  }
  /* Off and not switched: a window would be empty, and so is a table that
   * never sampled (one that sampled before is still worth its figures). */
  if (first->state == OCGC_MP_OFF && !a->has_rate && (a->has_duration || first->samples == 0)) {
    tool_say("%s does not sample its allocations: 'ocgc profile %d --rate 512k' samples "
             "them for 10 s", tool_target_label(&a->t), a->t.pid);
    rc = TOOL_EXIT_NOPROFILE;
    goto end;
  }
  rc = 0;
  *window_ns = 0;
  if (a->has_duration) {
    uint64_t left = a->duration_ns - (cm_mono_ns() - t0 < a->duration_ns ? cm_mono_ns() - t0 : a->duration_ns);
    if (a->gc_cpu_hz != 0 && (rc = gc_cpu_begin(a, src, g, w)) != 0) goto end;
    *window_ns = wait_window(a, src, w, g, left);
    if (tool_stop) tool_say("stopped: the window is %.1f s, not the %.1f s asked",
                            (double)*window_ns / 1e9, (double)left / 1e9);
    tc = cm_mono_ns();
    if ((rc = ocgc_allocwindow_next(w, out)) == OCGC_E_STALE) {
      tool_say("%s: its profile began anew during the window (a new program in the process)",
               tool_target_label(&a->t));
      rc = TOOL_EXIT_STALE;
    } else if (rc != 0) {
      rc = window_error(a, rc, a->rate, tc, NULL);
    }
  }
end:
  /* The lease released: the program goes back to its base rate, or to the
   * finest of the other windows', at its next minor collection; or the
   * rate switched put back, whatever happened. */
  return end_window(a, w, rc);
}

/* --gc-cpu: the window's collector CPU (its samples, by phase) charged to
 * [p]'s stacks, and said on stderr beside the samples' line.  0, or an
 * exit code after a line. */
static int gc_cpu_charge(const struct profile_args *a, struct gc_cpu *g,
                         const struct ocgc_memprof *p)
{
  int err;
  g->cpu.sz = sizeof g->cpu;
  g->sum.sz = sizeof g->sum;
  if (!a->no_lines) cpu_window_say(g->w);
  if ((err = ocgc_gc_cpu_of(cpu_window_profile(g->w), &g->cpu, &g->other_ns)) != 0 ||
      (g->charge = calloc(p->nstacks ? p->nstacks : 1, sizeof *g->charge)) == NULL ||
      (err = ocgc_gc_charge(p, &g->cpu, g->charge, &g->sum)) != 0) {
    tool_say("cannot charge the collector's CPU: %s", ocgc_strerror(err ? err : -ENOMEM));
    return TOOL_EXIT_ERROR;
  }
  tool_say("gc_cpu: %.1f ms in minor collections, %.1f ms in the major collector: %.1f ms "
           "charged to the stacks, %.1f ms not (nothing sampled of its kind), %.1f ms in the "
           "collector's dispatch not charged",
           (double)g->cpu.minor_ns / 1e6, (double)g->cpu.major_ns / 1e6,
           (double)g->sum.charged_ns / 1e6, (double)g->sum.unattributed_ns / 1e6,
           (double)g->other_ns / 1e6);
  return 0;
}

int cmd_profile(int argc, char **argv)
{
  struct profile_args a;
  struct tool_signals sig;
  struct ocgc_source *src = NULL;
  struct ocgc_allocwindow *w = NULL;
  struct ocgc_memprof *delta = NULL;
  const struct ocgc_memprof *p;
  struct ocgc_symbols *syms;
  struct gc_cpu g;
  uint64_t window_ns = 0;
  int rc;
  int i;
  /* --cpu: the CPU profile, a command of its own (profile_cpu.c) */
  for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--cpu") == 0) return cmd_profile_cpu(argc, argv);
  memset(&a, 0, sizeof a);
  memset(&g, 0, sizeof g);
  if ((rc = parse_args(argc, argv, &a)) != 0) return rc;
  if ((rc = tool_target_open(&a.t, &src)) != 0) return tool_exit_code(rc);
  tool_signals_catch(&sig);
  rc = window(&a, src, &g, &w, &delta, &window_ns);
  tool_signals_restore(&sig);
  p = delta != NULL ? delta : ocgc_allocwindow_copy(w);
  if (rc == 0 && g.w != NULL) rc = gc_cpu_charge(&a, &g, p);
  if (rc == 0) {
    syms = symbolizer(&a, src);
    rc = emit(&a, p, syms, window_ns, &g);
    ocgc_symbols_close(syms);
  }
  free(g.charge);
  cpu_window_free(g.w);
  ocgc_memprof_free(delta);
  ocgc_allocwindow_free(w); /* its rate let go already */
  ocgc_source_close(src);
  return rc;
}
