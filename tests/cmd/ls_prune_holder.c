/* ls_prune_holder.c - for ls_prune_mapped.sh: a process that maps ring
 * files, and ocgc memory rings by name, as a producer or a reader in
 * another pid namespace (a container) does, and holds them until told to
 * stop.  What it maps is all `ocgc ls --prune` can see of such a process:
 * the pid in the files and names is not its own.
 *
 *   ls_prune_holder STOPFILE [--map FILE]... [--memfd NAME FILE]...
 *
 * --map FILE maps FILE read-only and shared, as a reader does, then closes
 * it, so that only the mapping holds it.  --memfd NAME FILE makes a memfd
 * named NAME (as ocgc's producer names its ring "ocgc:<pid>.events")
 * holding a copy of FILE, maps it shared and writable as the producer
 * does, and keeps its descriptor open.  Then it prints "pid N" and
 * "ready 1" and waits until STOPFILE exists (at most 600 s, so that a test
 * that dies leaves nothing behind for long), and exits 0.
 * Exit status: 1 usage, 2 a file or memfd could not be made. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_WAIT_S 600

static int fail(const char *what, const char *name)
{
  fprintf(stderr, "ls_prune_holder: %s %s: %s\n", what, name, strerror(errno));
  return 2;
}

static int map_file(const char *path)
{
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) return fail("cannot open", path);
  if (mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
    return fail("cannot map", path);
  close(fd);
  return 0;
}

static int map_memfd(const char *name, const char *path)
{
  char buf[65536];
  struct stat st;
  ssize_t got;
  int in = open(path, O_RDONLY | O_CLOEXEC), fd;
  if (in < 0 || fstat(in, &st) != 0 || st.st_size == 0) return fail("cannot open", path);
  if ((fd = memfd_create(name, MFD_CLOEXEC)) < 0) return fail("cannot make the memfd", name);
  while ((got = read(in, buf, sizeof buf)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || write(fd, buf, (size_t)got) != got) return fail("cannot copy", path);
  }
  close(in);
  if (mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
    return fail("cannot map the memfd", name);
  return 0; /* fd stays open, as the producer's does */
}

int main(int argc, char **argv)
{
  const struct timespec tick = {0, 50 * 1000 * 1000};
  int i, n, err = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: ls_prune_holder STOPFILE [--map FILE]... [--memfd NAME FILE]...\n");
    return 1;
  }
  for (i = 2; i < argc && err == 0; i++) {
    if (strcmp(argv[i], "--map") == 0 && i + 1 < argc) {
      err = map_file(argv[++i]);
    } else if (strcmp(argv[i], "--memfd") == 0 && i + 2 < argc) {
      err = map_memfd(argv[i + 1], argv[i + 2]);
      i += 2;
    } else {
      fprintf(stderr, "ls_prune_holder: bad argument '%s'\n", argv[i]);
      return 1;
    }
  }
  if (err) return err;
  printf("pid %d\nready 1\n", (int)getpid());
  fflush(stdout);
  for (n = 0; n < MAX_WAIT_S * 20 && access(argv[1], F_OK) != 0; n++) nanosleep(&tick, NULL);
  return 0;
}
