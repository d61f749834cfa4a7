/* flight_read.c - a recording's flight block read back (ocgc/flight.h),
 * and the names of why a recording was made.
 *
 * A recording is another's file: the block is checked whole before any of
 * it is used.  Invariants:
 * - the block is looked for at one place only, the end of the name table
 *   the validated layout gives (wire.h); a file without the magic there is
 *   a ring file, not a recording (-ENOENT);
 * - a block with the magic is taken only if its header lies in the file,
 *   its sizes are within bounds (header_size, second_size, nseconds at most
 *   OCGC_FLIGHT_MAX_SECONDS) and add up to its size, which lies in the
 *   file, and each of its strings ends with a NUL inside its field;
 *   anything else is OCGC_E_CORRUPT, and nothing of it is given;
 * - every byte is read with pread() (ocgc_source_pread): a file that
 *   shrinks under us is an error, never a fault. */

#include <errno.h>
#include <string.h>

#include "ocgc/flight.h"
#include "opts.h"
#include "source.h"

#define NAMES_BYTES ((uint64_t)OCGC_WIRE_USER_EVENTS * OCGC_WIRE_USER_NAME_LEN)
#define MAX_HEADER_BYTES 65536u
#define MAX_SECOND_BYTES 4096u

const char *ocgc_flight_reason_name(int reason)
{
  switch (reason) {
  case OCGC_FLIGHT_DEATH: return "death";
  case OCGC_FLIGHT_PAUSE: return "pause";
  case OCGC_FLIGHT_HEAP_GROWTH: return "heap_growth";
  case OCGC_FLIGHT_MEMORY: return "memory";
  case OCGC_FLIGHT_DEMAND: return "demand";
  default: return "unknown";
  }
}

static int str_ok(const char *f, size_t n)
{
  return memchr(f, '\0', n) != NULL;
}

#define STR_OK(f) str_ok((f), sizeof(f))

/* The block's header into *w and its offset into *off: 0, -ENOENT,
 * OCGC_E_CORRUPT, -EINVAL, or the file's error. */
static int block(const struct ocgc_source *s, struct ocgc_wire_flight *w, uint64_t *off)
{
  uint64_t at, magic, room;
  int err;
  if (s == NULL) return -EINVAL;
  if ((err = ocgc_source_check_size(s)) != 0) return err;
  at = s->l.names_offset + NAMES_BYTES; /* inside the file: layout.c */
  room = s->size - at;
  if (room < 8) return -ENOENT;
  if ((err = ocgc_source_pread(s, at, &magic, 8)) != 0) return err;
  if (magic != OCGC_FLIGHT_MAGIC) return -ENOENT;
  if (room < sizeof *w) return OCGC_E_CORRUPT;
  if ((err = ocgc_source_pread(s, at, w, sizeof *w)) != 0) return err;
  if (w->version < 1 || w->header_size < sizeof *w || w->header_size > MAX_HEADER_BYTES ||
      w->header_size % 8 || w->second_size < sizeof(struct ocgc_wire_flight_second) ||
      w->second_size > MAX_SECOND_BYTES || w->second_size % 8 ||
      w->nseconds > OCGC_FLIGHT_MAX_SECONDS)
    return OCGC_E_CORRUPT;
  /* bounded above: no overflow */
  if (w->size != w->header_size + w->nseconds * w->second_size || w->size > room)
    return OCGC_E_CORRUPT;
  if (!STR_OK(w->detail) || !STR_OK(w->program) || !STR_OK(w->exe) || !STR_OK(w->build_id) ||
      !STR_OK(w->memcg_path))
    return OCGC_E_CORRUPT;
  *off = at;
  return 0;
}

static int clamp_int(uint64_t v)
{
  return v > 0x7fffffff ? 0x7fffffff : (int)v;
}

int ocgc_flight_read(const struct ocgc_source *src, struct ocgc_flight_meta *out)
{
  struct ocgc_wire_flight w;
  struct ocgc_flight_meta m;
  uint64_t off;
  int err;
  if (out == NULL || out->sz < sizeof out->sz) return -EINVAL;
  if ((err = block(src, &w, &off)) != 0) return err;
  memset(&m, 0, sizeof m);
  m.sz = sizeof m;
  m.reason = clamp_int(w.reason);
  memcpy(m.detail, w.detail, sizeof m.detail); /* NUL-ended: checked */
  m.exit.known = w.exit_known != 0;
  m.exit.how = clamp_int(w.exit_how);
  m.exit.code = w.exit_code < -1 ? -1 : w.exit_code > 255 ? 255 : (int)w.exit_code;
  m.exit.signal = clamp_int(w.exit_signal);
  m.exit.core_dumped = w.exit_core_dumped != 0;
  m.exit.oom_killed = w.exit_oom_killed != 0;
  m.exit.exit_mark = w.exit_mark != 0;
  m.exit.gone_ns = w.exit_gone_ns;
  m.pid = clamp_int(w.pid);
  m.start_ticks = w.start_ticks;
  memcpy(m.program, w.program, sizeof m.program);
  memcpy(m.exe, w.exe, sizeof m.exe);
  memcpy(m.build_id, w.build_id, sizeof m.build_id);
  m.rss_bytes = w.rss_bytes;
  m.memcg.known = w.memcg_known != 0;
  m.memcg.v2 = w.memcg_v2 != 0;
  m.memcg.usage = w.memcg_usage;
  m.memcg.limit = w.memcg_limit;
  m.memcg.peak = w.memcg_peak;
  m.memcg.oom_kills = w.memcg_oom_kills;
  memcpy(m.memcg.path, w.memcg_path, sizeof m.memcg.path);
  m.recorded_ns = w.recorded_ns;
  m.window_s = w.window_s;
  return opts_write(out, &m, sizeof m);
}

unsigned ocgc_flight_read_seconds(const struct ocgc_source *src, struct ocgc_flight_second *out,
                                  unsigned max)
{
  struct ocgc_wire_flight w;
  uint64_t off, i;
  unsigned n = 0, c;
  if (out == NULL || block(src, &w, &off) != 0) return 0;
  for (i = 0; i < w.nseconds && n < max; i++) {
    struct ocgc_wire_flight_second ws;
    struct ocgc_flight_second *s = &out[n];
    if (ocgc_source_pread(src, off + w.header_size + i * w.second_size, &ws, sizeof ws) != 0)
      return 0;
    memset(s, 0, sizeof *s);
    s->t = ws.t;
    s->pauses = ws.pauses;
    s->pause_ns = ws.pause_ns;
    s->max_ns = ws.max_ns;
    memcpy(s->coll, ws.coll, sizeof s->coll);
    s->alloc = ws.alloc;
    s->promo = ws.promo;
    s->heap = ws.heap;
    s->top_heap = ws.top_heap;
    s->lost = ws.lost;
    s->rss = ws.rss;
    s->cg_usage = ws.cg_usage;
    for (c = 0; c < OCGC_CAUSE_COUNT; c++) s->cause[c] = ws.cause[c];
    n++;
  }
  return n;
}
