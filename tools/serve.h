/* serve.h - what `ocgc serve`'s HTTP side (serve.c) and its figures
 * (serve_metrics.c) share (private to tools/): the set of watched
 * processes, which only serve.c's poll thread reads and writes once it
 * runs (every read of target memory happens there, under no lock), and
 * the rendered bodies (serve_body.c). */
#ifndef OCGC_TOOLS_SERVE_H
#define OCGC_TOOLS_SERVE_H

#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "ocgc/consumer.h"
#include "ocgc/expo.h"
#include "ocgc/pprof_merge.h"

/* A body's compressed size at most (then it fails). */
#define SERVE_BUF_MAX (64u << 20)

/* A rendered answer (serve_body.c): written once into a gzip stream, kept
 * compressed, shared by the responses that send it (reference counted),
 * immutable once finished. */
struct serve_body {
  unsigned refs;              /* atomic */
  int failed;                 /* over SERVE_BUF_MAX, or out of memory: no bytes */
  char *z;                    /* gzip */
  size_t zn, cap;
  uint64_t plain_n;           /* the size of the text it holds */
};
struct serve_body_writer {
  struct serve_body *body;    /* the body being written, or NULL */
  struct z_stream_s *zs;      /* kept from body to body */
};
/* A writer, for every body one thread writes: 0, or -1 out of memory. */
int serve_body_writer_init(struct serve_body_writer *w);
void serve_body_writer_free(struct serve_body_writer *w);
/* Begin a body (one reference, the writer's): 0, or -1 out of memory. */
int serve_body_begin(struct serve_body_writer *w);
/* An ocgc_put_fn: text appended to the body (ctx: the writer). */
void serve_body_put(void *ctx, const char *s, size_t n);
/* The body written, with the writer's reference (failed if it was too
 * big or memory ran out). */
struct serve_body *serve_body_finish(struct serve_body_writer *w);
struct serve_body *serve_body_ref(struct serve_body *b);
void serve_body_unref(void *b); /* NULL: nothing */


/* The body's text, inflated a piece at a time (for a client that does
 * not take gzip, and for --textfile); holds a reference. */
struct serve_body_reader;
struct serve_body_reader *serve_body_reader_new(struct serve_body *b);
/* Up to [max] bytes of text into [buf]: how many, 0 at the end, -1 on an
 * error. */
long serve_body_read(struct serve_body_reader *r, char *buf, size_t max);
void serve_body_reader_free(void *r); /* NULL: nothing */


/* /debug/pprof/allocs and /debug/pprof/heap (serve_pprof.c): a worker
 * thread of its own, fed by suspended requests. */
#define SERVE_PPROF_CACHE 4         /* symbolizers kept (of the last processes asked) */
struct pprof_job;
struct serve_pprof_member {
  int pid;
  uint64_t start_ticks;
  char program[OCGC_EXPO_LABEL_MAX + 4]; /* as /metrics labels it (cut): ?program= */
};
/* Who may read a process's profile on a unix socket, read from /proc
 * while it lives (serve_pprof_access.c), so that the rule still holds
 * for a process gone: valid, and the one uid and gid of the process's
 * real, effective and saved ids, it dumpable. */
