/* Fibers: the context switch (x86-64 System V assembly), fresh contexts,
 * recycled stack pools, and a switch-rate benchmark that also measures
 * glibc's swapcontext for comparison. */
#define _GNU_SOURCE
#include "emu/fiber.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "kl_fiber_switch is written for x86-64; port fiber.c to this architecture"
#endif

/* The switch pushes the six callee-saved registers, swaps stack pointers,
 * and pops the other side's. It leaves through pop + indirect jmp, not
 * ret: a ret to another stack's return address always misses the return
 * stack buffer, while the indirect predictor learns the pattern (measured
 * 4-5x more switches per second). The SSE/x87 control words are not
 * switched: kernel code never changes them, so every fiber of a host
 * thread shares that thread's (and fldcw would cost more than the rest of
 * the switch). A fresh context "returns" into kl_fiber_entry, which calls
 * fn(arg) from r12/r13. */
__asm__(".text\n"
        ".globl kl_fiber_switch\n"
        ".type kl_fiber_switch,@function\n"
        "kl_fiber_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  popq %rcx\n"
        "  jmpq *%rcx\n"
        ".size kl_fiber_switch, .-kl_fiber_switch\n"
        ".type kl_fiber_entry,@function\n"
        "kl_fiber_entry:\n"
        "  movq %r13, %rdi\n"
        "  callq *%r12\n"
        "  ud2\n"
        ".size kl_fiber_entry, .-kl_fiber_entry\n");

void kl_fiber_entry(void);

void *kl_fiber_prepare(void *top, void (*fn)(void *), void *arg) {
  /* Nine words: r15, r14, r13, r12, rbx, rbp, the return address, and two
   * of padding, so that kl_fiber_entry starts 16-byte aligned and fn sees
   * the ABI's (rsp + 8) % 16 == 0. */
  uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15) - 9;
  sp[0] = 0;                                    /* r15 */
  sp[1] = 0;                                    /* r14 */
  sp[2] = (uint64_t)(uintptr_t)arg;             /* r13 */
  sp[3] = (uint64_t)(uintptr_t)fn;              /* r12 */
  sp[4] = 0;                                    /* rbx */
  sp[5] = 0;                                    /* rbp */
  sp[6] = (uint64_t)(uintptr_t)kl_fiber_entry;  /* return address */
  sp[7] = 0;
  sp[8] = 0;
  return sp;
}

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static kl_fiber_pool *free_pools;

static kl_fiber_pool *pool_create(unsigned capacity) {
  size_t page = KL_FIBER_GUARD_BYTES;
  if ((size_t)sysconf(_SC_PAGESIZE) != page) return NULL;
  kl_fiber_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->map_bytes = (size_t)(capacity + 1) * KL_EMU_STACK_BYTES;
  void *map = mmap(NULL, pool->map_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) {
    free(pool);
    return NULL;
  }
  pool->map = map;
  uintptr_t first = ((uintptr_t)map + KL_EMU_STACK_BYTES - 1) & ~(uintptr_t)(KL_EMU_STACK_BYTES - 1);
  pool->slots = (unsigned char *)first;
  pool->capacity = capacity;
  for (unsigned i = 0; i < capacity; i++) {
    if (mprotect(kl_fiber_slot(pool, i), page, PROT_NONE) != 0) {
      munmap(pool->map, pool->map_bytes);
      free(pool);
      return NULL;
    }
  }
  return pool;
}

kl_fiber_pool *kl_fiber_pool_take(unsigned capacity) {
  pthread_mutex_lock(&pool_lock);
  kl_fiber_pool **link = &free_pools;
  while (*link && (*link)->capacity < capacity) link = &(*link)->next_free;
  kl_fiber_pool *pool = *link;
  if (pool) *link = pool->next_free;
  pthread_mutex_unlock(&pool_lock);
  if (pool) {
    pool->next_free = NULL;
    return pool;
  }
  /* Round up so that one pool serves every later block size. */
  return pool_create(capacity < KL_EMU_MAX_BLOCK_THREADS ? KL_EMU_MAX_BLOCK_THREADS : capacity);
}

void kl_fiber_pool_give(kl_fiber_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool_lock);
  pool->next_free = free_pools;
  free_pools = pool;
  pthread_mutex_unlock(&pool_lock);
}

/* --- benchmark --------------------------------------------------------- */

typedef struct {
  void *sched_sp, *sp;
  ucontext_t sched_uc, uc;
  unsigned rounds;
  int use_ucontext;
} bench_fiber;

static void bench_body(void *arg) {
  bench_fiber *f = arg;
  for (unsigned r = 0; r < f->rounds; r++) kl_fiber_switch(&f->sp, f->sched_sp);
  for (;;) kl_fiber_switch(&f->sp, f->sched_sp); /* finished: park */
}

static bench_fiber *uc_current;
static void bench_body_uc(void) {
  bench_fiber *f = uc_current;
  for (unsigned r = 0; r < f->rounds; r++) swapcontext(&f->uc, &f->sched_uc);
  for (;;) swapcontext(&f->uc, &f->sched_uc);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double kl_fiber_benchmark(unsigned fibers, unsigned rounds, int use_ucontext) {
  if (fibers == 0 || fibers > KL_EMU_MAX_BLOCK_THREADS) return -1;
  kl_fiber_pool *pool = kl_fiber_pool_take(fibers);
  if (!pool) return -1;
  bench_fiber *fs = calloc(fibers, sizeof *fs);
  if (!fs) {
    kl_fiber_pool_give(pool);
    return -1;
  }
  size_t stack_bytes = KL_EMU_THREAD_OFFSET - KL_FIBER_STAGGER_MAX - 2 * 4096;
  for (unsigned i = 0; i < fibers; i++) {
    fs[i].rounds = rounds;
    void *top = kl_fiber_stack_top(pool, i);
    if (use_ucontext) {
      getcontext(&fs[i].uc);
      fs[i].uc.uc_stack.ss_sp = (unsigned char *)top - stack_bytes;
      fs[i].uc.uc_stack.ss_size = stack_bytes;
      fs[i].uc.uc_link = NULL;
      makecontext(&fs[i].uc, bench_body_uc, 0);
    } else {
      fs[i].sp = kl_fiber_prepare(top, bench_body, &fs[i]);
    }
  }
  double t0 = now_seconds();
  for (unsigned r = 0; r <= rounds; r++) {
    for (unsigned i = 0; i < fibers; i++) {
      if (use_ucontext) {
        uc_current = &fs[i];
        swapcontext(&fs[i].sched_uc, &fs[i].uc);
      } else {
        kl_fiber_switch(&fs[i].sched_sp, fs[i].sp);
      }
    }
  }
  double elapsed = now_seconds() - t0;
  free(fs);
  kl_fiber_pool_give(pool);
  /* Each resume is two switches: into the fiber and back out. */
  double switches = 2.0 * (double)fibers * (double)(rounds + 1);
  return elapsed > 0 ? switches / elapsed : -1;
}
