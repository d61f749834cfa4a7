/* serve_flight.c - `ocgc serve --flight-dir`: the flight recorder's
 * options made into the watch's (libocgc keeps the histories, asks the
 * triggers and writes the recordings: ocgc/flight.h), the folder opened
 * once serve is the user it runs as, the recordings said on stderr, the
 * asks of POST /debug/flight handed to the poll thread, and serve's own
 * figures of it (ocgc_serve_flight_*).
 *
 * Invariants: the folder and the watch are the poll thread's (an ask is
 * taken there, between turns); a request waits for its ask at most
 * SERVE_FLIGHT_WAIT_NS, then is answered 202 (the recording goes on);
 * one ask at a time, and at most one a second (429 past that), so that
 * asks cannot turn the folder's recordings over faster than a second
 * each. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "serve.h"

#define ASK_EVERY_NS 1000000000u   /* one ask a second, at most */

void serve_flight_init(struct serve_flight *f)
{
  memset(f, 0, sizeof *f);
  f->dopts.sz = sizeof f->dopts;
  pthread_mutex_init(&f->lock, NULL);
  {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&f->done, &a);
    pthread_condattr_destroy(&a);
  }
}

void serve_flight_free(struct serve_flight *f)
{
  ocgc_flight_dir_close(f->d);
  f->d = NULL;
  pthread_cond_destroy(&f->done);
  pthread_mutex_destroy(&f->lock);
}

int serve_flight_option(struct serve_flight *f, int opt, const char *arg)
{
  uint64_t v;
  switch (opt) {
  case SERVE_OPT_FLIGHT_DIR:
    if (arg[0] == '\0') return tool_usage_error("--flight-dir wants a folder");
    f->dir = arg;
    return 0;
  case SERVE_OPT_FLIGHT_WINDOW:
    if (tool_parse_duration(arg, &v) != 0 || v < 1000000000u ||
        v > (uint64_t)OCGC_FLIGHT_MAX_WINDOW_S * 1000000000u)
      return tool_usage_error("--flight-window wants a duration from 1s to %us, not '%s'",
                              OCGC_FLIGHT_MAX_WINDOW_S, arg);
    f->window_s = (unsigned)(v / 1000000000u);
    return 0;
  case SERVE_OPT_FLIGHT_FILES:
  case SERVE_OPT_FLIGHT_PER_PROGRAM:
    if (tool_parse_count(arg, &v) != 0 || v == 0 || v > 100000)
      return tool_usage_error("--%s wants a number from 1 to 100000, not '%s'",
                              opt == SERVE_OPT_FLIGHT_FILES ? "flight-max-files"
                                                            : "flight-max-per-program", arg);
    if (opt == SERVE_OPT_FLIGHT_FILES) f->dopts.files = (unsigned)v;
    else f->dopts.per_program = (unsigned)v;
    return 0;
  case SERVE_OPT_FLIGHT_BYTES:
    if (tool_parse_size(arg, &v) != 0 || v < OCGC_FLIGHT_MAX_BYTES / 16)
      return tool_usage_error("--flight-max-bytes wants a size of 4M or more, such as 1G, "
                              "not '%s'", arg);
    f->dopts.bytes = v;
    return 0;
  case SERVE_OPT_FLIGHT_COOLDOWN:
    if (tool_parse_duration(arg, &v) != 0)
      return tool_usage_error("--flight-cooldown wants a duration, such as 60s or 0, not '%s'",
                              arg);
    f->dopts.cooldown_ns = v != 0 ? v : 1; /* 0 in the folder's options is its default */
    return 0;
  case SERVE_OPT_FLIGHT_ON_PAUSE:
    if (tool_parse_duration(arg, &v) != 0 || v == 0)
      return tool_usage_error("--flight-on-pause wants a duration, such as 100ms, not '%s'", arg);
    f->pause_ns = v;
    return 0;
  case SERVE_OPT_FLIGHT_ON_GROWTH:
    if (tool_parse_size(arg, &v) != 0)
      return tool_usage_error("--flight-on-heap-growth wants bytes a second, such as 64M, "
                              "not '%s'", arg);
    f->heap_growth = v;
    return 0;
  case SERVE_OPT_FLIGHT_ON_MEMORY:
    if (tool_parse_count(arg, &v) != 0 || v == 0 || v > 100)
      return tool_usage_error("--flight-on-memory wants a percentage from 1 to 100, not '%s'",
                              arg);
    f->memcg_pct = (unsigned)v;
    return 0;
  default:
    return -1;
  }
}