struct serve_pprof_creds {
  int valid;
  unsigned uid, gid;
};
struct pprof_kept;
struct serve_pprof_cached {
  int pid;
  uint64_t start_ticks, ring_ns, used_ns;
  struct ocgc_symbols *syms;
};
struct serve_pprof {
  pthread_mutex_t lock;       /* guards jobs, njobs, members, stopping; never held
                                 across a read of target memory */
  pthread_cond_t wake;        /* the worker waits on it (CLOCK_MONOTONIC) */
  pthread_t thread;
  int running, stopping;
  struct pprof_job *jobs;     /* not answered yet */
  unsigned njobs;
  unsigned live;              /* jobs not freed: answered ones not yet sent too */
  struct serve_pprof_member *members; /* the processes watched: who may be asked for */
  size_t nmembers;
  const char *dir;            /* --dir */
  struct serve_pprof_cached cache[SERVE_PPROF_CACHE]; /* the worker's alone */
  uint64_t served, busy;      /* profiles served, requests refused for want of room
                                 (atomic: read by /metrics) */
  uint64_t windows;           /* seconds= windows under way, their first copy taken
                                 (atomic: read by /metrics) */
  uint64_t abandoned;         /* windows dropped because their client left
                                 (atomic: read by /metrics) */
  unsigned cpu_windows;       /* CPU windows queued or open (under the lock):
                                 PPROF_CPU_WINDOWS at most */
  /* ?program=: the processes followed (serve_pprof_kept.c), under the
   * lock for what submit reads (identity, program, creds, gone_ns); the
   * worker's alone for the rest. */
  struct pprof_kept *kept;
  size_t nkept;
  uint64_t kept_ns;           /* the worker's last look at them */
  uint64_t firsts_bytes;      /* the waiting windows' first copies (?program=), under
                                 the lock: PPROF_FIRSTS_BYTES at most */
};
/* The client of a /debug/pprof request (serve_pprof_access.c). */
struct serve_pprof_client {
  int open;                   /* --web.enable-pprof, or a client the web config
                                 authenticated: any watched process */
  int is_unix;                /* over --listen unix:PATH */
  int have_peer;              /* unix: SO_PEERCRED gave uid and gid */
  unsigned uid, gid;
  int fd;                     /* the connection's socket (-1: unknown), polled while
                                 its request waits, to see the client leave */
  char key[64];               /* who it is for the per-client bound: its address,
                                 or "uid N" on a unix socket */
};
/* Connection [c]'s client (is_unix: over the unix socket; open: see above). */
void serve_pprof_client(struct MHD_Connection *c, int is_unix, int open,
                        struct serve_pprof_client *who);
/* Whether [who] may have the profile of process [pid] (the rule of
 * serve_pprof_access.c): 1 or 0.  Reads /proc/PID/status on a unix socket. */
int serve_pprof_may_read(const struct serve_pprof_client *who, int pid);
/* The creds of process [pid] now into *c (c->valid 0: none may read it
 * but root; /proc/PID unreadable, or not dumpable). */
void serve_pprof_creds_of(int pid, struct serve_pprof_creds *c);
/* The rule of serve_pprof_may_read for a process of creds [c]. */
int serve_pprof_may_read_creds(const struct serve_pprof_client *who,
                               const struct serve_pprof_creds *c);
/* 0, or -1 (a mutex or condition variable could not be made). */
int serve_pprof_init(struct serve_pprof *p, const char *dir);
int serve_pprof_start(struct serve_pprof *p); /* 0 or an errno */
/* Answer every request left 503, and end the worker: before the HTTP
 * server stops, so that it still sends those answers. */
void serve_pprof_stop(struct serve_pprof *p);
void serve_pprof_free(struct serve_pprof *p);
/* Who may be asked for: the [n] processes of [m] (an array taken over),
 * instead of the last list. */
void serve_pprof_members(struct serve_pprof *p, struct serve_pprof_member *m, size_t n);
/* A request for [url] on [c] (admitted, its head whole) from [who]: 0
 * with *job the connection's new con_cls (the connection suspended until
 * the answer is ready), or -1 with the answer to give now (*status, why). */
int serve_pprof_submit(struct serve_pprof *p, struct MHD_Connection *c, const char *url,
                       const struct serve_pprof_client *who, void **job, unsigned *status,
                       char *why, size_t n);
/* The answer of a resumed job (its status in *status): the response to
 * queue, or NULL (out of memory: answer 500). */
struct MHD_Response *serve_pprof_take(struct serve_pprof *p, void *con_cls, unsigned *status);
/* The connection of a job is done with it (libmicrohttpd's completion). */
void serve_pprof_completed(struct serve_pprof *p, void *con_cls);
/* /debug/pprof/targets (serve_pprof_sd.c): the programs whose profiles
 * [who] may have, as Prometheus http_sd_configs JSON, for [c]: the
 * response (*status set), or NULL (out of memory). */
