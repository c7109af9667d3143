// Kernels that measure a device's ceilings once, for the gate's roofline
// bound: copy and read bandwidth over buffers far larger than the L2, and
// the fp32 FMA rate. Each is written to run at the hardware's limit, not
// to be clever: wide loads, many blocks, independent FMA chains.

extern "C" __global__ void kl_ceiling_copy(const float4 *__restrict__ in, float4 *__restrict__ out,
                                           long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = in[i];
}

extern "C" __global__ void kl_ceiling_read(const float4 *__restrict__ in, long long n4, float *sink) {
  float s = 0.f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
       i += (long long)gridDim.x * blockDim.x) {
    float4 v = in[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1234.5f) sink[0] = s; // never true for the zero-filled input; keeps the loads alive
}

// 8 independent chains of `iters` FMAs per thread: 16 * iters flops.
extern "C" __global__ void kl_ceiling_fma(float *out, int iters) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  const float m = 0.999999f, c = 1e-7f;
  for (int i = 0; i < iters; i++) {
    a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
    a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
  }
  float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s == 1234.5f) out[blockIdx.x] = s;
}
