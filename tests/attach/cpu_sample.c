/* cpu_sample.c - CPU samples of a running process through libocgc's
 * public API only (ocgc/cpu.h, ocgc/unwind.h, ocgc/symbols.h), for
 * cpu_sample.sh and for measuring: it samples PID for SECONDS, unwinds and
 * names each sample, and prints "key value" lines: the samples and their
 * rate, how the stacks ended, the time the unwinding and naming took per
 * sample, and for each FUNCTION asked for, the samples whose stack holds
 * it (the innermost of them counted, once a sample).  It samples for at
 * least SECONDS, and on (at most 60 s) until it has MIN_SAMPLES: a loaded
 * machine gives the target less CPU, so fewer samples a second.
 *
 * Usage: cpu_sample PID SECONDS FREQUENCY_HZ MIN_SAMPLES [FUNCTION...]
 * Also, for the stacks whose innermost frame is the first FUNCTION, how
 * they ended ("leaf.END N").
 * Environment (cpu_hostile.sh): CPU_SAMPLE_MAX_THREADS and
 * CPU_SAMPLE_RING_PAGES (the sampler's options), CPU_SAMPLE_READ_MS (the
 * time between two reads, default 20), CPU_SAMPLE_GO (a file made after
 * the first read, for a target waiting to do something hostile).
 * Exit: 0; 3 when perf_event_open is refused (the hint on stderr); 4 when
 * this kernel or machine has no such event (-ENOTSUP); 1. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <ocgc/cpu.h>
#include <ocgc/symbols.h>
#include <ocgc/unwind.h>

#define MAX_FUNCS 8
#define MAX_LEAVES 256

struct run {
  struct ocgc_unwind *u;
  struct ocgc_symbols *names;
  int nfuncs;
  char **funcs;
  uint64_t hits[MAX_FUNCS], none;
  uint64_t ends[5], frames, samples, unwind_ns, name_ns, named_frames;
  uint64_t ocaml_frames;
  uint64_t leaf_ends[5];
  int shown;
};

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A target's name printed safely in our "key value" lines. */
static void put_name(const char *s)
{
  for (; s != NULL && *s != '\0'; s++) putchar(*s > ' ' && *s < 127 ? *s : '?');
}