struct MHD_Response *serve_pprof_targets(struct serve_pprof *p, struct MHD_Connection *c,
                                         const struct serve_pprof_client *who, unsigned *status);

/* ---- /debug/pprof/profile: CPU windows (serve_pprof_cpu.c) ------------ */
#define SERVE_CPU_THREADS 32        /* threads of one process sampled at once (rings of 256 KiB) */
/* A CPU window of process [pid] (its start time, its ring [src]: may be
 * NULL, borrowed) at [frequency] Hz, its files read within [read_bytes]:
 * *out, or NULL and the answer to give (*status, why). */
void serve_cpu_open(int pid, uint64_t start_ticks, struct ocgc_source *src, unsigned frequency,
                    uint64_t read_bytes, struct ocgc_cpuwindow **out, unsigned *status,
                    char *why, size_t n);
/* End [w] and write it as pprof into *buf (free()d by the caller): 0, or
 * -1 with the answer to give (*status, why). */
int serve_cpu_answer(struct ocgc_cpuwindow *w, int absolute, unsigned char **buf, size_t *len,
                     unsigned *status, char *why, size_t n);

/* ---- ?program=: the processes followed (serve_pprof_kept.c) ------------ */
#define PPROF_KEEP_NS (UINT64_C(300) * 1000000000u)   /* a process gone is kept 5 min */
#define PPROF_FOLLOW_NS (UINT64_C(600) * 1000000000u) /* a program not asked for 10 min
                                                          is no longer followed */
#define PPROF_KEPT_MAX 256          /* processes followed and kept, at most */
#define PPROF_KEPT_BYTES (UINT64_C(32) << 20) /* their copies and names, at most */
#define PPROF_FIRSTS_BYTES (UINT64_C(48) << 20) /* the windows' first copies by program,
                                                   all jobs together, at most */
#define PPROF_PROG_PROCS 64         /* processes merged into one profile, at most */
#define PPROF_LOOK_NS UINT64_C(1000000000) /* how often the worker looks for exits */
struct pprof_kept {
  struct pprof_kept *next;
  int pid;
  uint64_t start_ticks, ring_ns;
  char program[OCGC_EXPO_LABEL_MAX + 4];
  struct serve_pprof_creds creds;
  uint64_t since_ns;          /* followed from (cm_mono_ns) */
  uint64_t asked_ns;          /* its program last asked for */
  uint64_t gone_ns;           /* 0 while it lives */
  /* the worker's: */
  struct ocgc_source *src;    /* held while it lives: its ring stays mapped, and
                                 its last copy can be read once it is gone */
  struct ocgc_memprof *last;  /* once gone: its last copy (NULL: none could be read) */
  struct ocgc_frame_names *names;
  uint64_t named_stacks;      /* its stacks when its names were last read */
};
/* Follow the living processes of [program] (the lock not held): each
 * opened and its creds read, within PPROF_KEPT_MAX (the oldest gone give
 * way); [asked_ns]: when it was last asked for (now, for a request).  Also at each look, for the
 * programs asked within PPROF_FOLLOW_NS (PPROF_LOOK_PROGRAMS at most). */
#define PPROF_LOOK_PROGRAMS 16
void serve_pprof_follow(struct serve_pprof *p, const char *program, uint64_t now,
                        uint64_t asked_ns);
/* Look at the processes followed (the lock not held): those no longer
 * watched (or exec'd) read a last time and marked gone; those gone past
 * PPROF_KEEP_NS, or of a program not asked for PPROF_FOLLOW_NS, freed. */
void serve_pprof_look(struct serve_pprof *p, uint64_t now);
/* Whether followed process [k] is gone (the worker, no lock held): if its
 * ring is no longer its (it exited, or exec'd), it is marked gone now,
 * its last copy read: 1; else 0. */
