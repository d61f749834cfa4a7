/* ocgc_place.c - where the producer's own mappings go: out of the way of
 * the program's.
 *
 * Linux puts a mapping made without an address at the top of the highest
 * free gap below mmap_base, so every mapping made later (the OCaml heap's
 * chunks and minor heap, malloc's large blocks, thread stacks, libraries
 * loaded by dlopen) lands below the ones made before.  The ring (about
 * 10.8 MiB with its profile table) is made before the heap, and mapped that
 * way it moved every later mapping of the program down by its size; on
 * OCaml 4.13/4.14, whose page table is a hash of page numbers probed
 * linearly, the heap on other pages collides differently, and binary-trees
 * at s=4k spent 42 M more instructions in caml_page_table_lookup with the
 * ring on than off (issue 30): a cost every monitored program paid, more or
 * less by luck of layout.
 *
 * So the producer's mappings go where no mapping of the program's can
 * ever be: just above the top of the mmap area, below the stack's reach.
 * mmap_base lies at least 128 MiB (and, randomised, up to about 1 TiB
 * more) below the stack; the kernel's top-down search for a mapping made
 * without an address never looks above it, and the stack grows down only
 * as far as its limit (RLIMIT_STACK).  The first mappings made at exec,
 * the dynamic loader and (Linux 6.x) the vDSO, lie right below
 * mmap_base: the highest loaded object below the stack marks it.  There,
 * the ring moves none of the program's mappings, the break can grow as far
 * as without it, and every reservation the program could make without it,
 * it still can.  (Halfway between the break and the stack, where it went
 * before, it split the free space: a non-PIE program, whose break is low,
 * could reserve 64 TiB at once instead of 128; tests/producer/reserve.sh.)
 *
 * When that stretch is not there or too small (the legacy bottom-up layout
 * of an unlimited stack, where mappings grow up from the loader; a stack
 * limit that leaves no room; a static program without a loader; an
 * architecture that lays memory out otherwise), the mappings go halfway
 * between the break and the stack, as before: they still move nothing.
 * The addresses are asked with MAP_FIXED_NOREPLACE (Linux 4.17), which
 * fails rather than replace a mapping; a kernel before 4.17 takes the
 * address as a hint and may put the mapping elsewhere, which is then
 * undone.  A spot that is taken is followed by another, a few times, and
 * then the kernel chooses as it would without us: the ring works wherever
 * it is, only the layout moves.  Address randomisation is kept: every end
 * used is randomised.
 *
 * Invariants: never MAP_FIXED (no mapping of the program's is ever
 * replaced); at most 2 * PLACE_TRIES + 1 mmap calls per mapping; the spots
 * are chosen from addresses alone (the auxiliary vector, the loaded
 * objects, the break, the stack limit: no file is read, nothing is mapped
 * to look).  The cursors belong to the runtime lock's holder (mappings are
 * made at startup, in a forked child's first event, and when profiling
 * starts); a forked child inherits them with the address space and starts
 * again from the first spot, which its parent's ring, unmapped at the
 * fork, leaves free. */

#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE, sbrk, dl_iterate_phdr */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ocgc_place.h"

/* Spots are aligned to 2 MiB, a multiple of every page size. */
#define PLACE_ALIGN ((uintptr_t)2 << 20)
#define PLACE_TRIES 4
/* Room left below the stack's reach: the kernel keeps a guard gap
 * (stack_guard_gap, 1 MiB unless booted otherwise) between the stack and
 * the mapping below it. */
#define STACK_MARGIN ((uintptr_t)8 << 20)
#if UINTPTR_MAX > 0xffffffffu
#define HALF_STEP ((uintptr_t)1 << 30)
#else
/* A 32-bit address space (3-4 GiB) has no room far from everything; the
 * halfway spot is still above the break and below most mappings. */
#define HALF_STEP ((uintptr_t)16 << 20)
#endif

/* Without the flag in the headers, a hint checked after the fact. */
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0
#endif

/* Where to try: spots from [first] on, each mapping [gap] past the one
 * before, while they end by [end]; a taken spot is passed by [step] (0:
 * the size of what was to go there). */
struct stretch {
  uintptr_t first, next, end, step;
};

static int chosen;                 /* the stretches are set */
static struct stretch above, half; /* above the mmap area; halfway */

static uintptr_t align_up(uintptr_t a) { return (a + PLACE_ALIGN - 1) & ~(PLACE_ALIGN - 1); }

/* ---- above the mmap area ------------------------------------------------------ */

struct objects {
  uintptr_t stack;     /* an address in the stack's top page */
  uintptr_t top_start; /* the highest object below the stack: where it starts, */
  uintptr_t top_end;   /* and ends */
  uintptr_t lowest;    /* the lowest start of the other objects above the break */
  uintptr_t brk;
};

