/* test_common.c - the common layer (common/): a file replaced whole
 * (afile: the whole new text or the old file, its mode 0666 less the
 * umask, never a temporary file left), and the human figures every
 * command prints (human: 3 significant digits, binary units). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "human.h"
#include "testutil.h"

static char *tmp;
static void setup(void) { tmp = tu_mkdtemp(); }
static void teardown(void) { tu_rmtree(tmp); free(tmp); tmp = NULL; }

/* Entries of the scratch folder. */
static unsigned entries(void)
{
  DIR *d = opendir(tmp);
  struct dirent *de;
  unsigned n = 0;
  ck_assert_ptr_nonnull(d);
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static void put(const char *path, const char *text)
{
  struct cm_afile f;
  ck_assert_int_eq(cm_afile_open(&f, path), 0);
  ck_assert_int_eq(write(f.fd, text, strlen(text)), (ssize_t)strlen(text));
  ck_assert_int_eq(cm_afile_commit(&f, NULL), 0);
}

START_TEST(afile_replaces_whole)
{
  char path[4096], buf[64];
  struct cm_afile f;
  struct stat st;
  const char *what = NULL;
  mode_t old = umask(027);
  int fd;
  tu_path(path, sizeof path, tmp, "out.prom");
  put(path, "first\n");
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_uint_eq(st.st_mode & 0777, 0640); /* 0666 less the umask */
  /* While a new one is written, the path holds the old text whole. */
  ck_assert_int_eq(cm_afile_open(&f, path), 0);
  ck_assert_int_eq(write(f.fd, "second", 6), 6);
  fd = open(path, O_RDONLY);
  ck_assert_int_eq(read(fd, buf, sizeof buf), 6);
  close(fd);
  ck_assert_uint_eq(entries(), 2);
  cm_afile_abort(&f); /* given up: the old text stays, no temporary file */
  ck_assert_uint_eq(entries(), 1);
  fd = open(path, O_RDONLY);
  ck_assert_int_eq(read(fd, buf, sizeof buf), 6);
  ck_assert_int_eq(memcmp(buf, "first\n", 6), 0);
  close(fd);
  /* A rename that fails (the path is a folder now) leaves nothing behind. */
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  ck_assert_int_eq(cm_afile_open(&f, path), 0);
  ck_assert_int_lt(cm_afile_commit(&f, &what), 0);
  ck_assert_str_eq(what, "rename a new file onto");
  ck_assert_uint_eq(entries(), 1);
  rmdir(path);
  umask(old);
}
END_TEST

START_TEST(afile_missing_folder)
{
  char path[4096];
  struct cm_afile f;
  tu_path(path, sizeof path, tmp, "no/such/out.json");
  ck_assert_int_eq(cm_afile_open(&f, path), -ENOENT);
  ck_assert_uint_eq(entries(), 0);
}
END_TEST

START_TEST(human_figures)
{
  char b[32];
  ck_assert_str_eq(cm_fmt_ns(b, sizeof b, 850), "850ns");
  ck_assert_str_eq(cm_fmt_ns(b, sizeof b, 12345), "12.3us");
  ck_assert_str_eq(cm_fmt_ns(b, sizeof b, 999600), "1.00ms");
  ck_assert_str_eq(cm_fmt_ns(b, sizeof b, 2500000000u), "2.50s");
  ck_assert_str_eq(cm_fmt_bytes(b, sizeof b, 512), "512 B");
  ck_assert_str_eq(cm_fmt_bytes(b, sizeof b, 1536), "1.50 KiB");
  ck_assert_str_eq(cm_fmt_bytes(b, sizeof b, 12900000), "12.3 MiB");
  ck_assert_str_eq(cm_fmt_uptime(b, sizeof b, 12300000000u), "12.3s");
  ck_assert_str_eq(cm_fmt_uptime(b, sizeof b, UINT64_C(3723) * 1000000000u), "1h02m03s");
}
END_TEST

static Suite *common_suite(void)
{
  Suite *s = suite_create("common");
  TCase *tc = tcase_create("common");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, afile_replaces_whole);
  tcase_add_test(tc, afile_missing_folder);
  tcase_add_test(tc, human_figures);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(common_suite);