int serve_pprof_kept_check(struct serve_pprof *p, struct pprof_kept *k, uint64_t now);
/* The bytes the gone processes' copies and every names table hold. */
uint64_t serve_pprof_kept_bytes(const struct serve_pprof *p);
void serve_pprof_kept_free(struct serve_pprof *p);


/* The processes watched: libocgc's watch, made from the options below
 * (serve_set.c), and what the HTTP side counts besides. */
/* --flight-dir (serve_flight.c): the options, the folder, and the one ask
 * of POST /debug/flight handed to the poll thread. */
enum {
  SERVE_OPT_FLIGHT_DIR = 1000, SERVE_OPT_FLIGHT_WINDOW, SERVE_OPT_FLIGHT_FILES,
  SERVE_OPT_FLIGHT_PER_PROGRAM, SERVE_OPT_FLIGHT_BYTES, SERVE_OPT_FLIGHT_COOLDOWN,
  SERVE_OPT_FLIGHT_ON_PAUSE, SERVE_OPT_FLIGHT_ON_GROWTH, SERVE_OPT_FLIGHT_ON_MEMORY
};
enum serve_flight_ask_state {
  SERVE_FLIGHT_IDLE = 0, SERVE_FLIGHT_ASKED, SERVE_FLIGHT_TAKEN, SERVE_FLIGHT_DONE
};
/* A request waits this long for its recording, then is answered 202. */
#define SERVE_FLIGHT_WAIT_NS 2000000000u
struct serve_flight {
  const char *dir;            /* --flight-dir, or NULL: no recordings */
  struct ocgc_flight_dir_opts dopts; /* --flight-max-*, --flight-cooldown */
  unsigned window_s;          /* --flight-window (0: OCGC_FLIGHT_WINDOW_S) */
  uint64_t pause_ns, heap_growth; /* --flight-on-pause, --flight-on-heap-growth */
  unsigned memcg_pct;         /* --flight-on-memory */
  struct ocgc_flight_dir *d;  /* the folder, once open: the poll thread's */
  pthread_mutex_t lock;       /* guards the ask; never held across a read of a ring */
  pthread_cond_t done;        /* an ask answered (CLOCK_MONOTONIC) */
  int ask_state, ask_pid, ask_err;
  char ask_name[128];
  uint64_t ask_seq, asked_ns;
};
void serve_flight_init(struct serve_flight *f);
void serve_flight_free(struct serve_flight *f);
/* A --flight-* option (SERVE_OPT_FLIGHT_*): 0, TOOL_EXIT_USAGE after a
 * line, or -1 for another option. */
int serve_flight_option(struct serve_flight *f, int opt, const char *arg);
/* After the options: 0, or TOOL_EXIT_USAGE (a --flight-* without --flight-dir). */
int serve_flight_check(const struct serve_flight *f);
/* Open the folder and put the recorder's options in [o]: 0, or after a
 * line the exit code. */
int serve_flight_open(struct serve_flight *f, struct ocgc_watch_opts *o);
/* The poll thread, between turns: the waiting ask made. */
void serve_flight_turn(struct serve_flight *f, struct ocgc_watch *w);
/* POST /debug/flight?pid=N: ask the poll thread (woken by wake(ctx)) for
 * a recording and wait for it: the HTTP status and its text in msg. */
unsigned serve_flight_ask(struct serve_flight *f, int pid, void (*wake)(void *), void *wake_ctx,
                          char *msg, size_t n);
/* ocgc_serve_flight_* (the poll thread, as it renders). */
void serve_flight_metrics(const struct serve_flight *f, struct ocgc_expo *e);

