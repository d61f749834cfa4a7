/* test_flight_dir.c - a folder of recordings (libconsumer/flight_dir.c,
 * ocgc/flight.h), with recordings of a ring file made here:
 * - a recording is PROG-PID-TIME-REASON.ocgcrec, mode 0600 under a umask
 *   of 0, readable as a ring file; a program's bytes that a file name
 *   cannot hold become _ (no slash, no leading dot), cut at 32;
 * - the bounds per program and in all remove the oldest of ours, never a
 *   file of another form; recordings there before count;
 * - the cooldown per program holds a second recording back (-EAGAIN,
 *   counted), not another program's, not one asked for;
 * - a link in the folder at a recording's name is never written through;
 *   a temporary file a run left is removed; a folder others may write to
 *   is refused, and one given as a link. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocgc/consumer.h"
#include "ringgen.h"
#include "testutil.h"

static char ring_path[4096], dir_path[4096];

/* A ring file with a few events, and an empty folder of mode 0700. */
static struct ocgc_source *setup_ring(void)
{
  struct rg_file f;
  struct ocgc_source *src = NULL;
  char *d = tu_mkdtemp();
  ck_assert_ptr_nonnull(d);
  snprintf(ring_path, sizeof ring_path, "%s/ring.events", d);
  snprintf(dir_path, sizeof dir_path, "%s/rec", d);
  free(d);
  ck_assert_int_eq(rg_create(&f, ring_path, 1, 1, 1024), 0);
  rg_close(&f);
  ck_assert_int_eq(mkdir(dir_path, 0700), 0);
  ck_assert_int_eq(ocgc_source_open_path(ring_path, NULL, &src), 0);
  return src;
}

static struct ocgc_flight_meta meta(const char *prog, int pid, int reason)
{
  struct ocgc_flight_meta m = OCGC_OPTS_INIT(struct ocgc_flight_meta);
  m.reason = reason;
  m.pid = pid;
  snprintf(m.program, sizeof m.program, "%s", prog);
  return m;
}

/* The entries of the folder of that form, counted. */
static unsigned count(const char *suffix)
{
  DIR *d = opendir(dir_path);
  struct dirent *e;
  unsigned n = 0;
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), s = strlen(suffix);
    if (l >= s && strcmp(e->d_name + l - s, suffix) == 0) n++;
  }
  closedir(d);
  return n;
}

static void cleanup(struct ocgc_source *src)
{
  char *slash;
  ocgc_source_close(src);
  tu_rmtree(dir_path);
  unlink(ring_path);
  if ((slash = strrchr(ring_path, '/')) != NULL) {
    *slash = '\0';
    rmdir(ring_path);
  }
}

START_TEST(names_and_mode)
{
  struct ocgc_source *src = setup_ring(), *back = NULL;
  struct ocgc_flight_dir *d;
  struct ocgc_flight_meta m = meta("../we\"ird\nname-with-a-long-tail-past-32-bytes", 42,
                                   OCGC_FLIGHT_DEATH);
  struct ocgc_flight_dir_opts o = OCGC_OPTS_INIT(struct ocgc_flight_dir_opts);
  char name[128], path[8192];
  struct stat st;
  mode_t old = umask(0);
  ck_assert_int_eq(ocgc_flight_dir_open(dir_path, &o, &d), 0);
  ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, name, sizeof name), 0);
  umask(old);
  ck_assert_msg(strncmp(name, "_._we_ird_name_with_a_long_tail_-42-", 36) == 0, "%s", name);
  ck_assert_ptr_null(strchr(name, '/'));
  ck_assert(strstr(name, "-death.ocgcrec") != NULL);
  snprintf(path, sizeof path, "%s/%s", dir_path, name);
  ck_assert_int_eq(lstat(path, &st), 0);
  ck_assert(S_ISREG(st.st_mode));
  ck_assert_int_eq(st.st_mode & 07777, 0600);
  ck_assert_int_eq(ocgc_source_open_path(path, NULL, &back), 0);
  ocgc_source_close(back);
  ocgc_flight_dir_close(d);
  cleanup(src);
}
END_TEST

START_TEST(bounds_remove_the_oldest_of_ours)
{
  struct ocgc_source *src = setup_ring();
  struct ocgc_flight_dir *d;
  struct ocgc_flight_dir_opts o = OCGC_OPTS_INIT(struct ocgc_flight_dir_opts);
  struct ocgc_flight_dir_stats st = OCGC_OPTS_INIT(struct ocgc_flight_dir_stats);
  char first[128], other[8192];
  int i, fd;
  /* Another file of the operator's, even one ending like ours but not of
   * our form: never counted, never removed. */
  snprintf(other, sizeof other, "%s/notes.ocgcrec", dir_path);
  ck_assert_int_ge(fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600), 0);
  close(fd);
  o.per_program = 2;
  o.files = 3;
  o.cooldown_ns = 1;
  ck_assert_int_eq(ocgc_flight_dir_open(dir_path, &o, &d), 0);
  for (i = 0; i < 4; i++) {
    struct ocgc_flight_meta m = meta("a", 100 + i, OCGC_FLIGHT_DEATH);
    ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, i == 0 ? first : NULL, 128), 0);
  }
  /* a's newest two are kept. */
  ck_assert_uint_eq(count(".ocgcrec"), 3);
  snprintf(other, sizeof other, "%s/%s", dir_path, first);
  ck_assert_int_ne(access(other, F_OK), 0);
  {
    struct ocgc_flight_meta m = meta("b", 200, OCGC_FLIGHT_DEATH);
    ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, NULL, 0), 0);
    m = meta("c", 300, OCGC_FLIGHT_DEATH);
    ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, NULL, 0), 0);
  }
  /* Three of ours in all (the oldest a went), and the operator's file. */
  ck_assert_uint_eq(count(".ocgcrec"), 4);
  snprintf(other, sizeof other, "%s/notes.ocgcrec", dir_path);
  ck_assert_int_eq(access(other, F_OK), 0);
  ck_assert_int_eq(ocgc_flight_dir_stats(d, &st), 0);
  ck_assert_uint_eq(st.files, 3);
  ck_assert_uint_eq(st.removed, 3);
  ck_assert_uint_eq(st.recorded[OCGC_FLIGHT_DEATH], 6);
  ocgc_flight_dir_close(d);
  /* Opened again with a bound of 1: the recordings there count, and the
   * oldest go at once. */
  o.files = 1;
  ck_assert_int_eq(ocgc_flight_dir_open(dir_path, &o, &d), 0);
  ck_assert_uint_eq(count(".ocgcrec"), 2);
  ocgc_flight_dir_close(d);
  cleanup(src);
}
END_TEST

