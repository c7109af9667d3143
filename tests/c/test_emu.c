/* The emu runtime without a compiler: "kernels" written in C against the
 * same ABI the prelude uses (self at the fiber stack's base, hooks for
 * barriers and warp exchanges). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu/buffer.h"
#include "emu/emu.h"
#include "emu/fiber.h"
#include "harness.h"

static __attribute__((noinline)) kl_emu_thread *self(void) {
  uintptr_t slot = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)(KL_EMU_STACK_BYTES - 1);
  return (kl_emu_thread *)KL_EMU_THREAD_AT(slot);
}
static void sync_block(void) {
  kl_emu_thread *t = self();
  t->hooks->sync_block(t, KL_EMU_SYNC, 0);
}
static void no_block_start(size_t smem, int poison) { (void)smem, (void)poison; }

static kl_emu_launch_config config(void (*entry)(void **), void **args, unsigned grid, unsigned block) {
  kl_emu_launch_config c;
  memset(&c, 0, sizeof c);
  c.entry = entry;
  c.args = args;
  c.block_start = no_block_start;
  c.grid = (kl_emu_dim3){grid, 1, 1};
  c.block = (kl_emu_dim3){block, 1, 1};
  c.threads = 2;
  return c;
}

/* --- fibers ------------------------------------------------------------------ */

typedef struct {
  void *sched, *sp;
  int steps;
} pingpong;

static void pingpong_body(void *arg) {
  pingpong *p = arg;
  for (;;) {
    p->steps++;
    kl_fiber_switch(&p->sp, p->sched);
  }
}

static void test_fibers(test_batch *t) {
  kl_fiber_pool *pool = kl_fiber_pool_take(2);
  OK(t, pool != NULL, "a pool");
  OK(t, ((uintptr_t)kl_fiber_slot(pool, 0) & (KL_EMU_STACK_BYTES - 1)) == 0, "slots are aligned to their size");
  pingpong a = {0}, b = {0};
  a.sp = kl_fiber_prepare(kl_fiber_stack_top(pool, 0), pingpong_body, &a);
  b.sp = kl_fiber_prepare(kl_fiber_stack_top(pool, 1), pingpong_body, &b);
  for (int i = 0; i < 5; i++) {
    kl_fiber_switch(&a.sched, a.sp);
    kl_fiber_switch(&b.sched, b.sp);
  }
  INT_EQ(t, a.steps, 5, "fiber a ran five times");
  INT_EQ(t, b.steps, 5, "fiber b ran five times");
  kl_fiber_pool_give(pool);
  OK(t, kl_fiber_benchmark(8, 100, 0) > 0, "the benchmark measures the assembly switch");
  OK(t, kl_fiber_benchmark(8, 100, 1) > 0, "and swapcontext");
}

/* --- a block reduction through a barrier ------------------------------------------ */

static _Thread_local int shared_sums[256];

static void block_reduce(void **args) {
  const int *in = *(int **)args[0];
  int *out = *(int **)args[1];
  kl_emu_thread *t = self();
  unsigned tid = t->thread_idx.x, n = t->block_dim.x;
  shared_sums[tid] = in[t->block_idx.x * n + tid];
  sync_block();
  for (unsigned s = n / 2; s > 0; s /= 2) {
    if (tid < s) shared_sums[tid] += shared_sums[tid + s];
    sync_block();
  }
  if (tid == 0) out[t->block_idx.x] = shared_sums[0];
}

static void test_reduce(test_batch *t, kl_emu_order order) {
  kl_emu_buffer *in = kl_emu_buffer_new(4 * 1024, "in", 4), *out = kl_emu_buffer_new(4 * 8, "out", 4);
  int *x = (int *)in->data;
  for (int i = 0; i < 1024; i++) x[i] = i;
  void *pin = in->data, *pout = out->data;
  void *args[] = {&pin, &pout};
  kl_emu_launch_config c = config(block_reduce, args, 8, 128);
  c.order = order;
  c.seed = 5;
  kl_emu_outcome o;
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_OK, "the reduction runs");
  int *y = (int *)out->data;
  for (int b = 0; b < 8; b++) INT_EQ(t, y[b], 128 * 128 * b + 127 * 64, "a block sum");
  OK(t, o.switches >= 8ull * 128 * 9, "every barrier costs a switch per thread");
  kl_emu_buffer_free(in);
  kl_emu_buffer_free(out);
}

/* --- warp exchange ------------------------------------------------------------------ */

