/* Private to engine/emu: the per-fiber record, a block being run, and the
 * state one launch shares among its host threads. */
#ifndef KL_EMU_INTERNAL_H
#define KL_EMU_INTERNAL_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>

#include "emu/emu.h"
#include "emu/fiber.h"

enum { FIBER_READY, FIBER_BLOCK_WAIT, FIBER_WARP_WAIT, FIBER_EXITED };

/* Under AddressSanitizer, every stack switch is announced, so that ASan
 * knows which stack it is on (otherwise it warns, and may report false
 * positives, when it unpoisons a stack it does not know). */
#if defined(__SANITIZE_ADDRESS__)
/* From libasan (sanitizer/common_interface_defs.h, which Debian's gcc does
 * not ship). */
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
static inline void kl_asan_start(void **fake, const void *bottom, size_t size) {
  __sanitizer_start_switch_fiber(fake, bottom, size);
}
static inline void kl_asan_finish(void *fake) { __sanitizer_finish_switch_fiber(fake, NULL, NULL); }
#else
static inline void kl_asan_start(void **fake, const void *bottom, size_t size) {
  (void)fake, (void)bottom, (void)size;
}
static inline void kl_asan_finish(void *fake) { (void)fake; }
#endif

typedef struct kl_fiber {
  kl_emu_thread pub; /* first: the prelude finds it at KL_EMU_THREAD_AT(slot) */
  struct kl_block *block;
  int op, arg, width;  /* at a warp exchange */
  unsigned mask;
  uint64_t value, result;
  void *asan_fake; /* AddressSanitizer's fake stack, while switched out */
} kl_fiber;

typedef struct kl_launch kl_launch;

typedef struct kl_block {
  kl_launch *launch;
  const kl_emu_launch_config *cfg;
  kl_fiber_pool *pool;
  unsigned n;                 /* threads in the block */
  unsigned order[KL_EMU_MAX_BLOCK_THREADS];
  unsigned char state[KL_EMU_MAX_BLOCK_THREADS]; /* FIBER_* of each thread */
  void *sp[KL_EMU_MAX_BLOCK_THREADS];            /* saved stack pointers */
  void *sched_sp;
  void *sched_fake;           /* AddressSanitizer's, for the host stack */
  const void *host_bottom;    /* the host thread's stack, for ASan */
  size_t host_size;
  uint64_t rng;
  int pred_sum;               /* true predicates at the barrier being filled */
  unsigned activemask_waiters; /* fibers inside __activemask */
  int bar_count;              /* predicate count of the last released barrier */
  /* The call site of the barrier being filled: the first known one that
   * arrived, and whether a later arrival came from another (only then is
   * the release checked for a divergent barrier, which reads every
   * thread's record: a cache miss each, once per barrier). */
  const char *bar_file;
  int bar_line;
  int bar_split;
  unsigned pos;               /* index in order[] of the running fiber */
  unsigned long long switches;
  char message[1024];         /* why run_block failed */
  kl_emu_dim3 culprit_block, culprit_thread;
} kl_block;

struct kl_launch {
  const kl_emu_launch_config *cfg;
  unsigned long long nblocks;
  atomic_ullong next_block;
  atomic_int stop;
  pthread_mutex_t lock; /* guards out, the capture buffer and stdout */
  kl_emu_outcome *out;
  int decided;          /* out holds a failure already */
  char *cap;
  size_t cap_len, cap_size;
  atomic_int timed_out;
};

/* The fiber running on this host thread, NULL outside kernel code. */
extern _Thread_local kl_fiber *kl_emu_current;

/* Runs block `index` of the grid to the end. Returns 1, or 0 with b->message
 * set when the block deadlocked on a divergent barrier. */
int kl_emu_run_block(kl_block *b, unsigned long long index);

/* Records a failure in the launch outcome (first one wins) and stops it. */
void kl_emu_fail(kl_launch *l, kl_emu_verdict v, const char *message, const kl_emu_dim3 *block,
                 const kl_emu_dim3 *thread);

/* Appends printf output, prefixed with the thread's coordinates. */
void kl_emu_print(kl_launch *l, const kl_emu_thread *t, const char *text, size_t n);

/* Ends the launch from kernel code (trap/assert); never returns. */
_Noreturn void kl_emu_trap(kl_fiber *f, const char *message);

#endif
