// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void gather(int n, const int *perm, const float4 *v, float4 *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 a = __ldg(&v[__ldg(&perm[i])]);
  float4 b = __ldg(&v[i]);
  y[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + __ldg( &v[i] ).w);
}
