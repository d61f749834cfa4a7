/* allocwindow.c - an allocation profile gathered over a window
 * (ocgc/allocwindow.h): the copies, the deltas, and the rate asked for the
 * window with its answer, let go at the end.
 *
 * What it owns: the rate protocol of a window (a lease, or of a producer
 * without leases the control word and the rate to put back), the copy the
 * current window begins at, the retries of a busy copy.  Every rule of a
 * copy, a delta, a lease or a request is memprof.c's and memprof_lease.c's.
 *
 * Invariants:
 * - what was asked is let go once, by ocgc_allocwindow_end, which
 *   ocgc_allocwindow_free calls when it was not: whichever way the caller
 *   leaves, the lease is released or the rate switched written back (the
 *   word written last is the one the producer keeps);
 * - w->copy is never NULL after a successful open, and always one table's
 *   copy of this source: a failed copy keeps the old one;
 * - the rate is asked only of a producer that can sample (not a bytecode
 *   one), and switched only if it is not the one in force already;
 * - every wait is bounded: a busy copy by busy_ns (and ends when the
 *   source is gone), the answer by answer_ns (polled by the caller), the
 *   put-back by PUT_BACK_NS or the caller's stop flag. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ocgc/allocwindow.h"
#include "ocgc/attach.h"
#include "ocgc/source.h"
#include "opts.h"

#define ANSWER_NS UINT64_C(10000000000)  /* the default wait for the answer */
#define RENEW_NS UINT64_C(1000000000)    /* a tenth of the producer's lease */
#define PUT_BACK_NS UINT64_C(2000000000) /* a switched rate's put-back, waited */
#define POLL_NS UINT64_C(20000000)       /* between two looks at the put-back */
#define BUSY_POLL_NS UINT64_C(10000000)  /* between two tries of a busy copy */

struct ocgc_allocwindow {
  const struct ocgc_source *src;
  struct ocgc_allocwindow_opts o;
  enum ocgc_allocwindow_rate how;
  struct ocgc_memprof_lease *lease; /* LEASE: ours, until the end */
  uint64_t word;                    /* SWITCHED: the control word written */
  uint64_t put_back;                /* SWITCHED: the rate before */
  uint64_t asked_ns, renewed_ns;
  int answered, ended;
  uint64_t lapses, copies, begin_ns;
  struct ocgc_memprof *copy;        /* the current window's beginning */
};

static void sleep_ns(uint64_t ns)
{
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  nanosleep(&ts, NULL); /* a signal cuts it short: every caller loops */
}

/* A copy, tried again while the producer keeps it busy, within busy_ns. */
static int read_copy(struct ocgc_allocwindow *w, struct ocgc_memprof **out)
{
  uint64_t t0 = cm_mono_ns();
  int err;
  while ((err = ocgc_memprof_read(w->src, out)) == -EAGAIN && cm_mono_ns() - t0 < w->o.busy_ns &&
         !ocgc_source_gone(w->src))
    sleep_ns(BUSY_POLL_NS);
  if (err == 0) w->copies++;
  return err;
}

static void set_copy(struct ocgc_allocwindow *w, struct ocgc_memprof *p)
{
  ocgc_memprof_free(w->copy);
  w->copy = p;
  w->begin_ns = cm_mono_ns();
}

/* Ask for the window's rate: a lease, else (a producer without leases) the
 * rate switched unless it is in force already. */
static int ask(struct ocgc_allocwindow *w, int holders[OCGC_MP_LEASE_SLOTS])
{
  uint64_t rate = w->o.rate_bytes;
  int err;
  if (w->copy->state == OCGC_MP_UNAVAILABLE) return -ENOTSUP;
  w->asked_ns = w->renewed_ns = cm_mono_ns();
  /* A lease even when the rate is in force already: another window's may
   * end first. */
  err = ocgc_memprof_lease_take(w->src, rate, &w->lease, holders);
  if (err == 0) {
    w->how = OCGC_ALLOCWINDOW_LEASE;
    return 0;
  }
  if (err != -ENOTSUP) return err;
  if (w->copy->state == OCGC_MP_ON && w->copy->rate_bytes == rate) return 0;
  w->put_back = w->copy->rate_bytes;
  w->asked_ns = cm_mono_ns();
  if ((err = ocgc_memprof_request(w->src, rate, &w->word)) != 0) return err;
  w->how = OCGC_ALLOCWINDOW_SWITCHED;
  return 0;
}

