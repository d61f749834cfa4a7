/* test_attach.c - attaching by pid (attach.c): ocgc_find_ring(),
 * ocgc_source_open_pid() and ocgc_source_check_alive() against real
 * processes.
 *
 * Each test forks "producer" children that do what the patched runtime
 * does (runtime_patch/src/ocgc_file.c): build a ring file with ringgen
 * under the temporary name .<pid>.events.tmp, put their own pid, their
 * /proc/self/stat start time and the boot id in the extension block (read
 * the way the producer reads them), rename it to <pid>.events, keep it
 * mapped read-write and sleep until killed.  Variants plant wrong identity
 * fields, an exited state, a stock file, a read-only (reader's) mapping, an
 * unlinked file, other names, or no ring at all.  Children die with the
 * test (PR_SET_PDEATHSIG, and an alarm as a backstop). */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

/* ---- fixture: a scratch folder per test case --------------------------------------- */

static char *tmp;

static void setup(void)
{
  tmp = tu_mkdtemp();
}

/* Subfolders some tests make (removed here too, should a test fail). */
static const char *const subdirs[] = {"a b\nc", "elsewhere"};

static void teardown(void)
{
  char sub[4096];
  unsigned i;
  for (i = 0; tmp != NULL && i < sizeof subdirs / sizeof subdirs[0]; i++)
    tu_rmtree(tu_path(sub, sizeof sub, tmp, subdirs[i]));
  tu_rmtree(tmp);
  free(tmp);
  tmp = NULL;
}

/* ---- what the producer reads about itself -------------------------------------------- */

/* ocgc_file.c own_start_time(): field 22 of /proc/self/stat, counted from
 * the last ')'. */
static uint64_t self_start_time(void)
{
  char buf[1024];
  ssize_t got;
  char *p;
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field;
  if (fd < 0) return 0;
  got = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  p = strrchr(buf, ')');
  if (p == NULL) return 0;
  for (field = 2; *p != '\0' && field < 22; p++)
    if (*p == ' ') field++;
  return strtoull(p, NULL, 10);
}

/* ocgc_file.c fill_file(): the boot id without its newline. */
static void self_boot_id(char *out, size_t n)
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

/* Field 3 of /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
  char path[64], buf[1024];
  ssize_t got;
  char *p;
  int fd;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  got = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  p = strrchr(buf, ')');
  return p != NULL && p[1] == ' ' ? p[2] : 0;
}

static uint64_t ms_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void ms_sleep(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- producer children -------------------------------------------------------------- */

enum pmode {
  P_OK,        /* a correct ocgc ring named <pid>.events */
  P_BAD_PID,   /* ext pid is not the child's (it is init's) */
  P_BAD_START, /* ext start time is not the child's */
  P_BAD_BOOT,  /* ext boot id is another boot's */
  P_EXITED,    /* state says exited */
  P_STOCK,     /* a stock OCaml 5 file: no extension block */
  P_NONE,      /* no ring at all */
  P_READONLY,  /* a ring mapped read-only, as a reader maps one */
  P_DELETED,   /* its ring file was unlinked (and closed) */
  P_MEMFD,     /* as ocgc's producer: the ring in a memfd named
                  "ocgc:<pid>.events", published as <pid>.events, a link
                  to /proc/<pid>/fd/<n> */
  P_ESCAPED,   /* a ring file literally named "a\\012b.events" (maps
                  shows the backslash as is), and "a\nb.events" a link to
                  /dev/null: the parser's unescaping must not open the link */
  P_OTHER,     /* a correct ring under another name: ring.events */
  P_TWO,       /* aaa.events, its own <pid>.events, zzz.events: whichever
                  way mmap places them, another comes first in the maps */
  P_ODD_COMM,  /* a correct ring, and a command name with ") (" in it */
  P_STOCK_LATE,/* as OCaml 5 makes its file: in place, sized (zeros), and
                  the header written [delay] ms later */
  P_FORGED_LINK,/* maps no ring, but plants <pid>.events, a link to a
                  correct ring of its own identity (forged.events) that it
                  unmapped: a reader that follows the link would attach */
  P_LINK_ZERO, /* maps no ring; <pid>.events is a link to /dev/zero */
};

#define N_EVENTS 5

