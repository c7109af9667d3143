// expect: wrong, judged against itself, with a spec whose run forgets to
// zero the counts before the launch (tests/lua/gate_hostile_spec.lua
// writes it): the counts then start from the poison, the same poison in
// both runs unless the gate gives each its own.
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void count(int n, int bins, const float *keys, unsigned *counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int b = (int)((keys[i] + 1.f) * 0.5f * bins);
    atomicAdd(&counts[b < bins ? b : bins - 1], 1u);
  }
}