static int on_sample(const struct ocgc_cpu_sample *s, void *arg)
{
  struct run *r = arg;
  struct ocgc_unwind_stack st;
  struct ocgc_symbol sym;
  uint64_t t0 = now_ns(), t1;
  unsigned i;
  int f, found = -1;
  ocgc_unwind_sample(r->u, s, &st);
  t1 = now_ns();
  r->unwind_ns += t1 - t0;
  r->samples++;
  r->frames += st.depth;
  if ((unsigned)st.end < 5) r->ends[st.end]++;
  for (i = 0; i < st.depth; i++) {
    if (!ocgc_symbols_lookup(r->names, st.frames[i], i > 0, &sym)) continue;
    if (i == 0 && r->nfuncs > 0 && sym.function != NULL && strstr(sym.function, r->funcs[0]) != NULL &&
        (unsigned)st.end < 5)
      r->leaf_ends[st.end]++;
    r->named_frames++;
    if (sym.symbol != NULL && strncmp(sym.symbol, "caml", 4) == 0) r->ocaml_frames++;
    for (f = 0; f < r->nfuncs && found < 0; f++)
      if (sym.function != NULL && strstr(sym.function, r->funcs[f]) != NULL) found = f;
  }
  r->name_ns += now_ns() - t1;
  if (found >= 0) r->hits[found]++;
  else r->none++;
  if (r->shown < 3 && st.depth > 1) { /* a few stacks, for the log */
    r->shown++;
    printf("# stack (%s):", ocgc_unwind_end_name(st.end));
    for (i = 0; i < st.depth && i < 12; i++) {
      putchar(' ');
      if (ocgc_symbols_lookup(r->names, st.frames[i], i > 0, &sym)) put_name(sym.function);
      else printf("0x%llx", (unsigned long long)st.frames[i]);
    }
    putchar('\n');
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct ocgc_cpu_opts o = OCGC_OPTS_INIT(struct ocgc_cpu_opts);
  struct ocgc_cpu_stats cs = OCGC_OPTS_INIT(struct ocgc_cpu_stats);
  struct ocgc_cpu *c;
  struct run r;
  uint64_t t0, t_end, t_max, read_ns = 0, min_samples;
  struct rusage ru;
  double secs;
  long read_ms = getenv("CPU_SAMPLE_READ_MS") ? atol(getenv("CPU_SAMPLE_READ_MS")) : 20;
  const char *go = getenv("CPU_SAMPLE_GO");
  int pid, err, f, reads = 0;
  if (argc < 5) {
    fprintf(stderr, "usage: cpu_sample PID SECONDS FREQUENCY_HZ MIN_SAMPLES [FUNCTION...]\n");
    return 1;
  }
  memset(&r, 0, sizeof r);
  pid = atoi(argv[1]);
  secs = atof(argv[2]);
  o.frequency_hz = (unsigned)atoi(argv[3]);
  min_samples = (uint64_t)atoll(argv[4]);
  if (getenv("CPU_SAMPLE_MAX_THREADS")) o.max_threads = (unsigned)atoi(getenv("CPU_SAMPLE_MAX_THREADS"));
  if (getenv("CPU_SAMPLE_RING_PAGES")) o.ring_pages = (unsigned)atoi(getenv("CPU_SAMPLE_RING_PAGES"));
  if (read_ms <= 0 || read_ms > 10000) read_ms = 20;
  r.funcs = argv + 5;
  r.nfuncs = argc - 5 > MAX_FUNCS ? MAX_FUNCS : argc - 5;
  if ((err = ocgc_cpu_open(pid, 0, &o, &c)) != 0) {
    fprintf(stderr, "cpu_sample: %s\n", ocgc_strerror(err));
    if (ocgc_cpu_denied_hint(err) != NULL) fprintf(stderr, "%s\n", ocgc_cpu_denied_hint(err));
    return err == OCGC_E_PERF_DENIED ? 3 : err == -ENOTSUP ? 4 : 1;
  }
  if ((err = ocgc_symbols_open_pid(pid, 0, NULL, &r.names)) != 0 ||
      (err = ocgc_unwind_open(r.names, -1, NULL, &r.u)) != 0) {
    fprintf(stderr, "cpu_sample: %s\n", ocgc_strerror(err));
    return 1;
  }
  ocgc_cpu_stats(c, &cs);
  printf("threads_at_open %llu\n", (unsigned long long)cs.threads);
  fflush(stdout); /* a test waits for it to start what comes next */
  t0 = now_ns();
  t_end = t0 + (uint64_t)(secs * 1e9);
  t_max = t0 + UINT64_C(60000000000);
  for (;;) {
    struct timespec ts = {read_ms / 1000, (read_ms % 1000) * 1000000}; /* 20 ms: a ring holds some 15 samples */
    uint64_t a, unw0 = r.unwind_ns + r.name_ns;
    int n;
    nanosleep(&ts, NULL);
    a = now_ns();
    n = ocgc_cpu_read(c, on_sample, &r);
    read_ns += now_ns() - a - (r.unwind_ns + r.name_ns - unw0);
    if (++reads == 1 && go != NULL) {
      FILE *g = fopen(go, "w");
      if (g != NULL) fclose(g);
    }
    if (n == OCGC_E_STALE) break; /* exec'd or gone: the flags say which */
    if (n < 0) {
      fprintf(stderr, "cpu_sample: %s\n", ocgc_strerror(n));
      return 1;
    }
    if ((now_ns() >= t_end && r.samples >= min_samples) || now_ns() >= t_max) break;
  }
  secs = (double)(now_ns() - t0) / 1e9;
  ocgc_cpu_stats(c, &cs);
  printf("seconds %.3f\n", secs);
  printf("samples %llu\n", (unsigned long long)r.samples);
  printf("samples_per_s %.1f\n", (double)r.samples / secs);
  printf("lost %llu\ncorrupt %llu\n", (unsigned long long)cs.lost, (unsigned long long)cs.corrupt);
  printf("threads_seen %llu\n", (unsigned long long)cs.threads_seen);
  printf("threads_end %llu\nthreads_over %llu\nthreads_failed %llu\n",
         (unsigned long long)cs.threads, (unsigned long long)cs.threads_over,
         (unsigned long long)cs.threads_failed);
  printf("threads_unmapped %llu\nrings_smaller %llu\n", (unsigned long long)cs.threads_unmapped,
         (unsigned long long)cs.rings_smaller);
  if (ocgc_cpu_partial_hint(&cs) != NULL) fprintf(stderr, "cpu_sample: %s\n", ocgc_cpu_partial_hint(&cs));
  printf("execed %d\ngone %d\n", (cs.flags & OCGC_CPU_EXECED) != 0, (cs.flags & OCGC_CPU_GONE) != 0);
  for (f = 0; f < 5; f++)
    printf("end.%s %llu\n", ocgc_unwind_end_name((enum ocgc_unwind_end)f),
           (unsigned long long)r.ends[f]);
  for (f = 0; f < 5 && r.nfuncs > 0; f++)
    printf("leaf.%s %llu\n", ocgc_unwind_end_name((enum ocgc_unwind_end)f),
           (unsigned long long)r.leaf_ends[f]);
  printf("frames_per_sample %.1f\n", r.samples ? (double)r.frames / (double)r.samples : 0.0);
  printf("ocaml_frames %llu\n", (unsigned long long)r.ocaml_frames);
  printf("read_us_per_sample %.1f\n", r.samples ? (double)read_ns / 1e3 / (double)r.samples : 0.0);
  printf("unwind_us_per_sample %.1f\n",
         r.samples ? (double)r.unwind_ns / 1e3 / (double)r.samples : 0.0);
  printf("name_us_per_sample %.1f\n", r.samples ? (double)r.name_ns / 1e3 / (double)r.samples : 0.0);
  for (f = 0; f < r.nfuncs; f++) {
    printf("fn.");
    put_name(r.funcs[f]);
    printf(" %llu\n", (unsigned long long)r.hits[f]);
  }
  printf("fn.none %llu\n", (unsigned long long)r.none);
  if (getrusage(RUSAGE_SELF, &ru) == 0) printf("maxrss_kb %ld\n", ru.ru_maxrss);
  ocgc_unwind_close(r.u);
  ocgc_symbols_close(r.names);
  ocgc_cpu_close(c);
  return 0;
}