int ocgc_allocwindow_open(const struct ocgc_source *src, const struct ocgc_allocwindow_opts *opts,
                          struct ocgc_allocwindow **out, int holders[OCGC_MP_LEASE_SLOTS])
{
  struct ocgc_allocwindow *w;
  struct ocgc_memprof *first = NULL;
  int err;
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if (src == NULL) return -EINVAL;
  if ((w = calloc(1, sizeof *w)) == NULL) return -ENOMEM;
  w->src = src;
  if ((err = opts_read(&w->o, sizeof w->o, opts)) != 0 ||
      (w->o.rate_bytes != 0 &&
       (w->o.rate_bytes < OCGC_MP_RATE_MIN || w->o.rate_bytes > OCGC_MP_RATE_MAX))) {
    free(w);
    return err ? err : -ERANGE;
  }
  if (w->o.answer_ns == 0) w->o.answer_ns = ANSWER_NS;
  if ((err = read_copy(w, &first)) != 0) {
    free(w);
    return err;
  }
  set_copy(w, first);
  if (w->o.rate_bytes != 0 && (err = ask(w, holders)) != 0) {
    ocgc_allocwindow_free(w); /* nothing held: the ask failed */
    return err;
  }
  w->answered = w->how == OCGC_ALLOCWINDOW_NO_RATE;
  *out = w;
  return 0;
}

/* The rate applied: the window begins now.  A producer that did not sample
 * took no sample of another rate: its copy before the ask stays the
 * beginning, and every sample at the new rate is in the window; one that
 * sampled at another rate is copied again. */
static int applied(struct ocgc_allocwindow *w)
{
  struct ocgc_memprof *now = NULL;
  int err = read_copy(w, &now);
  if (err != 0) return err;
  w->answered = 1;
  if (w->copy->state == OCGC_MP_OFF && now->state == OCGC_MP_ON) ocgc_memprof_free(now);
  else set_copy(w, now);
  return 1;
}

int ocgc_allocwindow_answer(struct ocgc_allocwindow *w)
{
  struct ocgc_memprof *p = NULL;
  int err, ans;
  uint64_t now;
  if (w == NULL || w->ended) return -EINVAL;
  if (w->answered) return 1;
  if ((err = ocgc_memprof_read(w->src, &p)) != 0 && err != -EAGAIN) return err;
  if (p == NULL) ans = 0;
  else if (w->how == OCGC_ALLOCWINDOW_LEASE) ans = ocgc_memprof_lease_answer(p, w->lease);
  else ans = ocgc_memprof_answer(p, w->word);
  ocgc_memprof_free(p);
  if (ans == 1) return applied(w);
  if (ans == OCGC_E_STALE) return -ECANCELED; /* overtaken: not the process gone */
  if (ans < 0) return ans;
  if (ocgc_source_gone(w->src)) return OCGC_E_STALE;
  now = cm_mono_ns();
  if (now - w->asked_ns >= w->o.answer_ns) return -ETIMEDOUT;
  if (w->lease != NULL && now - w->renewed_ns >= RENEW_NS) {
    (void)ocgc_memprof_lease_renew(w->lease);
    w->renewed_ns = now;
  }
  return 0;
}

int ocgc_allocwindow_renew(struct ocgc_allocwindow *w)
{
  uint64_t now = cm_mono_ns();
  int r;
  if (w == NULL || w->lease == NULL || w->ended || now - w->renewed_ns < RENEW_NS) return 0;
  w->renewed_ns = now;
  r = ocgc_memprof_lease_renew(w->lease);
  if (r != 0) w->lapses++;
  return r;
}