static int look_at(struct dl_phdr_info *info, size_t size, void *data)
{
  struct objects *o = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  int i;
  (void)size;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t a = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    if (ph->p_type != PT_LOAD) continue;
    if (a < lo) lo = a;
    if (a + (uintptr_t)ph->p_memsz > hi) hi = a + (uintptr_t)ph->p_memsz;
  }
  /* below the break: the executable; above the stack: older kernels'
   * vDSO, which is not in the mmap area */
  if (hi == 0 || lo <= o->brk || hi >= o->stack) return 0;
  if (hi > o->top_end) {
    if (o->top_end != 0 && o->top_start < o->lowest) o->lowest = o->top_start;
    o->top_start = lo;
    o->top_end = hi;
  } else if (lo < o->lowest) {
    o->lowest = lo;
  }
  return 0;
}

/* The stretch between the top of the mmap area and the stack's reach, or
 * an empty one. */
static void choose_above(void)
{
  struct objects o = {0, 0, 0, UINTPTR_MAX, 0};
  struct rlimit lim;
  uintptr_t loader = (uintptr_t)getauxval(AT_BASE), vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), floor;
  void *brk_now = sbrk(0);

  o.stack = (uintptr_t)getauxval(AT_EXECFN); /* the file name, at the stack's top */
  o.brk = (uintptr_t)brk_now;
  if (o.stack == 0 || brk_now == (void *)-1 || page == 0 || (page & (page - 1)) != 0) return;
  if (getrlimit(RLIMIT_STACK, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return;
  dl_iterate_phdr(look_at, &o);
  /* Top-down only: the highest object is the loader or the vDSO, made at
   * exec, and the libraries the loader mapped after it lie below it.  (In
   * the bottom-up layout the libraries lie above the loader: just above
   * the highest would be where the next mappings go.) */
  if (o.top_end == 0 || (o.top_start != loader && o.top_start != vdso) ||
      o.lowest >= o.top_start)
    return;
  floor = (o.stack + page) & ~(page - 1); /* the stack's end, or past it */
  if ((uintptr_t)lim.rlim_cur >= floor || floor - (uintptr_t)lim.rlim_cur < STACK_MARGIN) return;
  floor -= (uintptr_t)lim.rlim_cur + STACK_MARGIN;
  above.first = above.next = align_up(o.top_end);
  above.end = floor > above.first ? floor : above.first;
  above.step = 0;
}

/* ---- halfway ---------------------------------------------------------------- */

/* Halfway between the break and this thread's stack, or nothing when they
 * do not leave room (no break: a libc without one). */
static void choose_half(void)
{
  void *brk_now = sbrk(0);
  uintptr_t low = (uintptr_t)brk_now, high = (uintptr_t)__builtin_frame_address(0);
  if (brk_now == (void *)-1 || high <= low || high - low < 8 * HALF_STEP) return;
  half.first = half.next = (low + (high - low) / 2) & ~(PLACE_ALIGN - 1);
  half.end = high;
  half.step = HALF_STEP;
}

/* ---- mapping ------------------------------------------------------------------ */

/* Try the spots of [s]: the mapping, or MAP_FAILED with errno (EEXIST:
 * every spot tried was taken). */
static void *try_stretch(struct stretch *s, size_t len, int prot, int flags, int fd, off_t off)
{
  uintptr_t span = align_up((uintptr_t)len);
  int i;
  errno = EEXIST;
  for (i = 0; i < PLACE_TRIES && s->next != 0 && s->next < s->end && s->end - s->next >= span;
       i++) {
    void *want = (void *)s->next;
    void *p = mmap(want, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
    if (p == want) {
      /* The next mapping goes above this one, a spot apart. */
      s->next += span + PLACE_ALIGN;
      return p;
    }
    if (p != MAP_FAILED) {
      /* Taken as a hint and put elsewhere: undo, try the next spot. */
      munmap(p, len);
    } else if (errno != EEXIST) {
      return MAP_FAILED;
    }
    s->next += s->step != 0 ? s->step : span;
    errno = EEXIST;
  }
  return MAP_FAILED;
}

void *caml_ocgc_place_map(size_t len, int prot, int flags, int fd, off_t off)
{
  void *p;
  if (!chosen) {
    chosen = 1;
    choose_above();
    choose_half();
  }
  p = try_stretch(&above, len, prot, flags, fd, off);
  if (p == MAP_FAILED && errno == EEXIST) p = try_stretch(&half, len, prot, flags, fd, off);
  /* Not a taken spot (a filter refusing the flag, no memory), or no free
   * one: the plain call, which says what is wrong, if anything. */
  if (p == MAP_FAILED) p = mmap(NULL, len, prot, flags, fd, off);
  return p;
}

void caml_ocgc_place_forked(void)
{
  above.next = above.first;
  half.next = half.first;
}