struct serve_set {
  int all;                    /* --all: every process ocgc_list() finds */
  int by_program;             /* --by program: series per program, not per process */
  const regex_t *program_re;  /* --program, or NULL */
  int have_uid;               /* --user */
  unsigned uid;
  unsigned max_procs;         /* --max-processes (0: OCGC_WATCH_MAX_PROCESSES) */
  unsigned max_per_user;      /* --max-per-user (0: OCGC_WATCH_MAX_PER_USER) */
  const char *dir;            /* --dir: rings are DIR/PID.events */
  struct ocgc_watch *watch;   /* made by serve_set_start() */
  int sees_every_user;        /* ocgc_sees_every_user(), at start */
  uint64_t late;              /* scrapes answered before their refresh ended
                                 (counted by serve.c, atomically) */
  uint64_t tf_errors;         /* --textfile writes that failed (serve.c's main
                                 thread, atomically) */
  uint64_t heads_cut;         /* connections cut for a head past its deadline
                                 (serve.c's main thread, atomically) */
  struct serve_flight *flight; /* --flight-dir and its options (never NULL once serve runs) */
  struct serve_pprof *pprof;  /* told which processes are watched (serve_set_members);
                                 may be NULL */
  /* Asked at every ring: nonzero when the caller wants the turn to end
   * (a scrape is waiting); may be NULL. */
  int (*yield)(void *ctx);
  void *yield_ctx;
};

/* The watch's descriptor (ocgc_watch_fd()): readable when new rings are
 * to be opened; -1: none. */
int serve_set_fd(const struct serve_set *s);

/* The waker (serve_wake.c): a thread that polls the watch's descriptor and
 * wakes the poll thread (signals [wake] under [lock], with woken set) when
 * it is readable, then waits for the end of the poll thread's next turn
 * (serve_wake_turned) before it polls again, and at least
 * SERVE_WAKE_GAP_NS after its last wake: a descriptor that stays readable
 * (a flood of names, read 256 a turn) makes one turn after another, never
 * a spin without a turn. */
#define SERVE_WAKE_GAP_NS 2000000u  /* 2 ms */
struct serve_wake {
  int fd;                     /* the watch's; -1: no thread */
  int stop_fd;                /* an eventfd: written to stop it */
  pthread_t thread;
  pthread_mutex_t *lock;      /* the poll thread's (guards what follows) */
  pthread_cond_t *wake;       /* what the poll thread waits on */
  pthread_cond_t turned;      /* broadcast at the end of each poll turn */
  uint64_t turns;             /* poll turns ended */
  int woken;                  /* the poll thread is to turn at once (it clears it
                                 as it begins a turn) */
  int stopping;
};
/* Start the waker on [fd] (-1: none, 0): 0 or an errno. */
int serve_wake_start(struct serve_wake *k, int fd, pthread_mutex_t *lock, pthread_cond_t *wake);
/* The poll thread ended a turn (called with *lock held). */
void serve_wake_turned(struct serve_wake *k);
/* Stop and join the waker (not holding *lock). */
void serve_wake_stop(struct serve_wake *k);

/* Make the watch from the options parsed: 0, or after a line the exit code. */
int serve_set_start(struct serve_set *s);

/* Watch process [pid] (a PID of the command line): 0, or after a line
 * saying why it cannot be, the exit code. */
int serve_set_add_pid(struct serve_set *s, int pid);

/* ocgc_watch_refresh() until [deadline] (cm_mono_ns()). */
void serve_set_refresh(struct serve_set *s, uint64_t deadline);

/* Tell s->pprof which processes are watched now (the poll thread, every
 * SERVE_MEMBERS_NS, and once before it starts). */
#define SERVE_MEMBERS_NS 250000000u
void serve_set_members(struct serve_set *s);

/* ocgc_watch_poll(): the cm_mono_ns() of the next turn. */
uint64_t serve_set_poll(struct serve_set *s, uint64_t now);

/* The exposition of the set as refreshed last, in format [f], to [put]. */
void serve_set_metrics(const struct serve_set *s, ocgc_put_fn put, void *ctx, enum ocgc_expo_format f);

/* A text page listing the watched processes, every string escaped. */
void serve_set_index(const struct serve_set *s, ocgc_put_fn put, void *ctx);

