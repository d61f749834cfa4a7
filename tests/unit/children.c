/* children.c - the producer children of children.h.
 *
 * Each child builds its ring file with ringgen under the temporary name
 * .<pid>.events.tmp, puts its own pid, its /proc/self/stat start time and
 * the boot id in the extension block (read the way the producer reads
 * them), renames it to <pid>.events, keeps it mapped read-write and
 * sleeps until killed; variants plant wrong identity fields, an exited
 * state, a stock file, a read-only (reader's) mapping, an unlinked file,
 * other names, or no ring at all.  start_held() turns it around: the
 * parent writes the ring, the child only maps it, so that a test can make
 * the producer do anything while it lives. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "children.h"
#include "ocgc/consumer.h"

/* ---- what the producer reads about itself -------------------------------------------- */

/* ocgc_proc.c caml_ocgc_start_time(): field 22 of /proc/PID/stat, counted from
 * the last ')'. */
uint64_t proc_start_time(pid_t pid)
{
  char path[64], buf[1024];
  ssize_t got;
  char *p;
  int fd, field;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return 0;
  got = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  p = strrchr(buf, ')');
  if (p == NULL) return 0;
  for (field = 2; *p != '\0' && field < 22; p++)
    if (*p == ' ') field++;
  return strtoull(p, NULL, 10);
}

/* ocgc_proc.c caml_ocgc_boot_id(): the boot id without its newline. */
void self_boot_id(char *out, size_t n)
{
  ssize_t got;
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  out[0] = '\0';
  if (fd < 0) return;
  got = read(fd, out, n - 1);
  close(fd);
  out[got > 0 ? got : 0] = '\0';
  out[strcspn(out, "\n")] = '\0';
}

void ms_sleep(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- producer children -------------------------------------------------------------- */

/* In the child: copy the ring [f] (at path [final]) into a memfd mapped
 * shared and writable, and publish it as the producer does.  The memfd's
 * descriptor stays open, as the producer's does. */
static int move_to_memfd(struct rg_file *f, const char *dir, const char *final)
{
  char name[64], link[64], tmpname[4096];
  int fd;
  void *m;
  snprintf(name, sizeof name, "ocgc:%d.events", (int)getpid());
  fd = (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
  if (fd < 0 || ftruncate(fd, (off_t)f->size) != 0) return -1;
  m = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  memcpy(m, f->map, f->size);
  rg_close(f);
  snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)getpid(), fd);
  snprintf(tmpname, sizeof tmpname, "%s/.%d.events.tmp", dir, (int)getpid());
  if (unlink(final) != 0 || symlink(link, tmpname) != 0) return -1;
  return rename(tmpname, final);
}

/* In the child: make DIR/NAME through a temporary name, as the producer
 * does, fill its identity for [mode], leave it mapped.  Returns 0 or -1. */
int make_ring(const char *dir, const char *name, enum pmode mode)
{
  char tmpname[4096], final[4096], boot[64];
  struct rg_file f;
  unsigned i;
  int has_ext = mode != P_STOCK;

  snprintf(tmpname, sizeof tmpname, "%s/.%d.events.tmp", dir, (int)getpid());
  snprintf(final, sizeof final, "%s/%s", dir, name);
  if (rg_create(&f, tmpname, has_ext, 1, 1024) != 0) return -1;
  if (has_ext) {
    f.ext->pid = (uint64_t)getpid();
    f.ext->start_time = proc_start_time(getpid());
    self_boot_id(boot, sizeof boot);
    memset(f.ext->boot_id, 0, sizeof f.ext->boot_id);
    memcpy(f.ext->boot_id, boot, strlen(boot) < 39 ? strlen(boot) : 39);
    switch (mode) {
    /* pid 1, not pid + 1: start times tick at only 100 Hz, so a process
     * forked just after us may well share ours. */
    case P_BAD_PID: f.ext->pid = 1; break;
    case P_BAD_START: f.ext->start_time += 1; break;
    case P_BAD_BOOT: f.ext->boot_id[0] = f.ext->boot_id[0] == '0' ? '1' : '0'; break;
    case P_EXITED: f.ext->state = OCGC_STATE_EXITED; break;
    default: break;
    }
  }
  for (i = 0; i < N_EVENTS; i++)
    rg_write1(&f, 0, OCGC_EV_HEADER(3, 0, OCGC_RT_COUNTER, OCGC_CT_MINOR_ALLOCATED), 100 + i,
              8 * i);
  if (rename(tmpname, final) != 0) return -1;
  if (mode == P_READONLY) {
    /* Swap the writer's mapping for a reader's. */
    struct ocgc_source *s;
    rg_close(&f);
    if (ocgc_source_open_path(final, NULL, &s) != 0) return -1;
  }
  if (mode == P_DELETED && unlink(final) != 0) return -1;
  if (mode == P_MEMFD && move_to_memfd(&f, dir, final) != 0) return -1;
  if (mode == P_FORGED_LINK) {
    char link[4096];
    rg_close(&f);
    snprintf(link, sizeof link, "%s/%d.events", dir, (int)getpid());
    if (symlink(final, link) != 0) return -1;
  }
  /* else: the mapping stays until the child dies */
  return 0;
}

