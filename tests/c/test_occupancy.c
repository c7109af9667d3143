/* Occupancy against cases computed by hand from the rules in occupancy.h. */
#include <math.h>

#include "core/occupancy.h"
#include "harness.h"

typedef struct {
  const char *arch;
  int registers, threads, barriers, optin;
  size_t static_smem, dynamic_smem;
  int blocks, warps;
  unsigned limited_by;
  const char *what;
} occ_case;

static const occ_case cases[] = {
    /* 32 regs -> 1024/warp -> 16 warps per sub-partition -> 64 warps: 8 blocks of 8 warps */
    {"sm_90", 32, 256, 0, 0, 0, 0, 8, 64, KL_OCC_WARPS | KL_OCC_REGISTERS, "sm_90 32 regs 256 thr"},
    /* 64 regs -> 2048/warp -> 8 per sub -> 32 warps: 4 blocks */
    {"sm_90", 64, 256, 0, 0, 0, 0, 4, 32, KL_OCC_REGISTERS, "sm_90 64 regs 256 thr"},
    /* 37 regs -> 1184 rounded to 1280 -> 12 per sub -> 48 warps: 12 blocks of 4 warps */
    {"sm_90", 37, 128, 0, 0, 0, 0, 12, 48, KL_OCC_REGISTERS, "sm_90 37 regs rounds to 1280/warp"},
    /* 4096 + 40000 + 1024 reserved = 45120 -> 45184 allocated: 233472/45184 = 5 */
    {"sm_90", 16, 128, 0, 0, 4096, 40000, 5, 20, KL_OCC_SMEM, "sm_90 smem bound"},
    /* 64 KiB dynamic without the opt-in cannot launch */
    {"sm_90", 16, 128, 0, 0, 0, 65536, 0, 0, KL_OCC_SMEM, "sm_90 64 KiB needs opt-in"},
    /* with the opt-in: 66560 allocated, 233472/66560 = 3 */
    {"sm_90", 16, 128, 0, 1, 0, 65536, 3, 12, KL_OCC_SMEM, "sm_90 64 KiB with opt-in"},
    /* the largest opt-in block: 232448 + 1024 = the whole SM */
    {"sm_90", 16, 128, 0, 1, 0, 232448, 1, 4, KL_OCC_SMEM, "sm_90 227 KiB with opt-in"},
    {"sm_90", 16, 128, 0, 1, 0, 232449, 0, 0, KL_OCC_SMEM, "sm_90 one byte over the opt-in"},
    /* 48 KiB static is allowed: 50176 allocated, 4 blocks */
    {"sm_90", 32, 128, 0, 0, 49152, 0, 4, 16, KL_OCC_SMEM, "sm_90 48 KiB static"},
    /* 1024 threads x 64 regs fills the register file exactly: 1 block */
    {"sm_90", 64, 1024, 0, 0, 0, 0, 1, 32, KL_OCC_REGISTERS, "sm_90 1024 thr 64 regs"},
    /* 65 regs -> 2304/warp x 32 warps > 65536: cannot launch */
    {"sm_90", 65, 1024, 0, 0, 0, 0, 0, 0, KL_OCC_REGISTERS, "sm_90 1024 thr 65 regs"},
    {"sm_90", 16, 1025, 0, 0, 0, 0, 0, 0, KL_OCC_WARPS, "sm_90 1025 threads"},
    /* one warp per block: the 32-block limit */
    {"sm_90", 8, 32, 0, 0, 0, 0, 32, 32, KL_OCC_BLOCKS, "sm_90 block limit"},
    /* sm_90 barrier limit: 2 * 32 / 3 = 21 */
    {"sm_90", 8, 32, 3, 0, 0, 0, 21, 21, KL_OCC_BARRIERS, "sm_90 3 barriers"},
    /* no barrier limit before sm_90 */
    {"sm_80", 8, 32, 3, 0, 0, 0, 32, 32, KL_OCC_BLOCKS, "sm_80 3 barriers"},
    /* sm_80: 100000 + 1024 -> 101120; 167936 / 101120 = 1 */
    {"sm_80", 32, 256, 0, 1, 0, 100000, 1, 8, KL_OCC_SMEM, "sm_80 opt-in smem"},
    {"sm_80", 32, 256, 0, 1, 0, 166913, 0, 0, KL_OCC_SMEM, "sm_80 over 163 KiB"},
    /* sm_86: 48 warps and 16 blocks per SM */
    {"sm_86", 8, 32, 0, 0, 0, 0, 16, 16, KL_OCC_BLOCKS, "sm_86 block limit 16"},
    {"sm_86", 32, 256, 0, 0, 0, 0, 6, 48, KL_OCC_WARPS, "sm_86 warps 48/8"},
    {"sm_86", 16, 128, 0, 1, 0, 101376, 1, 4, KL_OCC_SMEM, "sm_86 99 KiB opt-in"},
    {"sm_86", 16, 128, 0, 1, 0, 101377, 0, 0, KL_OCC_SMEM, "sm_86 over 99 KiB"},
    /* sm_89: 40 regs -> 1280/warp -> 12 per sub = 48 warps: 6 blocks; warps also 6 */
    {"sm_89", 40, 256, 0, 0, 0, 0, 6, 48, KL_OCC_WARPS | KL_OCC_REGISTERS, "sm_89 40 regs"},
    {"sm_89", 8, 32, 0, 0, 0, 0, 24, 24, KL_OCC_BLOCKS, "sm_89 block limit 24"},
    /* 0 registers reported: no register limit */
    {"sm_90", 0, 64, 0, 0, 0, 0, 32, 64, KL_OCC_WARPS | KL_OCC_BLOCKS, "sm_90 zero registers"},
    /* 255 regs -> 8160 -> 8192/warp -> 2 per sub -> 8 warps: 2 blocks of 4 warps */
    {"sm_90", 255, 128, 0, 0, 0, 0, 2, 8, KL_OCC_REGISTERS, "sm_90 255 regs"},
    {"sm_90", 256, 32, 0, 0, 0, 0, 0, 0, KL_OCC_REGISTERS, "sm_90 256 regs is too many"},
};

