// __syncthreads_count/_and/_or and a barrier some threads never reach.
extern "C" __global__ void vote_block(const int *in, int *out) {
  int v = in[threadIdx.x];
  int c = __syncthreads_count(v > 0);
  int a = __syncthreads_and(v > 0);
  int o = __syncthreads_or(v > 0);
  if (threadIdx.x == 0) {
    out[0] = c;
    out[1] = a;
    out[2] = o;
  }
}

// Threads 16.. return before the barrier: a divergent barrier.
extern "C" __global__ void early_exit(float *data) {
  if (threadIdx.x >= 16) return;
  data[threadIdx.x] = 1.0f;
  __syncthreads();
  data[threadIdx.x] += data[15 - threadIdx.x];
}

// A warp shuffle that half the warp skips.
extern "C" __global__ void half_warp_shuffle(float *data) {
  float v = data[threadIdx.x];
  if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
  data[threadIdx.x] = v;
}

// Two branches, each with its own barrier: a divergent barrier on a GPU
// (though hardware may count both as one), reported with both lines.
extern "C" __global__ void branch_barriers(float *data) {
  if (threadIdx.x % 2 == 0) {
    data[threadIdx.x] = 1.0f;
    __syncthreads();
  } else {
    data[threadIdx.x] = 2.0f;
    __syncthreads();
  }
}
