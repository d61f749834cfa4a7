/* mp_control.c - asks a live program's producer for a sampling rate
 * through libocgc's public call (ocgc_memprof_request), or, as a hostile
 * writer would, writes a raw control word (memprof_control.sh).
 *
 *   mp_control PID RATE        ocgc_memprof_request; prints "word N", or
 *                              "error TEXT" and exits 1
 *   mp_control PID --raw WORD  the word itself, at the offset wire.h gives,
 *                              through the ring's descriptor reopened for
 *                              writing (no checks: the producer's job)
 *   mp_control PID --raw-seq WORD  the table's seq, as a producer stopped
 *                              mid-update leaves it (WORD odd) or puts it
 *                              back; prints "was N", the word before */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ocgc/consumer.h>

static int raw(int pid, uint64_t word, size_t field)
{
  uint64_t was = 0;
  struct ocgc_wire_ext x;
  char path[4096], self[64];
  uint64_t off;
  int fd = ocgc_open_ring(pid, path, sizeof path), wfd;
  if (fd < 0) {
    printf("error %s\n", ocgc_strerror(fd));
    return 1;
  }
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  wfd = open(self, O_RDWR | O_CLOEXEC);
  if (wfd < 0 || pread(fd, &x, sizeof x, OCGC_WIRE_HEADER_SIZE) != (ssize_t)sizeof x) {
    printf("error %s\n", strerror(errno));
    return 1;
  }
  off = x.totals_offset + offsetof(struct ocgc_wire_totals, by_cause) +
        x.kind_count * x.cause_slots * 8 + field;
  if (pread(fd, &was, 8, (off_t)off) != 8 || pwrite(wfd, &word, 8, (off_t)off) != 8) {
    printf("error %s\n", strerror(errno));
    return 1;
  }
  if (field == offsetof(struct ocgc_wire_mp, seq)) printf("was %" PRIu64 "\n", was);
  else printf("word %" PRIu64 "\n", word);
  return 0;
}

int main(int argc, char **argv)
{
  struct ocgc_source *src;
  uint64_t word = 0;
  int pid, err;
  if (argc < 3) {
    fprintf(stderr, "usage: mp_control PID RATE | mp_control PID --raw WORD | mp_control PID --raw-seq WORD\n");
    return 2;
  }
  pid = atoi(argv[1]);
  if (strcmp(argv[2], "--raw") == 0 && argc == 4)
    return raw(pid, strtoull(argv[3], NULL, 0), offsetof(struct ocgc_wire_mp, control));
  if (strcmp(argv[2], "--raw-seq") == 0 && argc == 4)
    return raw(pid, strtoull(argv[3], NULL, 0), offsetof(struct ocgc_wire_mp, seq));
  if ((err = ocgc_source_open_pid(pid, NULL, &src)) != 0) {
    printf("error %s\n", ocgc_strerror(err));
    return 1;
  }
  err = ocgc_memprof_request(src, strtoull(argv[2], NULL, 0), &word);
  ocgc_source_close(src);
  if (err != 0) {
    printf("error %s\n", ocgc_strerror(err));
    return 1;
  }
  printf("word %" PRIu64 "\n", word);
  return 0;
}