struct child {
  pid_t pid;
  int ready;       /* read end: one byte when the ring is in place */
  char path[4096]; /* where the ring is (or would be) */
};

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
static int make_ring(const char *dir, const char *name, enum pmode mode)
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
    f.ext->start_time = self_start_time();
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
static void spawn(struct child *c, const char *dir, enum pmode mode, unsigned delay_ms)
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
static void wait_ready(struct child *c)
{
  struct pollfd p = {.fd = c->ready, .events = POLLIN};
  char b = 0;
  ck_assert_msg(poll(&p, 1, 10000) == 1, "child %d never got ready", (int)c->pid);
  ck_assert_int_eq(read(c->ready, &b, 1), 1);
  ck_assert_msg(b == 'R', "child %d could not make its ring", (int)c->pid);
}

static struct child start(const char *dir, enum pmode mode)
{
  struct child c;
  spawn(&c, dir, mode, 0);
  wait_ready(&c);
  return c;
}

static void stop(struct child *c)
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
static pid_t dead_pid(void)
{
  pid_t p = fork();
  ck_assert_int_ge(p, 0);
  if (p == 0) _exit(0);
  ck_assert_int_eq(waitpid(p, NULL, 0), p);
  return p;
}

static int same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

static struct ocgc_attach_opts opts_wait(unsigned wait_ms)
{
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  o.wait_ms = wait_ms;
  return o;
}

/* ---- finding ------------------------------------------------------------------------- */

/* The ring of a live producer is found in its maps and opened; it is that
 * very file, it names the child, and its events can be read. */
START_TEST(find_and_open)
{
  struct child c = start(tmp, P_OK);
  char path[4096];
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info;
  struct ocgc_cursor *cur = NULL;
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_cursor_stats st;
  uint64_t w;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 1);
  ck_assert_uint_eq(info.pid, (uint64_t)c.pid);
  ck_assert_uint_eq(info.state, OCGC_STATE_RUNNING);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ck_assert_int_eq(ocgc_cursor_new(s, &co, &cur), 0);
  ck_assert_int_eq(ocgc_cursor_poll(cur, 0), N_EVENTS);
  ocgc_cursor_stats(cur, &st);
  ck_assert_int_eq(ocgc_source_written(s, 0, &w), 0);
  ck_assert_uint_eq(st.seen, w);
  ocgc_cursor_free(cur);
  ocgc_source_close(s);
  /* a second open of the same ring, while the first is closed: as good */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* Pids that name nothing; bad arguments. */
