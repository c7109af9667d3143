// expect: compile_timeout (NVRTC evaluates constants for about 13 minutes)
// A saxpy with a static_assert on a tree of 2^16 template instances, each
// a constexpr loop of 20000 steps: every evaluation stays under the front
// end's step limit, but together they hold the compile for minutes (about
// 12 ms an instance with NVRTC 13.0 on a 2-core box). Only the compile's
// time limit stops it; g++ would take longer still.
__host__ __device__ constexpr unsigned long long kl_spin(unsigned long long seed) {
  unsigned long long s = seed;
  for (int i = 0; i < 20000; ++i) s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s;
}
template <unsigned Lo, unsigned Hi> struct kl_tree {
  static constexpr unsigned long long value = kl_tree<Lo, (Lo + Hi) / 2>::value ^ kl_tree<(Lo + Hi) / 2, Hi>::value;
};
template <unsigned Lo> struct kl_tree<Lo, Lo + 1> {
  static constexpr unsigned long long value = kl_spin(Lo);
};
static_assert(kl_tree<0, 1u << 16>::value != 1, "spins");
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
