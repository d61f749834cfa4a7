/* elfgen_cli.c - the hostile ELF shapes of elfgen.c from the command line,
 * and one file named through libocgc's symbolizer with the peak memory it
 * took (for the fuzz corpus, serve_pprof_hostile.sh and the figures of
 * docs/threat-model.md):
 *   elfgen_cli write SHAPE N TABLES PATH
 *   elfgen_cli read PATH      prints "err=E function=F line=L held=B peak_kib=K ms=T"
 *   elfgen_cli map PATH       maps PATH readable and executable, says "mapped",
 *                             and waits for its standard input to end
 *   elfgen_cli pid PID        reads every file process PID maps (read_now),
 *                             prints "read=N of M" */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "elfgen.h"
#include "ocgc/symbols.h"

static int usage(void)
{
  fprintf(stderr, "usage: elfgen_cli write sections|lines|notes|names N TABLES PATH\n"
                  "       elfgen_cli read PATH\n       elfgen_cli map PATH\n"
                  "       elfgen_cli pid PID\n");
  return 2;
}

int main(int argc, char **argv)
{
  if (argc == 6 && strcmp(argv[1], "write") == 0) {
    int shape = elfgen_shape_of(argv[2]), fd;
    if (shape < 0) return usage();
    fd = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || elfgen_write(fd, (enum elfgen_shape)shape, strtoull(argv[3], NULL, 0),
                               strtoull(argv[4], NULL, 0)) != 0) {
      perror(argv[5]);
      return 1;
    }
    return close(fd) == 0 ? 0 : 1;
  }
  if (argc == 3 && strcmp(argv[1], "read") == 0) {
    struct ocgc_symbols *s = NULL;
    struct ocgc_symbol sym;
    struct rusage ru;
    struct timespec t0, t1;
    int fd = open(argv[2], O_RDONLY), err;
    if (fd < 0) { perror(argv[2]); return 1; }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err = ocgc_symbols_open_elf(fd, argv[2], NULL, &s);
    memset(&sym, 0, sizeof sym);
    if (err == 0) ocgc_symbols_lookup(s, ELFGEN_FUNC + 2, 1, &sym);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &ru);
    printf("err=%d function=%s line=%u held=%" PRIu64 " peak_kib=%ld ms=%ld\n", err,
           sym.function ? sym.function : "(none)", sym.line, ocgc_symbols_memory(s), ru.ru_maxrss,
           (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
    ocgc_symbols_close(s);
    close(fd);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "map") == 0) {
    char c;
    int fd = open(argv[2], O_RDONLY | O_NONBLOCK);
    if (fd < 0 || mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
      perror(argv[2]);
      return 1;
    }
    printf("mapped\n");
    fflush(stdout);
    while (read(0, &c, 1) > 0) continue;
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "pid") == 0) {
    struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
    struct ocgc_symbols *s = NULL;
    const struct ocgc_symbols_mapping *m;
    size_t n, i, r = 0;
    int err;
    o.read_now = 1;
    if ((err = ocgc_symbols_open_pid(atoi(argv[2]), 0, &o, &s)) != 0) {
      printf("err=%d\n", err);
      return 1;
    }
    n = ocgc_symbols_mappings(s, &m);
    for (i = 0; i < n; i++) r += m[i].read != 0;
    printf("read=%zu of %zu\n", r, n);
    ocgc_symbols_close(s);
    return 0;
  }
  return usage();
}
