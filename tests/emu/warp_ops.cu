// One output row of 32 ints per warp operation, for lane-by-lane checks
// against the CUDA semantics computed in Lua.
extern "C" __global__ void warp_ops(int *out) {
  int lane = threadIdx.x;
  int v = lane * 10;
  out[0 * 32 + lane] = __shfl_sync(0xffffffffu, v, 3);
  out[1 * 32 + lane] = __shfl_sync(0xffffffffu, v, lane + 1, 8);
  out[2 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 2);
  out[3 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 3, 16);
  out[4 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 5);
  out[5 * 32 + lane] = __any_sync(0xffffffffu, lane == 7);
  out[6 * 32 + lane] = __all_sync(0xffffffffu, lane < 31);
  out[7 * 32 + lane] = (int)__match_any_sync(0xffffffffu, lane % 3);
  out[8 * 32 + lane] = __reduce_add_sync(0xffffffffu, lane);
  out[9 * 32 + lane] = __reduce_max_sync(0xffffffffu, lane == 5 ? -4 : lane - 40);
  // A sub-warp exchange: lanes 0-15 and 16-31 shuffle separately.
  unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  out[10 * 32 + lane] = __shfl_sync(half, v, lane < 16 ? 0 : 16);
  __syncwarp();
  out[11 * 32 + lane] = (int)__activemask();
  double d = lane * 0.5;
  out[12 * 32 + lane] = (int)(2.0 * __shfl_down_sync(0xffffffffu, d, 1));
}

// Bit intrinsics, one per output slot.
extern "C" __global__ void bits(const unsigned *in, int *out) {
  unsigned x = in[threadIdx.x];
  int *o = out + threadIdx.x * 6;
  o[0] = __popc(x);
  o[1] = __clz((int)x);
  o[2] = __ffs((int)x);
  o[3] = (int)__brev(x);
  o[4] = (int)__byte_perm(x, 0x11223344u, 0x0123u);
  o[5] = __float_as_int(__int_as_float((int)x));
}

// __activemask inside a branch: the lanes that took it, as on the GPU.
extern "C" __global__ void active_lanes(const int *in, unsigned *out) {
  int lane = threadIdx.x % 32;
  out[threadIdx.x] = 0;
  if (in[threadIdx.x] > 0) {
    unsigned m = __activemask();
    out[threadIdx.x] = m;
    // a shuffle among exactly those lanes
    int v = __shfl_sync(m, lane, __ffs(m) - 1);
    if (v != __ffs(m) - 1) out[threadIdx.x] = 1;
  }
}