START_TEST(find_errors)
{
  char path[4096], small[8];
  struct ocgc_source *s = NULL;
  pid_t gone = dead_pid();
  struct child c;
  long pid_max = 0;
  FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

  ck_assert_int_eq(ocgc_find_ring(gone, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_source_open_pid(gone, NULL, &s), -ESRCH);
  if (f != NULL) {
    if (fscanf(f, "%ld", &pid_max) != 1) pid_max = 0;
    fclose(f);
  }
  if (pid_max > 0 && pid_max <= INT_MAX) /* pids are below pid_max */
    ck_assert_int_eq(ocgc_find_ring((int)pid_max, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_find_ring(0, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_find_ring(-1, path, sizeof path), -ESRCH);
  ck_assert_int_eq(ocgc_source_open_pid(0, NULL, &s), -ESRCH);
  ck_assert_int_eq(ocgc_source_open_pid(-5, NULL, &s), -ESRCH);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(ocgc_find_ring(getpid(), NULL, 10), -EINVAL);
  ck_assert_int_eq(ocgc_find_ring(getpid(), path, 0), -EINVAL);
  ck_assert_int_eq(ocgc_source_open_pid(getpid(), NULL, NULL), -EINVAL);
  ck_assert_int_eq(ocgc_source_check_alive(NULL), -EINVAL);
  /* a path that does not fit */
  c = start(tmp, P_OK);
  ck_assert_int_eq(ocgc_find_ring(c.pid, small, sizeof small), -ENAMETOOLONG);
  stop(&c);
}
END_TEST

/* Live processes without a ring: this test, a sleeping child, a reader
 * (read-only mapping), a child whose ring file was unlinked.  open_pid
 * waits wait_ms for one, then gives up. */
START_TEST(no_ring)
{
  static const enum pmode modes[] = {P_NONE, P_READONLY};
  struct ocgc_attach_opts o = opts_wait(30);
  struct ocgc_source *s = NULL;
  char path[4096];
  uint64_t t0;
  unsigned i;

  ck_assert_int_eq(ocgc_find_ring(getpid(), path, sizeof path), OCGC_E_NORING);
  t0 = ms_now();
  ck_assert_int_eq(ocgc_source_open_pid(getpid(), &o, &s), OCGC_E_NORING);
  ck_assert_uint_ge(ms_now() - t0, 30);
  ck_assert_uint_lt(ms_now() - t0, 5000);
  for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    struct child c = start(tmp, modes[i]);
    ck_assert_msg(ocgc_find_ring(c.pid, path, sizeof path) == OCGC_E_NORING,
                  "mode %u: find_ring found %s", i, path);
    ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);
    stop(&c);
  }
  ck_assert_ptr_null(s);
}
END_TEST

/* A ring whose file was unlinked and closed is reached only through
 * /proc/PID/map_files, which needs privileges: found (a /proc path that
 * opens that very mapping) or OCGC_E_NORING, never anything else. */
START_TEST(deleted_ring)
{
  struct child c = start(tmp, P_DELETED);
  char path[4096], prefix[64];
  struct ocgc_source *s = NULL;
  int err = ocgc_find_ring(c.pid, path, sizeof path);

  ck_assert_msg(err == 0 || err == OCGC_E_NORING, "find_ring: %d", err);
  if (err == 0) {
    snprintf(prefix, sizeof prefix, "/proc/%d/map_files/", (int)c.pid);
    ck_assert_msg(strncmp(path, prefix, strlen(prefix)) == 0, "found %s", path);
    ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
    ocgc_source_close(s);
  }
  stop(&c);
}
END_TEST

/* ocgc's producer: a memfd ring, published as a link to /proc/PID/fd/N.
 * Found through the process (map_files or the fd table), by pid and by
 * folder, and it is the process's own. */
START_TEST(memfd_ring)
{
  struct child c = start(tmp, P_MEMFD);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  char path[4096], prefix[64];
  struct ocgc_source *s = NULL;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  snprintf(prefix, sizeof prefix, "/proc/%d/", (int)c.pid);
  ck_assert_msg(strncmp(path, prefix, strlen(prefix)) == 0, "found %s", path);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ocgc_source_close(s);
  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ocgc_source_close(s);
  stop(&c);
  unlink(c.path);
}
END_TEST

/* The maps show a literal backslash as is, so "a\012b.events" reads like
 * the maps' escape of "a\nb.events", which the process made a link to
 * /dev/null: the ring found must be the mapped inode itself. */
START_TEST(escaped_name)
{
  struct child c = start(tmp, P_ESCAPED);
  char path[4096], decoy[4096];
  struct ocgc_source *s = NULL;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);
  unlink(c.path);
  tu_path(decoy, sizeof decoy, tmp, "a\nb.events");
  unlink(decoy);
}
END_TEST

/* Any folder and any name ending in .events; <pid>.events is preferred. */
START_TEST(names)
{
  struct child c = start(tmp, P_OTHER);
  char path[4096], sub[4096];
  struct ocgc_source *s = NULL;

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);

  c = start(tmp, P_TWO);
  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_msg(same_file(path, c.path), "found %s, not %s", path, c.path);
  stop(&c);

  /* A folder with a space and a newline in its name: the kernel writes the
   * newline as \012 in the maps. */
  tu_path(sub, sizeof sub, tmp, subdirs[0]);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  c = start(sub, P_OK);
  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_str_eq(strrchr(path, '/') + 1, strrchr(c.path, '/') + 1);
  ck_assert_msg(same_file(path, c.path), "found '%s', not '%s'", path, c.path);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ocgc_source_close(s);
  stop(&c);
  unlink(c.path);
  rmdir(sub);
}
END_TEST

/* A command name with spaces and parentheses does not confuse the start
 * time read from /proc/PID/stat. */
START_TEST(odd_comm)
{
  struct child c = start(tmp, P_ODD_COMM);
  struct ocgc_source *s = NULL;
  char path[64], buf[256];
  FILE *f;

  snprintf(path, sizeof path, "/proc/%d/comm", (int)c.pid);
  f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
  fclose(f);
  ck_assert_str_eq(buf, "a) b (c) \n");
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* ---- identity -------------------------------------------------------------------------- */

/* A ring that does not name its process (wrong pid, start time or boot),
 * or says it exited, is stale; allow_stale opens it anyway, and then
 * check_alive says it is stale. */
START_TEST(stale_identity)
{
  static const enum pmode modes[] = {P_BAD_PID, P_BAD_START, P_BAD_BOOT, P_EXITED};
  enum pmode mode = modes[_i];
  struct child c = start(tmp, mode);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  char path[4096];

  ck_assert_int_eq(ocgc_find_ring(c.pid, path, sizeof path), 0);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), OCGC_E_STALE);
  ck_assert_ptr_null(s);
  o.allow_stale = 1;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ocgc_source_close(s);
  /* the same through the folder */
  o.dir = tmp;
  o.allow_stale = 0;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  stop(&c);
}
END_TEST

