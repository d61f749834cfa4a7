/* test_rings.c - the ring scan (libconsumer/rings.c, ocgc/rings.h) on a
 * folder of its own (no_default_dirs): every state a ring entry can be in
 * that can be made here (running, exited, stale, stock, mapped, foreign:
 * a memory ring's link whose pid is another namespace's, corrupt, denied,
 * links that lead nowhere or to no ring, hidden names), the prune rule
 * (looks_gone, removable), and the removal that moves an entry aside,
 * judges it there again and only then unlinks it, or puts it back.
 *
 * Producers are children.c's; a dead producer is a ring file whose
 * identity names a pid that has exited and been reaped (dead_pid()).
 * Removal needs the host scan whole (ocgc_rings_host_complete()); where it
 * is not, the parts that remove say SKIP. */

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
#include <unistd.h>

#include "children.h"
#include "ocgc/consumer.h"
#include "testutil.h"

static char *tmp;

static void setup(void)
{
  tmp = tu_mkdtemp();
}

static void teardown(void)
{
  tu_rmtree(tmp);
  free(tmp);
  tmp = NULL;
}

/* ---- entries ------------------------------------------------------------------------------ */

static char *at(char *buf, size_t n, const char *name)
{
  return tu_path(buf, n, tmp, name);
}

/* An ocgc ring file DIR/NAME left by producer [pid] (start time [start],
 * this boot) in [state]; no process maps it. */
static void dead_file(const char *name, pid_t pid, uint64_t start, enum ocgc_ext_state state)
{
  char path[4096], boot[64];
  struct rg_file f;
  ck_assert_int_eq(rg_create(&f, at(path, sizeof path, name), 1, 1, 256), 0);
  f.ext->pid = (uint64_t)pid;
  f.ext->start_time = start;
  self_boot_id(boot, sizeof boot);
  memset(f.ext->boot_id, 0, sizeof f.ext->boot_id);
  memcpy(f.ext->boot_id, boot, strlen(boot) < 39 ? strlen(boot) : 39);
  f.ext->state = state;
  rg_close(&f);
}

/* DIR/<pid>.events for a producer that is gone: [state]. */
static pid_t dead_producer(char *name, size_t n, enum ocgc_ext_state state)
{
  pid_t pid = dead_pid();
  snprintf(name, n, "%d.events", (int)pid);
  dead_file(name, pid, 1, state);
  return pid;
}

