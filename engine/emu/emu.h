/* kl.emu's runtime: runs a kernel compiled against gpu/emu/prelude.h on the
 * CPU. Every thread of a block is a fiber (fiber.h); blocks are spread over
 * host threads; barriers and warp exchanges are scheduled among the fibers
 * of a block (block.c); faults in kernel code are caught and reported
 * (launch.c). Nothing here touches Lua. */
#ifndef KL_EMU_EMU_H
#define KL_EMU_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "../../gpu/emu/abi.h"

typedef enum {
  KL_EMU_OK = 0,
  KL_EMU_FAULT,        /* bad address, trap, division by zero, stack overflow */
  KL_EMU_DIVERGENT,    /* a barrier some threads of the block never reach */
  KL_EMU_LAUNCH_ERROR, /* a configuration the GPU would refuse */
  KL_EMU_TIMEOUT       /* still running after cfg->timeout seconds */
} kl_emu_verdict;

/* The order in which the fibers of a block run between two barriers. */
typedef enum { KL_EMU_ORDER_FORWARD = 0, KL_EMU_ORDER_REVERSE, KL_EMU_ORDER_SHUFFLE } kl_emu_order;

typedef struct kl_emu_launch_config {
  void (*entry)(void **args);                      /* __kl_entry_<kernel> */
  void **args;                                     /* pointers to each argument */
  void (*block_start)(size_t dyn_smem, int poison); /* __kl_block_start */
  kl_emu_dim3 grid, block;
  size_t smem;        /* dynamic shared memory bytes */
  kl_emu_order order;
  uint64_t seed;      /* for KL_EMU_ORDER_SHUFFLE */
  unsigned threads;   /* host threads; 0 = one per online CPU */
  int poison;         /* fill shared memory with 0xFF before each block */
  int capture;        /* collect printf output in the outcome instead of stdout */
  double timeout;     /* seconds; 0 = none. A hung kernel is interrupted. */
} kl_emu_launch_config;

typedef struct kl_emu_outcome {
  kl_emu_verdict verdict;
  char message[1024];
  int has_thread;                    /* block_idx/thread_idx name the culprit */
  kl_emu_dim3 block_idx, thread_idx;
  char *output;                      /* captured printf text (malloc'd; caller frees) */
  size_t output_len;
  unsigned long long switches;       /* fiber switches performed */
} kl_emu_outcome;

/* The hooks a kernel library is bound to (__kl_bind). */
extern const kl_emu_hooks kl_emu_runtime_hooks;

/* Runs the grid. Always fills *out; returns out->verdict. Never lets a
 * fault in kernel code escape: a SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT raised
 * by an emulated thread ends the launch with KL_EMU_FAULT. */
kl_emu_verdict kl_emu_launch(const kl_emu_launch_config *cfg, kl_emu_outcome *out);

#endif