/* opts->sz: fields past the caller's size are not read. */
START_TEST(opts_sz)
{
  struct child c = start(tmp, P_EXITED);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;

  o.allow_stale = 1;
  o.sz = offsetof(struct ocgc_attach_opts, allow_stale); /* an older caller */
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  o.sz = sizeof o;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ocgc_source_close(s);
  /* dir beyond sz is ignored too: the maps are searched */
  o.dir = "/nonexistent";
  o.sz = offsetof(struct ocgc_attach_opts, dir);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  o.sz = 0;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_STALE);
  stop(&c);
}
END_TEST

/* Stock OCaml 5 files carry no identity: opened as found, no liveness. */
START_TEST(stock_file)
{
  struct child c = start(tmp, P_STOCK);
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info;

  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), -ENODATA);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* check_alive follows the producer: alive, then a zombie, then reaped;
 * and a state word flipped to exited under a live process. */
START_TEST(check_alive)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_source *s = NULL;
  uint64_t t0;
  int fd;
  char *map;

  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  ck_assert_int_eq(kill(c.pid, SIGKILL), 0);
  for (t0 = ms_now(); proc_state(c.pid) != 'Z' && ms_now() - t0 < 5000;) ms_sleep(2);
  ck_assert_int_eq(proc_state(c.pid), 'Z');
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ck_assert_int_eq(waitpid(c.pid, NULL, 0), c.pid);
  c.pid = -1;
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  ocgc_source_close(s);
  stop(&c);

  c = start(tmp, P_OK);
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, NULL, &s), 0);
  fd = open(c.path, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert_ptr_ne(map, MAP_FAILED);
  close(fd);
  ck_assert_int_eq(ocgc_source_check_alive(s), 0);
  __atomic_store_n(&((struct ocgc_wire_ext *)(map + OCGC_WIRE_HEADER_SIZE))->state,
                   (uint64_t)OCGC_STATE_EXITED, __ATOMIC_RELEASE);
  ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
  munmap(map, 4096);
  ocgc_source_close(s);
  stop(&c);
}
END_TEST

/* ---- the folder option --------------------------------------------------------------- */

/* In a folder, the target's entry is a link to a file of its choosing: it
 * is never followed, so no forged ring (nor a device) is read in place of
 * what the process maps; only the process's own memory map is searched. */
START_TEST(dir_links_not_followed)
{
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  struct child c = start(tmp, _i ? P_LINK_ZERO : P_FORGED_LINK);
  o.dir = tmp;
  o.wait_ms = 20;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);
  ck_assert_ptr_null(s);
  stop(&c);
}
END_TEST

START_TEST(dir_option)
{
  struct child c = start(tmp, P_OK);
  struct ocgc_attach_opts o = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info;
  char other[4096];
  pid_t gone;

  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), 0);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_uint_eq(info.pid, (uint64_t)c.pid);
  ocgc_source_close(s);

  /* a live process whose ring is elsewhere (or nowhere) */
  tu_path(other, sizeof other, tmp, subdirs[1]);
  ck_assert_int_eq(mkdir(other, 0700), 0);
  o.dir = other;
  o.wait_ms = 20;
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);
  rmdir(other);
  o.dir = "/nonexistent/folder";
  ck_assert_int_eq(ocgc_source_open_pid(c.pid, &o, &s), OCGC_E_NORING);

  /* no process, no file */
  gone = dead_pid();
  o.dir = tmp;
  ck_assert_int_eq(ocgc_source_open_pid(gone, &o, &s), -ESRCH);

  /* the process was killed: its file stays, stale */
  {
    pid_t dead = c.pid;
    stop(&c);
    ck_assert_int_eq(access(c.path, F_OK), 0);
    ck_assert_int_eq(ocgc_source_open_pid(dead, &o, &s), OCGC_E_STALE);
    /* without the folder there is no process to search */
    ck_assert_int_eq(ocgc_source_open_pid(dead, NULL, &s), -ESRCH);
    o.allow_stale = 1;
    ck_assert_int_eq(ocgc_source_open_pid(dead, &o, &s), 0);
    ck_assert_int_eq(ocgc_source_check_alive(s), OCGC_E_STALE);
    ocgc_source_close(s);
  }
}
END_TEST

/* ---- waiting for a ring being created ---------------------------------------------- */

/* The producer makes its ring [delay] ms after it starts; open_pid with
 * [wait] (0 = default 200 ms), through the maps (_i even) or the folder. */
