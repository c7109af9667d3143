/* The binary interface between the emu runtime (engine/emu, C) and a kernel
 * compiled against prelude.h (C++). Both sides include this one file, so the
 * layout cannot drift; the engine also checks KL_EMU_ABI_VERSION when it
 * loads a kernel library.
 *
 * A kernel library exports:
 *   unsigned __kl_bind(const kl_emu_hooks *hooks)       -> KL_EMU_ABI_VERSION
 *   void __kl_block_start(size_t dyn_smem, int poison)   before each block, on
 *                                                         the host thread that runs it
 *   void __kl_entry_<k>(void **args)                     runs one thread of kernel k
 *   const kl_emu_param *__kl_sig_<k>(int *count)         k's parameter types
 *
 * Each emulated thread runs on a fiber stack of KL_EMU_STACK_BYTES, aligned
 * to its size, that holds the thread's kl_emu_thread at KL_EMU_THREAD_AT(slot),
 * right above the stack: the prelude finds "self" by masking its own frame
 * address, with no TLS, and the record shares pages with the live stack. */
#ifndef KL_EMU_ABI_H
#define KL_EMU_ABI_H

#include <stddef.h>
#include <stdint.h>

#define KL_EMU_ABI_VERSION 3u
#define KL_EMU_STACK_BYTES (256u * 1024u)
#define KL_EMU_THREAD_OFFSET (KL_EMU_STACK_BYTES - 8192u) /* records sit above the stack */
/* The record of the slot that starts at address `slot`. Records are
 * staggered by 64 bytes per slot (from the slot's own address, so both
 * sides compute it): at one fixed offset every record would fall in the
 * same cache sets and evict the others on each switch. */
#define KL_EMU_THREAD_AT(slot) \
  ((slot) + KL_EMU_THREAD_OFFSET + ((slot) / KL_EMU_STACK_BYTES % 64u) * 64u)
#define KL_EMU_DYN_SMEM_MAX 232448u /* sm_90 opt-in maximum per block */
#define KL_EMU_MAX_BLOCK_THREADS 1024u

typedef struct kl_emu_dim3 {
  unsigned x, y, z;
} kl_emu_dim3;

/* Parameter type codes of a kernel signature. */
enum {
  KL_EMU_T_OTHER = 0, /* a struct by value: passed as raw bytes of .size */
  KL_EMU_T_PTR,
  KL_EMU_T_BOOL,
  KL_EMU_T_I8,
  KL_EMU_T_U8,
  KL_EMU_T_I16,
  KL_EMU_T_U16,
  KL_EMU_T_I32,
  KL_EMU_T_U32,
  KL_EMU_T_I64,
  KL_EMU_T_U64,
  KL_EMU_T_F16,
  KL_EMU_T_BF16,
  KL_EMU_T_F32,
  KL_EMU_T_F64
};

typedef struct kl_emu_param {
  unsigned code, size;
} kl_emu_param;

/* Warp operations, the `op` of kl_emu_hooks.warp. */
enum {
  KL_EMU_WARP_SYNC = 0,
  KL_EMU_WARP_SHFL_IDX,
  KL_EMU_WARP_SHFL_UP,
  KL_EMU_WARP_SHFL_DOWN,
  KL_EMU_WARP_SHFL_XOR,
  KL_EMU_WARP_BALLOT,
  KL_EMU_WARP_ANY,
  KL_EMU_WARP_ALL,
  KL_EMU_WARP_MATCH_ANY,
  KL_EMU_WARP_MATCH_ALL,
  KL_EMU_WARP_REDUCE_ADD,
  KL_EMU_WARP_REDUCE_MIN,
  KL_EMU_WARP_REDUCE_MAX,
  KL_EMU_WARP_REDUCE_AND,
  KL_EMU_WARP_REDUCE_OR,
  KL_EMU_WARP_REDUCE_XOR,
  /* __activemask: waits until no lane of the warp can run, then returns
   * the lanes waiting at the same call site (`arg`): the lanes converged
   * there, as on the GPU. */
  KL_EMU_WARP_ACTIVEMASK
};

/* Block barrier kinds, the `kind` of kl_emu_hooks.sync_block. */
enum { KL_EMU_SYNC = 0, KL_EMU_SYNC_COUNT, KL_EMU_SYNC_AND, KL_EMU_SYNC_OR };

struct kl_emu_thread;

typedef struct kl_emu_hooks {
  /* __syncthreads and its _count/_and/_or forms; returns the reduction. */
  int (*sync_block)(struct kl_emu_thread *self, int kind, int pred);
  /* A warp-wide exchange among the lanes of `mask`; `value` holds up to 8
   * bytes, `arg` the lane/delta/mask operand, `width` the shuffle width. */
  uint64_t (*warp)(struct kl_emu_thread *self, int op, unsigned mask, uint64_t value,
                   int arg, int width);
  /* printf: text already formatted; the runtime adds the coordinates. */
  void (*print)(struct kl_emu_thread *self, const char *text, size_t n);
  /* __trap, assert: ends the launch with verdict fault. Never returns. */
  void (*trap)(struct kl_emu_thread *self, const char *message);
} kl_emu_hooks;

typedef struct kl_emu_thread {
  kl_emu_dim3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned lane, warp, linear;
  int site_line;         /* the source line of the last barrier or exchange */
  const kl_emu_hooks *hooks;
  const char *site_file; /* and its file (a literal of the kernel library) */
} kl_emu_thread;

#endif
