// Shared-memory tiles, and the subtle ways to get them wrong.
#define TILE 16

// C = A * B, square tiles in shared memory. M, N, K multiples of TILE.
extern "C" __global__ void sgemm_tiled(int M, int N, int K, const float *A, const float *B, float *C) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

// Off by one in the inner loop: the last product of each tile is dropped.
extern "C" __global__ void sgemm_tiled_off_by_one(int M, int N, int K, const float *A, const float *B,
                                                  float *C) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < TILE - 1; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

// The barrier after the loads is missing: threads read tile entries that
// other threads have not written yet.
extern "C" __global__ void sgemm_tiled_no_sync(int M, int N, int K, const float *A, const float *B,
                                               float *C) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

// 1-D three-point stencil through a shared tile with a halo.
extern "C" __global__ void stencil(const float *in, float *out, int n) {
  __shared__ float tile[256 + 2];
  int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x + 1;
  tile[t] = in[i];
  if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : 0.0f;
  if (threadIdx.x == blockDim.x - 1) tile[t + 1] = i + 1 < n ? in[i + 1] : 0.0f;
  __syncthreads();
  out[i] = tile[t - 1] + tile[t] + tile[t + 1];
}

// A left-neighbour sum through a shared tile, with the barrier missing.
// In forward order each thread's left neighbour has already stored its
// element, so the race is hidden; the reverse and shuffled orders run the
// reader first and expose it.
extern "C" __global__ void stencil_left_no_sync(const float *in, float *out, int n) {
  __shared__ float tile[256 + 1];
  int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x + 1;
  tile[t] = in[i];
  if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : 0.0f;
  out[i] = tile[t - 1] + tile[t];
}

extern "C" __global__ void stencil_left(const float *in, float *out, int n) {
  __shared__ float tile[256 + 1];
  int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x + 1;
  tile[t] = in[i];
  if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : 0.0f;
  __syncthreads();
  out[i] = tile[t - 1] + tile[t];
}

// Dynamic shared memory: reverse each block's slice through it.
extern "C" __global__ void reverse_dyn(const float *in, float *out) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = buf[blockDim.x - 1 - threadIdx.x];
}
