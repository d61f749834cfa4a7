/* elfgen_cli.c - the hostile ELF shapes of elfgen.c from the command line,
 * and one file named through libocgc's symbolizer with the peak memory it
 * took (for the fuzz corpus, serve_pprof_hostile.sh and the figures of
 * docs/threat-model.md):
 *   elfgen_cli write SHAPE N TABLES PATH
 *   elfgen_cli read PATH      prints "function=F line=L peak_kib=K ms=T" */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "elfgen.h"
#include "ocgc/symbols.h"

static int usage(void)
{
  fprintf(stderr, "usage: elfgen_cli write sections|lines|notes|names N TABLES PATH\n"
                  "       elfgen_cli read PATH\n");
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
  return usage();
}
