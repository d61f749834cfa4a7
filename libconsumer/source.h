/* source.h - the opened ring file (private): the struct the reading stack
 * shares, bottom up: words.c reads its bytes (and nothing else does),
 * source.c opens and describes it, classify.c fills its tables on first
 * use, attach.c knows its owner and whether that still lives. */
#ifndef OCGC_SOURCE_H
#define OCGC_SOURCE_H

#include <stdint.h>

#include "layout.h"
#include "slotmap.h"
#include "ocgc/consumer.h"

#define NAME_PAGE 128u
#define NAME_PAGES (OCGC_WIRE_USER_EVENTS / NAME_PAGE)

struct ocgc_source {
  const char *map;       /* a sealed file's read-only shared mapping, whole;
                            NULL for any other file (words.c) */
  uint64_t size;         /* the file's size at open */
  int fd;                /* ring data is read with pread(); fstat notices truncation */
  int sealed;            /* a memfd sealed against shrinking: it is mapped,
                            and its size need not be checked */
  struct ocgc_layout l;
  enum ocgc_ids ids;
  enum ocgc_ids_origin ids_origin; /* who chose ids (ocgc_source_ids) */
  char exe_version[16];  /* OCGC_IDS_FROM_EXE: the version read */
  int exe_err;           /* why the executable told nothing, or 0 */
  struct name_page {     /* user event slots [NAME_PAGE * i, NAME_PAGE * (i + 1)) */
    char *name[NAME_PAGE];   /* private copies of their names, or NULL */
    uint32_t gen[NAME_PAGE]; /* poll_gen when an empty slot was last read */
  } *names[NAME_PAGES];  /* made on first use */
  uint32_t poll_gen;     /* bumped by each cursor poll (the name cache) */
  int polling;           /* a cursor poll is running: empty slots cached */
  struct slotmap user_meaning; /* by slot: what it means (classify.c) */
  int8_t phase_kind[64]; /* by phase id: collection kind or -1 (classify.c) */
  int phase_kind_ids;    /* ids + 1 that phase_kind was made for; 0: not yet
                            (made on first use, by classify.c) */
  int gone;              /* the producer is dead: its seqlocks are final, odd
                            or not (set by attach.c's ocgc_source_seq_stuck,
                            read by the seqlock readers) */
  uint64_t dev, ino;     /* the file's, at open (fstat) */
  int pid;               /* opened by pid (attach.h): that process, else 0 */
  int pid_start_ok;      /* pid_start was read: the process lived after the open */
  uint64_t pid_start;    /* its /proc start time */
  int map_known;         /* the process's mapping of the ring was seen at
                            [map_start, map_end): still there, or the
                            process exec'd (ocgc_source_check_alive) */
  unsigned long map_start, map_end;
};

/* File offsets of ring d's header words (head, tail), of its data, and of
 * its extension record (struct ocgc_wire_ext_ring). */
static inline uint64_t src_ring_header(const struct ocgc_source *s, uint64_t d)
{
  return s->l.headers_offset + d * s->l.rh_size;
}

static inline uint64_t src_ring_data(const struct ocgc_source *s, uint64_t d)
{
  return s->l.data_offset + d * s->l.ring_words * 8;
}

static inline uint64_t src_ext_ring(const struct ocgc_source *s, uint64_t d)
{
  return s->l.rings_offset + d * sizeof(struct ocgc_wire_ext_ring);
}

/* Reading the file's words (words.c, the only file that reads one): from
 * the mapping of a sealed file, by copy from any other, so that no read can
 * fault.  Offsets and lengths are multiples of 8.  Each returns 0,
 * OCGC_E_TRUNCATED (the range is not in the file any more) or -errno. */

/* Map [s]'s file (s->fd, s->size) if it is sealed against shrinking on
 * tmpfs, and say so in s->sealed; any other file is left to pread.
 * Returns 0 or -errno. */
int src_words_open(struct ocgc_source *s);

