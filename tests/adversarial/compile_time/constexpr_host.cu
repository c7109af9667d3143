// expect: compile_timeout on emu (g++ evaluates constants for minutes)
// A saxpy that NVRTC compiles at once, with, under #ifdef KL_EMU (which
// NVRTC never sees), a static_assert on 64 template instances of a
// constexpr loop of 10^6 steps each: every evaluation stays under g++'s
// -fconstexpr-ops-limit and -fconstexpr-loop-limit, but together they
// hold emu's host compile for minutes (about 3 s and 130 MB an instance
// with g++ 12: the limit bounds the memory too, at about 35 MB a second).
#ifdef KL_EMU
constexpr unsigned long long kl_spin(unsigned long long seed) {
  unsigned long long s = seed;
  for (int i = 0; i < 1000; ++i)
    for (int j = 0; j < 1000; ++j) s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s;
}
template <unsigned Lo, unsigned Hi> struct kl_tree {
  static constexpr unsigned long long value = kl_tree<Lo, (Lo + Hi) / 2>::value ^ kl_tree<(Lo + Hi) / 2, Hi>::value;
};
template <unsigned Lo> struct kl_tree<Lo, Lo + 1> {
  static constexpr unsigned long long value = kl_spin(Lo);
};
static_assert(kl_tree<0, 64>::value != 1, "spins");
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