static void plain_file(const char *name, char fill, size_t size)
{
  char path[4096], *buf = malloc(size);
  int fd = open(at(path, sizeof path, name), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ck_assert_ptr_nonnull(buf);
  ck_assert_int_ge(fd, 0);
  memset(buf, fill, size);
  ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
  close(fd);
  free(buf);
}

static void link_at(const char *name, const char *to)
{
  char path[4096];
  ck_assert_int_eq(symlink(to, at(path, sizeof path, name)), 0);
}

/* A child that maps [path] read-only, as a reader does, or, path NULL, a
 * memory file named [memfd] read-write (as ocgc's producer names its
 * memory ring), and sleeps until killed. */
static void mapper(struct child *c, const char *path, const char *memfd)
{
  int fds[2];
  pid_t parent = getpid();
  ck_assert_int_eq(pipe(fds), 0);
  c->pid = fork();
  ck_assert_int_ge(c->pid, 0);
  if (c->pid == 0) {
    char ok = 'R';
    int fd;
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    alarm(120);
    fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC)
                      : (int)syscall(SYS_memfd_create, memfd, 1u /* MFD_CLOEXEC */);
    if (fd < 0 || (path == NULL && ftruncate(fd, 4096) != 0) ||
        mmap(NULL, 4096, path != NULL ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
            MAP_FAILED)
      ok = 'E';
    if (write(fds[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  c->ready = fds[0];
  c->path[0] = '\0';
  wait_ready(c);
}

static struct ocgc_rings *scan(void)
{
  struct ocgc_rings_opts o = OCGC_OPTS_INIT(struct ocgc_rings_opts);
  const char *dirs[1];
  struct ocgc_rings *r;
  dirs[0] = tmp;
  o.dirs = dirs;
  o.ndirs = 1;
  o.no_default_dirs = 1;
  ck_assert_int_eq(ocgc_rings_scan(&o, &r), 0);
  return r;
}

/* The ring whose path is DIR/NAME, or NULL. */
static const struct ocgc_ring *find(const struct ocgc_rings *r, const char *name)
{
  char path[4096];
  size_t i;
  at(path, sizeof path, name);
  for (i = 0; i < ocgc_rings_count(r); i++)
    if (strcmp(ocgc_rings_get(r, i)->path, path) == 0) return ocgc_rings_get(r, i);
  return NULL;
}

/* DIR/NAME's entry as the scan judged it: state, looks_gone, removable
 * (removable only asked where the host scan was whole). */
static const struct ocgc_ring *judged(const struct ocgc_rings *r, const char *name,
                                      enum ocgc_ring_state st, int looks_gone, int removable)
{
  const struct ocgc_ring *e = find(r, name);
  ck_assert_msg(e != NULL, "%s not found", name);
  ck_assert_msg(e->state == st, "%s: %s, not %s", name, ocgc_ring_state_name(e->state),
                ocgc_ring_state_name(st));
  ck_assert_msg(e->looks_gone == looks_gone, "%s: looks_gone %d", name, e->looks_gone);
  ck_assert_msg(e->removable == (removable && ocgc_rings_host_complete(r, NULL) == 1),
                "%s: removable %d", name, e->removable);
  ck_assert_int_eq(e->in_dir, 1);
  return e;
}

static int exists(const char *name)
{
  char path[4096];
  struct stat st;
  return lstat(at(path, sizeof path, name), &st) == 0;
}

/* Nothing left under a prune's private name. */
static void no_aside(void)
{
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q '^\\.ocgc-prune\\.'", tmp);
  ck_assert_msg(system(cmd) != 0, "a .ocgc-prune. entry was left in %s", tmp);
}

static int host_complete(const struct ocgc_rings *r, const char *what)
{
  if (ocgc_rings_host_complete(r, NULL) == 1) return 1;
  printf("SKIP %s: the host scan could not read every process's maps here\n", what);
  return 0;
}

/* ---- states ------------------------------------------------------------------------------- */

/* Every state made in one folder, each judged by the one rule: only an
 * ocgc file or a dangling link whose producer is gone, that nothing maps,
 * is removable. */
START_TEST(every_state)
{
  char exited[64], stale[64], mappedf[64], dangling[64], nowhere[64], foreign[64];
  char to[4096], path[4096], memname[64];
  struct child run, map, mem;
  struct ocgc_rings *r;
  const struct ocgc_ring *e;
  pid_t dpid, fpid;

  run = start(tmp, P_OK);
  dead_producer(exited, sizeof exited, OCGC_STATE_EXITED);
  dead_producer(stale, sizeof stale, OCGC_STATE_RUNNING);
  dead_file("reused.events", 1, 12345, OCGC_STATE_RUNNING); /* pid 1: another process now */
  {
    char p[4096];
    struct rg_file f;
    ck_assert_int_eq(rg_create(&f, at(p, sizeof p, "stock.events"), 0, 1, 256), 0);
    rg_close(&f);
  }
  plain_file("junk.events", 'x', 4096);
  dead_producer(mappedf, sizeof mappedf, OCGC_STATE_RUNNING);
  mapper(&map, at(path, sizeof path, mappedf), NULL);
  /* A memory ring's publication whose process is gone: the link leads
   * nowhere. */
  dpid = dead_pid();
  snprintf(dangling, sizeof dangling, "%d.events", (int)dpid);
  snprintf(to, sizeof to, "/proc/%d/fd/3", (int)dpid);
  link_at(dangling, to);
  /* A link that leads to a file that is no ring. */
  plain_file("plain.txt", 'y', 16);
  snprintf(nowhere, sizeof nowhere, "%d.events", (int)dead_pid());
  link_at(nowhere, at(to, sizeof to, "plain.txt"));
  /* A producer of another pid namespace: its link P.events leads nowhere
   * from here, while a process maps the memory ring ocgc:P.events. */
  fpid = dead_pid();
  snprintf(foreign, sizeof foreign, "%d.events", (int)fpid);
  snprintf(to, sizeof to, "/proc/%d/fd/3", (int)fpid);
  link_at(foreign, to);
  snprintf(memname, sizeof memname, "ocgc:%d.events", (int)fpid);
  mapper(&mem, NULL, memname);
  /* Hidden names: a producer's file being made, a prune's aside. */
  dead_file(".7.events.tmp", 7, 1, OCGC_STATE_RUNNING);
  dead_file(".ocgc-prune.1.8.events", dead_pid(), 1, OCGC_STATE_RUNNING);

  r = scan();
  ck_assert_uint_eq(ocgc_rings_count(r), 10);

  e = judged(r, strrchr(run.path, '/') + 1, OCGC_RING_RUNNING, 0, 0);
  ck_assert_int_eq(e->mapped, 1);
  ck_assert_int_eq(e->pid, run.pid);
  ck_assert_int_eq(e->has_ext, 1);
  ck_assert_str_eq(e->program, "ringgen");
  ck_assert_uint_eq(e->have_written, 1);
  ck_assert_uint_eq(e->written, N_EVENTS);

  e = judged(r, exited, OCGC_RING_EXITED, 1, 1);
  ck_assert_int_eq(e->mapped, 0);
  ck_assert_int_eq(e->link, 0);
  ck_assert_int_eq(e->uid, (int64_t)getuid());
  ck_assert_int_eq(e->pid, atoi(exited));
  ck_assert_uint_eq(e->ring_bytes, 256 * 8);
  judged(r, stale, OCGC_RING_STALE, 1, 1);
  e = judged(r, "reused.events", OCGC_RING_STALE, 1, 1);
  ck_assert_int_eq(e->pid, 1);

  e = judged(r, "stock.events", OCGC_RING_STOCK, 0, 0); /* no identity: never judged gone */
  ck_assert_int_eq(e->has_ext, 0);
  ck_assert_str_eq(e->ocaml, "5");
  judged(r, "junk.events", OCGC_RING_CORRUPT, 0, 0);

  e = judged(r, mappedf, OCGC_RING_MAPPED, 1, 0);
  ck_assert_int_eq(e->kept, OCGC_KEPT_FILE);
  ck_assert_int_eq(e->mapped_by, map.pid);
  ck_assert_int_eq(e->was, OCGC_RING_STALE);

  e = judged(r, dangling, OCGC_RING_STALE, 1, 1);
  ck_assert_int_eq(e->link, 1);
  ck_assert_int_eq(e->dangling, 1);
  ck_assert_int_eq(e->pid, dpid);
  e = judged(r, nowhere, OCGC_RING_STALE, 0, 0); /* leads somewhere: not ours to judge */
  ck_assert_int_eq(e->link, 1);
  ck_assert_int_eq(e->dangling, 0);
  ck_assert_int_eq(e->target_known, 1);

  e = judged(r, foreign, OCGC_RING_FOREIGN, 1, 0);
  ck_assert_int_eq(e->kept, OCGC_KEPT_MEMFD);
  ck_assert_int_eq(e->mapped_by, mem.pid);
  ck_assert_int_eq(e->was, OCGC_RING_STALE);

  ck_assert_ptr_null(find(r, ".7.events.tmp"));
  ck_assert_ptr_null(find(r, ".ocgc-prune.1.8.events"));
  ocgc_rings_free(r);
  stop(&run);
  stop(&map);
  stop(&mem);
}
END_TEST

/* Whose entry it is: a file another user owns is never removable for us
 * (root only: it takes chown); one we may not read is denied (not root:
 * root reads every file). */
START_TEST(owner_and_access)
{
  char name[64], path[4096];
  struct ocgc_rings *r;
  dead_producer(name, sizeof name, OCGC_STATE_EXITED);
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(at(path, sizeof path, name), 65534, 65534), 0);
    r = scan();
    ck_assert_int_eq(judged(r, name, OCGC_RING_EXITED, 1, 0)->uid, 65534);
  } else {
    printf("SKIP owner: only root gives a file away\n");
    ck_assert_int_eq(chmod(at(path, sizeof path, name), 0), 0);
    r = scan();
    judged(r, name, OCGC_RING_DENIED, 0, 0);
  }
  if (geteuid() == 0) printf("SKIP denied: root reads every file\n");
  ocgc_rings_free(r);
}
END_TEST

START_TEST(state_names)
{
  ck_assert_str_eq(ocgc_ring_state_name(OCGC_RING_RUNNING), "running");
  ck_assert_str_eq(ocgc_ring_state_name(OCGC_RING_FOREIGN), "foreign");
  ck_assert_str_eq(ocgc_ring_state_name(OCGC_RING_UNKNOWN), "unknown");
  ck_assert_str_eq(ocgc_ring_state_name(OCGC_RING_UNKNOWN + 1), "?");
}
END_TEST

/* ---- removal -------------------------------------------------------------------------------- */

/* What is removable is removed, with a memory ring's identity link of our
 * pid namespace (never another namespace's); the rest is refused
 * (-EINVAL) and stays. */
START_TEST(remove_what_is_removable)
{
  char exited[64], stale[64], alias[64], alias2[64], ident[128], ident2[64], to[128], ns[64];
  struct child run = start(tmp, P_OK);
  struct ocgc_rings *r;
  size_t i, removed = 0;
  ssize_t n;
  pid_t d;

  dead_producer(exited, sizeof exited, OCGC_STATE_EXITED);
  dead_producer(stale, sizeof stale, OCGC_STATE_RUNNING);
  n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  ck_assert_int_gt(n, 5);
  ns[n] = '\0';
  ns[strcspn(ns, "]")] = '\0';
  /* ocgc's memory ring publication: P.events -> .ocgc-ring.NS.P ->
   * /proc/P/map_files/..., its process gone; of our namespace, and of
   * another. */
  d = dead_pid();
  snprintf(alias, sizeof alias, "%d.events", (int)d);
  snprintf(ident, sizeof ident, ".ocgc-ring.%s.%d", ns + 5, (int)d);
  snprintf(to, sizeof to, "/proc/%d/map_files/1000-2000", (int)d);
  link_at(ident, to);
  link_at(alias, ident);
  d = dead_pid();
  snprintf(alias2, sizeof alias2, "%d.events", (int)d);
  snprintf(ident2, sizeof ident2, ".ocgc-ring.1.%d", (int)d);
  snprintf(to, sizeof to, "/proc/%d/map_files/1000-2000", (int)d);
  link_at(ident2, to);
  link_at(alias2, ident2);
  plain_file("junk.events", 'x', 4096);

  r = scan();
  if (!host_complete(r, "removal")) {
    ocgc_rings_free(r);
    stop(&run);
    return;
  }
  judged(r, alias, OCGC_RING_STALE, 1, 1);
  for (i = 0; i < ocgc_rings_count(r); i++) {
    const struct ocgc_ring *e = ocgc_rings_get(r, i);
    if (e->removable) {
      ck_assert_int_eq(ocgc_ring_remove(e, NULL, 0), 0);
      removed++;
    } else {
      ck_assert_int_eq(ocgc_ring_remove(e, NULL, 0), -EINVAL);
    }
  }
  ck_assert_uint_eq(removed, 4);
  ck_assert_int_eq(exists(exited), 0);
  ck_assert_int_eq(exists(stale), 0);
  ck_assert_int_eq(exists(alias), 0);
  ck_assert_int_eq(exists(ident), 0);
  ck_assert_int_eq(exists(alias2), 0);
  ck_assert_int_eq(exists(ident2), 1); /* another namespace's pid: not ours to judge */
  ck_assert_int_eq(exists("junk.events"), 1);
  ck_assert_int_eq(exists(strrchr(run.path, '/') + 1), 1);
  ck_assert_int_eq(ocgc_ring_remove(NULL, NULL, 0), -EINVAL);
  no_aside();
  ocgc_rings_free(r);
  stop(&run);
}
END_TEST

/* Between the scan and the removal, the entry changed: another file took
 * its name, or the link found something to lead to.  Moved aside, judged
 * there not gone, it is put back (1), nothing removed, nothing left
 * aside. */
START_TEST(remove_judges_again)
{
  char name[64], path[4096], other[4096];
  struct ocgc_rings *r;
  const struct ocgc_ring *e, *l;
  struct stat before, after;

  dead_producer(name, sizeof name, OCGC_STATE_RUNNING);
  link_at("9.events", "target.events.later");
  r = scan();
  if (!host_complete(r, "judged again")) {
    ocgc_rings_free(r);
    return;
  }
  e = judged(r, name, OCGC_RING_STALE, 1, 1);
  l = judged(r, "9.events", OCGC_RING_STALE, 1, 1);
  ck_assert_int_eq(ocgc_ring_still_gone(e, e->path), 1);
  ck_assert_int_eq(ocgc_ring_still_gone(l, l->path), 1);

  /* A new file under the name (a new inode: both exist at once). */
  dead_file("new.tmp", 1, 1, OCGC_STATE_RUNNING);
  ck_assert_int_eq(rename(at(other, sizeof other, "new.tmp"), at(path, sizeof path, name)), 0);
  ck_assert_int_eq(lstat(path, &before), 0);
  ck_assert_int_eq(ocgc_ring_still_gone(e, path), 0);
  ck_assert_int_eq(ocgc_ring_remove(e, NULL, 0), 1);
  ck_assert_int_eq(lstat(path, &after), 0);
  ck_assert_uint_eq(after.st_ino, before.st_ino);

  /* The link leads somewhere now. */
  plain_file("target.events.later", 'z', 16);
  ck_assert_int_eq(ocgc_ring_still_gone(l, l->path), 0);
  ck_assert_int_eq(ocgc_ring_remove(l, NULL, 0), 1);
  ck_assert_int_eq(lstat(at(path, sizeof path, "9.events"), &after), 0);
  ck_assert(S_ISLNK(after.st_mode));
  ck_assert_uint_eq(after.st_ino, l->ino);

  ck_assert_int_eq(ocgc_ring_still_gone(NULL, path), 0);
  ck_assert_int_eq(ocgc_ring_still_gone(e, NULL), 0);
  no_aside();
  ocgc_rings_free(r);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------- */

Suite *rings_suite(void);
Suite *rings_suite(void)
{
  Suite *s = suite_create("rings");
  TCase *tc = tcase_create("states");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_state);
  tcase_add_test(tc, owner_and_access);
  tcase_add_test(tc, state_names);
  suite_add_tcase(s, tc);

  tc = tcase_create("remove");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, remove_what_is_removable);
  tcase_add_test(tc, remove_judges_again);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(rings_suite);
