// y = a * x over n floats; a grid-stride loop, and a running maximum of x.
// @kl launch grid(cdiv(n, 256)) block(256)
// @kl requires n % 4 == 0
extern "C" __global__ void scale(int n, float a, const float *x, float *y,
                                 float *peak) {
  float m = 0.0f;
  // n % 4 == 0: whole float4 only (allocations are 16-byte aligned).
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  float4 *y4 = reinterpret_cast<float4 *>(y);
  int n4 = n >> 2;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
    float4 q = x4[i];
    y4[i] = make_float4(a * q.x, a * q.y, a * q.z, a * q.w);
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
    float4 q = x4[i];
    m = fmaxf(m, q.x);
    m = fmaxf(m, q.y);
    m = fmaxf(m, q.z);
    m = fmaxf(m, q.w);
  }
  atomicMax((int *)peak, __float_as_int(m));
}