static void rotate(void **args) {
  int *out = *(int **)args[0];
  kl_emu_thread *t = self();
  unsigned lane = t->lane;
  uint64_t v = t->hooks->warp(t, KL_EMU_WARP_SHFL_IDX, 0xFFFFFFFFu, lane * 3, (int)(lane + 1) % 32, 32);
  out[t->linear] = (int)v;
}

static void test_warp(test_batch *t) {
  kl_emu_buffer *out = kl_emu_buffer_new(4 * 64, "out", 4);
  void *p = out->data;
  void *args[] = {&p};
  kl_emu_launch_config c = config(rotate, args, 1, 64);
  kl_emu_outcome o;
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_OK, "the shuffle runs");
  int *y = (int *)out->data;
  INT_EQ(t, y[0], 3, "lane 0 reads lane 1");
  INT_EQ(t, y[31], 0, "lane 31 reads lane 0");
  INT_EQ(t, y[32], 3, "the second warp exchanges among itself");
  kl_emu_buffer_free(out);
}

/* --- divergence, faults, bad configurations -------------------------------------------- */

static void early_return(void **args) {
  (void)args;
  if (self()->thread_idx.x >= 40) return;
  sync_block();
}

static void write_past(void **args) {
  float *out = *(float **)args[0];
  unsigned i = self()->block_idx.x * self()->block_dim.x + self()->thread_idx.x;
  out[i] = 1.0f; /* the grid covers one element more than the buffer */
}

static void trap_kernel(void **args) {
  (void)args;
  kl_emu_thread *t = self();
  if (t->thread_idx.x == 3) t->hooks->trap(t, "custom trap");
}

static void test_failures(test_batch *t) {
  kl_emu_outcome o;
  kl_emu_launch_config c = config(early_return, NULL, 2, 64);
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_DIVERGENT, "a barrier behind an early return");
  OK(t, strstr(o.message, "threads 0-39 but never by threads 40-63") != NULL, "names both sides");

  kl_emu_buffer *out = kl_emu_buffer_new(4 * 64, "dst", 4);
  void *p = out->data;
  void *args[] = {&p};
  c = config(write_past, args, 1, 65);
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_FAULT, "a write past the end faults");
  OK(t, strstr(o.message, "buffer 'dst' element index 64") != NULL, "names the buffer and index");
  OK(t, strstr(o.message, "thread (64,0,0) of block (0,0,0)") != NULL, "names the thread");
  INT_EQ(t, o.thread_idx.x, 64, "thread coordinates");

  /* 62 elements: the 63rd lands in the 16-byte slack, found by the canary. */
  kl_emu_buffer *odd = kl_emu_buffer_new(4 * 62, "odd", 4);
  p = odd->data;
  c = config(write_past, args, 1, 63);
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_FAULT, "a write into the slack is found afterwards");
  OK(t, strstr(o.message, "buffer 'odd' element index 62") != NULL, "by its canary");
  char msg[256];
  INT_EQ(t, kl_emu_buffers_check(msg, sizeof msg), 0, "the canary was repaired");

  c = config(trap_kernel, NULL, 1, 8);
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_FAULT, "a trap");
  OK(t, strstr(o.message, "custom trap") != NULL, "carries its message");

  c = config(trap_kernel, NULL, 1, 1025);
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_LAUNCH_ERROR, "1025 threads per block");
  c = config(trap_kernel, NULL, 1, 8);
  c.smem = KL_EMU_DYN_SMEM_MAX + 1;
  INT_EQ(t, kl_emu_launch(&c, &o), KL_EMU_LAUNCH_ERROR, "too much dynamic shared memory");

  kl_emu_buffer_free(out);
  kl_emu_buffer_free(odd);
}

static void test_describe(test_batch *t) {
  kl_emu_buffer *b = kl_emu_buffer_new(100, "bytes", 1);
  char msg[256];
  OK(t, kl_emu_buffer_describe(b->data + 100, msg, sizeof msg), "the guard belongs to its buffer");
  STR_EQ(t, msg, "buffer 'bytes' byte offset 100 (of 100)", "byte buffers speak bytes");
  OK(t, ((uintptr_t)b->data & 15) == 0, "data is 16-byte aligned");
  kl_emu_buffer_free(b);
  int local;
  OK(t, !kl_emu_buffer_describe(&local, msg, sizeof msg), "a stack address is in no buffer");
}

int main(void) {
  test_batch t = {0, 0};
  test_fibers(&t);
  test_reduce(&t, KL_EMU_ORDER_FORWARD);
  test_reduce(&t, KL_EMU_ORDER_REVERSE);
  test_reduce(&t, KL_EMU_ORDER_SHUFFLE);
  test_warp(&t);
  test_failures(&t);
  test_describe(&t);
  return kl_test_finish(&t);
}