START_TEST(wait_for_ring)
{
  static const struct { unsigned delay, wait; int ok; } cases[] = {
    {30, 0, 1}, {300, 3000, 1}, {600, 50, 0}};
  unsigned k = (unsigned)_i / 2;
  struct ocgc_attach_opts o = opts_wait(cases[k].wait);
  struct ocgc_source *s = NULL;
  struct child c;
  uint64_t t0 = ms_now();
  int err;

  if (_i % 2) o.dir = tmp;
  spawn(&c, tmp, P_OK, cases[k].delay);
  err = ocgc_source_open_pid(c.pid, &o, &s);
  if (cases[k].ok) {
    ck_assert_msg(err == 0, "delay %u wait %u: %s", cases[k].delay, cases[k].wait,
                  ocgc_strerror(err));
    ck_assert_uint_ge(ms_now() - t0, cases[k].delay - 10);
    ck_assert_int_eq(ocgc_source_check_alive(s), 0);
    ocgc_source_close(s);
  } else {
    ck_assert_int_eq(err, OCGC_E_NORING);
    ck_assert_uint_lt(ms_now() - t0, cases[k].delay);
  }
  wait_ready(&c);
  stop(&c);
}
END_TEST

/* A stock OCaml 5 file that exists before its header does: open_pid waits
 * for the header instead of calling the file corrupt. */
START_TEST(wait_for_stock_header)
{
  struct child c;
  struct ocgc_source *s = NULL;
  struct ocgc_source_info info;
  struct ocgc_attach_opts o = opts_wait(3000);
  uint64_t t0 = ms_now();
  int err;

  spawn(&c, tmp, P_STOCK_LATE, 150);
  err = ocgc_source_open_pid(c.pid, &o, &s);
  ck_assert_msg(err == 0, "open_pid: %s", ocgc_strerror(err));
  ck_assert_uint_ge(ms_now() - t0, 100);
  ck_assert_int_eq(ocgc_source_info(s, &info), 0);
  ck_assert_int_eq(info.has_ext, 0);
  ck_assert_uint_eq(info.ring_words, 1024);
  ocgc_source_close(s);
  wait_ready(&c);
  stop(&c);
}
END_TEST

/* ---- permission ------------------------------------------------------------------------- */

/* Another user's process: its maps cannot be read.  As root, a child that
 * became nobody tries a root producer; otherwise pid 1, if it is not ours.
 * Says so (and passes) when neither can be tried. */
START_TEST(permission_denied)
{
  struct child c = start(tmp, P_OK);
  pid_t p;
  int status = 0;

  p = fork();
  ck_assert_int_ge(p, 0);
  if (p == 0) {
    char path[4096];
    struct ocgc_source *s = NULL;
    int target = c.pid;
    if (getuid() == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(77);
    } else {
      struct stat st;
      if (stat("/proc/1", &st) != 0 || st.st_uid == getuid()) _exit(77);
      target = 1;
    }
    if (ocgc_find_ring(target, path, sizeof path) != -EACCES) _exit(1);
    if (ocgc_source_open_pid(target, NULL, &s) != -EACCES) _exit(2);
    _exit(0);
  }
  ck_assert_int_eq(waitpid(p, &status, 0), p);
  ck_assert(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77)
    fprintf(stderr, "test_attach: permission_denied not tried (cannot change user)\n");
  else
    ck_assert_msg(WEXITSTATUS(status) == 0, "another user's process: check %d failed",
                  WEXITSTATUS(status));
  stop(&c);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

Suite *attach_suite(void);
Suite *attach_suite(void)
{
  Suite *s = suite_create("attach");
  TCase *tc = tcase_create("find");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, find_and_open);
  tcase_add_test(tc, find_errors);
  tcase_add_test(tc, no_ring);
  tcase_add_test(tc, names);
  tcase_add_test(tc, deleted_ring);
  tcase_add_test(tc, memfd_ring);
  tcase_add_test(tc, escaped_name);
  tcase_add_test(tc, odd_comm);
  tcase_add_test(tc, permission_denied);
  suite_add_tcase(s, tc);

  tc = tcase_create("identity");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, stale_identity, 0, 4);
  tcase_add_test(tc, opts_sz);
  tcase_add_test(tc, stock_file);
  tcase_add_test(tc, check_alive);
  tcase_add_test(tc, dir_option);
  tcase_add_loop_test(tc, dir_links_not_followed, 0, 2);
  suite_add_tcase(s, tc);

  tc = tcase_create("wait");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, wait_for_ring, 0, 6);
  tcase_add_test(tc, wait_for_stock_header);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(attach_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
