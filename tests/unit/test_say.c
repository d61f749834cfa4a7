/* test_say.c - the tools' one-line messages (tools/common.c: tool_say):
 * threads saying lines at once into one stderr never cut each other's
 * lines (`ocgc serve`'s poll thread reports a failing ring while its main
 * thread says where it listens, which scripts read). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "testutil.h"

#define THREADS 4
#define LINES 3000

static void *sayer(void *arg)
{
  int id = (int)(intptr_t)arg, i;
  for (i = 0; i < LINES; i++) tool_say("thread %d line %d of a message long enough to be cut", id, i);
  return NULL;
}

START_TEST(lines_stay_whole)
{
  char path[] = "/tmp/ocgc-test-say-XXXXXX", line[256];
  int fd = mkstemp(path), saved = dup(2), i, n = 0;
  pthread_t t[THREADS];
  FILE *f;
  ck_assert_int_ge(fd, 0);
  ck_assert_int_ge(saved, 0);
  tool_name = "test";
  ck_assert_int_eq(dup2(fd, 2), 2);
  for (i = 0; i < THREADS; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, sayer, (void *)(intptr_t)i), 0);
  for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ck_assert_ptr_nonnull(f = fopen(path, "r"));
  while (fgets(line, sizeof line, f) != NULL) {
    int id, k;
    char tail[64];
    n++;
    ck_assert_msg(sscanf(line, "ocgc test: thread %d line %d of a message long enough to be %63s",
                         &id, &k, tail) == 3 && strcmp(tail, "cut") == 0,
                  "a line cut by another: %s", line);
  }
  fclose(f);
  unlink(path);
  close(fd);
  ck_assert_int_eq(n, THREADS * LINES);
}
END_TEST

static Suite *say_suite(void)
{
  Suite *s = suite_create("say");
  TCase *tc = tcase_create("say");
  tcase_add_test(tc, lines_stay_whole);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(say_suite);
