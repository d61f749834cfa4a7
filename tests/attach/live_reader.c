/* live_reader.c - a small reader of a live process's ring, for the attach
 * integration tests (attach_*.sh).  It uses only libocgc's public API, as
 * a monitoring agent would: attach by pid, follow with a cursor, watch the
 * producer's state, then account for every event.
 *
 *   live_reader [--dir DIR] [--wait MS] [--poll-ms MS] [--timeout S]
 *               [--once | --for MS | --until-exit] PID
 *
 * --until-exit (the default) polls every --poll-ms (default 2) until the
 * producer's state is exited, then polls once more to the tail; --for MS
 * follows for MS milliseconds and detaches; --once reads what is there and
 * detaches.  Then it prints
 *
 *   seen N lost N skipped N written N lost_exact N
 *   state running|exited|unknown
 *   polls N
 *   disorder N
 *   totals.minor_collections N     (ocgc files)
 *
 * where written is the producer's count of events written (all rings), and
 * disorder counts events whose timestamp went back on their ring (must be
 * 0: a reader that loses events still sees the rest in order).
 * Exit: 0 ok, 1 usage, 2 cannot attach, 3 the producer died without
 * exiting (killed), 4 timeout, 5 read error. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocgc/consumer.h"

#define MAX_RINGS 4096

struct follow {
  uint64_t last_ts[MAX_RINGS];
  uint64_t disorder;
};

static int on_event(const struct ocgc_event *ev, void *ctx)
{
  struct follow *f = ctx;
  if (ev->ring < MAX_RINGS) {
    if (ev->timestamp < f->last_ts[ev->ring]) f->disorder++;
    f->last_ts[ev->ring] = ev->timestamp;
  }
  return 0;
}

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
  nanosleep(&ts, NULL);
}

static void usage(void)
{
  fprintf(stderr, "usage: live_reader [--dir DIR] [--wait MS] [--poll-ms MS] [--timeout S]\n"
                  "                   [--once | --for MS | --until-exit] PID\n");
}

static unsigned long num(const char *s)
{
  char *end;
  unsigned long v;
  errno = 0;
  v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') {
    usage();
    exit(1);
  }
  return v;
}

/* Poll until a poll delivers nothing.  Returns 0 or a negative error. */
static int drain(struct ocgc_cursor *cur, uint64_t *polls)
{
  int64_t got;
  do {
    got = ocgc_cursor_poll(cur, 0);
    (*polls)++;
  } while (got > 0);
  return got < 0 ? (int)got : 0;
}

int main(int argc, char **argv)
{
  enum { UNTIL_EXIT, ONCE, FOR_MS } mode = UNTIL_EXIT;
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  struct ocgc_cursor_opts co = OCGC_OPTS_INIT(struct ocgc_cursor_opts);
  struct ocgc_source *src = NULL;
  struct ocgc_cursor *cur = NULL;
  struct ocgc_cursor_stats st = OCGC_OPTS_INIT(struct ocgc_cursor_stats);
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_totals tot = OCGC_OPTS_INIT(struct ocgc_totals);
  struct follow *fl;
  unsigned long for_ms = 0, poll_ms = 2, timeout_s = 120;
  uint64_t polls = 0, written = 0, start, w;
  int pid = 0, err, rc = 0, i;
  unsigned r;

  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--dir") == 0 && i + 1 < argc) ao.dir = argv[++i];
    else if (strcmp(a, "--wait") == 0 && i + 1 < argc) ao.wait_ms = (unsigned)num(argv[++i]);
    else if (strcmp(a, "--poll-ms") == 0 && i + 1 < argc) poll_ms = num(argv[++i]);
    else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) timeout_s = num(argv[++i]);
    else if (strcmp(a, "--once") == 0) mode = ONCE;
    else if (strcmp(a, "--until-exit") == 0) mode = UNTIL_EXIT;
    else if (strcmp(a, "--for") == 0 && i + 1 < argc) { mode = FOR_MS; for_ms = num(argv[++i]); }
    else if (a[0] != '-' && pid == 0) pid = (int)num(a);
    else { usage(); return 1; }
  }
  if (pid <= 0) { usage(); return 1; }

  err = ocgc_source_open_pid(pid, &ao, &src);
  if (err != 0) {
    fprintf(stderr, "live_reader: process %d: %s\n", pid, ocgc_strerror(err));
    return 2;
  }
  fl = calloc(1, sizeof *fl);
  if (fl == NULL) { fprintf(stderr, "live_reader: out of memory\n"); return 5; }
  co.start = OCGC_START_OLDEST;
  co.on_event = on_event;
  co.ctx = fl;
  err = ocgc_cursor_new(src, &co, &cur);
  if (err != 0) {
    fprintf(stderr, "live_reader: cursor: %s\n", ocgc_strerror(err));
    return 5;
  }

  start = now_ms();
  for (;;) {
    /* The state first: once it says exited (acquire, pairs with the
     * producer's release store at exit), every event is in the ring, and
     * one more drain reads them all. */
    if ((err = ocgc_source_info(src, &info)) != 0) break;
    if (mode == UNTIL_EXIT && info.has_ext && info.state == OCGC_STATE_EXITED) {
      err = drain(cur, &polls);
      break;
    }
    if (mode == ONCE) {
      err = drain(cur, &polls);
      break;
    }
    if ((err = drain(cur, &polls)) != 0) break;
    if (mode == FOR_MS && now_ms() - start >= for_ms) break;
    if (mode == UNTIL_EXIT) {
      int alive = ocgc_source_check_alive(src);
      /* Gone without saying exited: killed.  Read what it left. */
      if (alive == OCGC_E_STALE && ocgc_source_info(src, &info) == 0 &&
          info.state != OCGC_STATE_EXITED) {
        err = drain(cur, &polls);
        rc = 3;
        break;
      }
      /* Stock files (-ENODATA) cannot say either: --until-exit then runs
       * until the timeout. */
    }
    if (now_ms() - start >= timeout_s * 1000u) {
      fprintf(stderr, "live_reader: timeout after %lu s\n", timeout_s);
      rc = 4;
      break;
    }
    sleep_ms((unsigned)poll_ms);
  }
  if (err != 0) {
    fprintf(stderr, "live_reader: process %d: %s\n", pid, ocgc_strerror(err));
    rc = 5;
  }
  if (rc == 3) fprintf(stderr, "live_reader: process %d died without exiting\n", pid);

  ocgc_cursor_stats(cur, &st);
  if (ocgc_source_info(src, &info) != 0) memset(&info, 0, sizeof info);
  for (r = 0; r < info.max_domains; r++)
    if (ocgc_source_written(src, r, &w) == 0) written += w;
  printf("seen %" PRIu64 " lost %" PRIu64 " skipped %" PRIu64 " written %" PRIu64
         " lost_exact %d\n", st.seen, st.lost, st.skipped, written, st.lost_exact);
  printf("state %s\n", !info.has_ext ? "unknown"
                       : info.state == OCGC_STATE_EXITED ? "exited"
                       : info.state == OCGC_STATE_RUNNING ? "running" : "unknown");
  printf("polls %" PRIu64 "\n", polls);
  printf("disorder %" PRIu64 "\n", fl->disorder);
  if (ocgc_source_totals(src, &tot) == 0)
    printf("totals.minor_collections %" PRIu64 "\n", tot.minor_collections);
  fflush(stdout);
  ocgc_cursor_free(cur);
  ocgc_source_close(src);
  free(fl);
  return rc;
}