void serve_set_free(struct serve_set *s);

/* --textfile PATH (serve_textfile.c): the exposition written for
 * node_exporter's textfile collector every [every_ns]. */
struct serve_textfile {
  const char *path;
  uint64_t every_ns;
  int failing;                /* -errno of the last write, 0 if it succeeded */
};

/* Replace t->path by the text of [b] atomically: 0, or -errno, said on
 * stderr the first time it happens (and "written again" once it works
 * again). */
int serve_textfile_write(struct serve_textfile *t, struct serve_body *b);

/* Remove t->path, so that node_exporter does not serve figures nobody
 * updates any more. */
void serve_textfile_remove(struct serve_textfile *t);

/* The connections (serve_conns.c): a request's head must be whole within
 * SERVE_HEAD_DEADLINE_S of the connection's accept or of the end of its
 * previous answer, or the connection is cut; and when the table is full
 * (or an address's share of it is), of the oldest connections whose head
 * is not whole, the one idle longest gives way to the newcomer
 * (serve_giveway.c). */
#define SERVE_HEAD_DEADLINE_S 10
/* libmicrohttpd's own connection limit is this far above the table's:
 * room for the connections cut and not yet closed by it, so that it never
 * refuses a newcomer the table would have taken. */
#define SERVE_CONNS_SLACK 64
/* Who gives way (serve_giveway.c): a candidate, its socket and when its
 * head began; of the GIVEWAY_LOOK oldest given (oldest first), the index
 * of the one idle longest (bytes unread: not idle), the older on a tie. */
#define GIVEWAY_LOOK 8
struct serve_giveway {
  int fd;
  uint64_t head_since_ns;
};
size_t serve_giveway_pick(const struct serve_giveway *c, size_t n, uint64_t now_ns);

struct serve_conn;
struct serve_conns {
  pthread_mutex_t lock;
  struct serve_conn *head;    /* newest first */
  unsigned max, per_address;  /* live connections at most, of one address at most */
  unsigned entries;           /* in the table: live and cut */
  unsigned live;              /* not cut */
  unsigned in_flight;         /* handed to libmicrohttpd by the front door, not yet started */
  unsigned gave_way;          /* cut to make room, since the last sweep */
};
struct MHD_Connection;
void serve_conns_init(struct serve_conns *t);
void serve_conns_destroy(struct serve_conns *t);
/* At most [max] live connections, [per_address] of one IP address. */
void serve_conns_limits(struct serve_conns *t, unsigned max, unsigned per_address);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION and _NOTIFY_COMPLETED
 * callbacks (cls: the table); their types are microhttpd.h's, which only
 * the files that include it declare. */
#ifdef MHD_VERSION
void serve_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
void serve_conns_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                           enum MHD_RequestTerminationCode toe);
#endif
/* Connection [c]'s request head is whole (from the access handler). */
void serve_conns_head_done(struct serve_conns *t, struct MHD_Connection *c);
/* Cut the connections whose head is past its deadline at [now]: how many,
 * with those cut to make room since the last sweep. */
unsigned serve_conns_sweep(struct serve_conns *t, uint64_t now);
/* The front door: may it hand a connection to libmicrohttpd now?  1 yes
 * (counted in flight until its STARTED notification, or
 * serve_conns_handover_failed), 0 not yet (libmicrohttpd could be at its
 * own limit, and would close it). */
int serve_conns_handover(struct serve_conns *t);
void serve_conns_handover_failed(struct serve_conns *t);

/* ---- where it listens (serve_listen.c) ------------------------------------- */

#define SERVE_SOCKET_MODE 0660 /* --socket-mode's default: the owner and its group */

