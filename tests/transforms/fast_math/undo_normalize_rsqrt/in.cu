// Normalizes float3 vectors: the intrinsic form.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void normalize(int n, const float3 *v, float3 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float3 a = v[i];
  float inv = rsqrtf(a.x * a.x + a.y * a.y + a.z * a.z);
  out[i] = make_float3(a.x * inv, a.y * inv, a.z * inv);
}
