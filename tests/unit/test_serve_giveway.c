/* test_serve_giveway.c - who gives way when `ocgc serve`'s table is full
 * (tools/serve_giveway.c), on real loopback TCP connections:
 * - of the oldest heads, the one whose socket has received nothing for
 *   longest gives way, not the oldest: a client that just sent (a TLS
 *   handshake's next message) stays, one that has been idle goes (the
 *   oldest was cut before: a scraper mid-handshake under a reconnecting
 *   crowd);
 * - bytes waiting unread make a socket not idle at all (the server owes
 *   it a turn), however long ago they came;
 * - on a tie, and for a socket the kernel says nothing of (a unix one:
 *   its age stands for its idleness), the older;
 * - only the GIVEWAY_LOOK first candidates are looked at. */
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"
#include "testutil.h"

/* n connected pairs over loopback TCP: srv[i] the server's end. */
static void pairs(int n, int *cli, int *srv)
{
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int l = socket(AF_INET, SOCK_STREAM, 0), i;
  ck_assert_int_ge(l, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(l, 16), 0);
  ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
  for (i = 0; i < n; i++) {
    cli[i] = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(cli[i], (struct sockaddr *)&a, sizeof a), 0);
    srv[i] = accept(l, NULL, NULL);
    ck_assert_int_ge(srv[i], 0);
  }
  close(l);
}

/* c sends a byte, and the server's end reads it (nothing left unread). */
static void sends_and_is_read(int c, int s)
{
  char b = 'x';
  struct pollfd p = {.fd = s, .events = POLLIN};
  ck_assert_int_eq(write(c, &b, 1), 1);
  ck_assert_int_eq(poll(&p, 1, 10000), 1);
  ck_assert_int_eq(read(s, &b, 1), 1);
}

START_TEST(the_idle_one_goes_not_the_oldest)
{
  int cli[3], srv[3], i;
  struct serve_giveway g[3];
  pairs(3, cli, srv);
  /* 0 and 1 send, then nothing; 300 ms later 2 sends: the most recent
   * data of all (a handshake's next message) */
  for (i = 0; i < 2; i++) sends_and_is_read(cli[i], srv[i]);
  usleep(300000);
  sends_and_is_read(cli[2], srv[2]);
  /* 2 is the oldest head: it stays, one of the idle two goes */
  g[0].fd = srv[2], g[0].head_since_ns = 1000;
  g[1].fd = srv[0], g[1].head_since_ns = 1001;
  g[2].fd = srv[1], g[2].head_since_ns = 1002;
  ck_assert_uint_ne(serve_giveway_pick(g, 3, 5000), 0);
  /* the oldest head, idle: it goes */
  g[0].fd = srv[0];
  g[1].fd = srv[2];
  ck_assert_uint_eq(serve_giveway_pick(g, 2, 5000), 0);
  for (i = 0; i < 3; i++) close(cli[i]), close(srv[i]);
}
END_TEST

START_TEST(unread_bytes_are_not_idle)
{
  int cli[2], srv[2], i;
  char b = 'y';
  struct serve_giveway g[2];
  pairs(2, cli, srv);
  /* 0 sent long ago and was never read; 1 sent (read) after it, and has
   * been idle since: by the kernel's clock 0 is the more idle */
  ck_assert_int_eq(write(cli[0], &b, 1), 1);
  usleep(300000);
  sends_and_is_read(cli[1], srv[1]);
  usleep(300000);
  {
    struct pollfd p = {.fd = srv[0], .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 10000), 1); /* arrived, unread */
  }
  g[0].fd = srv[0], g[0].head_since_ns = 1; /* the oldest, bytes waiting */
  g[1].fd = srv[1], g[1].head_since_ns = 2;
  ck_assert_uint_eq(serve_giveway_pick(g, 2, 5000), 1);
  for (i = 0; i < 2; i++) close(cli[i]), close(srv[i]);
}
END_TEST

START_TEST(unix_sockets_by_age_and_the_bound)
{
  int sv[2][2], i;
  struct serve_giveway g[GIVEWAY_LOOK + 1];
  for (i = 0; i < 2; i++) ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
  /* no TCP_INFO: the older (by head_since) is the more idle */
  g[0].fd = sv[0][0], g[0].head_since_ns = 4000000000u;
  g[1].fd = sv[1][0], g[1].head_since_ns = 1000000000u;
  ck_assert_uint_eq(serve_giveway_pick(g, 2, 5000000000u), 1);
  /* a tie: the first given (the older) */
  g[1].head_since_ns = g[0].head_since_ns;
  ck_assert_uint_eq(serve_giveway_pick(g, 2, 5000000000u), 0);
  /* past GIVEWAY_LOOK, nothing is asked of (nor chosen): a much older one
   * there is not seen */
  for (i = 0; i < GIVEWAY_LOOK; i++) g[i].fd = sv[0][0], g[i].head_since_ns = 4000000000u;
  g[GIVEWAY_LOOK].fd = sv[1][0], g[GIVEWAY_LOOK].head_since_ns = 1;
  ck_assert_uint_lt(serve_giveway_pick(g, GIVEWAY_LOOK + 1, 5000000000u), GIVEWAY_LOOK);
  for (i = 0; i < 2; i++) close(sv[i][0]), close(sv[i][1]);
}
END_TEST

static Suite *giveway_suite(void)
{
  Suite *s = suite_create("serve_giveway");
  TCase *tc = tcase_create("pick");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, the_idle_one_goes_not_the_oldest);
  tcase_add_test(tc, unread_bytes_are_not_idle);
  tcase_add_test(tc, unix_sockets_by_age_and_the_bound);
  suite_add_tcase(s, tc);
  return s;
}

TU_SUITE(giveway_suite);