struct serve_listener {
  int fd;                     /* bound and listening; -1: none */
  int v6;                     /* an IPv6 address */
  int is_unix;                /* unix:PATH */
  char path[108];             /* unix: the socket's path */
  uint64_t dev, ino;          /* unix: the socket made, to remove only it */
  char name[160];             /* what it says it listens on: http(s)://ADDR:PORT/ or unix:PATH */
};
/* Listen on [spec] (ADDR:PORT, [IPv6]:PORT, unix:PATH; a unix socket
 * made with [mode]), named as [tls] says: 0, or after a line -1 (a bad
 * spec) or -2 (it cannot listen there). */
int serve_listen(const char *spec, unsigned mode, int tls, struct serve_listener *l);
/* Remove the unix socket, if its path still names the one made. */
void serve_listen_remove(const struct serve_listener *l);

/* ---- --run-as USER (serve_privs.c) --------------------------------------------- */

struct serve_privs {
  int given;                  /* --run-as was given */
  int named;                  /* USER has an entry (its groups are set from it) */
  unsigned uid, gid;
  char name[64];              /* as given, or its entry's name */
};
/* USER (a name, or a number other than 0) into *p: 0, or -1. */
int serve_privs_parse(const char *user, struct serve_privs *p);
/* Become p's user keeping CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH only
 * (those of them held), with no_new_privs; on the only thread: 0, or
 * after a line -1. */
int serve_privs_drop(const struct serve_privs *p);

/* ---- SIGHUP: --web.config.file read again (serve_reload.c) ---------------------- */

struct web_config;
/* Set by SIGHUP's handler; the main loop takes it (and clears it). */
extern volatile sig_atomic_t serve_hup;
/* SIGHUP sets serve_hup (SA_RESTART), instead of killing; the old action
 * into *old. */
void serve_reload_catch(struct sigaction *old);
void serve_reload_restore(const struct sigaction *old);
/* --web.config.file [path] read again into *fresh, to be swapped for
 * *cur: 0, or after a line -1 (no file, it does not load, or its TLS
 * differs from cur's: keep cur). */
int serve_reload_web(const char *path, const struct web_config *cur, struct web_config *fresh);

/* ---- the acceptor over TLS (serve_frontdoor.c) -------------------------------- */

#define SERVE_FRONT_MAX 512 /* connections waiting for their first byte, at most */

struct serve_pending {
  int fd;
  struct sockaddr_storage addr;
  socklen_t alen;
  uint64_t since_ns;          /* cm_mono_ns() of its accept */
};
struct serve_frontdoor {
  int lfd, wake;              /* the listening socket (not ours), an eventfd (ours) */
  unsigned per_address;       /* pending from one address, at most */
  struct MHD_Daemon *d;
  struct serve_conns *conns;  /* libmicrohttpd's table, asked before each hand-over */
  pthread_t thread;
  int running;
  int stop;                   /* atomic: set by serve_frontdoor_stop */
  struct serve_pending p[SERVE_FRONT_MAX]; /* the thread's own */
  unsigned n;
};
/* Accept on [lfd] for daemon [d] (started with MHD_USE_NO_LISTEN_SOCKET
 * and MHD_USE_ITC, whose connections [conns] tracks) in a thread of its
 * own: 0, or an errno. */
int serve_frontdoor_start(struct serve_frontdoor *f, int lfd, unsigned per_address,
                          struct MHD_Daemon *d, struct serve_conns *conns);
/* Stop it (the pending connections closed; lfd left open). */
void serve_frontdoor_stop(struct serve_frontdoor *f);

/* ---- /-/healthy (serve_health.c) ------------------------------------------ */

/* A poll turn is at most OCGC_WATCH_POLL_MAX_NS apart, or a refresh and one
 * ring's read: one that has not ended for this long is a stuck exporter. */
#define SERVE_HEALTH_TURN_NS 5000000000u /* 5 s */

/* What /-/healthy says, into why (n bytes, a line): 1 (ok) or 0, from the
 * age of the poll thread's last turn and whether the last /metrics answer
 * it rendered failed. */
int serve_health(uint64_t turn_age_ns, int metrics_failed, char *why, size_t n);

#endif /* OCGC_TOOLS_SERVE_H */
