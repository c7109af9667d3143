/* Theoretical occupancy: see occupancy.h for the rules. */
#include "core/occupancy.h"

#include <string.h>

/* Values read off the devices and the CUDA programming guide's table of
 * compute capabilities: sm_80 (A100), sm_86 (GA10x), sm_89 (AD10x),
 * sm_90 (H100/H200). smem_per_sm is the largest carveout. */
static const kl_arch_limits arch_table[] = {
    {"sm_80", 64, 32, 1024, 65536, 65536, 255, 256, 4, 167936, 49152, 166912, 1024, 128, 0},
    {"sm_86", 48, 16, 1024, 65536, 65536, 255, 256, 4, 102400, 49152, 101376, 1024, 128, 0},
    {"sm_89", 48, 24, 1024, 65536, 65536, 255, 256, 4, 102400, 49152, 101376, 1024, 128, 0},
    {"sm_90", 64, 32, 1024, 65536, 65536, 255, 256, 4, 233472, 49152, 232448, 1024, 128, 2},
};

static const char *const arch_names[] = {"sm_80", "sm_86", "sm_89", "sm_90", NULL};

const kl_arch_limits *kl_arch_limits_find(const char *arch) {
  if (!arch) return NULL;
  for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
    if (strcmp(arch_table[i].arch, arch) == 0) return &arch_table[i];
  return NULL;
}

const char *const *kl_arch_limits_names(void) { return arch_names; }

static int cdiv(int a, int b) { return (a + b - 1) / b; }
static size_t round_up(size_t x, size_t unit) { return (x + unit - 1) / unit * unit; }
static int min_int(int a, int b) { return a < b ? a : b; }

static int warps_limit(const kl_arch_limits *a, int warps_per_block) {
  return a->max_warps_per_sm / warps_per_block;
}

/* Registers live in the sub-partitions: a warp takes its whole allocation
 * from one of them, so the per-SM count is per-sub-partition times 4. */
static int registers_limit(const kl_arch_limits *a, const kl_occupancy_input *in,
                           int warps_per_block, kl_occupancy *out) {
  int per_warp = (int)round_up((size_t)in->registers * 32, (size_t)a->reg_alloc_unit);
  out->regs_per_warp = per_warp;
  if (per_warp == 0) return KL_OCC_UNLIMITED;
  /* The hardware check assumes the block's warps spread over all
   * sub-partitions, so the warp count is rounded up to a multiple of 4. */
  int assumed = per_warp * (int)round_up((size_t)warps_per_block, (size_t)a->sub_partitions);
  if (in->registers > a->max_regs_per_thread || assumed > a->regs_per_block ||
      per_warp * warps_per_block > a->regs_per_block) {
    out->why_zero = "registers: the block needs more than the per-block register file";
    return 0;
  }
  int warps_per_sub = (a->regs_per_sm / a->sub_partitions) / per_warp;
  return warps_per_sub * a->sub_partitions / warps_per_block;
}

static int smem_limit(const kl_arch_limits *a, const kl_occupancy_input *in, kl_occupancy *out) {
  size_t used = in->static_smem + in->dynamic_smem;
  size_t per_block = round_up(used + a->smem_reserved, (size_t)a->smem_alloc_unit);
  out->smem_per_block = per_block;
  size_t cap = in->optin ? a->smem_per_block_optin : a->smem_per_block;
  if (used > cap) {
    out->why_zero = in->optin ? "smem: more than the opt-in per-block maximum"
                              : "smem: more than 48 KiB per block without the opt-in attribute";
    return 0;
  }
  size_t blocks = a->smem_per_sm / per_block;
  return blocks > (size_t)KL_OCC_UNLIMITED ? KL_OCC_UNLIMITED : (int)blocks;
}

int kl_occupancy_compute(const kl_arch_limits *a, const kl_occupancy_input *in, kl_occupancy *out) {
  memset(out, 0, sizeof *out);
  if (!a || !in || in->threads <= 0 || in->registers < 0 || in->barriers < 0) {
    out->why_zero = "invalid input: threads must be positive, registers and barriers not negative";
    return -1;
  }
  int warps_per_block = cdiv(in->threads, 32);
  out->limit_blocks = a->max_blocks_per_sm;
  out->limit_barriers = KL_OCC_UNLIMITED;
  if (in->threads > a->max_threads_per_block) {
    out->why_zero = "warps: more threads per block than the architecture allows";
    out->limit_warps = 0;
  } else {
    out->limit_warps = warps_limit(a, warps_per_block);
  }
  out->limit_registers = registers_limit(a, in, warps_per_block, out);
  out->limit_smem = smem_limit(a, in, out);
  if (a->barriers_per_block_slot > 0 && in->barriers > 0)
    out->limit_barriers = a->barriers_per_block_slot * a->max_blocks_per_sm / in->barriers;

  int blocks = min_int(min_int(out->limit_warps, out->limit_registers),
                       min_int(min_int(out->limit_smem, out->limit_blocks), out->limit_barriers));
  if (blocks == out->limit_warps) out->limited_by |= KL_OCC_WARPS;
  if (blocks == out->limit_registers) out->limited_by |= KL_OCC_REGISTERS;
  if (blocks == out->limit_smem) out->limited_by |= KL_OCC_SMEM;
  if (blocks == out->limit_blocks) out->limited_by |= KL_OCC_BLOCKS;
  if (blocks == out->limit_barriers) out->limited_by |= KL_OCC_BARRIERS;
  out->active_blocks = blocks;
  out->active_warps = blocks * warps_per_block;
  out->occupancy = (double)out->active_warps / (double)a->max_warps_per_sm;
  if (blocks > 0) out->why_zero = NULL;
  return 0;
}

const char *kl_occupancy_factor_name(kl_occupancy_factor f) {
  switch (f) {
  case KL_OCC_WARPS: return "warps";
  case KL_OCC_REGISTERS: return "registers";
  case KL_OCC_SMEM: return "smem";
  case KL_OCC_BLOCKS: return "blocks";
  case KL_OCC_BARRIERS: return "barriers";
  }
  return "?";
}
