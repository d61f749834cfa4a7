/* ocgc_place.c - where the producer's own mappings go: out of the way of
 * the program's.
 *
 * Linux puts a mapping made without an address at the top of the highest
 * free gap below mmap_base, so every mapping made later (the OCaml heap's
 * chunks and minor heap, malloc's large blocks, thread stacks, libraries
 * loaded by dlopen) lands below the ones made before.  The ring (about
 * 2.3 MiB with its profile table) is made before the heap, and mapped that
 * way it moved every later mapping of the program down by its size; on
 * OCaml 4.13/4.14, whose page table is a hash of page numbers probed
 * linearly, the heap on other pages collides differently, and binary-trees
 * at s=4k spent 42 M more instructions in caml_page_table_lookup with the
 * ring on than off (issue 30): a cost every monitored program paid, more or
 * less by luck of layout.
 *
 * So the producer's mappings go halfway between the program break (brk
 * grows up from just above the executable) and the stack (mmap_base lies a
 * randomised distance below it): tens of TiB from either on 64-bit
 * machines, where no program's mappings reach, and the kernel's top-down
 * search for everyone else's never looks there.  The address is asked
 * with MAP_FIXED_NOREPLACE (Linux 4.17), which fails rather than replace a
 * mapping; a kernel before 4.17 takes the address as a hint and may put
 * the mapping elsewhere, which is then undone.  A spot that is taken is
 * followed by another a step higher, a few times, and then the kernel
 * chooses as before: the ring works wherever it is, only the layout moves.
 * Address randomisation is kept: both ends are randomised.
 *
 * Invariants: never MAP_FIXED (no mapping of the program's is ever
 * replaced); at most PLACE_TRIES + 1 mmap calls per mapping; the spots
 * are chosen from addresses alone (no file is read).  The cursor belongs
 * to the runtime lock's holder (mappings are made at startup, in a forked
 * child's first event, and when profiling starts); a forked child inherits
 * it with the address space. */

#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE, sbrk */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ocgc_place.h"

/* Spots are aligned to 2 MiB, a multiple of every page size. */
#define PLACE_ALIGN ((uintptr_t)2 << 20)
#define PLACE_TRIES 4
#if UINTPTR_MAX > 0xffffffffu
#define PLACE_STEP ((uintptr_t)1 << 30)
#else
/* A 32-bit address space (3-4 GiB) has no room far from everything; the
 * halfway spot is still above the break and below most mappings. */
#define PLACE_STEP ((uintptr_t)16 << 20)
#endif

/* Without the flag in the headers, a hint checked after the fact. */
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0
#endif

static uintptr_t cursor; /* the next spot to try; 0: none chosen yet */

/* Halfway between the break and this thread's stack, or 0 when they do
 * not leave room (no break: a libc without one). */
static uintptr_t first_spot(void)
{
  void *brk_now = sbrk(0);
  uintptr_t low = (uintptr_t)brk_now, high = (uintptr_t)__builtin_frame_address(0);
  if (brk_now == (void *)-1 || high <= low || high - low < 8 * PLACE_STEP) return 0;
  return (low + (high - low) / 2) & ~(PLACE_ALIGN - 1);
}

void *caml_ocgc_place_map(size_t len, int prot, int flags, int fd, off_t off)
{
  uintptr_t span = ((uintptr_t)len + PLACE_ALIGN - 1) & ~(PLACE_ALIGN - 1);
  int i;

  if (cursor == 0) cursor = first_spot();
  for (i = 0; cursor != 0 && i < PLACE_TRIES; i++) {
    void *want = (void *)cursor;
    void *p = mmap(want, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
    if (p == want) {
      /* The next mapping goes above this one, a spot apart. */
      cursor += span + PLACE_ALIGN;
      return p;
    }
    if (p != MAP_FAILED) {
      /* Taken as a hint and put elsewhere: undo, try the next spot. */
      munmap(p, len);
    } else if (errno != EEXIST) {
      /* Not a taken spot (a filter refusing the flag, no memory): the
       * plain call below says what is wrong, if anything. */
      break;
    }
    cursor += PLACE_STEP;
  }
  return mmap(NULL, len, prot, flags, fd, off);
}