/* Fork a producer in [dir] that makes its ring after [delay_ms]. */
void spawn(struct child *c, const char *dir, enum pmode mode, unsigned delay_ms)
{
  int fds[2];
  pid_t parent = getpid();
  ck_assert_int_eq(pipe(fds), 0);
  c->pid = fork();
  ck_assert_int_ge(c->pid, 0);
  if (c->pid == 0) {
    char ok = 'R';
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    alarm(120);
    if (mode == P_ODD_COMM) prctl(PR_SET_NAME, "a) b (c) ", 0, 0, 0);
    if (mode == P_STOCK_LATE) {
      char final[4096];
      uint64_t size = rg_file_size(0, 1, 1024);
      char *map;
      int fd;
      snprintf(final, sizeof final, "%s/%d.events", dir, (int)getpid());
      fd = open(final, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0 || ftruncate(fd, (off_t)size) != 0) _exit(1);
      map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) _exit(1);
      ms_sleep(delay_ms);
      rg_fill(map, 0, 1, 1024);
      if (write(fds[1], &ok, 1) != 1) _exit(1);
      for (;;) pause();
    }
    if (delay_ms) ms_sleep(delay_ms);
    if (mode == P_TWO && make_ring(dir, "aaa.events", P_OK) != 0) ok = 'E';
    if (mode != P_NONE && ok == 'R') {
      char name[64];
      if (mode == P_OTHER) snprintf(name, sizeof name, "ring.events");
      else if (mode == P_ESCAPED) snprintf(name, sizeof name, "a\\012b.events");
      else if (mode == P_FORGED_LINK) snprintf(name, sizeof name, "forged.events");
      else snprintf(name, sizeof name, "%d.events", (int)getpid());
      if (mode == P_LINK_ZERO) {
        char link[4096];
        snprintf(link, sizeof link, "%s/%d.events", dir, (int)getpid());
        if (symlink("/dev/zero", link) != 0) ok = 'E';
        if (write(fds[1], &ok, 1) != 1) _exit(1);
        for (;;) pause();
      }
      if (mode == P_ESCAPED) {
        char decoy[4096];
        snprintf(decoy, sizeof decoy, "%s/a\nb.events", dir);
        if (symlink("/dev/null", decoy) != 0) ok = 'E';
      }
      if (make_ring(dir, name, mode == P_TWO ? P_OK : mode) != 0) ok = 'E';
    }
    if (mode == P_TWO && ok == 'R' && make_ring(dir, "zzz.events", P_OK) != 0) ok = 'E';
    if (write(fds[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  c->ready = fds[0];
  if (mode == P_OTHER)
    snprintf(c->path, sizeof c->path, "%s/ring.events", dir);
  else if (mode == P_ESCAPED)
    snprintf(c->path, sizeof c->path, "%s/a\\012b.events", dir);
  else
    snprintf(c->path, sizeof c->path, "%s/%d.events", dir, (int)c->pid);
}

/* Wait for the child to say its ring is in place. */
void wait_ready(struct child *c)
{
  struct pollfd p = {.fd = c->ready, .events = POLLIN};
  char b = 0;
  ck_assert_msg(poll(&p, 1, 10000) == 1, "child %d never got ready", (int)c->pid);
  ck_assert_int_eq(read(c->ready, &b, 1), 1);
  ck_assert_msg(b == 'R', "child %d could not make its ring", (int)c->pid);
}

struct child start(const char *dir, enum pmode mode)
{
  struct child c;
  spawn(&c, dir, mode, 0);
  wait_ready(&c);
  return c;
}

void stop(struct child *c)
{
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
  }
  if (c->ready >= 0) close(c->ready);
  c->pid = -1;
  c->ready = -1;
}

/* A pid that names no process: a child that has exited and been reaped. */
pid_t dead_pid(void)
{
  pid_t p = fork();
  ck_assert_int_ge(p, 0);
  if (p == 0) _exit(0);
  ck_assert_int_eq(waitpid(p, NULL, 0), p);
  return p;
}

struct child start_held(const char *dir, struct rg_file *f, uint64_t ring_words)
{
  struct child c;
  char tmpname[4096], boot[64];
  int go[2], fds[2];
  pid_t parent = getpid();
  ck_assert_int_eq(pipe(go), 0);
  ck_assert_int_eq(pipe(fds), 0);
  c.pid = fork();
  ck_assert_int_ge(c.pid, 0);
  if (c.pid == 0) {
    char ok = 'R', b;
    struct stat st;
    void *m;
    int fd;
    close(go[1]);
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    alarm(120);
    /* The parent has made the ring when it writes. */
    if (read(go[0], &b, 1) != 1) _exit(1);
    snprintf(tmpname, sizeof tmpname, "%s/%d.events", dir, (int)getpid());
    fd = open(tmpname, O_RDWR | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) ok = 'E';
    else if ((m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
             MAP_FAILED)
      ok = 'E';
    if (write(fds[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(go[0]);
  close(fds[1]);
  c.ready = fds[0];
  snprintf(tmpname, sizeof tmpname, "%s/.%d.events.tmp", dir, (int)c.pid);
  snprintf(c.path, sizeof c.path, "%s/%d.events", dir, (int)c.pid);
  ck_assert_int_eq(rg_create(f, tmpname, 1, 1, ring_words), 0);
  f->ext->pid = (uint64_t)c.pid;
  f->ext->start_time = proc_start_time(c.pid);
  self_boot_id(boot, sizeof boot);
  memset(f->ext->boot_id, 0, sizeof f->ext->boot_id);
  memcpy(f->ext->boot_id, boot, strlen(boot) < 39 ? strlen(boot) : 39);
  ck_assert_int_eq(rename(tmpname, c.path), 0);
  ck_assert_int_eq(write(go[1], "g", 1), 1);
  close(go[1]);
  wait_ready(&c);
  return c;
}
