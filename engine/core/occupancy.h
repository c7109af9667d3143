/* Theoretical occupancy of a kernel, computed with no GPU from what ptxas
 * reports (registers per thread, static shared memory, barriers) and the
 * launch (threads per block, dynamic shared memory).
 *
 * The rules follow the driver's occupancy model for compute capability 8.x
 * and 9.0 (the same rules the toolkit's cuda_occupancy.h encodes):
 *   - warps:     floor(max_warps_per_sm / ceil(threads / 32)) blocks;
 *   - registers: registers are allocated per warp in units of 256,
 *                regs_per_warp = roundup(regs * 32, 256); each of the 4
 *                sub-partitions holds floor(65536/4 / regs_per_warp) warps;
 *                blocks = floor(4 * that / warps_per_block); a block whose
 *                warps, rounded up to a multiple of 4, need more than the
 *                per-block register file cannot launch at all;
 *   - shared:    smem_per_block = roundup(static + dynamic + reserved, 128);
 *                blocks = floor(smem_per_sm / smem_per_block), with the
 *                default (largest) carveout;
 *   - blocks:    the per-SM block limit of the architecture;
 *   - barriers:  sm_90 only: floor(2 * block_limit / barriers_per_block).
 * The result is the minimum. Nothing is allocated; all structures are plain
 * values owned by the caller. */
#ifndef KL_CORE_OCCUPANCY_H
#define KL_CORE_OCCUPANCY_H

#include <stddef.h>

/* The per-architecture limits that occupancy depends on. */
typedef struct {
  const char *arch;             /* "sm_90" */
  int max_warps_per_sm;         /* 64 on sm_80/sm_90, 48 on sm_86/sm_89 */
  int max_blocks_per_sm;        /* 32, 16 or 24 */
  int max_threads_per_block;    /* 1024 */
  int regs_per_sm;              /* 65536 */
  int regs_per_block;           /* 65536 */
  int max_regs_per_thread;      /* 255 */
  int reg_alloc_unit;           /* 256 registers per warp */
  int sub_partitions;           /* 4 */
  size_t smem_per_sm;           /* the largest carveout, bytes */
  size_t smem_per_block;        /* without the opt-in attribute: 48 KiB */
  size_t smem_per_block_optin;  /* with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) */
  size_t smem_reserved;         /* reserved by the system per block: 1 KiB */
  int smem_alloc_unit;          /* 128 bytes */
  int barriers_per_block_slot;  /* 0: no barrier limit; 2 on sm_90 */
} kl_arch_limits;

/* The limits of an architecture ("sm_80", "sm_86", "sm_89", "sm_90"), or
 * NULL when it is not in the table. The table is static: do not free. */
const kl_arch_limits *kl_arch_limits_find(const char *arch);

/* The architectures in the table, NULL-terminated. */
const char *const *kl_arch_limits_names(void);

typedef struct {
  int registers;       /* per thread, from ptxas */
  size_t static_smem;  /* bytes, from ptxas */
  size_t dynamic_smem; /* bytes, from the launch */
  int threads;         /* per block */
  int barriers;        /* named barriers per block, from ptxas (0 or more) */
  int optin;           /* nonzero: the opt-in smem limit was raised */
} kl_occupancy_input;

typedef enum {
  KL_OCC_WARPS = 1,
  KL_OCC_REGISTERS = 2,
  KL_OCC_SMEM = 4,
  KL_OCC_BLOCKS = 8,
  KL_OCC_BARRIERS = 16,
} kl_occupancy_factor;

/* A limit that does not apply (no registers used, no barriers, not sm_90). */
#define KL_OCC_UNLIMITED 0x7fffffff

typedef struct {
  int active_blocks;     /* per SM; 0 when the block cannot launch */
  int active_warps;      /* per SM */
  double occupancy;      /* active_warps / max_warps_per_sm */
  unsigned limited_by;   /* kl_occupancy_factor bits: every limit equal to the minimum */
  int limit_warps, limit_registers, limit_smem, limit_blocks, limit_barriers;
  int regs_per_warp;     /* allocated */
  size_t smem_per_block; /* allocated, reserved part included */
  const char *why_zero;  /* NULL, or why no block fits (static text) */
} kl_occupancy;

/* Computes the occupancy. Returns 0 on success, -1 for invalid input
 * (threads <= 0, negative registers) with out->why_zero set. A launch that
 * is valid input but cannot run (too many threads, registers or shared
 * memory) returns 0 with active_blocks == 0 and why_zero set. */
int kl_occupancy_compute(const kl_arch_limits *arch, const kl_occupancy_input *in,
                         kl_occupancy *out);

/* The name of one factor bit ("warps", "registers", "smem", "blocks",
 * "barriers"). */
const char *kl_occupancy_factor_name(kl_occupancy_factor f);

#endif
