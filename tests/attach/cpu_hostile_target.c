/* cpu_hostile_target.c - a C program that is hostile to a CPU sampler and
 * unwinder of it (cpu_hostile.sh), in one of these modes; it prints
 * "pid N" once running, then "ready 1" when the hostile part may be
 * watched, and stops when the file STOP exists (polled every few ms, so
 * a sampler sees it run):
 *   burn STOP           burns in burn_main (the plain case: an executable
 *                       that the test replaces on disk while it runs)
 *   exit STOP           burns, and exits at once (_exit) when STOP appears:
 *                       the process is gone in the middle of a window
 *   unmap STOP          dlopens zlib, burns in it (crc32, by a pointer,
 *                       from burn_lib), and when STOP.unmap
 *                       appears dlcloses it (its code unmapped: "unmapped
 *                       1" once /proc/self/maps no longer names it), then
 *                       burns in burn_after until STOP
 *   late STOP           burns in burn_main until STOP.go appears, then
 *                       dlopens zlib and burns in it (a
 *                       mapping made after a sampler's open), until STOP
 *   garbage STOP        spins with its stack pointer and frame pointer at
 *                       crafted memory: words that point into its own code,
 *                       into the crafted memory itself, at nothing; and with
 *                       its stack pointer at an unmapped page
 *   threads N STOP      N threads burning in worker_fn, main in burn_main;
 *                       each thread exits when STOP.t exists (threads that
 *                       exit mid-window), main when STOP exists
 *   sleepers N STOP     as threads, but the N threads sleep (they need a
 *                       ring each, not CPU)
 * Not linked to libocgc (a plain executable, no libtool wrapper), nor to
 * zlib (which dlopen maps, and dlclose unmaps: not the maths library,
 * which the sanitizers' runtime loads).  burn_main and burn_after differ,
 * or the compiler makes them one function of one name. */

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *stop_path;
static char stop_t[4096], stop_unmap[4096], stop_go[4096];
static volatile double sink;

static int exists(const char *p)
{
  return access(p, F_OK) == 0;
}

/* Some milliseconds of CPU in the caller's frame. */
__attribute__((noinline)) static void spin(void)
{
  volatile uint64_t x = 0;
  uint64_t i;
  for (i = 0; i < 2000000; i++) x += i;
}

__attribute__((noinline)) static void burn_main(const char *until)
{
  while (!exists(until)) spin();
}

__attribute__((noinline)) static void burn_after(const char *until)
{
  while (!exists(until)) {
    spin();
    sink += 1;
  }
}

typedef unsigned long (*crc_fn)(unsigned long, const unsigned char *, unsigned);

static unsigned char crc_buf[65536];

__attribute__((noinline)) static void burn_lib(crc_fn f, const char *until)
{
  unsigned long a = 0;
  int i;
  while (!exists(until))
    for (i = 0; i < 16; i++) a = f(a, crc_buf, sizeof crc_buf);
  sink = (double)a;
}

static void *open_lib(crc_fn *f)
{
  void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL || (*f = (crc_fn)dlsym(h, "crc32")) == NULL) {
    fprintf(stderr, "dlopen libz.so.1: %s\n", dlerror());
    exit(2);
  }
  return h;
}

static int lib_mapped(void)
{
  char line[4096];
  int found = 0;
  FILE *m = fopen("/proc/self/maps", "r");
  if (m == NULL) return -1;
  while (fgets(line, sizeof line, m) != NULL)
    if (strstr(line, "/libz.so") != NULL) found = 1;
  fclose(m);
  return found;
}

/* ---- garbage: the stack pointer at crafted memory ---- */

static uint64_t garbage[8192] __attribute__((aligned(4096)));

__attribute__((noinline)) static void spin_garbage(uint64_t iters, uint64_t sp, uint64_t fp)
{
  /* no memory is touched between the two moves: nothing is pushed on the
   * crafted stack (no call, no signal handled: the test stops us by file) */
  __asm__ volatile("mov %%rsp, %%r12\n\t"
                   "mov %%rbp, %%r13\n\t"
                   "mov %1, %%rsp\n\t"
                   "mov %2, %%rbp\n\t"
                   "1: dec %0\n\t"
                   "jnz 1b\n\t"
                   "mov %%r12, %%rsp\n\t"
                   "mov %%r13, %%rbp\n\t"
                   : "+r"(iters)
                   : "r"(sp), "r"(fp)
                   : "r12", "r13", "memory", "cc");
}

