/* Fibers: stackful coroutines for the emulated threads of a block.
 *
 * A pool reserves `capacity` slots of KL_EMU_STACK_BYTES, each aligned to
 * its size. A slot is laid out as
 *   [0, page)                               a PROT_NONE guard page
 *   [page, KL_EMU_THREAD_OFFSET - stagger)  the stack, growing down
 *   [KL_EMU_THREAD_OFFSET, end)             the fiber's record at KL_EMU_THREAD_AT
 * so that a stack overflow faults instead of running into the next slot,
 * and the prelude finds its record by masking a frame address.
 *
 * Pools are recycled through a process-wide free list (kl_fiber_pool_take /
 * kl_fiber_pool_give): mapping and protecting 1024 guard pages costs more
 * than a small launch. */
#ifndef KL_EMU_FIBER_H
#define KL_EMU_FIBER_H

#include <stddef.h>
#include <stdint.h>

#include "../../gpu/emu/abi.h"

/* The guard page at the bottom of each slot (x86-64 pages are 4 KiB). */
#define KL_FIBER_GUARD_BYTES 4096u
/* Room below the stack top kept by the stagger (see kl_fiber_stack_top). */
#define KL_FIBER_STAGGER_MAX (85u * 192u)

typedef struct kl_fiber_pool {
  unsigned char *map;   /* what mmap returned */
  size_t map_bytes;
  unsigned char *slots; /* first slot, aligned to KL_EMU_STACK_BYTES */
  unsigned capacity;
  struct kl_fiber_pool *next_free;
} kl_fiber_pool;

/* Saves the callee-saved state on the current stack, stores the stack
 * pointer in *save_sp, and resumes the context whose stack pointer is to_sp. */
void kl_fiber_switch(void **save_sp, void *to_sp);

/* Builds a fresh context on the stack that ends at `top` (16-byte aligned):
 * switching to the returned stack pointer calls fn(arg). fn must never
 * return; it ends by switching away for good. */
void *kl_fiber_prepare(void *top, void (*fn)(void *), void *arg);

/* A pool with at least `capacity` slots, or NULL when out of memory.
 * The caller gives it back with kl_fiber_pool_give. */
kl_fiber_pool *kl_fiber_pool_take(unsigned capacity);
void kl_fiber_pool_give(kl_fiber_pool *pool);

static inline void *kl_fiber_slot(const kl_fiber_pool *pool, unsigned i) {
  return pool->slots + (size_t)i * KL_EMU_STACK_BYTES;
}
/* The lowest usable byte of slot i's stack, above its guard page. */
static inline void *kl_fiber_stack_bottom(const kl_fiber_pool *pool, unsigned i) {
  return (unsigned char *)kl_fiber_slot(pool, i) + KL_FIBER_GUARD_BYTES;
}

static inline void *kl_fiber_thread(const kl_fiber_pool *pool, unsigned i) {
  return (void *)KL_EMU_THREAD_AT((uintptr_t)kl_fiber_slot(pool, i));
}
/* The top of slot i's stack. Tops are staggered by a few cache lines:
 * slots are KL_EMU_STACK_BYTES apart, so unstaggered tops would all fall
 * in the same cache sets and evict each other on every switch. */
static inline void *kl_fiber_stack_top(const kl_fiber_pool *pool, unsigned i) {
  return pool->slots + (size_t)i * KL_EMU_STACK_BYTES + KL_EMU_THREAD_OFFSET - (size_t)(i % 85u) * 192u;
}

/* Measures raw switches per second: `fibers` fibers each yield `rounds`
 * times back to a scheduler loop. use_ucontext selects swapcontext instead
 * of kl_fiber_switch. Returns switches/s, or a negative value on failure. */
double kl_fiber_benchmark(unsigned fibers, unsigned rounds, int use_ucontext);

#endif
