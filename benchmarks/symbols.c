/* symbols.c - `make bench`: what naming and writing a profile costs.
 *
 * For each ELF file given (default /usr/bin/ocamlopt.opt, the native OCaml
 * compiler, a large real OCaml program): the time to read its names
 * (ocgc_symbols_open_elf: symbols and DWARF lines) and to look up a full
 * table's addresses (2,047 stacks x 32 frames), and the memory that takes
 * (peak RSS of a child doing only that, less its RSS before); then the
 * time to write that full table as gzipped pprof and as folded stacks,
 * named through it.  ROUNDS rounds each (argv: -r N); the median and the
 * range are printed.  Never fails: a file it cannot read is one line. */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ocgc/consumer.h"

#define STACKS 2048u
#define DEPTH 32u
#define MAX_ROUNDS 31

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void print_stat(const char *what, double *v, int n, double scale, const char *unit)
{
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  printf("  %-44s median %9.1f %-3s (min %.1f, max %.1f; %d rounds)\n", what, v[n / 2] * scale,
         unit, v[0] * scale, v[n - 1] * scale, n);
}

static long rss_kb(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* A full table of addresses around the entry point (a few MiB of code). */
static struct ocgc_memprof *full_table(uint64_t entry)
{
  struct ocgc_memprof *p = calloc(1, sizeof *p);
  unsigned i, d;
  uint64_t x = 88172645463325252ull;
  p->state = OCGC_MP_ON;
  p->rate_bytes = 524288;
  p->nstacks = STACKS;
  p->stack = calloc(STACKS, sizeof *p->stack);
  p->stack[0].overflow = 1;
  for (i = 1; i < STACKS; i++) {
    struct ocgc_memprof_stack *s = &p->stack[i];
    s->depth = DEPTH;
    for (d = 0; d < DEPTH; d++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      s->frames[d] = entry - (UINT64_C(4) << 20) + x % (UINT64_C(8) << 20);
    }
    s->alloc.samples = i;
    s->alloc.words = (uint64_t)i * 65536;
    s->alloc.blocks_x1024 = (uint64_t)i * 1024 * 100;
    s->freed.words = (uint64_t)i * 1024;
  }
  return p;
}

static uint64_t entry_of(const char *path)
{
  unsigned char h[32];
  uint64_t e = 0;
  int fd = open(path, O_RDONLY);
  if (fd >= 0 && read(fd, h, sizeof h) == (ssize_t)sizeof h) memcpy(&e, h + 24, 8);
  if (fd >= 0) close(fd);
  return e;
}

/* In a child: read the names and look every address up; the RSS it took
 * (KiB) is the exit's message through a pipe. */
static long names_rss_kb(const char *path, const struct ocgc_memprof *p)
{
  int fds[2];
  long kb = -1;
  pid_t pid;
  if (pipe(fds) != 0) return -1;
  if ((pid = fork()) == 0) {
    struct ocgc_symbols *s;
    struct ocgc_symbol sym;
    long before = rss_kb(), after;
    int fd = open(path, O_RDONLY);
    size_t i, d;
    if (fd < 0 || ocgc_symbols_open_elf(fd, path, NULL, &s) != 0) _exit(1);
    for (i = 0; i < p->nstacks; i++)
      for (d = 0; d < p->stack[i].depth; d++) ocgc_symbols_lookup(s, p->stack[i].frames[d], 1, &sym);
    after = rss_kb() - before;
    if (write(fds[1], &after, sizeof after) != (ssize_t)sizeof after) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  if (pid > 0 && read(fds[0], &kb, sizeof kb) != (ssize_t)sizeof kb) kb = -1;
  close(fds[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  return kb;
}

static void bench_file(const char *path, int rounds)
{
  double open_t[MAX_ROUNDS], look_t[MAX_ROUNDS], pprof_t[MAX_ROUNDS], folded_t[MAX_ROUNDS];
  double rss[MAX_ROUNDS];
  struct stat st;
  struct ocgc_memprof *p;
  size_t named = 0, total = 0, pprof_len = 0, folded_len = 0, nfn = 0;
  int r;
  if (stat(path, &st) != 0) {
    printf("  %s: not here, n/a\n", path);
    return;
  }
  p = full_table(entry_of(path));
  for (r = 0; r < rounds; r++) {
    struct ocgc_symbols *s;
    struct ocgc_symbol sym;
    const struct ocgc_symbols_mapping *m;
    unsigned char *buf;
    char *text;
    size_t i, d;
    double t0;
    int fd = open(path, O_RDONLY);
    t0 = now_s();
    if (fd < 0 || ocgc_symbols_open_elf(fd, path, NULL, &s) != 0) {
      printf("  %s: cannot be read as ELF, n/a\n", path);
      if (fd >= 0) close(fd);
      ocgc_memprof_free(p);
      return;
    }
    open_t[r] = now_s() - t0;
    close(fd);
    t0 = now_s();
    named = total = 0;
    for (i = 0; i < p->nstacks; i++)
      for (d = 0; d < p->stack[i].depth; d++) {
        named += (size_t)ocgc_symbols_lookup(s, p->stack[i].frames[d], 1, &sym);
        total++;
      }
    look_t[r] = now_s() - t0;
    ocgc_symbols_mappings(s, &m);
    nfn = (size_t)m[0].has_lines;
    t0 = now_s();
    if (ocgc_pprof_write(p, s, NULL, &buf, &pprof_len) == 0) free(buf);
    pprof_t[r] = now_s() - t0;
    t0 = now_s();
    if (ocgc_profile_folded(p, s, OCGC_PV_ALLOC_SPACE, &text, &folded_len) == 0) free(text);
    folded_t[r] = now_s() - t0;
    ocgc_symbols_close(s);
    rss[r] = (double)names_rss_kb(path, p);
  }
  printf("%s: %.1f MiB, DWARF lines %s; a full table: %zu of %zu frames named\n", path,
         (double)st.st_size / 1048576.0, nfn ? "read" : "none", named, total);
  print_stat("read its names (symbols, lines)", open_t, rounds, 1e3, "ms");
  print_stat("look up 65,504 return addresses", look_t, rounds, 1e3, "ms");
  print_stat("memory for both (peak RSS)", rss, rounds, 1.0 / 1024, "MiB");
  print_stat("write the full table as pprof (gzip)", pprof_t, rounds, 1e3, "ms");
  printf("  %-44s %zu bytes\n", "its size", pprof_len);
  print_stat("write it as folded stacks", folded_t, rounds, 1e3, "ms");
  printf("  %-44s %zu bytes\n", "its size", folded_len);
  ocgc_memprof_free(p);
}

int main(int argc, char **argv)
{
  int rounds = 5, i = 1, any = 0;
  if (argc > 2 && strcmp(argv[1], "-r") == 0) {
    rounds = atoi(argv[2]);
    if (rounds < 1) rounds = 1;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    i = 3;
  }
  for (; i < argc; i++, any = 1) bench_file(argv[i], rounds);
  if (!any) bench_file("/usr/bin/ocamlopt.opt", rounds);
  return 0;
}