int ocgc_allocwindow_begin(struct ocgc_allocwindow *w)
{
  struct ocgc_memprof *now = NULL;
  int err;
  if (w == NULL) return -EINVAL;
  if ((err = read_copy(w, &now)) != 0) return err;
  set_copy(w, now);
  return 0;
}

int ocgc_allocwindow_next(struct ocgc_allocwindow *w, struct ocgc_memprof **window)
{
  struct ocgc_memprof *now = NULL, *d = NULL;
  int err;
  if (window != NULL) *window = NULL;
  if (w == NULL) return -EINVAL;
  if ((err = read_copy(w, &now)) != 0) return err;
  if (window != NULL && (err = ocgc_memprof_delta(w->copy, now, &d)) != 0 && err != OCGC_E_STALE) {
    ocgc_memprof_free(now); /* out of memory: the window goes on */
    return err;
  }
  /* one table's copies, or another table's whose window begins now */
  set_copy(w, now);
  if (window != NULL) *window = d;
  return err;
}

const struct ocgc_memprof *ocgc_allocwindow_copy(const struct ocgc_allocwindow *w)
{
  return w != NULL ? w->copy : NULL;
}

int ocgc_allocwindow_since(const struct ocgc_allocwindow *w, const struct ocgc_memprof *newer,
                           struct ocgc_memprof **window)
{
  if (window != NULL) *window = NULL;
  if (w == NULL || newer == NULL || window == NULL) return -EINVAL;
  return ocgc_memprof_delta(w->copy, newer, window);
}

/* The rate before written back, and its answer waited for PUT_BACK_NS. */
static int put_back(struct ocgc_allocwindow *w)
{
  uint64_t word, deadline = cm_mono_ns() + PUT_BACK_NS;
  int err = ocgc_memprof_request(w->src, w->put_back, &word);
  if (err != 0) return err;
  for (;;) {
    struct ocgc_memprof *p = NULL;
    int ans;
    if ((err = ocgc_memprof_read(w->src, &p)) != 0 && err != -EAGAIN) return err;
    ans = p ? ocgc_memprof_answer(p, word) : 0;
    ocgc_memprof_free(p);
    if (ans == 1) return 0;
    if (ans == OCGC_E_STALE) return -ECANCELED;
    if (ans < 0) return ans;
    if (ocgc_source_gone(w->src)) return OCGC_E_STALE;
    /* the word is the last: applied at its next minor collection */
    if (cm_mono_ns() >= deadline || (w->o.stop != NULL && *w->o.stop)) return 0;
    sleep_ns(POLL_NS);
  }
}

int ocgc_allocwindow_end(struct ocgc_allocwindow *w)
{
  int err = 0;
  if (w == NULL || w->ended) return 0;
  w->ended = 1;
  ocgc_memprof_lease_end(w->lease);
  w->lease = NULL;
  if (w->how == OCGC_ALLOCWINDOW_SWITCHED) err = put_back(w);
  return err;
}

int ocgc_allocwindow_stats(const struct ocgc_allocwindow *w, struct ocgc_allocwindow_stats *out)
{
  struct ocgc_allocwindow_stats s;
  if (w == NULL) return -EINVAL;
  memset(&s, 0, sizeof s);
  s.sz = sizeof s;
  s.rate = w->how;
  s.rate_bytes = w->o.rate_bytes;
  s.put_back_bytes = w->how == OCGC_ALLOCWINDOW_SWITCHED ? w->put_back : 0;
  s.answered = w->answered && w->how != OCGC_ALLOCWINDOW_NO_RATE;
  s.ended = w->ended;
  s.lease_lapses = w->lapses;
  s.copies = w->copies;
  s.begin_ns = w->begin_ns;
  return opts_write(out, &s, sizeof s);
}

void ocgc_allocwindow_free(struct ocgc_allocwindow *w)
{
  if (w == NULL) return;
  (void)ocgc_allocwindow_end(w);
  ocgc_memprof_free(w->copy);
  free(w);
}
