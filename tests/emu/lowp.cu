#include <cuda_fp16.h>
#include <cuda_bf16.h>
// Round-trips through __half and __nv_bfloat16: the bits of each conversion.
extern "C" __global__ void to_half(const float *in, unsigned short *h, unsigned short *b, float *back) {
  int i = threadIdx.x;
  __half x = __float2half(in[i]);
  __nv_bfloat16 y = __float2bfloat16(in[i]);
  h[i] = __half_as_ushort(x);
  b[i] = __bfloat16_as_ushort(y);
  back[i] = __half2float(__hadd(x, __float2half(1.0f)));
}

// Scalars of the low-precision types, packed by the engine.
extern "C" __global__ void lowp_scalars(__half h, __nv_bfloat16 b, float *out) {
  out[0] = __half2float(h);
  out[1] = __bfloat162float(b);
}