int serve_flight_check(const struct serve_flight *f)
{
  if (f->dir != NULL) return 0;
  if (f->window_s != 0 || f->dopts.files != 0 || f->dopts.per_program != 0 ||
      f->dopts.bytes != 0 || f->dopts.cooldown_ns != 0 || f->pause_ns != 0 ||
      f->heap_growth != 0 || f->memcg_pct != 0)
    return tool_usage_error("the --flight-* options shape the recordings of --flight-dir, "
                            "which is not given");
  return 0;
}

/* The watch made a recording, or could not: said on stderr (the cooldown
 * silently: it is the rule working). */
static void recorded(const struct ocgc_watched *w, int reason, const char *name, int err,
                     void *ctx)
{
  const struct serve_flight *f = ((const struct serve_set *)ctx)->flight; /* the watch's ctx */
  char prog[TOOL_ESC_SIZE(sizeof w->program)], file[TOOL_ESC_SIZE(128)];
  if (err == -EAGAIN) return;
  if (err != 0) {
    tool_say("process %d (%s): no %s recording in %s: %s", w->pid,
             tool_esc(w->program, prog, sizeof prog), ocgc_flight_reason_name(reason), f->dir,
             ocgc_strerror(err));
    return;
  }
  tool_say("process %d (%s): %s recording %s/%s", w->pid, tool_esc(w->program, prog, sizeof prog),
           ocgc_flight_reason_name(reason), f->dir, tool_esc(name, file, sizeof file));
}

int serve_flight_open(struct serve_flight *f, struct ocgc_watch_opts *o)
{
  int err;
  if (f->dir == NULL) return 0;
  if ((err = ocgc_flight_dir_open(f->dir, &f->dopts, &f->d)) != 0) {
    tool_say("--flight-dir %s: %s%s", f->dir, ocgc_strerror(err),
             err == -EPERM ? " (others may write to it: make it 0700 or 0750)" : "");
    return TOOL_EXIT_ERROR;
  }
  o->flight_dir = f->d;
  o->flight_window_s = f->window_s != 0 ? f->window_s : OCGC_FLIGHT_WINDOW_S;
  o->flight_pause_ns = f->pause_ns;
  o->flight_heap_growth = f->heap_growth;
  o->flight_memcg_pct = f->memcg_pct;
  o->on_recorded = recorded;
  return 0;
}

void serve_flight_turn(struct serve_flight *f, struct ocgc_watch *w)
{
  int pid, err;
  char name[128] = "";
  if (f->d == NULL) return;
  pthread_mutex_lock(&f->lock);
  pid = f->ask_state == SERVE_FLIGHT_ASKED ? f->ask_pid : 0;
  if (pid != 0) f->ask_state = SERVE_FLIGHT_TAKEN;
  pthread_mutex_unlock(&f->lock);
  if (pid == 0) return;
  err = ocgc_watch_record(w, pid, name, sizeof name);
  pthread_mutex_lock(&f->lock);
  f->ask_err = err;
  snprintf(f->ask_name, sizeof f->ask_name, "%s", name);
  f->ask_state = SERVE_FLIGHT_DONE;
  pthread_cond_broadcast(&f->done);
  pthread_mutex_unlock(&f->lock);
}