static void fill_garbage(unsigned variant)
{
  uint64_t self = (uint64_t)(uintptr_t)&spin_garbage, mid = (uint64_t)(uintptr_t)&garbage[4096];
  unsigned i;
  uint64_t r = 0x9e3779b97f4a7c15u * (variant + 1);
  for (i = 0; i < 8192; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    switch ((variant + i) % 6) {
    case 0: garbage[i] = self + (r % 64); break;             /* into its own code */
    case 1: garbage[i] = mid + 8 * (r % 64) - 256; break;    /* into this memory, back and on */
    case 2: garbage[i] = (uint64_t)(uintptr_t)&garbage[i]; break; /* at itself */
    case 3: garbage[i] = 0; break;
    case 4: garbage[i] = ~(uint64_t)0 - (r % 4096); break;   /* the top of the address space */
    default: garbage[i] = r; break;
    }
  }
}

static void garbage_mode(void)
{
  unsigned v = 0;
  printf("ready 1\n");
  fflush(stdout);
  while (!exists(stop_path)) {
    uint64_t mid = (uint64_t)(uintptr_t)&garbage[4096];
    fill_garbage(v);
    if (v % 4 == 3) spin_garbage(3000000, 0x1000, 0x2000); /* an unmapped stack */
    else spin_garbage(3000000, mid + 8 * (v % 3), mid + 64 * (v % 5));
    v++;
  }
  printf("variants %u\n", v);
}

/* ---- threads ---- */

__attribute__((noinline)) static void worker_fn(void)
{
  while (!exists(stop_t)) spin();
}

static void *worker_main(void *arg)
{
  (void)arg;
  worker_fn();
  return NULL;
}

static void *sleeper_main(void *arg)
{
  struct timespec ts = {0, 10000000};
  (void)arg;
  while (!exists(stop_t)) nanosleep(&ts, NULL);
  return NULL;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  int nthreads = 0, i;
  int threaded = strcmp(mode, "threads") == 0 || strcmp(mode, "sleepers") == 0;
  if (argc < 3 || (threaded && argc < 4)) {
    fprintf(stderr, "usage: cpu_hostile_target MODE [N] STOP\n");
    return 2;
  }
  if (threaded) nthreads = atoi(argv[2]);
  stop_path = argv[threaded ? 3 : 2];
  snprintf(stop_t, sizeof stop_t, "%s.t", stop_path);
  snprintf(stop_unmap, sizeof stop_unmap, "%s.unmap", stop_path);
  snprintf(stop_go, sizeof stop_go, "%s.go", stop_path);
  printf("pid %d\n", (int)getpid());
  fflush(stdout);
  if (strcmp(mode, "burn") == 0) {
    printf("ready 1\n");
    fflush(stdout);
    burn_main(stop_path);
  } else if (strcmp(mode, "exit") == 0) {
    printf("ready 1\n");
    fflush(stdout);
    burn_main(stop_path);
    _exit(0);
  } else if (strcmp(mode, "unmap") == 0) {
    crc_fn f;
    void *h = open_lib(&f);
    printf("ready 1\n");
    fflush(stdout);
    burn_lib(f, stop_unmap);
    dlclose(h);
    printf("unmapped %d\n", lib_mapped() == 0);
    fflush(stdout);
    burn_after(stop_path);
  } else if (strcmp(mode, "late") == 0) {
    crc_fn f;
    printf("ready 1\n");
    fflush(stdout);
    burn_main(stop_go);
    open_lib(&f);
    printf("loaded 1\n");
    fflush(stdout);
    burn_lib(f, stop_path);
  } else if (strcmp(mode, "garbage") == 0) {
    garbage_mode();
  } else if (threaded) {
    pthread_t *t = calloc((size_t)(nthreads > 0 ? nthreads : 1), sizeof *t);
    if (t == NULL || nthreads <= 0 || nthreads > 256) return 2;
    for (i = 0; i < nthreads; i++)
      if (pthread_create(&t[i], NULL, mode[0] == 't' ? worker_main : sleeper_main, NULL) != 0)
        return 2;
    printf("ready 1\n");
    fflush(stdout);
    burn_main(stop_path);
    for (i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    free(t);
  } else {
    fprintf(stderr, "cpu_hostile_target: unknown mode %s\n", mode);
    return 2;
  }
  return 0;
}