static void test_cases(test_batch *t) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const occ_case *c = &cases[i];
    const kl_arch_limits *a = kl_arch_limits_find(c->arch);
    OK(t, a != NULL, c->what);
    if (!a) continue;
    kl_occupancy_input in = {c->registers, c->static_smem, c->dynamic_smem, c->threads, c->barriers, c->optin};
    kl_occupancy out;
    INT_EQ(t, kl_occupancy_compute(a, &in, &out), 0, c->what);
    INT_EQ(t, out.active_blocks, c->blocks, c->what);
    INT_EQ(t, out.active_warps, c->warps, c->what);
    INT_EQ(t, out.limited_by, c->limited_by, c->what);
    OK(t, fabs(out.occupancy - (double)c->warps / a->max_warps_per_sm) < 1e-12, c->what);
    OK(t, (out.active_blocks == 0) == (out.why_zero != NULL), c->what);
  }
}

static void test_details(test_batch *t) {
  const kl_arch_limits *a = kl_arch_limits_find("sm_90");
  kl_occupancy out;
  kl_occupancy_input in = {37, 4096, 40000, 128, 1, 0};
  kl_occupancy_compute(a, &in, &out);
  INT_EQ(t, out.regs_per_warp, 1280, "allocated registers per warp");
  INT_EQ(t, out.smem_per_block, 45184, "allocated smem per block");
  INT_EQ(t, out.limit_warps, 16, "warp limit");
  INT_EQ(t, out.limit_registers, 12, "register limit");
  INT_EQ(t, out.limit_smem, 5, "smem limit");
  INT_EQ(t, out.limit_barriers, 64, "barrier limit with one barrier");

  kl_occupancy_input bad = {32, 0, 0, 0, 0, 0};
  INT_EQ(t, kl_occupancy_compute(a, &bad, &out), -1, "zero threads is invalid");
  OK(t, out.why_zero != NULL, "invalid input says why");

  OK(t, kl_arch_limits_find("sm_75") == NULL, "unknown arch");
  OK(t, kl_arch_limits_find(NULL) == NULL, "NULL arch");
  int n = 0;
  for (const char *const *p = kl_arch_limits_names(); *p; p++) {
    OK(t, kl_arch_limits_find(*p) != NULL, "every listed arch is in the table");
    n++;
  }
  INT_EQ(t, n, 4, "four architectures");
  STR_EQ(t, kl_occupancy_factor_name(KL_OCC_SMEM), "smem", "factor name");
  INT_EQ(t, kl_arch_limits_find("sm_90")->smem_per_sm, 233472, "H200 smem per SM (facts/lineages.md)");
  INT_EQ(t, kl_arch_limits_find("sm_90")->smem_per_block_optin, 232448, "H200 opt-in (facts/lineages.md)");
}

int main(void) {
  test_batch t = {0, 0};
  test_cases(&t);
  test_details(&t);
  return kl_test_finish(&t);
}