unsigned serve_flight_ask(struct serve_flight *f, int pid, void (*wake)(void *), void *wake_ctx,
                          char *msg, size_t n)
{
  uint64_t now = cm_mono_ns(), until = now + SERVE_FLIGHT_WAIT_NS;
  unsigned status;
  uint64_t seq;
  if (f->d == NULL) {
    snprintf(msg, n, "not found: no --flight-dir, so no recordings\n");
    return 404;
  }
  pthread_mutex_lock(&f->lock);
  if (f->ask_state == SERVE_FLIGHT_ASKED || f->ask_state == SERVE_FLIGHT_TAKEN ||
      (f->asked_ns != 0 && now - f->asked_ns < ASK_EVERY_NS)) {
    pthread_mutex_unlock(&f->lock);
    snprintf(msg, n, "too many requests: one recording asked a second at most\n");
    return 429;
  }
  f->ask_pid = pid;
  f->ask_state = SERVE_FLIGHT_ASKED;
  f->asked_ns = now;
  seq = ++f->ask_seq;
  pthread_mutex_unlock(&f->lock);
  wake(wake_ctx);
  pthread_mutex_lock(&f->lock);
  while (f->ask_seq == seq && f->ask_state != SERVE_FLIGHT_DONE && cm_mono_ns() < until) {
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_cond_timedwait(&f->done, &f->lock, &ts);
  }
  if (f->ask_state != SERVE_FLIGHT_DONE) {
    status = 202;
    snprintf(msg, n, "accepted: the recording of process %d is being made\n", pid);
  } else if (f->ask_err == 0) {
    status = 200;
    snprintf(msg, n, "%s/%s\n", f->dir, f->ask_name);
  } else {
    status = f->ask_err == -ESRCH ? 404 : 500;
    snprintf(msg, n, "%s: process %d: %s\n", f->ask_err == -ESRCH ? "not found" : "failed", pid,
             f->ask_err == -ESRCH ? "not watched" : ocgc_strerror(f->ask_err));
  }
  if (f->ask_state == SERVE_FLIGHT_DONE) f->ask_state = SERVE_FLIGHT_IDLE;
  pthread_mutex_unlock(&f->lock);
  return status;
}

void serve_flight_metrics(const struct serve_flight *f, struct ocgc_expo *e)
{
  struct ocgc_flight_dir_stats st = OCGC_OPTS_INIT(struct ocgc_flight_dir_stats);
  static const char *const fam = "ocgc_serve_flight_recordings_total";
  int r;
  if (f->d == NULL || ocgc_flight_dir_stats(f->d, &st) != 0) return;
  ocgc_expo_family(e, fam, "counter",
                   "Recordings written into --flight-dir, by why (death: ended without its "
                   "runtime's exit; pause, heap_growth, memory: a trigger; demand: asked).");
  for (r = OCGC_FLIGHT_DEATH; r <= OCGC_FLIGHT_DEMAND; r++) {
    struct ocgc_expo_label l = {"reason", ocgc_flight_reason_name(r)};
    ocgc_expo_u64(e, fam, &l, 1, st.recorded[r]);
  }
  ocgc_expo_family(e, "ocgc_serve_flight_cooled_total", "counter",
                   "Recordings not made: their program was recorded less than --flight-cooldown "
                   "ago.");
  ocgc_expo_u64(e, "ocgc_serve_flight_cooled_total", NULL, 0, st.cooled);
  ocgc_expo_family(e, "ocgc_serve_flight_failed_total", "counter",
                   "Recordings not made: a write that failed, or a ring past the largest copied.");
  ocgc_expo_u64(e, "ocgc_serve_flight_failed_total", NULL, 0, st.failed);
  ocgc_expo_family(e, "ocgc_serve_flight_removed_total", "counter",
                   "Older recordings removed to keep --flight-max-files, --flight-max-per-program "
                   "and --flight-max-bytes.");
  ocgc_expo_u64(e, "ocgc_serve_flight_removed_total", NULL, 0, st.removed);
  ocgc_expo_family(e, "ocgc_serve_flight_files", "gauge", "Recordings in --flight-dir.");
  ocgc_expo_u64(e, "ocgc_serve_flight_files", NULL, 0, st.files);
  ocgc_expo_family(e, "ocgc_serve_flight_bytes", "gauge", "Bytes of the recordings in --flight-dir.");
  ocgc_expo_u64(e, "ocgc_serve_flight_bytes", NULL, 0, st.bytes);
}
