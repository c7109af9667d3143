// Persistent threads: warps fetch 32 items at a time from a counter zeroed before the launch.
// @kl launch grid(PERSISTENT_BLOCKS) block(BLOCK)
#define BLOCK 128
#define PERSISTENT_BLOCKS 1584  // 12 blocks of BLOCK threads on each of 132 SMs
#define FULL 0xffffffffu

__device__ __forceinline__ void shade(int r, int W, const float *img, float *out) {
  float v = img[r];
  out[r] = v * v + (float)(r % W);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
shade_all(int W, int H, const float *img, float *out, int *work) {
  int lane = threadIdx.x % 32;
  // Each warp takes 32 items per atomicAdd until the image is done.
  for (;;) {
    int base = 0;
    if (lane == 0) base = atomicAdd(&work[0], 32);
    base = __shfl_sync(FULL, base, 0);
    if (base >= W * H) break;
    int r = base + lane;
    if (r < W * H) {
      shade(r, W, img, out);
    }
  }
}