START_TEST(cooldown_per_program)
{
  struct ocgc_source *src = setup_ring();
  struct ocgc_flight_dir *d;
  struct ocgc_flight_dir_opts o = OCGC_OPTS_INIT(struct ocgc_flight_dir_opts);
  struct ocgc_flight_dir_stats st = OCGC_OPTS_INIT(struct ocgc_flight_dir_stats);
  struct ocgc_flight_meta m = meta("svc", 1, OCGC_FLIGHT_PAUSE);
  o.cooldown_ns = 3600ull * 1000000000u;
  ck_assert_int_eq(ocgc_flight_dir_open(dir_path, &o, &d), 0);
  ck_assert_int_eq(ocgc_flight_dir_ready(d, "svc", OCGC_FLIGHT_PAUSE), 1);
  ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, NULL, 0), 0);
  ck_assert_int_eq(ocgc_flight_dir_ready(d, "svc", OCGC_FLIGHT_DEATH), 0);
  m.reason = OCGC_FLIGHT_DEATH;
  ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, NULL, 0), -EAGAIN);
  m.reason = OCGC_FLIGHT_DEMAND;
  ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, NULL, 0), 0);
  m = meta("other", 2, OCGC_FLIGHT_DEATH);
  ck_assert_int_eq(ocgc_flight_dir_record(d, src, NULL, &m, NULL, 0), 0);
  ck_assert_int_eq(ocgc_flight_dir_stats(d, &st), 0);
  ck_assert_uint_eq(st.cooled, 1);
  ck_assert_uint_eq(count(".ocgcrec"), 3);
  ocgc_flight_dir_close(d);
  cleanup(src);
}
END_TEST

START_TEST(links_and_leftovers)
{
  struct ocgc_source *src = setup_ring();
  struct ocgc_flight_dir *d;
  struct ocgc_flight_dir_opts o = OCGC_OPTS_INIT(struct ocgc_flight_dir_opts);
  char path[8192], target[8192], name[128], lnk[8192];
  int fd, i;
  /* A leftover temporary file: removed at the open. */
  snprintf(path, sizeof path, "%s/.ocgcrec-tmp.1.0", dir_path);
  ck_assert_int_ge(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600), 0);
  close(fd);
  /* Links at every temporary name this process could use next, and at
   * names a recording of now could take: none is written through. */
  snprintf(target, sizeof target, "%s.victim", dir_path);
  ck_assert_int_ge(fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600), 0);
  close(fd);
  for (i = 0; i < 4; i++) {
    snprintf(lnk, sizeof lnk, "%s/.ocgcrec-tmp.%ld.%d", dir_path, (long)getpid(), i);
    ck_assert_int_eq(symlink(target, lnk), 0);
  }
  o.cooldown_ns = 1;
  ck_assert_int_eq(ocgc_flight_dir_open(dir_path, &o, &d), 0);
  ck_assert_int_ne(access(path, F_OK), 0);
  {
    struct ocgc_flight_meta m = meta("p", 7, OCGC_FLIGHT_DEATH);
    int err = ocgc_flight_dir_record(d, src, NULL, &m, name, sizeof name);
    ck_assert_int_lt(err, 0); /* O_EXCL|O_NOFOLLOW on the link: refused */
  }
  {
    struct stat st;
    ck_assert_int_eq(stat(target, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
  }
  ocgc_flight_dir_close(d);
  unlink(target);
  cleanup(src);
}
END_TEST

START_TEST(folders_refused)
{
  struct ocgc_source *src = setup_ring();
  struct ocgc_flight_dir *d = NULL;
  char lnk[8192];
  ck_assert_int_eq(chmod(dir_path, 0777), 0);
  ck_assert_int_eq(ocgc_flight_dir_open(dir_path, NULL, &d), -EPERM);
  ck_assert_ptr_null(d);
  ck_assert_int_eq(chmod(dir_path, 0700), 0);
  snprintf(lnk, sizeof lnk, "%s.link", dir_path);
  ck_assert_int_eq(symlink(dir_path, lnk), 0);
  ck_assert_int_lt(ocgc_flight_dir_open(lnk, NULL, &d), 0);
  ck_assert_ptr_null(d);
  unlink(lnk);
  cleanup(src);
}
END_TEST

static Suite *make(void)
{
  Suite *s = suite_create("flight_dir");
  TCase *tc = tcase_create("dir");
  tcase_add_test(tc, names_and_mode);
  tcase_add_test(tc, bounds_remove_the_oldest_of_ours);
  tcase_add_test(tc, cooldown_per_program);
  tcase_add_test(tc, links_and_leftovers);
  tcase_add_test(tc, folders_refused);
  suite_add_tcase(s, tc);
  return s;
}
TU_SUITE(make);