/* Unmap and close what src_words_open() and the open left. */
void src_words_close(struct ocgc_source *s);

/* n bytes at off into buf, each word read once, no ordering (words read
 * under a seqlock, or that do not change). */
int src_copy(const struct ocgc_source *s, uint64_t off, void *buf, uint64_t n);

/* The word at off, with acquire ordering: a word that publishes others.
 * Also -EAGAIN: two copies of it never agreed. */
int src_word_acquire(const struct ocgc_source *s, uint64_t off, uint64_t *v);

/* A counter that only grows (a ring's head or tail) at off, with acquire
 * ordering.  Read by copy while the writer moves it, two copies differ:
 * [upper] takes the later (a head: words below it may be overwritten),
 * else the earlier (a tail: words below it are published).  Also -EAGAIN:
 * the copies kept going back. */
int src_counter_acquire(const struct ocgc_source *s, uint64_t off, int upper, uint64_t *v);

/* A seqlock's seq at off, with acquire ordering, from one copy (words.c
 * says why one is enough). */
int src_seq_acquire(const struct ocgc_source *s, uint64_t off, uint64_t *v);

/* How long a reader waits on a seqlock held odd (after a few quick tries)
 * before it calls the producer busy: an honest producer's update takes
 * microseconds, and one preempted in the middle of it runs again within a
 * time slice, so a longer wait is spent on one that is stopped (SIGSTOP, a
 * debugger) or lies.  Both seqlocks (a ring's head, the totals) use it;
 * the caller comes back later (its next poll, its next read). */
#define SRC_SEQ_WAIT_NS 2000000u /* 2 ms */

/* A consistent copy under the seqlock whose seq is at [seq_off]: calls
 * copy(s, ctx) until seq was even and unchanged around it (or s->gone: what
 * a dead producer left is final), waiting SRC_SEQ_WAIT_NS at most on a seq
 * held odd.  Returns 0, copy's error, or -EAGAIN; on -EAGAIN the caller
 * may ask whether the producer is dead (ocgc_source_seq_stuck, attach.h)
 * and read again.  The one seqlock reader: the totals and the allocation
 * profile use it. */
int src_seqlock_read(const struct ocgc_source *s, uint64_t seq_off,
                     int (*copy)(const struct ocgc_source *s, void *ctx), void *ctx);

/* Between the reads of a seqlock's data and its seq re-read: an acquire
 * fence for loads from the mapping; a full one for copies, whose string
 * moves x86 orders more weakly than plain loads. */
static inline void src_fence_acquire(const struct ocgc_source *s)
{
  if (s->map != NULL) __atomic_thread_fence(__ATOMIC_ACQUIRE);
  else __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Read stock ring [s]'s numbering from the executable of its process (the
 * owner, attach.h) and use it, or say why not (exe_err): 0, or
 * OCGC_E_IDS_UNKNOWN for an OCaml newer than every numbering known, which
 * the caller refuses (its ids would be a guess). */
int ocgc_source_ids_from_exe(struct ocgc_source *s);

/* ocgc_source_open_path() on an open descriptor, which it takes over
 * (closed on error too).  The descriptor must be a regular file. */
int ocgc_source_open_fd(int fd, const struct ocgc_open_opts *opts, struct ocgc_source **out);

/* Returns 0, or OCGC_E_TRUNCATED if the file is now shorter than mapped
 * (words.c). */
int ocgc_source_check_size(const struct ocgc_source *s);

/* (words.c) Copy file bytes [off, off + n) into buf with pread(), which cannot fault
 * whatever the owner does to the file.  Returns 0, OCGC_E_TRUNCATED (the
 * file ends before off + n) or -errno. */
int ocgc_source_pread(const struct ocgc_source *s, uint64_t off, void *buf, uint64_t n);

/* The source a cursor reads (cursor.c). */
const struct ocgc_source *cursor_source(const struct ocgc_cursor *c);

#endif /* OCGC_SOURCE_H */
