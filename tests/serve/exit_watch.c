/* exit_watch.c - for serve_exits.sh: watch one process (libocgc's watch,
 * as serve's) and print what on_gone says of its end (ocgc_watched.exit)
 * and of its memory cgroup (.memcg), as "key value" lines.  It prints
 * "watching PID" once the process is in the set and its cgroup read.
 *   Usage: exit_watch PID [SECONDS]      (default 120: then exit 1) */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ocgc/consumer.h>

static int done;

static void gone(const struct ocgc_watched *w, void *ctx)
{
  const struct ocgc_exit *e = &w->exit;
  const struct ocgc_memcg *m = &w->memcg;
  (void)ctx;
  printf("known %d\nhow %s\ncode %d\nsignal %d\ncore_dumped %d\noom_killed %d\nexit_mark %d\n"
         "gone %d\n", e->known, ocgc_exit_how_name(e->how), e->code, e->signal, e->core_dumped,
         e->oom_killed, e->exit_mark, e->gone_ns != 0);
  printf("memcg.known %d\nmemcg.v2 %d\nmemcg.limit %llu\nmemcg.peak %llu\nmemcg.oom_kills %llu\n",
         m->known, m->v2, (unsigned long long)m->limit, (unsigned long long)m->peak,
         (unsigned long long)m->oom_kills);
  done = 1;
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  struct ocgc_watch_opts o = OCGC_OPTS_INIT(struct ocgc_watch_opts);
  struct ocgc_watch *w;
  const struct ocgc_watched *p;
  uint64_t end;
  int pid, err;
  if (argc < 2 || (pid = atoi(argv[1])) <= 0) {
    fprintf(stderr, "usage: exit_watch PID [SECONDS]\n");
    return 2;
  }
  end = mono_ns() + (uint64_t)(argc > 2 ? atoi(argv[2]) : 120) * 1000000000u;
  o.on_gone = gone;
  if ((err = ocgc_watch_new(&o, &w)) != 0 || (err = ocgc_watch_add_pid(w, pid)) != 0) {
    fprintf(stderr, "exit_watch: %s\n", ocgc_strerror(err));
    return 1;
  }
  p = ocgc_watch_next(w, NULL);
  printf("watching %d\nwatch.memcg.known %d\nwatch.memcg.path_set %d\nwatch.memcg.v2 %d\n"
         "watch.memcg.limit %llu\n", pid, p != NULL && p->memcg.known,
         p != NULL && p->memcg.path[0] != '\0', p != NULL && p->memcg.v2,
         p != NULL ? (unsigned long long)p->memcg.limit : 0ull);
  fflush(stdout);
  while (!done && mono_ns() < end) {
    struct timespec nap = {0, 5000000};
    ocgc_watch_poll(w, mono_ns());
    nanosleep(&nap, NULL);
  }
  ocgc_watch_free(w);
  return done ? 0 : 1;
}
