// Templates: headers with defaults, nested arguments, dependent names.
#include <cuda_runtime.h>
#include <cstdint>

template <typename T, int BLOCK = 256, int ITEMS = BLOCK / 32>
struct Tile {
  T data[ITEMS];
  __device__ T sum() const {
    T s = T(0);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) s += data[i];
    return s;
  }
};

template <typename T>
__device__ __forceinline__ T warp_reduce(T v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T, int TILE = 32>
__global__ void __launch_bounds__(TILE * 8, 2)
transpose(T *__restrict__ out, const T *__restrict__ in, int rows, int cols) {
  __shared__ T tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

template <int N>
struct Pow2 { static constexpr int value = 2 * Pow2<N - 1>::value; };
template <>
struct Pow2<0> { static constexpr int value = 1; };

constexpr int kWarps = Pow2<3>::value;
const int kThreads = kWarps * 32;

void launch(float *out, const float *in, int rows, int cols, cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((cols + 31) / 32, (rows + 31) / 32);
  transpose<float, 32><<<grid, block, 0, stream>>>(out, in, rows, cols);
  auto v = static_cast<int>(reinterpret_cast<uintptr_t>(out) & 15);
  (void)v;
}
